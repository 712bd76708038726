import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// Newest-first search of a word the walk of the newest notes does not find a page of asks
/// the text index one time window at a time (migration 0036, `NoteStore.windowedMatches`).
/// Over notes spread across three years, with bursts and long gaps, every page is exactly
/// what the plain statement (every match, sorted) gives, across pages, while others write;
/// the windows tile the tenant's time newest first, and the first is sized to the page.
@Suite(.timeLimit(.minutes(10))) struct SearchWindowTests {
    /// One tenant for the suite: 3 users and 20,000 notes, one every 1.5 hours on average
    /// going back 3.4 years, in groups of 4 at the same microsecond (ties the keyset must break
    /// by id), every seventh private. Inserted as NotesPlanTests does (the event trigger off,
    /// in batches): one transaction of 20,000 rows with the triggers on held every other
    /// suite's event streams and grid cells for a minute of CI's main pass.
    ///
    /// Three words, each scattered by a hash (evenly spaced matches fell in step with the
    /// 16-week windows, and a window skipped by mistake went unnoticed), so that the newest
    /// 1,000 notes hold fewer than 5 of them: the walk gives up and the windows answer.
    /// `quokka`, `河童` and the pair `zq` are for the tests that write more of them while they
    /// page; `wombat` and the pair `jx`, never written, are for the plans. quokka, wombat and
    /// zq also fill every third note of a burst two years back. Each pair stands alone (found
    /// through the trigrams that end in it), after 川 (through the bigrams of a run beyond
    /// ASCII), or both ways in one note (SearchText.pairLookups, migration 0041).
    static func seed() async throws -> (slug: String, tenantID: Int64, userIDs: [Int64]) {
        let slug = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(slug)
        let userIDs = try await TestEnvironment.withOwnerPool { pool in
            let users = try await NotesFixture.insertUsers(tenantID: tenantID, prefix: "window", count: 3, on: pool)
            try await NotesFixture.insertGenerated(count: 20_000, seed: 0.75, on: pool) { from, to in
                """
                INSERT INTO notes (tenant_id, user_id, body, location, visibility, created_at, updated_at)
                SELECT \(tenantID), (\(users))[1 + g % 3],
                       'seeded note ' || g
                       || CASE WHEN abs(hashint4(g)) % 250 = 0 OR (g BETWEEN 12000 AND 12400 AND g % 3 = 0) THEN ' Quokka!' ELSE '' END
                       || CASE WHEN abs(hashint4(g + 7)) % 211 = 0 THEN ' 河童の川' ELSE '' END
                       || CASE WHEN abs(hashint4(g + 13)) % 250 = 0 OR (g BETWEEN 12000 AND 12400 AND g % 3 = 1) THEN ' wombat' ELSE '' END
                       || CASE WHEN abs(hashint4(g + 17)) % 750 = 0 OR (g BETWEEN 12000 AND 12400 AND g % 3 = 2) THEN ' zq'
                               WHEN abs(hashint4(g + 17)) % 750 = 1 THEN ' 川zq'
                               WHEN abs(hashint4(g + 17)) % 750 = 2 THEN ' zq 川zq' ELSE '' END
                       || CASE abs(hashint4(g + 19)) % 300 WHEN 0 THEN ' jx' WHEN 1 THEN ' 川jx' WHEN 2 THEN ' jx 川jx' ELSE '' END,
                       ST_SetSRID(ST_MakePoint(-70.6 + random() - 0.5, -33.4 + random() - 0.5), 4326)::geography,
                       CASE WHEN g % 7 = 0 THEN 'private' ELSE 'public' END,
                       stamp, stamp
                FROM generate_series(\(literal: from), \(literal: to)) g,
                     LATERAL (SELECT now() - (g / 4) * interval '6 hours' AS stamp) s
                """
            }
            try await pool.query("ANALYZE notes")
            return users
        }
        return (slug, tenantID, userIDs)
    }

    static let seeded = Task { try await seed() }

    /// Every match `viewerID` sees, newest first: the plain statement, as the owner.
    static func expected(tenantID: Int64, viewerID: Int64, word: String) async throws -> [String] {
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT id FROM notes
                WHERE tenant_id = \(tenantID) AND (visibility = 'public' OR user_id = \(viewerID))
                  AND strpos(body_folded, search_fold(\(word))) > 0
                ORDER BY created_at DESC, id DESC
                """).map { String(try $0.decode(Int64.self, column: 0)) }
        }
    }

    @Test(arguments: ["quokka", "河童", "zq"]) func pagesAreThePlainStatementsWhileOthersWrite(word: String) async throws {
        let (slug, tenantID, _) = try await Self.seeded.value
        try await withApp { client in
            let name = ["quokka": "quokka", "河童": "kappa", "zq": "pair"][word]!
            let reader = try await client.signup("\(name)_reader", tenant: slug)
            let writer = try await client.signup("\(name)_writer", tenant: slug)
            let expected = try await Self.expected(tenantID: tenantID, viewerID: Int64(reader.userID)!, word: word)
            #expect(expected.count > 80)
            let original = Set(expected)

            var seen: [String] = []
            var written: Set<String> = []
            var cursor: String?
            var pages = 0
            repeat {
                let path = "/v1/notes?q=\(queryValue(word))&in=body&limit=7" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await client.page(path, token: reader.accessToken)
                #expect(page.items.count == 7 || page.next == nil)
                seen += page.items.map(\.id)
                cursor = page.next
                pages += 1
                if pages % 4 == 0 {
                    // New matches, newer than every page still to come.
                    written.insert(try await client.createNote(writer, "written while walking: \(word)", lat: -33.4, lng: -70.6).id)
                }
            } while cursor != nil
            #expect(seen.count == Set(seen).count, "a note was repeated")
            #expect(seen.filter(original.contains) == expected, "matches were skipped or out of order")
            #expect(Set(seen).subtracting(original).isSubset(of: written), "only notes written meanwhile are new")
            #expect(pages >= expected.count / 7)
        }
    }

    /// The first window is sized to the page: `wombat`, in 1 note of 250 (at most 3 in the
    /// newest 1,000, which span 1,500 hours), needs over 19,000 hours for 51 matches, so the
    /// first window is of 32,768 hours; for a page of 3, of 4,096 hours or more, which hold 3.
    /// Windows are aligned to multiples of their width since 1970, so the one that holds the
    /// newest hour may have begun lately: then the next (as wide or 8 times as wide) holds the
    /// rest of the page, and never a third. (0035's weeks asked more than 3 windows for it.)
    /// Every page is exact; the tests above walk many windows, page after page.
    @Test(.disabled(if: CitusRoutingTests.onCitus, "single-server plans"))
    func windowsAreSizedToThePage() async throws {
        let (_, tenantID, userIDs) = try await Self.seeded.value
        let viewerID = userIDs[0]
        func windowsRun(_ query: String) async throws -> Int {
            let plan = try await NotesPlanTests.plan(query, tenantID: tenantID, viewerID: viewerID, analyze: true)
            #expect(NotesPlanTests.branchesRun(plan) == ["walked", "matches"], "\(plan)")
            let matches = NotesPlanTests.cte(plan, "matches")
            #expect(NotesPlanTests.asksWindowAndText(matches), "\(plan)")
            return matches.firstMatch(of: /Function Scan on search_spans w \(actual rows=(\d+)/).map { Int($0.1)! } ?? 0
        }
        let page = try await windowsRun("q=wombat&in=body")
        #expect((1...2).contains(page), "the window sized to the page, cut short at most once by its alignment")
        let small = try await windowsRun("q=wombat&in=body&limit=3")
        #expect((1...2).contains(small), "the window sized to the page, cut short at most once by its alignment")
        // The pair: both ways of finding it, each with the window.
        let pair = try await NotesPlanTests.plan("q=jx&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
        #expect(NotesPlanTests.branchesRun(pair) == ["walked", "matches"], "\(pair)")
        for lookup in ["body_folded ~ ", "search_bigrams_beyond_ascii(body_folded) @>"] {
            #expect(NotesPlanTests.asksWindowAndText(NotesPlanTests.cte(pair, "matches"), lookup), "\(pair)")
        }
        for query in ["q=wombat&in=body", "q=WOMBAT", "q=wombat&in=body&limit=9", "q=wombat&in=body&limit=3",
                      "q=jx&in=body", "q=%EF%BC%AA%EF%BC%B8&in=body&limit=3"] {
            try await NotesPlanTests.expectPagesExact(query, tenantID: tenantID, viewerID: viewerID)
        }
    }

    /// `search_spans` over 3,000 random spans and rates: the first window holds the newest
    /// hour, each next one ends the hour before the last began (no gap, no overlap), is as
    /// wide or 8 times as wide, and the last reaches the oldest; the first is the narrowest
    /// expected to hold the page at the rate seen (at least one match assumed, 8^5 hours at most).
    @Test func windowsTileTheTimeNewestFirst() async throws {
        try await TestEnvironment.migrate()
        let faults = try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                WITH args AS (
                    SELECT c, newest, newest - random() ^ 3 * interval '3000 hours' AS edge,
                           newest - random() ^ 2 * interval '70000 hours' AS oldest, (random() * 60)::bigint AS seen,
                           1 + (random() * 200)::int AS wanted
                    FROM (SELECT c, now() - random() * interval '100 hours' AS newest FROM generate_series(1, 3000) c) s
                ), windows AS (
                    SELECT a.*, w.i, ((w.key >> 24) & 15)::int AS level, w.key & 16777215 AS number, w.key >> 28 AS tenant
                    FROM args a, search_spans(77, a.newest, a.edge, a.oldest, a.seen, a.wanted) WITH ORDINALITY w(key, i)
                ), spans AS (
                    SELECT *, number << (3 * level) AS first_hour, ((number + 1) << (3 * level)) - 1 AS last_hour,
                           lag(number << (3 * level)) OVER (PARTITION BY c ORDER BY i) AS last_began,
                           lag(level) OVER (PARTITION BY c ORDER BY i) AS last_level,
                           least(5, ceil(ln(greatest(date_part('epoch', newest - edge) / 3600 * wanted / greatest(seen, 1), 1)) / ln(8))) AS sized
                    FROM windows
                )
                SELECT 'first' FROM spans WHERE i = 1 AND (NOT search_hour(newest) BETWEEN first_hour AND last_hour OR level <> sized)
                UNION ALL SELECT 'gap' FROM spans WHERE i > 1 AND last_hour <> last_began - 1
                UNION ALL SELECT 'width' FROM spans WHERE i > 1 AND level NOT IN (last_level, last_level + 1)
                UNION ALL SELECT 'tenant' FROM spans WHERE tenant <> 77
                UNION ALL SELECT 'short' FROM spans GROUP BY c, oldest HAVING min(first_hour) > search_hour(oldest)
                UNION ALL SELECT 'long' FROM spans GROUP BY c, oldest HAVING count(*) FILTER (WHERE last_hour < search_hour(oldest)) > 0
                UNION ALL SELECT 'cases' WHERE (SELECT count(DISTINCT c) FROM spans) <> 3000
                """).map { try $0.decode(String.self, column: 0) }
        }
        #expect(faults.isEmpty, "\(Set(faults))")
    }
}
