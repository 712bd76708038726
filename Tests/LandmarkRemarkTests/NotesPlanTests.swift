import Foundation
@testable import LandmarkRemark
import Postgres
import Testing

/// The statements the service runs use the indexes meant for them, on a table big
/// enough that the planner would rather not if it could avoid it. Checks the plan,
/// not the time.
///
/// Not on Citus (`make test-citus`): there a shard is read as the service's role, so its
/// row-level security policy applies, and PostgreSQL will not use a condition that is not
/// leakproof (`&&`, `LIKE`) as an index condition beneath a policy. The statements route
/// and answer the same (CitusRoutingTests and the rest of the suite), but some take other
/// plans; docs/operations.md ("Running on Citus") and the benchmark report say what it costs.
@Suite(.timeLimit(.minutes(10)), .disabled(if: CitusRoutingTests.onCitus, "single-server plans; see the comment above"))
struct NotesPlanTests {
    static let noteCount = 100_000

    /// A tenant of 50 users, 100,000 notes and 2,000 places around Sydney, made with
    /// generate_series as the owner; one note in 5,000 mentions a lighthouse, one the
    /// night view of Tokyo (東京の夜景), one a crème brûlée, one a jazz quartet.
    static func seed() async throws -> (tenantID: Int64, viewerID: Int64) {
        let slug = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(slug)
        let viewerID = try await TestEnvironment.withOwnerPool { pool in
            let users = try await NotesFixture.insertUsers(tenantID: tenantID, prefix: "planner", count: 50, on: pool)
            // With the event trigger off, in batches (NotesFixture.insertGenerated), and the
            // same locations every run, so the boxes below hold the same notes.
            try await NotesFixture.insertGenerated(count: Self.noteCount, seed: 0.25, on: pool) { from, to in
                """
                INSERT INTO notes (tenant_id, user_id, body, location, visibility)
                SELECT \(tenantID), (\(users))[1 + g % 50],
                       CASE WHEN g % 5000 = 0 THEN 'the lighthouse keeper ' || g
                            WHEN g % 5000 = 2500 THEN '東京の夜景 ' || g
                            WHEN g % 5000 = 1250 THEN 'Crème brûlée au Café ' || g
                            WHEN g % 5000 = 3750 THEN 'jazz quartet ' || g
                            ELSE (ARRAY['coffee', 'harbour', 'bridge', 'beach', 'market', 'garden'])[1 + g % 6]
                                 || ' note ' || g END,
                       ST_SetSRID(ST_MakePoint(151.2 + (random() - 0.5) * 2, -33.8 + (random() - 0.5) * 2), 4326)::geography,
                       CASE WHEN g % 10 = 0 THEN 'private' ELSE 'public' END
                FROM generate_series(\(literal: from), \(literal: to)) g
                """
            }
            try await pool.query("""
                INSERT INTO places (tenant_id, name, location, kind, created_at)
                SELECT \(tenantID), 'place ' || g,
                       ST_SetSRID(ST_MakePoint(151.2 + (random() - 0.5) * 2, -33.8 + (random() - 0.5) * 2), 4326)::geography,
                       'default', now() - g * interval '1 minute'
                FROM generate_series(1, 2000) g
                """)
            try await pool.query("ANALYZE notes")
            try await pool.query("ANALYZE users")
            try await pool.query("ANALYZE places")
            return users[0]
        }
        return (tenantID, viewerID)
    }

    /// The request with its username matches looked up, as `NoteStore` does before its statement.
    static func resolved(_ list: NoteList, tenantID: Int64, on connection: some PostgresQuerying) async throws -> NoteList {
        var list = list
        list.filters = try await NoteStore().resolvingUsernames(list.filters, tenantID: tenantID, on: connection)
        return list
    }

    static func resolved(_ clusters: NoteClusters, tenantID: Int64, on connection: some PostgresQuerying) async throws -> NoteClusters {
        var clusters = clusters
        clusters.filters = try await NoteStore().resolvingUsernames(clusters.filters, tenantID: tenantID, on: connection)
        return clusters
    }

    /// `EXPLAIN` of the list statement for `query`, as the service's role with the tenant set.
    static func plan(
        _ query: String, tenantID: Int64, viewerID: Int64, clusters: Bool = false, places: Bool = false, analyze: Bool = false
    ) async throws -> String {
        var parameters = try QueryParameters(query: query)
        let placeList = places ? try PlaceList(&parameters) : nil
        let list = clusters || places ? nil : try NoteList(&parameters)
        let cluster = clusters ? try NoteClusters(&parameters) : nil
        let rows = try await TestEnvironment.withAppPool { pool in
            try await pool.withTransaction(settings: [("app.tenant_id", String(tenantID))]) { connection in
                // The service's own steps: usernames first, then the statement.
                var statement: PostgresQuery = if let placeList {
                    PlaceStore.statement(placeList, tenantID: tenantID, viewerID: viewerID)
                } else if let list {
                    try await NoteStore.statement(Self.resolved(list, tenantID: tenantID, on: connection), tenantID: tenantID, viewerID: viewerID)
                } else {
                    try await NoteStore.statement(Self.resolved(cluster!, tenantID: tenantID, on: connection), tenantID: tenantID, viewerID: viewerID)
                }
                // With ANALYZE the plan also says which branch ran: "(never executed)" marks the other.
                let explain: PostgresQuery = analyze ? "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " : "EXPLAIN (COSTS OFF) "
                statement = explain + statement
                // Planned for these values, as the first runs of a prepared statement are.
                statement.prepared = false
                return try await connection.query(statement)
            }
        }
        return PlanText.withoutShardSuffixes(try rows.map { try $0.decode(String.self, column: 0) }.joined(separator: "\n"))
    }

    /// One seeded tenant for every test of the suite.
    static let seeded = Task { try await seed() }

    /// The part of `plan` from the line naming `start` up to the line naming `end` (or the end).
    static func section(_ plan: String, from start: String, to end: String? = nil) -> String {
        guard let lower = plan.range(of: start)?.lowerBound else { return "" }
        let rest = plan[lower...]
        if let end, let upper = rest.range(of: end)?.lowerBound { return String(rest[..<upper]) }
        return String(rest)
    }

    /// Whether `plan` asks `notes_search` for one time window and the text together (migration
    /// 0036): never a whole window read for its time alone. `text` is `body_folded ~~` for a
    /// trigram query; for two characters `search_bigrams_beyond_ascii(body_folded) @>` and
    /// `body_folded ~` (an ASCII pair's trigrams), each asked in a scan of its own (0041).
    static func asksWindowAndText(_ plan: String, _ text: String = "body_folded ~~") -> Bool {
        plan.split(separator: "\n").contains {
            // The time keys show inlined (ARRAY[…]), as PostgreSQL plans them.
            $0.contains("Index Cond:") && $0.contains(" @> ARRAY[w.key]") && $0.contains(text)
        }
    }

    /// The lines of an `EXPLAIN ANALYZE` excerpt for scans of notes that ran.
    static func scansRun(_ plan: String) -> [Substring] {
        plan.split(separator: "\n").filter { $0.contains(" on notes") && $0.contains("(actual rows=") }
    }

    @Test func statementsUseTheirIndexes() async throws {
        let (tenantID, viewerID) = try await Self.seeded.value

        // KNN: the index returns rows nearest first, in degrees (PlanarWalk); without a radius
        // the page within their reach is read through the geography index, with one through
        // the planar one; across the antimeridian the geography index walks.
        let nearest = try await Self.plan("near=-33.8,151.2&limit=50", tenantID: tenantID, viewerID: viewerID)
        let planarKNN = /Index Scan using notes_location_lnglat on notes[^\n]*\s+Index Cond: [^\n]+\s+Order By: \(\(location\)::geometry <->/
        #expect(nearest.contains(planarKNN), "\(nearest)")
        #expect(nearest.contains("Index Scan using notes_location on notes"), "the page, without a radius\n\(nearest)")
        // Within a radius the walk may also sort the box's few notes here, as the statistics
        // of the moment say; the walk and the page go through the planar index either way.
        let inRadius = try await Self.plan("near=-33.8,151.2&radius_m=20000&limit=50", tenantID: tenantID, viewerID: viewerID)
        #expect(inRadius.matches(of: /(Index Scan using|Bitmap Index Scan on) notes_location_lnglat/).count == 2, "the walk and the page\n\(inRadius)")
        #expect(!inRadius.contains(/notes_location(?!_lnglat)/), "\(inRadius)")
        let across = try await Self.plan("near=-33.8,180&radius_m=20000&limit=50", tenantID: tenantID, viewerID: viewerID)
        #expect(across.contains(/notes_location(?!_lnglat)/) && !across.contains("notes_location_lnglat"), "\(across)")

        let deeper = try await Self.plan("near=-33.8,151.2&radius_m=10000&q=harbour&limit=50", tenantID: tenantID, viewerID: viewerID)
        #expect(deeper.contains("notes_location"), "\(deeper)")

        for query in ["q=lighthouse&in=body", "q=lighthouse", "q=LightHouse&in=body&author=others"] {
            let search = try await Self.plan(query, tenantID: tenantID, viewerID: viewerID)
            #expect(search.contains("Bitmap Index Scan on notes_search"), "\(query)\n\(search)")
        }

        let viewport = try await Self.plan("bbox=151.0,-33.9,151.1,-33.8", tenantID: tenantID, viewerID: viewerID)
        #expect(viewport.contains("notes_location_lnglat"), "\(viewport)")

        let clusters = try await Self.plan("bbox=151.0,-33.9,151.1,-33.8&zoom=14", tenantID: tenantID, viewerID: viewerID, clusters: true)
        #expect(clusters.contains("notes_location_lnglat"), "\(clusters)")
        // Clusters read every match through indexes: authors matched by name are `= ANY`, which
        // the author index answers, even where the filters count as planned once.
        let named = try await Self.plan("bbox=151.0,-33.9,151.1,-33.8&zoom=14&q=planner7", tenantID: tenantID, viewerID: viewerID, clusters: true)
        #expect(named.contains("user_id = ANY (") && !named.contains("unnest("), "\(named)")

        let newest = try await Self.plan("author=me", tenantID: tenantID, viewerID: viewerID)
        #expect(newest.contains("notes_author_newest"), "\(newest)")
    }

    /// The lines of the part of an `EXPLAIN ANALYZE` for one CTE (up to the next one).
    static func cte(_ plan: String, _ name: String) -> String {
        let names = ["walked", "edge", "branch", "further", "fallback", "matches", "page"]
        let next = names.drop { $0 != name }.dropFirst().first { plan.contains("CTE \($0)") }
        return section(plan, from: "CTE \(name)", to: next.map { "CTE \($0)" })
    }

    /// Which of the walking statement's branches read notes: "walked", "further", "matches".
    static func branchesRun(_ plan: String) -> [String] {
        ["walked", "further", "matches"].filter { !scansRun(cte(plan, $0)).isEmpty }
    }

    /// Checks that the service's pages for `query` are exactly the plain statement's: every
    /// match sorted, no walk, its rows tested as a walk tests them (no index lookups, so one
    /// that misses a note fails here). The statement runs as the service runs it (pipelined reads,
    /// prepared) with the generic plan forced, since a prepared statement gets it after five
    /// runs; all `limit + 1` rows are compared, and the second page through the cursor.
    static func expectPagesExact(_ query: String, tenantID: Int64, viewerID: Int64) async throws {
        var parameters = try QueryParameters(query: query)
        let list = try NoteList(&parameters)
        let pool = try PostgresPool(configuration: .init(conninfo: try TestEnvironment.variable("LR_TEST_DATABASE_URL"), maxConnections: 1))
        defer { Task { await pool.close() } }
        let settings = [("app.tenant_id", String(tenantID)), ("plan_cache_mode", "force_generic_plan")]
        try await pool.withPipelinedReads(settings: settings) { reads in
            let store = NoteStore()
            var resolved = list
            resolved.filters = try await store.resolvingUsernames(list.filters, tenantID: tenantID, on: reads)
            var reference: PostgresQuery = """
                SELECT n.id FROM tenant_notes n
                WHERE \(NoteStore.condition(resolved.filters, tenantID: tenantID, viewerID: viewerID, reading: .walk))
                ORDER BY n.created_at DESC, n.id DESC
                LIMIT \(2 * list.limit + 1)
                """
            reference.prepared = false
            let expected = try await reads.query(reference).map { try $0.decode(Int64.self, column: 0) }
            let rows = try await reads.query(NoteStore.statement(resolved, tenantID: tenantID, viewerID: viewerID))
                .map { try $0.decode(Int64.self, column: 0) }
            #expect(!rows.isEmpty && rows == Array(expected.prefix(list.limit + 1)), "\(query)")

            let first = try await store.page(list, tenantID: tenantID, viewerID: viewerID, on: reads)
            guard let cursor = first.nextCursor else {
                #expect(expected.count <= list.limit, "no next page\n\(query)")
                return
            }
            var next = try QueryParameters(query: query + "&cursor=" + cursor)
            let second = try await store.page(NoteList(&next), tenantID: tenantID, viewerID: viewerID, on: reads)
            #expect(second.items.map(\.id) == Array(expected.dropFirst(list.limit).prefix(list.limit)), "page 2\n\(query)")
        }
    }

    /// Newest first with a viewport or a text search walks the newest notes, goes on walking
    /// when matches are few but not rare, and asks the index when they are rare (issue 9).
    /// All three branches are in every plan; the one that ran is the right one, whatever
    /// the planner's estimates say, and each returns exactly the plain statement's page.
    @Test func viewportPagesWalkOrAskTheSpatialIndex() async throws {
        let (tenantID, viewerID) = try await Self.seeded.value

        // The whole seeded area: every note matches, the walk answers.
        let dense = try await Self.plan("bbox=150.1,-34.9,152.3,-32.7", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.cte(dense, "walked").contains("Index Scan using notes_newest on notes"), "\(dense)")
        #expect(Self.branchesRun(dense) == ["walked"], "the walk answered\n\(dense)")

        // 0.3 degrees square: ~2% of the notes, ~21 visible ones in the first 1,000 (locations are
        // seeded, so the same every run): the walk goes on past its edge and finds the rest.
        let medium = try await Self.plan("bbox=151.0,-33.9,151.3,-33.6", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(medium) == ["walked", "further"], "the walk went on\n\(medium)")
        #expect(Self.cte(medium, "further").contains("Index Cond: ((tenant_id = "), "\(medium)")

        // 0.03 degrees square: ~22 notes in all, none or one in the first 1,000: the spatial index.
        let sparse = try await Self.plan("bbox=151.0,-33.9,151.03,-33.87", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(sparse) == ["walked", "matches"], "\(sparse)")
        // A bitmap or a plain index scan, as the statistics of the moment make cheaper: either is the spatial index.
        #expect(sparse.contains("Bitmap Index Scan on notes_location_lnglat (actual rows=")
                    || sparse.contains("Index Scan using notes_location_lnglat on notes"), "the spatial index answered\n\(sparse)")

        // With a common word as well, in a dense box: still the walk.
        let word = try await Self.plan("bbox=150.1,-34.9,152.3,-32.7&q=coffee&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(word) == ["walked"], "the walk answered\n\(word)")

        for query in ["bbox=150.1,-34.9,152.3,-32.7", "bbox=151.0,-33.9,151.3,-33.6", "bbox=151.0,-33.9,151.03,-33.87",
                      "bbox=151.0,-33.9,151.3,-33.6&q=coffee&in=body&limit=7"] {
            try await Self.expectPagesExact(query, tenantID: tenantID, viewerID: viewerID)
        }
    }

    /// Newest-first search: a common word is found by the walk, rarer ones through the text
    /// index, one time window at a time, a phrase in 1 note of a few hundred by walking
    /// further; usernames resolve
    /// first, then many authors' notes are walked newest first and one author's come from
    /// `notes_author_newest`. The choice is made by the statement from the rows it sees, so
    /// it is prepared: the service plans it once per connection.
    @Test func searchPicksTheWalkOrTheTrigramIndexPerWord() async throws {
        let (tenantID, viewerID) = try await Self.seeded.value

        // One note in six.
        let common = try await Self.plan("q=coffee&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.cte(common, "walked").contains("Index Scan using notes_newest on notes"), "\(common)")
        #expect(Self.branchesRun(common) == ["walked"], "\(common)")

        // "977" in the note number: 10 of the newest 1,000 (99977 and 9977x but the private
        // 99770), ~0.3% further on: the text index, one time window at a time (the notes were
        // all written within the hour, so the first window, an hour, holds them all).
        let fewer = try await Self.plan("q=977&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(fewer) == ["walked", "matches"], "\(fewer)")
        #expect(Self.asksWindowAndText(Self.cte(fewer, "matches")), "\(fewer)")

        // "coffee note 999", a phrase: 14 visible in the newest 1,000 (coffee notes 99900 to
        // 99996) and one more (9996) far back: the walk goes on, finds none in its further
        // 15,000, and the text index finds the rest window by window.
        let burst = try await Self.plan("q=coffee note 999&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(burst) == ["walked", "further", "matches"], "\(burst)")
        #expect(Self.cte(burst, "matches").contains("Bitmap Index Scan on notes_search (actual rows="), "\(burst)")
        #expect(Self.asksWindowAndText(Self.cte(burst, "matches")), "\(burst)")

        // "beach note 9", a phrase: ~150 visible in the newest 1,000 (notes 99001 to 100000, one
        // in six a beach), a page of 200: the walk goes on and fills it from notes 9xxxx.
        let phrase = try await Self.plan("q=beach note 9&in=body&limit=200", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(phrase) == ["walked", "further"], "\(phrase)")

        // One note in 5,000: the trigram index.
        let rare = try await Self.plan("q=lighthouse&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(rare) == ["walked", "matches"], "\(rare)")
        #expect(Self.cte(rare, "matches").contains("Bitmap Index Scan on notes_search (actual rows="), "\(rare)")
        #expect(Self.asksWindowAndText(Self.cte(rare, "matches")), "one time window at a time\n\(rare)")

        // A rare word in a box that holds every note: found through the text index's cells and
        // trigrams, not by reading the whole box; one plan fits every box since 0038, so it is
        // prepared, and its generic plan gives the same pages (`expectPagesExact` below).
        var boxedParameters = try QueryParameters(query: "bbox=150.1,-34.9,152.3,-32.7&q=lighthouse&in=body")
        #expect(NoteStore.statement(try NoteList(&boxedParameters), tenantID: tenantID, viewerID: viewerID).prepared,
                "a word in a box is planned once")
        let boxed = try await Self.plan("bbox=150.1,-34.9,152.3,-32.7&q=lighthouse&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(boxed) == ["walked", "matches"], "\(boxed)")
        #expect(Self.cte(boxed, "matches").contains("Bitmap Index Scan on notes_search (actual rows="), "\(boxed)")
        #expect(!Self.cte(boxed, "matches").contains("notes_location"), "\(boxed)")

        for query in ["q=coffee&in=body", "q=977&in=body", "q=coffee%20note%20999&in=body", "q=beach%20note%209&in=body&limit=200", "q=lighthouse&in=body",
                      "q=lighthouse", "q=977&in=body&limit=3", "q=977&in=body&limit=20", "q=planner7",
                      "bbox=150.1,-34.9,152.3,-32.7&q=lighthouse&in=body", "bbox=150.1,-34.9,151.2,-33.6&q=lighthouse&limit=3"] {
            try await Self.expectPagesExact(query, tenantID: tenantID, viewerID: viewerID)
        }

        // planner1 … planner50 all match: their notes are every note, walked newest first.
        let everyone = try await Self.plan("q=planner&in=username", tenantID: tenantID, viewerID: viewerID)
        #expect(everyone.contains("Index Scan using notes_newest on notes"), "\(everyone)")

        // Only planner7 matches "planner7" (one author of 50, 2% of the notes): in usernames
        // alone, the statement gets the id as a value, planned for it (the planner walks or
        // reads the author's index).
        let one = try await Self.plan("q=planner7&in=username", tenantID: tenantID, viewerID: viewerID)
        #expect(one.contains("user_id = ANY ('{"), "\(one)")
        #expect(one.contains("notes_newest") || one.contains("notes_author_newest"), "\(one)")
        // In bodies and usernames the walking statement is prepared, the ids one array
        // parameter: the walks test them as a hashed subplan (a parameter in `= ANY` is
        // compared id by id on every row), the every-match branch with `= ANY`, which the
        // author index answers.
        var byName = try QueryParameters(query: "q=planner7")
        #expect(NoteStore.statement(try NoteList(&byName), tenantID: tenantID, viewerID: viewerID).prepared, "authors by name are planned once")
        let both = try await Self.plan("q=planner7", tenantID: tenantID, viewerID: viewerID)
        #expect(Self.cte(both, "walked").contains("hashed SubPlan"), "\(both)")
        #expect(Self.cte(both, "matches").contains("user_id = ANY ("), "\(both)")
        for query in ["q=planner7&in=username", "q=planner&in=all", "q=planner7&in=username&limit=5", "q=lighthouse%20keeper%204&in=all"] {
            try await Self.expectPagesExact(query, tenantID: tenantID, viewerID: viewerID)
        }
    }

    /// Two characters (issue 37): a rare pair is found through the bigram index, a common one
    /// by the walk; an accented word folded (`creme brulee` for `Crème brûlée`) through the
    /// trigram index of the folded bodies. Each page is exactly the plain statement's.
    @Test func twoCharactersAndFoldedWordsUseAnIndex() async throws {
        let (tenantID, viewerID) = try await Self.seeded.value

        // 20 notes of 100,000.
        let rare = try await Self.plan("q=%E5%A4%9C%E6%99%AF&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(rare) == ["walked", "matches"], "\(rare)")
        #expect(Self.cte(rare, "matches").contains("Bitmap Index Scan on notes_search (actual rows="), "\(rare)")
        #expect(Self.asksWindowAndText(Self.cte(rare, "matches"), "search_bigrams_beyond_ascii(body_folded) @>"), "\(rare)")

        // An ASCII pair (20 notes), inside a run (`zz`) and where one begins (`qu`): its bigrams
        // are not indexed (0041), so the rare matches ask the trigrams ending in it, and the
        // bigrams of runs beyond ASCII, each with the time window.
        for pair in ["zz", "qu"] {
            let ascii = try await Self.plan("q=\(pair)&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
            #expect(Self.branchesRun(ascii) == ["walked", "matches"], "\(ascii)")
            #expect(Self.asksWindowAndText(Self.cte(ascii, "matches"), "body_folded ~ "), "\(ascii)")
            #expect(Self.asksWindowAndText(Self.cte(ascii, "matches"), "search_bigrams_beyond_ascii(body_folded) @>"), "\(ascii)")
            #expect(!Self.cte(ascii, "matches").contains("Seq Scan on notes"), "\(ascii)")
        }

        // "ar": harbour, market and garden, half the notes.
        let common = try await Self.plan("q=ar&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(common) == ["walked"], "\(common)")

        // Nearest first, the rare pair: every match in range through the bigram index.
        let near = try await Self.plan("near=-33.8,151.2&radius_m=100000&q=%E5%A4%9C%E6%99%AF&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.section(near, from: "CTE by_filter").contains("Bitmap Index Scan on notes_search (actual rows="), "\(near)")
        let nearPair = try await Self.plan("near=-33.8,151.2&radius_m=100000&q=zz&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.section(nearPair, from: "CTE by_filter").contains("Bitmap Index Scan on notes_search (actual rows="), "\(nearPair)")
        #expect(!Self.section(nearPair, from: "CTE by_filter").contains("Seq Scan on notes"), "\(nearPair)")

        let folded = try await Self.plan("q=CREME%20BRULEE&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.branchesRun(folded) == ["walked", "matches"], "\(folded)")
        #expect(Self.cte(folded, "matches").contains("Bitmap Index Scan on notes_search (actual rows="), "\(folded)")

        for query in ["q=%E5%A4%9C%E6%99%AF&in=body", "q=%E6%9D%B1%E4%BA%AC", "q=ar&in=body", "q=CREME%20BRULEE&in=body",
                      "q=zz&in=body", "q=qu", "q=%E5%A4%9C%E6%99%AF&in=body&limit=7", "q=zz&in=body&limit=7"] {
            try await Self.expectPagesExact(query, tenantID: tenantID, viewerID: viewerID)
        }
    }

    /// Nearest first with a filter: a bounded KNN walk when the filter is common near the
    /// point, else every match in range through the filter's own index, sorted.
    @Test func filteredNearestWalksOrAsksTheFiltersIndex() async throws {
        let (tenantID, viewerID) = try await Self.seeded.value

        let common = try await Self.plan(
            "near=-33.8,151.2&radius_m=10000&q=coffee&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        // Both the walk and its page go through the planar index (PlanarWalk). Here the
        // circle's box holds a thousand notes, so the planner may walk them nearest first or
        // sort them, as the statistics of the moment say (at ten million notes in London it
        // walks: bench/results/2026-11-29-near.md); either way, through that index.
        let walked = Self.section(common, from: "CTE by_walk", to: "CTE by_filter")
        #expect(walked.contains(/(Index Scan using|Bitmap Index Scan on) notes_location_lnglat/), "\(common)")
        #expect(Self.section(common, from: "CTE walk", to: "CTE sphere_nearest").contains(/(Index Scan using|Bitmap Index Scan on) notes_location_lnglat/),
                "\(common)")
        #expect(!walked.contains("never executed"), "the walk answered\n\(common)")
        #expect(!Self.section(common, from: "CTE by_filter").contains("notes_search (actual rows="), "\(common)")
        // The walk stops at its page's last match: its matches are taken in the order the
        // nearest notes come (no sort over the whole walk), so fewer than all are numbered.
        let walk = Self.section(common, from: "CTE walk", to: "CTE sphere_nearest")
        #expect(walk.contains(/Limit \(actual rows=51 loops=1\)\s+->  Subquery Scan/), "\(common)")
        let numbered = walk.firstMatch(of: /WindowAgg \(actual rows=(\d+)/).map { Int($0.1)! }
        #expect(numbered.map { $0 < NoteStore.nearestWalk } ?? false, "\(common)")

        // Across the antimeridian distance in degrees is no order: the geography index walks.
        let across = try await Self.plan(
            "near=0,179.99&radius_m=20000&q=coffee&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        let acrossWalk = Self.section(across, from: "CTE walk", to: "CTE sphere_nearest")
        #expect(acrossWalk.contains(/notes_location(?!_lnglat)/) && !acrossWalk.contains("notes_location_lnglat"), "\(across)")

        let rare = try await Self.plan(
            "near=-33.8,151.2&radius_m=10000&q=lighthouse&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.section(rare, from: "CTE walk", to: "CTE sphere_nearest").contains("notes_location"), "\(rare)")
        #expect(Self.section(rare, from: "CTE by_filter").contains("Bitmap Index Scan on notes_search (actual rows="), "\(rare)")

        let mine = try await Self.plan("near=-33.8,151.2&author=me", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(Self.section(mine, from: "CTE by_filter").contains("notes_author_newest"), "\(mine)")

        // Prepared: its generic plan, which binds the origin (and a word) once per use, gives
        // the custom plan's pages, the first and the one after it: by walking (coffee), by
        // every match (lighthouse, the pair, the CJK word), without a radius, across the antimeridian.
        for query in ["near=-33.8,151.2&radius_m=10000&author=others", "near=-33.8,151.2&author=others&limit=7",
                      "near=-33.8,151.2&radius_m=10000&q=coffee&in=body&limit=7", "near=-33.8,151.2&q=coffee&limit=7",
                      "near=-33.8,151.2&radius_m=100000&q=lighthouse&in=body&limit=3",
                      "near=-33.8,151.2&radius_m=100000&q=zz&in=body&limit=3",
                      "near=-33.8,151.2&radius_m=100000&q=%E5%A4%9C%E6%99%AF&limit=3",
                      "near=-33.8,180&radius_m=3000000&q=coffee&in=body&limit=7"] {
            var pages: [[Int64]] = []
            for mode in ["force_custom_plan", "force_generic_plan"] {
                let pool = try PostgresPool(configuration: .init(conninfo: try TestEnvironment.variable("LR_TEST_DATABASE_URL"), maxConnections: 1))
                let settings = [("app.tenant_id", String(tenantID)), ("plan_cache_mode", mode)]
                pages.append(try await pool.withPipelinedReads(settings: settings) { reads in
                    var parameters = try QueryParameters(query: query)
                    let first = try await NoteStore().page(try NoteList(&parameters), tenantID: tenantID, viewerID: viewerID, on: reads)
                    guard let cursor = first.nextCursor else { return first.items.map(\.id) }
                    var next = try QueryParameters(query: query + "&cursor=" + cursor)
                    let second = try await NoteStore().page(try NoteList(&next), tenantID: tenantID, viewerID: viewerID, on: reads)
                    return (first.items + second.items).map(\.id)
                })
                await pool.close()
            }
            #expect(!pages[0].isEmpty && pages[0] == pages[1], "\(query)")
        }
    }

    /// A deep page starts its index scan at the cursor; places page through their own index.
    @Test func cursorsAndPlacesKeepTheirIndexes() async throws {
        let (tenantID, viewerID) = try await Self.seeded.value

        var parameters = try QueryParameters(query: "")
        let filters = try NoteFilters(&parameters)
        // The cursor of the tenant's middle note, so half its notes lie past it. A cursor
        // before every note (a fixed 2023 date once) leaves the planner an estimate of one
        // row, where a bitmap scan and a sort cost about what the index scan does: CI once
        // planned it that way.
        let (micros, id) = try await TestEnvironment.withOwnerPool { pool in
            let row = try await pool.query("""
                SELECT (extract(epoch FROM created_at) * 1000000)::bigint, id FROM notes
                WHERE tenant_id = \(tenantID) ORDER BY created_at, id OFFSET \(Self.noteCount / 2) LIMIT 1
                """)[0]
            return (try row.decode(Int64.self, column: 0), try row.decode(Int64.self, column: 1))
        }
        let cursor = KeysetCursor(key: .newest(createdMicros: micros, id: id)).encoded(fingerprint: filters.fingerprint)
        let deep = try await Self.plan("cursor=\(cursor)", tenantID: tenantID, viewerID: viewerID)
        #expect(deep.contains("Index Scan using notes_newest on notes"), "\(deep)")
        #expect(deep.contains("ROW(created_at, id) < ROW("), "the keyset is an index condition\n\(deep)")

        let newest = try await Self.plan("", tenantID: tenantID, viewerID: viewerID, places: true)
        #expect(newest.contains("Index Scan using places_newest on places"), "\(newest)")
        #expect(!newest.contains("Sort"), "\(newest)")

        let nearest = try await Self.plan("near=-33.8,151.2&radius_m=10000", tenantID: tenantID, viewerID: viewerID, places: true)
        #expect(nearest.contains("places_location"), "\(nearest)")
    }
}
