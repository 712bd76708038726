import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// Newest-first search of a rare word asks the text index one time window at a time
/// (migration 0035, `NoteStore.rareMatches`). Over notes spread across three years, with
/// bursts and long gaps, every page is exactly what the plain statement (every match,
/// sorted) gives, across pages, while others write.
@Suite(.timeLimit(.minutes(3))) struct SearchWindowTests {
    /// 20,000 notes by three users, one every 1.5 hours on average going back 3.4 years, in
    /// groups of 4 at the same microsecond (ties the keyset must break by id), every seventh
    /// private. `quokka`: one note in 250, scattered by a hash (evenly spaced matches fell in
    /// step with the 16-week windows, and a window skipped by mistake went unnoticed), and
    /// every third note of a burst 2 years back: 1 in the newest 1,000, so the walk gives up and
    /// the windows answer. `河童`: one in 211, 4 in the newest 1,000.
    static func seed(tenant: String, authors: [Account]) async throws {
        let tenantID = try await NotesFixture.tenantID(tenant)
        let userIDs = authors.map { Int64($0.userID)! }
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                INSERT INTO notes (tenant_id, user_id, body, location, visibility, created_at, updated_at)
                SELECT \(tenantID), (\(userIDs))[1 + g % 3],
                       'seeded note ' || g
                       || CASE WHEN abs(hashint4(g)) % 250 = 0 OR (g BETWEEN 12000 AND 12400 AND g % 3 = 0) THEN ' Quokka!' ELSE '' END
                       || CASE WHEN abs(hashint4(g + 7)) % 211 = 0 THEN ' 河童の川' ELSE '' END,
                       ST_SetSRID(ST_MakePoint(151.2 + random() - 0.5, -33.8 + random() - 0.5), 4326)::geography,
                       CASE WHEN g % 7 = 0 THEN 'private' ELSE 'public' END,
                       stamp, stamp
                FROM generate_series(1, 20000) g,
                     LATERAL (SELECT now() - (g / 4) * interval '6 hours' AS stamp) s
                """)
            try await pool.query("ANALYZE notes")
        }
    }

    /// Every match `viewer` sees, newest first: the plain statement, as the owner.
    static func expected(tenant: String, viewer: Account, word: String) async throws -> [String] {
        let tenantID = try await NotesFixture.tenantID(tenant)
        return try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT id FROM notes
                WHERE tenant_id = \(tenantID) AND (visibility = 'public' OR user_id = \(Int64(viewer.userID)!))
                  AND strpos(body_folded, search_fold(\(word))) > 0
                ORDER BY created_at DESC, id DESC
                """).map { String(try $0.decode(Int64.self, column: 0)) }
        }
    }

    @Test(arguments: ["quokka", "河童"]) func pagesAreThePlainStatementsWhileOthersWrite(word: String) async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bob", tenant: tenant)
            let carol = try await client.signup("carol", tenant: tenant)
            try await Self.seed(tenant: tenant, authors: [alice, bob, carol])
            let expected = try await Self.expected(tenant: tenant, viewer: alice, word: word)
            #expect(expected.count > 80)
            let original = Set(expected)

            var seen: [String] = []
            var written: Set<String> = []
            var cursor: String?
            var pages = 0
            repeat {
                let path = "/v1/notes?q=\(queryValue(word))&in=body&limit=7" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await client.page(path, token: alice.accessToken)
                #expect(page.items.count == 7 || page.next == nil)
                seen += page.items.map(\.id)
                cursor = page.next
                pages += 1
                if pages % 4 == 0 {
                    // New matches, newer than every page still to come.
                    written.insert(try await client.createNote(bob, "written while walking: \(word)", lat: -33.8, lng: 151.2).id)
                }
            } while cursor != nil
            #expect(seen.count == Set(seen).count, "a note was repeated")
            #expect(seen.filter(original.contains) == expected, "matches were skipped or out of order")
            #expect(Set(seen).subtracting(original).isSubset(of: written), "only notes written meanwhile are new")
            #expect(pages >= expected.count / 7)
        }
    }

    /// The page is found window by window: several windows asked, each with the word, and
    /// the page exact. (Plans are single-server: see NotesPlanTests.)
    @Test(.disabled(if: CitusRoutingTests.onCitus, "single-server plans"))
    func windowsWidenUntilThePageIsFull() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            try await Self.seed(tenant: tenant, authors: [alice, alice, alice])
            let tenantID = try await NotesFixture.tenantID(tenant)
            let viewerID = Int64(alice.userID)!
            let plan = try await NotesPlanTests.plan("q=quokka&in=body", tenantID: tenantID, viewerID: viewerID, analyze: true)
            #expect(NotesPlanTests.branchesRun(plan) == ["walked", "matches"], "\(plan)")
            let matches = NotesPlanTests.cte(plan, "matches")
            #expect(NotesPlanTests.asksWindowAndText(matches), "\(plan)")
            // 1 match in the newest 1,000 notes (~6 weeks), 51 needed: more than 3 windows.
            let windows = matches.firstMatch(of: /Function Scan on search_windows w \(actual rows=(\d+)/).map { Int($0.1)! } ?? 0
            #expect(windows > 3, "\(plan)")
            for query in ["q=quokka&in=body", "q=quokka", "q=%E6%B2%B3%E7%AB%A5&in=body&limit=9"] {
                try await NotesPlanTests.expectPagesExact(query, tenantID: tenantID, viewerID: viewerID)
            }
        }
    }
}
