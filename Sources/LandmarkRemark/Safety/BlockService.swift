import Logging
import Postgres

/// Blocking and unblocking by username, and the caller's list of blocks.
struct BlockService: Sendable {
    let pool: PostgresPool
    let blocks: BlockStore
    /// How many users one user may block (`LR_BLOCKS_PER_USER`).
    let limit: Int

    /// Blocks the active user `username`; idempotent. A user who blocked the caller can be
    /// blocked back (so that their unblocking later does not show the caller to them).
    func block(_ username: String, by identity: Identity, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let blockedID = try await target(username, for: identity, on: connection)
            guard try await blocks.block(
                tenantID: identity.tenantID, blockerID: identity.userID, blockedID: blockedID, limit: limit, on: connection)
            else { throw SafetyError.tooManyBlocks(limit: limit) }
        }
    }

    /// Unblocks `username`; idempotent.
    func unblock(_ username: String, by identity: Identity, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let blockedID = try await target(username, for: identity, on: connection)
            try await blocks.unblock(tenantID: identity.tenantID, blockerID: identity.userID, blockedID: blockedID, on: connection)
        }
    }

    func page(_ page: PageRequest, for identity: Identity, logger: Logger) async throws -> BlockPage {
        try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await blocks.page(page, tenantID: identity.tenantID, blockerID: identity.userID, on: $0)
        }
    }

    private func target(_ username: String, for identity: Identity, on connection: PostgresConnection) async throws -> Int64 {
        guard let id = try await blocks.activeUser(tenantID: identity.tenantID, username: username, on: connection) else {
            throw SafetyError.userNotFound
        }
        guard id != identity.userID else { throw SafetyError.cannotBlockSelf }
        return id
    }
}
