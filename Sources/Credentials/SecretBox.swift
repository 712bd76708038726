import CCrypto

/// Seals small secrets for storage with AES-256-GCM under one 32-byte key (the service's
/// `LR_DATA_KEY`): a database dump alone does not reveal them. A sealed box is
/// `version (1) | nonce (12) | ciphertext | tag (16)`; the associated data binds a box to
/// the row it belongs to, so one cannot be moved to another row.
public struct SecretBox: Sendable {
    public enum Failure: Error, Equatable {
        case badKey
        /// Not a box of ours, or altered, or sealed under another key or for another row.
        case cannotOpen
    }

    private static let version: UInt8 = 1
    private static let nonceCount = 12
    private static let tagCount = 16
    private let key: [UInt8]

    public init(key: [UInt8]) throws {
        guard key.count == 32 else { throw Failure.badKey }
        self.key = key
    }

    public func seal(_ plaintext: [UInt8], binding associatedData: [UInt8]) -> [UInt8] {
        let nonce = Tokens.randomBytes(count: Self.nonceCount)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: Self.tagCount)
        let ok = run(encrypt: true, nonce: nonce, input: plaintext, output: &ciphertext, associatedData: associatedData, tag: &tag)
        // Encryption with a valid key and nonce cannot fail short of a broken OpenSSL.
        guard ok else { fatalError("AES-256-GCM seal failed: \(OpenSSLError.drainQueue())") }
        return [Self.version] + nonce + ciphertext + tag
    }

    public func open(_ box: [UInt8], binding associatedData: [UInt8]) throws -> [UInt8] {
        guard box.count >= 1 + Self.nonceCount + Self.tagCount, box[0] == Self.version else { throw Failure.cannotOpen }
        let nonce = Array(box[1...Self.nonceCount])
        let ciphertext = Array(box[(1 + Self.nonceCount)..<(box.count - Self.tagCount)])
        var tag = Array(box.suffix(Self.tagCount))
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        guard run(encrypt: false, nonce: nonce, input: ciphertext, output: &plaintext, associatedData: associatedData, tag: &tag) else {
            _ = OpenSSLError.drainQueue()
            throw Failure.cannotOpen
        }
        return plaintext
    }

    private func run(
        encrypt: Bool, nonce: [UInt8], input: [UInt8], output: inout [UInt8], associatedData: [UInt8], tag: inout [UInt8]
    ) -> Bool {
        guard let context = EVP_CIPHER_CTX_new() else { return false }
        defer { EVP_CIPHER_CTX_free(context) }
        let mode: Int32 = encrypt ? 1 : 0
        guard EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil, mode) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1,
            EVP_CipherInit_ex(context, nil, nil, key, nonce, mode) == 1
        else { return false }
        var length: Int32 = 0
        if !associatedData.isEmpty {
            guard EVP_CipherUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else { return false }
        }
        if !input.isEmpty {
            guard output.withUnsafeMutableBufferPointer({ EVP_CipherUpdate(context, $0.baseAddress, &length, input, Int32(input.count)) }) == 1
            else { return false }
        }
        if !encrypt {
            guard tag.withUnsafeMutableBytes({ EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32($0.count), $0.baseAddress) }) == 1
            else { return false }
        }
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_CipherFinal_ex(context, &scratch, &length) == 1 else { return false }
        if encrypt {
            guard tag.withUnsafeMutableBytes({ EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32($0.count), $0.baseAddress) }) == 1
            else { return false }
        }
        return true
    }
}
