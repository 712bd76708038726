import Credentials
import Foundation
@testable import LandmarkRemark
import Postgres
import Synchronization
import Testing

/// Every statement a request sends names its tenant, so Citus sends it to one shard: the
/// stores' own code runs here through a recorder that asks `EXPLAIN` of each statement before
/// running it, and on Citus (`make test-citus`, LR_TEST_CITUS=1) each plan must be a
/// single-task router plan on the node that holds the tenant's shard. On one server the same
/// statements run and are explained (they must still work), without a distributed plan to check.
@Suite(.timeLimit(.minutes(10))) struct CitusRoutingTests {
    static let onCitus = ProcessInfo.processInfo.environment["LR_TEST_CITUS"] == "1"

    /// A `PostgresQuerying` that explains each statement, then runs it, on one connection.
    final class PlanRecorder: PostgresQuerying {
        let connection: PostgresConnection
        private let recorded = Mutex<[(sql: String, plan: String)]>([])

        init(_ connection: PostgresConnection) { self.connection = connection }

        var plans: [(sql: String, plan: String)] { recorded.withLock { $0 } }

        func query(_ query: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
            var explain = "EXPLAIN (COSTS OFF) " + query
            explain.prepared = false
            let plan = try await connection.query(explain, at: callSite).map { try $0.decode(String.self, column: 0) }
            recorded.withLock { $0.append((query.sql, plan.joined(separator: "\n"))) }
            return try await connection.query(query, at: callSite)
        }
    }

    /// The statements `body` sends for `tenantID`, with their plans, in the service's tenant transaction.
    static func record(
        tenantID: Int64, _ body: @Sendable (PlanRecorder) async throws -> Void
    ) async throws -> [(sql: String, plan: String)] {
        try await TestEnvironment.withAppPool { pool in
            try await pool.withTransaction(settings: [("app.tenant_id", String(tenantID))]) { connection in
                let recorder = PlanRecorder(connection)
                try await body(recorder)
                return recorder.plans
            }
        }
    }

    /// The port of the worker that holds `tenantID`'s shard group (nil on one server).
    static func shardPort(_ tenantID: Int64) async throws -> Int? {
        guard onCitus else { return nil }
        return try await TestEnvironment.ownerScalar("""
            SELECT nodeport FROM citus_shards
            WHERE shardid = get_shard_id_for_distribution_column('notes', \(tenantID))
            """, as: Int.self)
    }

    /// On Citus: each plan that reads a distributed table is one task on `port`, with nothing
    /// planned apart first; `shape` names the request in the failure.
    static func expectRouted(_ plans: [(sql: String, plan: String)], to port: Int?, _ shape: String) {
        #expect(!plans.isEmpty, "\(shape): no statement ran")
        guard let port else { return }
        #expect(plans.contains { $0.plan.contains("Custom Scan (Citus") }, "\(shape): no statement went to a shard")
        for (sql, plan) in plans where plan.contains("Custom Scan (Citus") {
            let counts = plan.split(separator: "\n").filter { $0.contains("Task Count:") }
            #expect(counts.allSatisfy { $0.hasSuffix("Task Count: 1") }, "\(shape): more than one task\n\(sql)\n\(plan)")
            #expect(!plan.contains("Distributed Subplan"), "\(shape): planned in parts\n\(sql)\n\(plan)")
            // A statement on the reference table alone may run on any node.
            let nodes = plan.split(separator: "\n").filter { $0.contains("Node: host=") }
            let referenceOnly = sql.contains("tenants") && !sql.contains("notes") && !sql.contains("users")
            #expect(referenceOnly || nodes.allSatisfy { $0.contains("port=\(port) ") }, "\(shape): not on the tenant's node \(port)\n\(sql)\n\(plan)")
        }
    }

    /// Two tenants whose shards live on different workers (on one server: any two).
    static func twoTenants() async throws -> [(slug: String, id: Int64)] {
        var tenants: [(slug: String, id: Int64)] = []
        var ports: Set<Int?> = []
        while tenants.count < 2 {
            let slug = try await TestEnvironment.makeTenant()
            let id = try await NotesFixture.tenantID(slug)
            let port = try await shardPort(id)
            if tenants.isEmpty || !onCitus || !ports.contains(port) {
                tenants.append((slug, id))
                ports.insert(port)
            }
        }
        return tenants
    }

    @Test func everyRequestShapeIsOneShardOfItsTenant() async throws {
        let tenants = try await Self.twoTenants()
        try await withApp { client in
            for (slug, tenantID) in tenants {
                let port = try await Self.shardPort(tenantID)
                let writer = try await client.signup("router", tenant: slug)
                let viewerID = Int64(writer.userID)!
                let placeID = try await NotesFixture.makePlace(slug, name: "Harbour", lat: -33.85, lng: 151.2)
                for index in 0..<5 {
                    try await client.createNote(writer, "harbour coffee \(index)", lat: -33.85 + Double(index) / 100, lng: 151.2)
                }
                let store = NoteStore()

                for (shape, query) in [
                    ("nearest", "near=-33.8,151.2&limit=10"),
                    ("nearest, filtered", "near=-33.8,151.2&q=coffee&limit=10"),
                    ("viewport", "bbox=151.0,-34.0,151.5,-33.5"),
                    ("search", "q=harbour"),
                    ("search in a box", "q=coffee&bbox=151.0,-34.0,151.5,-33.5"),
                    ("search by username", "q=rout&in=username"),
                    ("author", "author=router"),
                ] {
                    var parameters = try QueryParameters(query: query)
                    let list = try NoteList(&parameters)
                    let plans = try await Self.record(tenantID: tenantID) { reads in
                        var resolved = list
                        resolved.filters = try await store.resolvingUsernames(list.filters, tenantID: tenantID, on: reads)
                        _ = try await store.page(resolved, tenantID: tenantID, viewerID: viewerID, on: reads)
                    }
                    Self.expectRouted(plans, to: port, "\(shape) (\(query))")
                    if Self.onCitus && (shape == "nearest" || shape == "search") {
                        // Delegated whole, as its function, so that it reads as its owner there (migration 0022).
                        #expect(plans.contains { $0.sql.contains("\(WorkerReads.prefix)_") }, "\(shape): not the delegated function")
                    }
                }

                for zoom in [3, 12, 16, 20] {
                    var parameters = try QueryParameters(query: "bbox=151.199,-33.851,151.201,-33.849&zoom=\(zoom)")
                    let clusters = try NoteClusters(&parameters)
                    let plans = try await Self.record(tenantID: tenantID) { reads in
                        _ = try await store.clusters(clusters, tenantID: tenantID, viewerID: viewerID, on: reads)
                    }
                    Self.expectRouted(plans, to: port, "clusters z\(zoom)")
                }

                let created = try await Self.record(tenantID: tenantID) { connection in
                    let note = try await store.create(
                        tenantID: tenantID, authorID: viewerID, authorName: writer.username,
                        draft: NoteDraft(body: "routed", lat: -33.8, lng: 151.2, placeID: Int64(placeID)), on: connection)
                    _ = try await store.find(tenantID: tenantID, id: note.id, viewerID: viewerID, on: connection)
                    _ = try await store.lockForChange(tenantID: tenantID, id: note.id, viewerID: viewerID, on: connection)
                }
                Self.expectRouted(created, to: port, "create, one note, lock for a change")

                let events = try await Self.record(tenantID: tenantID) { reads in
                    _ = try await EventLog(notes: store, places: PlaceStore(), tokens: AccessTokenStore()).read(
                        tenantID: tenantID, viewerID: viewerID, after: 0, upTo: Int64.max / 2, box: nil, on: reads)
                }
                Self.expectRouted(events, to: port, "events read")

                let tokens = try await Self.record(tenantID: tenantID) { connection in
                    let hash = Tokens.sha256(writer.accessToken)
                    _ = try await connection.query(AccessTokenStore.lookupStatement(tenantID: tenantID, hash: hash))
                    let sessions = SessionStore(
                        accessTokenLifetime: 900, refreshTokenLifetime: 86_400, refreshGraceSeconds: 10,
                        signer: AccessTokenSigner(keys: [TestEnvironment.testSigningKey]))
                    _ = try await sessions.refresh(tenantID: tenantID, refreshToken: writer.refreshToken, on: connection)
                    // The poll's reads of a tenant's epoch and revocations (migration 0046).
                    _ = try await connection.query("SELECT epoch, user_id, session_id FROM auth_revocations WHERE tenant_id = \(tenantID) AND epoch > 0")
                }
                Self.expectRouted(tokens, to: port, "token lookup and refresh")

                let places = try await Self.record(tenantID: tenantID) { reads in
                    var parameters = try QueryParameters(query: "near=-33.8,151.2")
                    _ = try await PlaceStore().page(try PlaceList(&parameters), tenantID: tenantID, viewerID: viewerID, on: reads)
                    _ = try await PlaceStore().find(tenantID: tenantID, id: Int64(placeID)!, viewer: viewerID, on: reads)
                }
                Self.expectRouted(places, to: port, "places")
            }
        }
    }
}
