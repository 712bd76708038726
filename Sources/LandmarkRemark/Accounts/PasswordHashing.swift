import Credentials

/// scrypt on the bounded hashing pool, within the request's fair share of it (`FairShares`).
struct PasswordHashing: Sendable {
    let pool: HashingPool
    let parameters: ScryptParameters
    let shares: FairShares
    /// Verified against when the user does not exist, so an unknown username costs the
    /// same time as a wrong password and the two cannot be told apart.
    let dummyHash: String

    /// Hashes with the configured cost: `429` past the caller's share, `AccountError.hashingBusy`
    /// when the pool stays saturated.
    func hash(_ password: String) async throws -> String {
        try await shares.withHashingShare {
            try await mapBusy { try await pool.hash(password: password, parameters: parameters) }
        }
    }

    /// A stored value that is no hash at all (an account that must not log in, like
    /// the demo author's `!`) matches no password; it is not a server error.
    func verify(_ password: String, against hash: String) async throws -> Bool {
        do {
            return try await shares.withHashingShare {
                try await mapBusy { try await pool.verify(password: password, against: hash) }
            }
        } catch is PasswordHashError {
            return false
        }
    }

    /// Whether a hash was made with an older cost than the configured one.
    func isOutdated(_ hash: String) -> Bool {
        PasswordHasher.needsRehash(hash, target: parameters)
    }

    private func mapBusy<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch HashingPool.Error.busy {
            throw AccountError.hashingBusy
        }
    }
}
