import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// The list statements that read on the tenant's worker on Citus (`WorkerReads`) run through
/// their functions (migration 0022, installed as `distribute` does), page for page as they
/// run as statements, on either database; every shape the service may send has its function;
/// and as their owner's functions they still keep to the caller's tenant.
@Suite(.timeLimit(.minutes(10))) struct WorkerCallTests {
    /// Installs the functions as `distribute` does (on Citus they are there already).
    static func install() async throws {
        _ = try await TestEnvironment.withOwnerPool { try await AdminStore(pool: $0).installStatementFunctions() }
    }

    /// The first `maxPages` pages of `query` as ids, visibilities and sort keys, walked
    /// through the function or the statement.
    static func walk(_ query: String, tenantID: Int64, viewerID: Int64, call: Bool, maxPages: Int = 200) async throws -> [[String]] {
        var pages: [[String]] = []
        var cursor: String?
        repeat {
            var parameters = try QueryParameters(query: query + (cursor.map { "&cursor=\($0)" } ?? ""))
            let list = try NoteList(&parameters)
            let page = try await TestEnvironment.withAppPool { pool in
                try await pool.withTransaction(settings: [("app.tenant_id", String(tenantID))]) { connection in
                    var resolved = list
                    resolved.filters = try await NoteStore().resolvingUsernames(list.filters, tenantID: tenantID, on: connection)
                    #expect(WorkerReads.readOnWorker(resolved.filters), "\(query) does not read on the worker")
                    let statement = NoteStore.statement(resolved, tenantID: tenantID, viewerID: viewerID)
                    let function = PostgresStatementFunction(prefix: WorkerReads.prefix, statement: statement)
                    let rows = try await connection.query(call ? function.call(routedBy: tenantID) : statement)
                    return try NoteStore.page(resolved, from: rows, viewerID: viewerID)
                }
            }
            pages.append(page.items.map { "\($0.id) \($0.visibility) \($0.distanceM ?? -1) \($0.createdAt)" })
            cursor = page.nextCursor
        } while cursor != nil && pages.count < maxPages
        return pages
    }

    static func expectSamePages(_ query: String, tenantID: Int64, viewerID: Int64, maxPages: Int = 200) async throws {
        let statement = try await walk(query, tenantID: tenantID, viewerID: viewerID, call: false, maxPages: maxPages)
        try await install()
        let call = try await walk(query, tenantID: tenantID, viewerID: viewerID, call: true, maxPages: maxPages)
        #expect(statement.joined().count > 0, "\(query): nothing to compare")
        #expect(call == statement, "\(query): the call's pages differ from the statement's")
    }

    @Test func nearestPagesMatchTheStatementsWithAndWithoutRadius() async throws {
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
                try await Self.expectSamePages(query, tenantID: tenantID, viewerID: Int64(alice.userID)!)
            }
        }
    }

    /// 17,000 notes, newest last, every seventh private; words placed so that each of the
    /// search's steps decides a page: `seeded` in all (the walk), `kestrel` 1 in 150 of the
    /// newest 1,000 and a few of the oldest (the walk goes on, then finds the rest through the
    /// index), `axolotl` 1 in 4,000 (the index at once).
    @Test func searchPagesMatchTheStatementsInEveryStep() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bobcat", tenant: tenant)
            let carol = try await client.signup("carol", tenant: tenant)
            let userIDs = [alice, bob, carol].map { Int64($0.userID)! }
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO notes (tenant_id, user_id, body, location, visibility, created_at, updated_at)
                    SELECT \(tenantID), (\(userIDs))[1 + g % 3],
                           'seeded note ' || g
                               || CASE WHEN (g > 16000 AND g % 150 = 0) OR g IN (5, 10, 500) THEN ' kestrel' ELSE '' END
                               || CASE WHEN g % 4000 = 0 THEN ' axolotl' ELSE '' END,
                           ST_SetSRID(ST_MakePoint(151.2, -33.8), 4326)::geography,
                           CASE WHEN g % 7 = 0 THEN 'private' ELSE 'public' END, stamp, stamp
                    FROM generate_series(1, 17000) g,
                         LATERAL (SELECT now() - interval '1 day' + (g / 4) * interval '1 second' AS stamp) s
                    """)
            }
            let viewer = Int64(alice.userID)!
            try await Self.expectSamePages("q=seeded&limit=50", tenantID: tenantID, viewerID: viewer, maxPages: 4)
            try await Self.expectSamePages("q=kestrel&limit=4", tenantID: tenantID, viewerID: viewer)
            try await Self.expectSamePages("q=kestrel&limit=25", tenantID: tenantID, viewerID: viewer)
            try await Self.expectSamePages("q=axolotl&limit=2", tenantID: tenantID, viewerID: viewer)
            // In bodies and names: bobcat's notes by name, the others by a word.
            try await Self.expectSamePages("q=bobcat&limit=40", tenantID: tenantID, viewerID: viewer, maxPages: 3)
            try await Self.expectSamePages("q=kestrel&in=body&limit=10", tenantID: tenantID, viewerID: viewer)
            // LIKE's own characters are text: no note has a literal "%".
            try await Self.install()
            let none = try await Self.walk("q=note%2050%25&limit=10", tenantID: tenantID, viewerID: viewer, call: true)
            #expect(none == [[]])
        }
    }

    @Test func keepToTheCallersTenant() async throws {
        let (mine, theirs) = (try await TestEnvironment.makeTenant(), try await TestEnvironment.makeTenant())
        let (myID, theirID) = (try await NotesFixture.tenantID(mine), try await NotesFixture.tenantID(theirs))
        try await Self.install()
        try await withApp { client in
            let writer = try await client.signup("writer", tenant: theirs)
            try await client.createNote(writer, "not yours", lat: 1, lng: 1)
            for query in ["near=1,1", "q=yours"] {
                var parameters = try QueryParameters(query: query)
                var list = try NoteList(&parameters)
                list.filters.search?.authors = .ids([])
                // Their tenant named in the call and in the statement, as a hostile caller could.
                let statement = NoteStore.statement(list, tenantID: theirID, viewerID: 0)
                let call = PostgresStatementFunction(prefix: WorkerReads.prefix, statement: statement).call(routedBy: theirID)
                let counts = try await TestEnvironment.withAppPool { pool in
                    // The caller's tenant is mine; none; theirs.
                    let asMine = try await pool.withTransaction(settings: [("app.tenant_id", String(myID))]) { connection in
                        try await connection.query(call).count
                    }
                    let asNobody = try await pool.query(call).count
                    let asTheirs = try await pool.withTransaction(settings: [("app.tenant_id", String(theirID))]) { connection in
                        try await connection.query(call).count
                    }
                    return [asMine, asNobody, asTheirs]
                }
                #expect(counts == [0, 0, 1], "\(query)")
            }
        }
    }

    /// Whatever a client asks, a list that reads on the worker sends a statement that
    /// `distribute` installed: limits, radii, cursors, LIKE's characters, scripts, names found.
    @Test func everyShapeTheServiceSendsIsInstalled() throws {
        let installed = Set(try WorkerReads.statements().map { PostgresStatementFunction(prefix: WorkerReads.prefix, statement: $0).name })
        #expect(installed.count == 22)
        var checked = 0
        let bases = ["near=-33.8,151.2", "near=0,0&radius_m=50000", "near=89.9,179.9&radius_m=1", "near=-10,-179.99&radius_m=5000", "q=abc", "q=100%25_off%5Cnow&in=body",
                     "q=%E6%9D%B1%E4%BA%AC%E3%82%BF&in=all", "q=caf%C3%A9", "q=great%20view&in=body", "q=sao%20paulo",
                     "q=%E6%9D%B1%E4%BA%AC", "q=%E6%9D%B1%E4%BA%AC%20%E5%A4%9C%E6%99%AF&in=body"]
        for base in bases {
            for limit in [1, 50, 200] {
                var parameters = try QueryParameters(query: base + "&limit=\(limit)")
                let first = try NoteList(&parameters)
                let key: KeysetCursor.Key = first.filters.near != nil ? .nearest(distance: 1234.5, id: 99) : .newest(createdMicros: 7, id: 8)
                let cursor = KeysetCursor(key: key).encoded(fingerprint: first.page.fingerprint)
                var resumedParameters = try QueryParameters(query: base + "&limit=\(limit)&cursor=\(cursor)")
                let resumed = try NoteList(&resumedParameters)
                for var list in [first, resumed] {
                    for names in [.ids([]), .ids([5]), .ids(Array(1...200)), .many] as [NoteFilters.Authors] {
                        // As `resolvingUsernames` leaves them: bodies alone look up no names.
                        if list.filters.search?.field == .all { list.filters.search?.authors = names }
                        #expect(WorkerReads.readOnWorker(list.filters))
                        let name = PostgresStatementFunction(
                            prefix: WorkerReads.prefix, statement: NoteStore.statement(list, tenantID: 42, viewerID: 7)).name
                        #expect(installed.contains(name), "\(base) limit \(limit) names \(names): not installed")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == bases.count * 3 * 2 * 4)
    }
}
