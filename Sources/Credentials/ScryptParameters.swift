/// Cost parameters for scrypt (RFC 7914) as used for stored password hashes.
///
/// `N = 2^logN` is the CPU/memory cost, `r` the block size and `p` the
/// parallelisation. One derivation needs about `128 * N * r` bytes of memory,
/// so `owaspDefault` (N = 2^17, r = 8) needs 128 MiB per concurrent hash.
public struct ScryptParameters: Sendable, Equatable, Hashable {
    /// Base-2 logarithm of the cost `N`.
    public var logN: Int
    /// Block size.
    public var r: Int
    /// Parallelisation.
    public var p: Int
    /// Length of the derived key in bytes.
    public var keyLength: Int
    /// Length of the random salt in bytes.
    public var saltLength: Int

    /// Creates parameters; call `validate()` (hashing does) before use.
    public init(logN: Int, r: Int, p: Int, keyLength: Int = 32, saltLength: Int = 16) {
        self.logN = logN
        self.r = r
        self.p = p
        self.keyLength = keyLength
        self.saltLength = saltLength
    }

    /// The OWASP Password Storage Cheat Sheet minimum: N = 2^17, r = 8, p = 1.
    public static let owaspDefault = ScryptParameters(logN: 17, r: 8, p: 1)

    /// The cost `N = 2^logN` (0 when `logN` is outside 0...62).
    public var n: UInt64 { (0...62).contains(logN) ? 1 << UInt64(logN) : 0 }

    /// Bytes scrypt allocates for one derivation with these parameters
    /// (`128 * r * (N + 2)` for the V array plus `128 * r * p` for B), the same
    /// sum OpenSSL compares against `maxmem`. Saturates at `UInt64.max`
    /// rather than trapping, since it is computed on untrusted values.
    public var memoryBytes: UInt64 {
        guard n > 0, r > 0, p > 0 else { return .max }
        let (blockBytes, blockOverflow) = UInt64(128).multipliedReportingOverflow(by: UInt64(r))
        let (v, vOverflow) = blockBytes.multipliedReportingOverflow(by: n + 2)
        let (b, bOverflow) = blockBytes.multipliedReportingOverflow(by: UInt64(p))
        let (total, totalOverflow) = v.addingReportingOverflow(b)
        return blockOverflow || vOverflow || bOverflow || totalOverflow ? .max : total
    }

    // Sanity limits. They exist so that a tampered or corrupted stored hash
    // cannot make the server allocate gigabytes or spin for minutes: they are
    // far above anything the service would configure (the default uses
    // 128 MiB and 2^20 units of work) but well below what would hurt.

    /// Largest accepted `logN`.
    public static let maximumLogN = 24
    /// Largest accepted `r`.
    public static let maximumR = 32
    /// Largest accepted `p`.
    public static let maximumP = 16
    /// Largest accepted `memoryBytes` (1 GiB plus scrypt's small extra).
    public static let maximumMemoryBytes: UInt64 = (1 << 30) + (1 << 20)
    /// Largest accepted work `N * r * p` (16 times the OWASP default).
    public static let maximumWork: UInt64 = 1 << 24
    /// Accepted key lengths in bytes.
    public static let keyLengthRange = 16...64
    /// Accepted salt lengths in bytes.
    public static let saltLengthRange = 8...64

    /// Throws `PasswordHashError.unsupportedParameters` unless every value is
    /// inside the sanity limits above.
    public func validate() throws(PasswordHashError) {
        // Check the individual ranges first so the products below cannot overflow.
        guard (1...Self.maximumLogN).contains(logN) else {
            throw .unsupportedParameters("ln=\(logN) is outside 1...\(Self.maximumLogN)")
        }
        guard (1...Self.maximumR).contains(r) else {
            throw .unsupportedParameters("r=\(r) is outside 1...\(Self.maximumR)")
        }
        guard (1...Self.maximumP).contains(p) else {
            throw .unsupportedParameters("p=\(p) is outside 1...\(Self.maximumP)")
        }
        guard Self.keyLengthRange.contains(keyLength) else {
            throw .unsupportedParameters("key length \(keyLength) is outside \(Self.keyLengthRange)")
        }
        guard Self.saltLengthRange.contains(saltLength) else {
            throw .unsupportedParameters("salt length \(saltLength) is outside \(Self.saltLengthRange)")
        }
        guard memoryBytes <= Self.maximumMemoryBytes else {
            throw .unsupportedParameters("ln=\(logN),r=\(r) needs \(memoryBytes) bytes of memory")
        }
        guard n * UInt64(r) * UInt64(p) <= Self.maximumWork else {
            throw .unsupportedParameters("ln=\(logN),r=\(r),p=\(p) is too much work")
        }
    }
}
