import CCrypto

/// Hashes and verifies passwords with scrypt, storing them as `PasswordHash`
/// strings.
///
/// `hash` and `verify` block the calling thread (about 0.5 to 1 s of one core
/// with the default parameters on the project's machines) and use
/// `128 * N * r` bytes (128 MiB with the default); in the server call them
/// through `HashingPool`.
public enum PasswordHasher {
    /// Hashes `password` with a fresh random salt and returns the
    /// self-describing string (see `PasswordHash`).
    ///
    /// The password is used as the UTF-8 bytes of the Swift string exactly as
    /// given: no Unicode normalisation, no truncation.
    public static func hash(
        password: String,
        parameters: ScryptParameters = .owaspDefault
    ) throws(PasswordHashError) -> String {
        try parameters.validate()
        let salt = Tokens.randomBytes(count: parameters.saltLength)
        let key = try derive(password: password, salt: salt, parameters: parameters)
        return PasswordHash(parameters: parameters, salt: salt, hash: key).encoded
    }

    /// Returns whether `password` matches the stored string `encoded`.
    ///
    /// A wrong password returns false; a stored string that cannot be parsed
    /// or has parameters outside the sanity limits throws, because that is a
    /// data problem to surface rather than a failed login. The comparison is
    /// constant time.
    public static func verify(password: String, against encoded: String) throws(PasswordHashError) -> Bool {
        let stored = try PasswordHash(encoded: encoded)
        let key = try derive(password: password, salt: stored.salt, parameters: stored.parameters)
        return Tokens.constantTimeEquals(key, stored.hash)
    }

    /// Returns true when the stored hash is weaker than `target` (its N, r, p,
    /// key length or salt length is lower), so it should be recomputed from the
    /// plaintext after a successful login. A string that cannot be parsed
    /// also returns true.
    public static func needsRehash(_ encoded: String, target: ScryptParameters) -> Bool {
        guard let stored = try? PasswordHash(encoded: encoded) else { return true }
        let current = stored.parameters
        return current.logN < target.logN
            || current.r < target.r
            || current.p < target.p
            || current.keyLength < target.keyLength
            || current.saltLength < target.saltLength
    }

    private static func derive(
        password: String,
        salt: [UInt8],
        parameters: ScryptParameters
    ) throws(PasswordHashError) -> [UInt8] {
        try Scrypt.deriveKey(
            password: Array(password.utf8),
            salt: salt,
            n: parameters.n,
            r: UInt64(parameters.r),
            p: UInt64(parameters.p),
            keyLength: parameters.keyLength
        )
    }
}
