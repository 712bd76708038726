import CCrypto

/// Raw scrypt key derivation (RFC 7914) through OpenSSL's `EVP_PBE_scrypt`.
///
/// This is a blocking, CPU- and memory-heavy call: in the server run it through
/// `HashingPool`, never on an event loop or the Swift cooperative pool.
public enum Scrypt {
    /// Derives `keyLength` bytes from `password` and `salt`.
    ///
    /// Applies none of the sanity limits of `ScryptParameters` (the RFC test
    /// vectors use a 0-byte salt and N = 16), only OpenSSL's own checks:
    /// N must be a power of two greater than 1.
    public static func deriveKey(
        password: [UInt8],
        salt: [UInt8],
        n: UInt64,
        r: UInt64,
        p: UInt64,
        keyLength: Int
    ) throws(PasswordHashError) -> [UInt8] {
        guard keyLength > 0 else { throw .unsupportedParameters("key length must be positive") }
        // OpenSSL's default maxmem (used when 0 is passed) is 32 MiB, which
        // rejects N >= 2^15 with r = 8; give it exactly what these parameters
        // need (its own formula, see ScryptParameters.memoryBytes) plus slack.
        let (v, vOverflow) = (n &+ 2).multipliedReportingOverflow(by: 128 &* r)
        let (b, bOverflow) = (128 &* r).multipliedReportingOverflow(by: p)
        let (total, totalOverflow) = v.addingReportingOverflow(b)
        guard r > 0, p > 0, r < (1 << 30), !vOverflow, !bOverflow, !totalOverflow,
            total < UInt64.max - (1 << 20)
        else {
            throw .unsupportedParameters("N=\(n), r=\(r), p=\(p) overflow the memory computation")
        }
        let maxmem = total + (1 << 20)

        var key = [UInt8](repeating: 0, count: keyLength)
        // A 0-length Swift array may hand out a nil base address; OpenSSL wants
        // a valid pointer even for length 0, so substitute a dummy byte.
        var dummy: UInt8 = 0
        let status = password.withUnsafeBufferPointer { passwordBuffer in
            salt.withUnsafeBufferPointer { saltBuffer in
                key.withUnsafeMutableBufferPointer { keyBuffer in
                    withUnsafeMutablePointer(to: &dummy) { dummyPointer in
                        let passwordPointer = UnsafeRawPointer(passwordBuffer.baseAddress ?? UnsafePointer(dummyPointer))
                        return EVP_PBE_scrypt(
                            passwordPointer.assumingMemoryBound(to: CChar.self), passwordBuffer.count,
                            saltBuffer.baseAddress ?? UnsafePointer(dummyPointer), saltBuffer.count,
                            n, r, p, maxmem,
                            keyBuffer.baseAddress, keyBuffer.count
                        )
                    }
                }
            }
        }
        guard status == 1 else { throw .crypto(OpenSSLError.drainQueue()) }
        return key
    }
}
