import Foundation
import Postgres

/// The blocks table (migration 0023): who blocked whom, in the caller's tenant transaction.
/// What a block hides is `Audience`'s, which every read composes.
struct BlockStore: Sendable {
    /// The active user named `username` (ignoring case), locked against a concurrent delete.
    func activeUser(tenantID: Int64, username: String, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query("""
            SELECT id FROM users
            WHERE tenant_id = \(tenantID) AND lower(username) = lower(\(username)) AND disabled_at IS NULL
            FOR KEY SHARE
            """)
        return try rows.first?.decode(Int64.self, column: 0)
    }

    /// Blocks `blockedID` for `blockerID` unless the blocker has `limit` blocks already;
    /// blocking again changes nothing. The blocker's row is locked first, so two blocks at
    /// once are counted one after the other and the limit holds.
    func block(tenantID: Int64, blockerID: Int64, blockedID: Int64, limit: Int, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("""
            SELECT 1 FROM users WHERE tenant_id = \(tenantID) AND id = \(blockerID) FOR NO KEY UPDATE
            """)
        let rows = try await connection.query("""
            WITH present AS (
                SELECT count(*) AS blocks, bool_or(blocked_id = \(blockedID)) AS already
                FROM blocks WHERE tenant_id = \(tenantID) AND blocker_id = \(blockerID)
            )
            INSERT INTO blocks (tenant_id, blocker_id, blocked_id)
            SELECT \(tenantID), \(blockerID), \(blockedID) FROM present
            WHERE NOT coalesce(already, false) AND blocks < \(limit)
            RETURNING 1
            """)
        if !rows.isEmpty { return true }
        let already = try await connection.query("""
            SELECT 1 FROM blocks WHERE tenant_id = \(tenantID) AND blocker_id = \(blockerID) AND blocked_id = \(blockedID)
            """)
        return !already.isEmpty
    }

    func unblock(tenantID: Int64, blockerID: Int64, blockedID: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            DELETE FROM blocks WHERE tenant_id = \(tenantID) AND blocker_id = \(blockerID) AND blocked_id = \(blockedID)
            """)
    }

    /// The users `blockerID` blocked, newest block first, in pages keyed on `(created_at, id)`.
    func page(_ page: PageRequest, tenantID: Int64, blockerID: Int64, on reads: some PostgresQuerying) async throws -> BlockPage {
        let keyset: PostgresQuery = page.timeKeyset("b.created_at", "b.blocked_id").map { "\n  AND \($0)" } ?? ""
        let rows = try await reads.query("""
            SELECT b.blocked_id, u.username, (extract(epoch FROM b.created_at) * 1000000)::bigint
            FROM (
                SELECT b.* FROM blocks b
                WHERE b.tenant_id = \(tenantID) AND b.blocker_id = \(blockerID)\(keyset)
                ORDER BY b.created_at DESC, b.blocked_id DESC
                LIMIT \(page.limit + 1)
            ) b
            JOIN tenant_users u ON u.tenant_id = \(tenantID) AND u.id = b.blocked_id
            ORDER BY b.created_at DESC, b.blocked_id DESC
            """)
        let users = try page.page(from: rows, keyColumn: 2) { row, _ in
            let id = try row.decode(Int64.self, column: 0)
            return (UserSummary(id: id, username: try row.decode(String.self, column: 1)), id)
        }
        return BlockPage(items: users.items, nextCursor: users.nextCursor)
    }
}
