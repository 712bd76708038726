import CCrypto

/// Random bearer tokens, SHA-256 digests and constant-time comparison.
///
/// The server hands out `prefix + tenant id + _ + base64url(32 random bytes)` and stores
/// only the SHA-256 of the token, so a database leak does not leak usable tokens.
public enum Tokens {
    /// Number of random bytes in a token (256 bits).
    public static let randomByteCount = 32

    /// Returns `prefix` followed by the unpadded base64url of 32 bytes from
    /// OpenSSL's CSPRNG (43 characters).
    public static func randomToken(prefix: String) -> String {
        prefix + Base64URL.encode(randomBytes(count: randomByteCount))
    }

    /// Characters of the random part: 32 bytes in unpadded base64url.
    public static let randomLength = 43

    /// Returns `prefix`, the tenant's id in decimal, `_`, then the random part, e.g.
    /// `lr_at_42_…`. The tenant lets the lookup name it (Citus routes on it) before anything
    /// is read; the SHA-256 stored is of the whole string, so a token whose tenant part is
    /// changed is simply unknown.
    public static func tenantToken(prefix: String, tenantID: Int64) -> String {
        precondition(tenantID > 0, "tenant ids are positive, not \(tenantID)")
        return randomToken(prefix: "\(prefix)\(tenantID)_")
    }

    /// What a token's form says about its tenant.
    public enum TenantPart: Equatable, Sendable {
        /// `prefix` and the random part alone, as minted before tokens named their tenant:
        /// only a lookup by hash alone finds it.
        case legacy
        /// `prefix`, a tenant id, `_`, the random part.
        case tenant(Int64)
    }

    /// The tenant part of `token`, or nil when `token` cannot be one of ours with `prefix`:
    /// another prefix, a random part that is not 43 base64url characters, a tenant id that
    /// is not the canonical decimal of a positive `Int64` (no sign, no leading zero), or no
    /// `_` after it.
    public static func tenantPart(of token: some StringProtocol, prefix: String) -> TenantPart? {
        let bytes = Array(token.utf8)
        guard bytes.starts(with: prefix.utf8) else { return nil }
        let rest = bytes.dropFirst(prefix.utf8.count)
        guard rest.count >= randomLength, rest.suffix(randomLength).allSatisfy(isBase64URL) else { return nil }
        let head = rest.dropLast(randomLength)
        if head.isEmpty { return .legacy }
        guard head.last == UInt8(ascii: "_") else { return nil }
        return canonicalPositive(head.dropLast()).map(TenantPart.tenant)
    }

    /// The value of `digits` if they are the canonical decimal of a positive `Int64`: no
    /// sign, no leading zero, no overflow.
    public static func canonicalPositive(_ digits: some Collection<UInt8>) -> Int64? {
        guard let first = digits.first, first != UInt8(ascii: "0") else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = shifted.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// Returns `count` bytes from `RAND_bytes`.
    ///
    /// Stops the process if the CSPRNG fails: continuing would hand out
    /// predictable tokens and salts, which is worse than crashing.
    public static func randomBytes(count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "invalid random byte count \(count)")
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        guard status == 1 else {
            fatalError("RAND_bytes failed: \(OpenSSLError.drainQueue())")
        }
        return bytes
    }

    /// SHA-256 as OpenSSL implements it, fetched once. `EVP_sha256()` makes every digest look
    /// its implementation up again in the provider store (under a lock shared by every thread):
    /// twice the time of the digest itself, and HMAC's one-shot `HMAC()` more than ten times
    /// (4.5 µs against 0.34 µs for a token's 120 bytes, measured with OpenSSL 3 here).
    private nonisolated(unsafe) static let sha256Algorithm: OpaquePointer = {
        guard let algorithm = EVP_MD_fetch(nil, "SHA256", nil) else {
            fatalError("OpenSSL has no SHA-256: \(OpenSSLError.drainQueue())")
        }
        return algorithm
    }()

    /// SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                // EVP_Digest accepts a NULL data pointer when the count is 0.
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, sha256Algorithm, nil)
            }
        }
        // SHA-256 with the built-in provider cannot fail short of memory
        // corruption or a broken OpenSSL installation.
        guard status == 1, length == 32 else {
            fatalError("EVP_Digest(SHA-256) failed: \(OpenSSLError.drainQueue())")
        }
        digest.removeLast(digest.count - 32)
        return digest
    }

    /// HMAC-SHA-256 of `message` under `key` (32 bytes): for secrets too small to hash alone
    /// (a 6-digit code has a million values), whose digest must not be checkable without the key.
    ///
    /// RFC 2104 over `sha256`: `H((K ^ opad) || H((K ^ ipad) || message))`, the key padded
    /// to SHA-256's 64-byte block (hashed first when longer). Every access token is checked
    /// with it, and OpenSSL's own `HMAC()` fetches its algorithms on every call.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        let blockSize = 64
        var block = key.count > blockSize ? sha256(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        var inner = block.map { $0 ^ 0x36 }
        inner += message
        var outer = block.map { $0 ^ 0x5c }
        outer += sha256(inner)
        return sha256(outer)
    }

    /// SHA-256 of the UTF-8 of `string`.
    public static func sha256(_ string: String) -> [UInt8] {
        sha256(Array(string.utf8))
    }

    /// Lowercase hexadecimal of `bytes`.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Compares two byte strings in time that depends only on their length
    /// (`CRYPTO_memcmp`), so comparing a secret leaks nothing about where it
    /// differs. Different lengths return false at once; lengths are not secret
    /// here (digests and keys have fixed sizes).
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard !lhs.isEmpty else { return true }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
            }
        }
    }
}
