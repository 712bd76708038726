import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// `notes_nearest()` (migration 0020), which the service calls on Citus for unfiltered
/// nearest pages, gives page for page what the statement gives, on either database; and
/// as its owner's function it still keeps to the caller's tenant.
@Suite(.timeLimit(.minutes(3))) struct NearestCallTests {
    /// Every page of `query` as ids and distances, walked through the call or the statement.
    static func walk(_ query: String, tenantID: Int64, viewerID: Int64, call: Bool) async throws -> [[String]] {
        var pages: [[String]] = []
        var cursor: String?
        repeat {
            var parameters = try QueryParameters(query: query + (cursor.map { "&cursor=\($0)" } ?? ""))
            let list = try NoteList(&parameters)
            let page = try await TestEnvironment.withAppPool { pool in
                try await pool.withTransaction(settings: [("app.tenant_id", String(tenantID))]) { connection in
                    let rows = try await connection.query(
                        NoteStore.statement(list, tenantID: tenantID, viewerID: viewerID, nearestOnWorker: call))
                    return try list.page.page(from: rows, keyColumn: NoteStore.noteColumnCount) { row, distance in
                        var note = try NoteStore.note(from: row, viewer: viewerID)
                        note.distance = distance
                        return (note, note.id)
                    }
                }
            }
            pages.append(page.items.map { "\($0.id) \($0.visibility) \($0.distance ?? -1)" })
            cursor = page.nextCursor
        } while cursor != nil && pages.count < 200
        return pages
    }

    @Test func pagesMatchTheStatementsWithAndWithoutRadius() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bob", tenant: tenant)
            let carol = try await client.signup("carol", tenant: tenant)
            // A tenth at the origin itself (equal distances), every seventh private.
            try await NotesPagingTests.seed(tenant: tenant, authors: [alice, bob, carol])
            let origin = NotesPagingTests.origin
            for query in [
                "near=\(origin.lat),\(origin.lng)&limit=25",
                "near=\(origin.lat),\(origin.lng)&radius_m=20000&limit=9",
                "near=\(origin.lat),\(origin.lng)&radius_m=1&limit=5",
            ] {
                let statement = try await Self.walk(query, tenantID: tenantID, viewerID: Int64(alice.userID)!, call: false)
                let call = try await Self.walk(query, tenantID: tenantID, viewerID: Int64(alice.userID)!, call: true)
                #expect(statement.joined().count > 0, "\(query): nothing to compare")
                #expect(call == statement, "\(query): the call's pages differ from the statement's")
            }
        }
    }

    @Test func keepsToTheCallersTenant() async throws {
        let (mine, theirs) = (try await TestEnvironment.makeTenant(), try await TestEnvironment.makeTenant())
        let (myID, theirID) = (try await NotesFixture.tenantID(mine), try await NotesFixture.tenantID(theirs))
        try await withApp { client in
            let writer = try await client.signup("writer", tenant: theirs)
            try await client.createNote(writer, "not yours", lat: 1, lng: 1)
            let counts = try await TestEnvironment.withAppPool { pool in
                // Their tenant named in the call, while the caller's tenant is mine; then no tenant set.
                let asMine = try await pool.withTransaction(settings: [("app.tenant_id", String(myID))]) { connection in
                    try await connection.query("SELECT count(*) FROM notes_nearest(\(theirID), 0, 1, 1, NULL, 10, NULL, NULL)")[0]
                        .decode(Int64.self, column: 0)
                }
                let asNobody = try await pool.query("SELECT count(*) FROM notes_nearest(\(theirID), 0, 1, 1, NULL, 10, NULL, NULL)")[0]
                    .decode(Int64.self, column: 0)
                let asTheirs = try await pool.withTransaction(settings: [("app.tenant_id", String(theirID))]) { connection in
                    try await connection.query("SELECT count(*) FROM notes_nearest(\(theirID), 0, 1, 1, NULL, 10, NULL, NULL)")[0]
                        .decode(Int64.self, column: 0)
                }
                return [asMine, asNobody, asTheirs]
            }
            #expect(counts == [0, 0, 1])
        }
    }
}
