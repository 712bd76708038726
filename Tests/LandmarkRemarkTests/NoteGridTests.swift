import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import TestPolling
import Testing

/// The pre-aggregated cluster grid (migration 0014) against a count of the notes
/// themselves, after random inserts, moves, visibility changes, deletes and a disabled
/// account: with every delta unfolded, half folded, and all folded.
@Suite(.timeLimit(.minutes(10))) struct NoteGridTests {
    struct Cell: Comparable, CustomStringConvertible {
        let count: Int
        let noteID: Int64
        let lat: Double
        let lng: Double
        static func < (a: Cell, b: Cell) -> Bool { (a.count, a.noteID, a.lat, a.lng) < (b.count, b.noteID, b.lat, b.lng) }
        var description: String { "\(count)@\(lat),\(lng)#\(noteID)" }
    }

    /// What the clusters of `box` at `zoom` must be for `viewer`, counted from the notes:
    /// the public notes of accounts not disabled and the viewer's own private ones, in the
    /// grid cells the box touches; none by the `hidden` authors (blocked, blocking, reported,
    /// held).
    static func expected(tenant: String, viewer: Int64, hidden: [Int64] = [], zoom: Int, box: BoundingBox) async throws -> [Cell] {
        let size = NoteClusters.cellsPerTile << zoom
        let ranges = NoteStore.CellRanges(box, gridSize: size)
        let rows = try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT grid_x(lng, \(literal: size)) AS x, grid_y(lat, \(literal: size)) AS y, count(*)::int8,
                       CASE WHEN count(*) = 1 THEN min(id) ELSE -1 END, avg(lat), avg(lng)
                FROM (SELECT n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng
                      FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
                      JOIN tenants t ON t.id = n.tenant_id
                      WHERE t.slug = \(tenant) AND NOT (n.user_id = ANY (\(hidden)))
                        AND ((n.visibility = 'public' AND u.disabled_at IS NULL)
                             OR (n.user_id = \(viewer) AND n.visibility = 'private'))) visible
                GROUP BY 1, 2
                """)
        }
        return try rows.compactMap { row in
            let (x, y, count, id, lat, lng) = try row.decode((Int, Int, Int, Int64, Double, Double).self)
            guard ranges.rows.contains(y), ranges.columns.contains(where: { $0.contains(x) }) else { return nil }
            return Cell(count: count, noteID: id, lat: lat, lng: lng)
        }.sorted()
    }

    static func served(_ client: some TestClientProtocol, token: String, zoom: Int, box: String) async throws -> [Cell] {
        let response = try await client.call(.get, "/v1/notes/clusters?bbox=\(box)&zoom=\(zoom)", token: token)
        #expect(response.status == .ok, "\(box) z\(zoom): \(response.body)")
        return try response.decode(API.ClusterList.self).clusters.map {
            Cell(count: $0.count, noteID: $0.noteID.flatMap { Int64($0) } ?? -1, lat: $0.lat, lng: $0.lng)
        }.sorted()
    }

    /// The deltas of `tenant` not folded yet.
    static func deltas(tenant: String) async throws -> Int {
        try await TestEnvironment.ownerScalar("""
            SELECT count(*) FROM note_grid_deltas d JOIN tenants t ON t.id = d.tenant_id WHERE t.slug = \(tenant)
            """, as: Int.self)
    }

    /// Folds every delta of `tenant` as the service's `NoteGridFolder` does: its statement, on
    /// the service's role. A fold only *tries* the tenant's advisory lock and moves nothing
    /// while another fold holds it (another test's service folds every tenant on its timer),
    /// so one empty try proves nothing: the folder tries again, as the service's timer does,
    /// until the tenant has no deltas left. Whether the deltas are gone, within two minutes.
    static func foldAsTheService(tenant: String) async throws -> Bool {
        try await TestEnvironment.withAppPool { pool in
            let folder = NoteGridFolder(pool: pool, interval: .zero, logger: TestEnvironment.logger)
            return try await foldUntilNoDeltas(tenant: tenant) { try await folder.fold() }
        }
    }

    /// Calls `fold` (whether a full batch moved) until `tenant` has no deltas, or two minutes pass.
    static func foldUntilNoDeltas(tenant: String, _ fold: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(120)
        while try await deltas(tenant: tenant) > 0 {
            guard ContinuousClock.now < deadline else { return false }
            // More may wait: fold again at once; else another fold may hold the lock a moment.
            if try await !fold() { try await Task.sleep(for: .milliseconds(20)) }
        }
        return true
    }

    /// Every cell of a tenant at every zoom (or, `perAuthor`, of the author grid), as text.
    static func cells(tenant: String, perAuthor: Bool = false) async throws -> String {
        let (author, table): (PostgresQuery, PostgresQuery) = perAuthor ? ("c.user_id", "author_grid_cells") : ("0", "note_grid_cells")
        return try await TestEnvironment.ownerScalar("""
            SELECT coalesce(string_agg(format('%s/%s/%s/%s:%s,%s,%s,%s', \(author), c.zoom, c.x, c.y, c.count, c.sum_id, c.sum_lat7, c.sum_lng7),
                                       ';' ORDER BY \(author), c.zoom, c.x, c.y), '')
            FROM \(table) c JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = \(tenant)
            """, as: String.self)
    }

    /// `admin.rebuild_note_grid()` started while another session holds the lock the folders
    /// take (as a replica's folder would): whether the rebuild was seen waiting for it, and
    /// what it returned once the lock was let go.
    static func rebuildWhileAFolderHoldsTheLock() async throws -> (Int64, Bool) {
        let (rebuild, waited) = try await TestEnvironment.withOwnerPool { pool in
            try await pool.withTransaction { holder -> (Task<Int64, any Error>, Bool) in
                _ = try await holder.query("SELECT pg_advisory_xact_lock(hashtext('fold_note_grid'))")
                let rebuild = Task {
                    try await TestEnvironment.ownerScalar("SELECT admin.rebuild_note_grid()", as: Int64.self)
                }
                // Watched, not guessed: the rebuild's session shows it waits on an advisory lock
                // (polled for up to two minutes: a loaded machine may take long to start it).
                let waited = try await eventually(every: .milliseconds(50)) {
                    // A transaction keeps its first view of pg_stat_activity unless told not to.
                    _ = try await holder.query("SELECT pg_stat_clear_snapshot()")
                    return try await holder.query("""
                        SELECT count(*) FROM pg_stat_activity
                        WHERE query LIKE 'SELECT admin.rebuild_note_grid()%' AND wait_event_type = 'Lock' AND wait_event = 'advisory'
                        """)[0].decode(Int.self, column: 0) == 1
                }
                return (rebuild, waited)
            }
        }
        // The transaction ended: the lock is free and the rebuild goes on.
        return (try await rebuild.value, waited)
    }

    static func compare(
        _ client: some TestClientProtocol, tenant: String, viewer: API.Me, hidden: [Int64] = [], token: String, stage: String
    ) async throws {
        let boxes = ["-10,35,30,60", "170,-50,-170,-30", "-1,50,1,52", "-180,-85,180,85"]
        for box in boxes {
            for zoom in [0, 2, 4, 6, 9, 12, 15, 17] {
                let parsed = try #require(BoundingBox(parameter: box))
                guard NoteClusters.cellCount(parsed, gridSize: NoteClusters.cellsPerTile << zoom) <= Double(NoteClusters.maximumCells) else { continue }
                let want = try await expected(tenant: tenant, viewer: Int64(viewer.id)!, hidden: hidden, zoom: zoom, box: parsed)
                let got = try await served(client, token: token, zoom: zoom, box: box)
                #expect(got.map(\.count) == want.map(\.count) && got.map(\.noteID) == want.map(\.noteID),
                        "\(stage) \(viewer.username) \(box) z\(zoom): served \(got.prefix(8)) expected \(want.prefix(8))")
                for (a, b) in zip(got, want) where a.count == b.count && a.noteID == b.noteID {
                    #expect(abs(a.lat - b.lat) < 1e-6 && abs(a.lng - b.lng) < 1e-6, "\(stage) \(box) z\(zoom): \(a) vs \(b)")
                }
            }
        }
    }

    @Test func theGridCountsExactlyWhatIsVisibleWhateverIsFolded() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({ $0.operations.gridFoldInterval = .zero }) { client in
            let viewer = try await client.signup("viewer", tenant: tenant)
            let writers = [viewer, try await client.signup("writer_a", tenant: tenant), try await client.signup("writer_b", tenant: tenant)]
            var generator = SystemRandomNumberGenerator()
            // Around London, around the antimeridian in the south Pacific, and anywhere.
            let spots: [(Double, Double, Double)] = [(51.5, -0.12, 1.5), (-40, 179.5, 3), (0, 0, 80)]
            var ids: [String] = []
            for index in 0..<120 {
                let (lat, lng, spread) = spots[index % spots.count]
                var pointLng = lng + Double.random(in: -spread...spread, using: &generator)
                if pointLng > 180 { pointLng -= 360 }
                let note = try await client.createNote(
                    writers[index % writers.count], "grid \(index)",
                    lat: max(-84, min(84, lat + Double.random(in: -spread...spread, using: &generator))), lng: pointLng,
                    visibility: index % 4 == 0 ? "private" : "public")
                ids.append(note.id)
            }
            let me = try await client.call(.get, "/v1/me", token: viewer.accessToken).decode(API.Me.self)
            try await Self.compare(client, tenant: tenant, viewer: me, token: viewer.accessToken, stage: "all unfolded")
            // A second viewer blocks writer_a while every delta waits (0029: writer_a's share
            // on the author grid is their notes less those deltas), and later writer_b, half
            // folded, after more writes. Both grids must still give exactly what each sees.
            let blocker = try await client.signup("blocker", tenant: tenant)
            let blockerMe = try await client.call(.get, "/v1/me", token: blocker.accessToken).decode(API.Me.self)
            #expect(try await client.call(.put, "/v1/me/blocks/writer_a", token: blocker.accessToken).status == .noContent)
            var hidden = [Int64(writers[1].userID)!]
            var held: [Int64] = []
            func compareBoth(_ stage: String) async throws {
                try await Self.compare(client, tenant: tenant, viewer: me, hidden: held, token: viewer.accessToken, stage: stage)
                try await Self.compare(client, tenant: tenant, viewer: blockerMe, hidden: hidden, token: blocker.accessToken, stage: stage)
            }
            try await compareBoth("all unfolded, blocked")

            // Half folded, then more writes: visibility both ways, moves, deletes, a disabled account.
            _ = try await TestEnvironment.withOwnerPool { try await $0.query("SELECT fold_note_grid(300)") }
            for (index, id) in ids.enumerated() where index % 5 == 1 {
                let author = writers[index % writers.count]
                _ = try await client.call(.patch, "/v1/notes/\(id)", json: ["visibility": index % 2 == 0 ? "public" : "private"], token: author.accessToken)
            }
            try await TestEnvironment.withOwnerPool { pool in
                for id in ids.enumerated().filter({ $0.offset % 7 == 3 }).map(\.element) {
                    try await pool.query("""
                        UPDATE notes SET location = ST_SetSRID(ST_MakePoint(ST_X(location::geometry) * 0.5, ST_Y(location::geometry) * 0.5), 4326)::geography
                        WHERE id = \(Int64(id)!)
                        """)
                }
            }
            for (index, id) in ids.enumerated() where index % 6 == 2 {
                _ = try await client.call(.delete, "/v1/notes/\(id)", token: writers[index % writers.count].accessToken)
            }
            #expect(try await client.call(.put, "/v1/me/blocks/writer_b", token: blocker.accessToken).status == .noContent)
            hidden.append(Int64(writers[2].userID)!)
            // writer_b also held for a moderator: hidden from everyone, counted once for the blocker.
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    UPDATE users SET moderation = 'pending' WHERE username = 'writer_b' AND tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))
                    """)
            }
            held.append(Int64(writers[2].userID)!)
            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_user_disabled(\(tenant), 'writer_b', true)") }
            try await compareBoth("half folded")

            // Everything folded: the cells alone hold the truth, at every zoom the grid keeps.
            // By the service's own folder, on the service's role (it once bound a bigint that no function took).
            #expect(try await Self.foldAsTheService(tenant: tenant), "the folder folded this tenant's deltas")
            try await compareBoth("all folded")
            #expect(try await !Self.cells(tenant: tenant, perAuthor: true).isEmpty, "the hidden authors' notes are on the author grid")
            #expect(try await TestEnvironment.ownerScalar("""
                SELECT count(*) FROM note_grid_cells c JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = \(tenant) AND c.count = 0
                """, as: Int.self) == 0, "no empty cells are kept")

            // The account back: its notes return, through deltas again.
            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_user_disabled(\(tenant), 'writer_b', false)") }
            try await compareBoth("re-enabled")
            // Unblocked, then blocked the other way: writer_a blocks the blocker.
            #expect(try await client.call(.delete, "/v1/me/blocks/writer_a", token: blocker.accessToken).status == .noContent)
            hidden.removeAll { $0 == Int64(writers[1].userID)! }
            try await compareBoth("unblocked")
            #expect(try await client.call(.put, "/v1/me/blocks/blocker", token: writers[1].accessToken).status == .noContent)
            hidden.append(Int64(writers[1].userID)!)
            try await compareBoth("blocked the other way")

            // Accounts deleted take their notes along: one by its owner, one disabled first.
            let gone = try await client.call(.delete, "/v1/me", json: ["password": writers[1].password], token: writers[1].accessToken)
            #expect(gone.status == .noContent, "\(gone.body)")
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("SELECT admin.set_user_disabled(\(tenant), 'writer_b', true)")
                try await pool.query("""
                    DELETE FROM users WHERE username = 'writer_b' AND tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))
                    """)
            }
            try await compareBoth("accounts deleted")
            // The hidden authors' cells went with their accounts; one more (reported), for the rebuild below.
            #expect(try await Self.cells(tenant: tenant, perAuthor: true).isEmpty)
            #expect(try await client.report(blocker, "user", viewer.userID).status == .created)
            hidden.append(Int64(viewer.userID)!)
            // The operators' entry point this time; every delta folded, since the rebuild below is
            // compared with the cells alone.
            let foldedByOperator = try await TestEnvironment.withOwnerPool { pool in
                try await Self.foldUntilNoDeltas(tenant: tenant) {
                    try await pool.query("SELECT fold_note_grid(1000)")[0].decode(Int.self, column: 0) > 0
                }
            }
            #expect(foldedByOperator, "fold_note_grid() folded this tenant's deltas")
            try await compareBoth("deleted, folded")
            #expect(try await TestEnvironment.ownerScalar("""
                SELECT count(*) FROM note_grid_cells c JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = \(tenant) AND c.count < 0
                """, as: Int.self) == 0, "no cell below zero")

            // The operator's rebuild (migration 0015) counts the same cells from the notes,
            // and waits for a folder in flight rather than skipping the count.
            let folded = try await Self.cells(tenant: tenant)
            let foldedAuthors = try await Self.cells(tenant: tenant, perAuthor: true)
            #expect(!foldedAuthors.isEmpty, "the viewer's notes are on the author grid")
            let (rebuilt, waited) = try await Self.rebuildWhileAFolderHoldsTheLock()
            #expect(waited, "the rebuild waited for the folders' lock")
            #expect(rebuilt > 0)
            #expect(try await Self.cells(tenant: tenant) == folded, "the rebuilt cells are the folded ones")
            #expect(try await Self.cells(tenant: tenant, perAuthor: true) == foldedAuthors, "and the authors' too")
            try await compareBoth("rebuilt")
        }
    }
}
