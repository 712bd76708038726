import Foundation
import HummingbirdTesting
import Postgres
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One tenant with 200,000 notes all over the world, made once per test process for the
/// suites about bounded work (BoundedWorkTests, FairShareTests).
enum LargeTenant {
    static let noteCount = 200_000

    struct World: Sendable {
        let tenant: String
        /// The author of every note.
        let author: Account
        /// Two of the author's notes, for tests that lock one each.
        let noteID: String
        let otherNoteID: String
    }

    static let world = Task { try await seed() }

    /// Seeded like NotesPlanTests: INSERT … SELECT generate_series as the owner, with the
    /// event trigger off (`NotesFixture.insertGenerated`: a lock that stops writes, not reads).
    private static func seed() async throws -> World {
        let tenant = try await TestEnvironment.makeTenant()
        let author = Mutex<Account?>(nil)
        try await withApp { client in
            let account = try await client.signup("author", tenant: tenant)
            author.withLock { $0 = account }
        }
        let account = try #require(author.withLock { $0 })
        let tenantID = try await NotesFixture.tenantID(tenant)
        let userID = try #require(Int64(account.userID))
        let noteID = try await TestEnvironment.withOwnerPool { pool in
            try await NotesFixture.insertGenerated(count: Self.noteCount, seed: 0.5, on: pool) { from, to in
                """
                INSERT INTO notes (tenant_id, user_id, body, location, visibility)
                SELECT \(tenantID), \(userID),
                       (ARRAY['coffee', 'harbour', 'bridge', 'beach', 'market', 'garden'])[1 + g % 6] || ' note ' || g,
                       ST_SetSRID(ST_MakePoint(-180 + random() * 360, -80 + random() * 160), 4326)::geography, 'public'
                FROM generate_series(\(literal: from), \(literal: to)) g
                """
            }
            try await pool.query("ANALYZE notes")
            return try await pool.query("SELECT min(id) FROM notes WHERE tenant_id = \(tenantID)")[0].decode(Int64.self, column: 0)
        }
        return World(tenant: tenant, author: account, noteID: String(noteID), otherNoteID: String(noteID + 1))
    }

    /// Runs `body` while an owner's transaction holds `FOR UPDATE` on the note of `tenant`, so
    /// a `PATCH` of it waits inside the server; `body` gets the owner backend's pid (on Citus
    /// its global pid: the lock and the wait are on the worker).
    static func withNoteLocked(_ noteID: String, tenant: String, _ body: @Sendable (Int) async throws -> Void) async throws {
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.withTransaction { connection in
                try await connection.query("SELECT 1 FROM notes WHERE tenant_id = \(tenantID) AND id = \(Int64(noteID)!) FOR UPDATE")
                let pid = try await connection.query(
                    CitusRoutingTests.onCitus ? "SELECT citus_backend_gpid()::int8" : "SELECT pg_backend_pid()::int8"
                )[0].decode(Int.self, column: 0)
                try await body(pid)
            }
        }
    }

    /// Backends waiting for the lock `pid` holds (on Citus, on any node: `citus_lock_waits`).
    static func waitingBehind(_ pid: Int) async throws -> Int {
        try await TestEnvironment.ownerScalar(
            CitusRoutingTests.onCitus
                ? "SELECT count(*)::int8 FROM citus_lock_waits WHERE blocking_gpid = \(Int64(pid))"
                : "SELECT count(*)::int8 FROM pg_stat_activity WHERE \(Int64(pid))::int4 = ANY(pg_blocking_pids(pid))",
            as: Int.self)
    }
}

/// A request written on a plain socket, so the test can hang up while the server works.
final class RawHTTPClient: Sendable {
    private let socket: Int32

    init(port: Int, request: String) throws {
        socket = try connectLoopback(port: port)
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
    }

    /// Closes the socket as a client that gives up does: the server reads end of input.
    func hangUp() { Glibc.close(socket) }
}

extension TestClientProtocol {
    /// The pool's connections lent out, from `/metrics`.
    func connectionsInUse() async throws -> Int? { try await gauge("lr_db_pool_in_use") }

    /// Password hashes running, from `/metrics`.
    func hashingInFlight() async throws -> Int? { try await gauge("lr_password_hashing_in_flight") }

    private func gauge(_ name: String) async throws -> Int? {
        let text = try await call(.get, "/metrics").body
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
    }
}
