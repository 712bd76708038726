import Foundation
@testable import LandmarkRemark
import Postgres
import Testing

/// The statements the service runs use the indexes meant for them, on a table big
/// enough that the planner would rather not if it could avoid it. Checks the plan,
/// not the time.
@Suite(.timeLimit(.minutes(3))) struct NotesPlanTests {
    static let noteCount = 100_000

    /// A tenant of 50 users and 100,000 notes around Sydney, made with generate_series
    /// as the owner; one note in 5,000 mentions a lighthouse.
    static func seed() async throws -> (tenantID: Int64, viewerID: Int64) {
        let slug = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(slug)
        let viewerID = try await TestEnvironment.withOwnerPool { pool in
            let users = try await pool.query("""
                INSERT INTO users (tenant_id, username, password_hash)
                SELECT \(tenantID), 'planner' || g, 'not a hash' FROM generate_series(1, 50) g
                RETURNING id
                """).map { try $0.decode(Int64.self, column: 0) }
            // Generated rows need no change events, and the event trigger (one counter row
            // updated per note) would take minutes over 100,000 of them. ALTER TABLE holds
            // its exclusive lock until commit, so no other session ever sees the triggers off.
            try await pool.withTransaction { connection in
                try await connection.query("ALTER TABLE notes DISABLE TRIGGER USER")
                try await connection.query("""
                    INSERT INTO notes (tenant_id, user_id, body, location, visibility)
                    SELECT \(tenantID), (\(users))[1 + g % 50],
                           CASE WHEN g % 5000 = 0 THEN 'the lighthouse keeper ' || g
                                ELSE (ARRAY['coffee', 'harbour', 'bridge', 'beach', 'market', 'garden'])[1 + g % 6]
                                     || ' note ' || g END,
                           ST_SetSRID(ST_MakePoint(151.2 + (random() - 0.5) * 2, -33.8 + (random() - 0.5) * 2), 4326)::geography,
                           CASE WHEN g % 10 = 0 THEN 'private' ELSE 'public' END
                    FROM generate_series(1, \(Self.noteCount)) g
                    """)
                try await connection.query("ALTER TABLE notes ENABLE TRIGGER USER")
            }
            try await pool.query("ANALYZE notes")
            try await pool.query("ANALYZE users")
            return users[0]
        }
        return (tenantID, viewerID)
    }

    /// `EXPLAIN` of the list statement for `query`, as the service's role with the tenant set.
    static func plan(_ query: String, tenantID: Int64, viewerID: Int64, clusters: Bool = false) async throws -> String {
        var parameters = try QueryParameters(query: query)
        let list = clusters ? nil : try NoteList(&parameters)
        let cluster = clusters ? try NoteClusters(&parameters) : nil
        let pool = try PostgresPool(configuration: .init(conninfo: try TestEnvironment.variable("LR_TEST_DATABASE_URL"), maxConnections: 1))
        do {
            let rows = try await pool.withTransaction(settings: [("app.tenant_id", String(tenantID))]) { connection in
                // The service's own steps: usernames first, then the statement.
                var statement: PostgresQuery = if let list {
                    try await list.resolved(tenantID: tenantID, on: connection).statement(tenantID: tenantID, viewerID: viewerID)
                } else {
                    try await cluster!.resolved(tenantID: tenantID, on: connection).statement(tenantID: tenantID, viewerID: viewerID)
                }
                statement = "EXPLAIN (COSTS OFF) " + statement
                // Planned for these values, as the first runs of a prepared statement are.
                statement.prepared = false
                return try await connection.query(statement)
            }
            await pool.close()
            return try rows.map { try $0.decode(String.self, column: 0) }.joined(separator: "\n")
        } catch {
            await pool.close()
            throw error
        }
    }

    @Test func statementsUseTheirIndexes() async throws {
        let (tenantID, viewerID) = try await Self.seed()

        let nearest = try await Self.plan("near=-33.8,151.2&limit=50", tenantID: tenantID, viewerID: viewerID)
        #expect(nearest.contains("Index Scan using notes_location on notes"), "\(nearest)")
        #expect(nearest.contains("Order By: (location <->"), "KNN: the index returns rows nearest first\n\(nearest)")

        let deeper = try await Self.plan("near=-33.8,151.2&radius_m=10000&q=harbour&limit=50", tenantID: tenantID, viewerID: viewerID)
        #expect(deeper.contains("notes_location"), "\(deeper)")

        for query in ["q=lighthouse&in=body", "q=lighthouse", "q=LightHouse&in=body&author=others"] {
            let search = try await Self.plan(query, tenantID: tenantID, viewerID: viewerID)
            #expect(search.contains("Bitmap Index Scan on notes_body_trgm"), "\(query)\n\(search)")
        }

        let viewport = try await Self.plan("bbox=151.0,-33.9,151.1,-33.8", tenantID: tenantID, viewerID: viewerID)
        #expect(viewport.contains("notes_location_lnglat"), "\(viewport)")

        let clusters = try await Self.plan("bbox=151.0,-33.9,151.1,-33.8&zoom=14", tenantID: tenantID, viewerID: viewerID, clusters: true)
        #expect(clusters.contains("notes_location_lnglat"), "\(clusters)")

        let newest = try await Self.plan("author=me", tenantID: tenantID, viewerID: viewerID)
        #expect(newest.contains("notes_author_newest"), "\(newest)")
    }
}
