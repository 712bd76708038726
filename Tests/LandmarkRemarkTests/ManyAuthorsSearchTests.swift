import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// A search whose name matches more authors than `NoteStore.namesResolvedUpFront` (a common
/// name: `kim` in a big tenant) walks the newest notes and tests each one's author by name
/// (`NoteFilters.Authors.many`); with fewer, the authors' ids go to the statement as before.
/// Every page, each way through the walking statement (walked, walked further, every match),
/// newest and nearest first, is exactly the plain statement's.
@Suite(.timeLimit(.minutes(10))) struct ManyAuthorsSearchTests {
    /// 250 `kim.N` users, who write one note in 25 of 3,000 (one a minute, the newest first);
    /// 210 `quiet.N` users, who wrote 3 of the oldest; a `writer1` for the rest, one body in 100
    /// of which says `kimchi`. Every tenth note is private. The notes lie on a grid of 50 × 60
    /// points 0.001° apart near Sydney.
    static func seed() async throws -> (slug: String, tenantID: Int64) {
        let slug = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(slug)
        try await TestEnvironment.withOwnerPool { pool in
            let kims = try await NotesFixture.insertUsers(tenantID: tenantID, prefix: "kim.", count: 250, on: pool)
            let quiet = try await NotesFixture.insertUsers(tenantID: tenantID, prefix: "quiet.", count: 210, on: pool)
            let writer = try await NotesFixture.insertUsers(tenantID: tenantID, prefix: "writer", count: 1, on: pool)[0]
            try await NotesFixture.insertGenerated(count: 3000, seed: 0.5, on: pool) { from, to in
                """
                INSERT INTO notes (tenant_id, user_id, body, location, visibility, created_at, updated_at)
                SELECT \(tenantID),
                       CASE WHEN g % 25 = 0 THEN (\(kims))[1 + (g / 25) % 250]
                            WHEN g IN (2501, 2751, 2999) THEN (\(quiet))[1 + g % 210]
                            ELSE \(writer) END,
                       CASE WHEN g % 100 = 7 THEN 'kimchi stew ' || g ELSE 'note ' || g END,
                       ST_SetSRID(ST_MakePoint(151.2 + (g % 50) * 0.001, -33.8 + (g / 50) * 0.001), 4326)::geography,
                       CASE WHEN g % 10 = 3 THEN 'private' ELSE 'public' END,
                       stamp, stamp
                FROM generate_series(\(literal: from), \(literal: to)) g,
                     LATERAL (SELECT now() - g * interval '1 minute' AS stamp) s
                """
            }
            try await pool.query("ANALYZE notes")
            try await pool.query("ANALYZE users")
        }
        return (slug, tenantID)
    }

    static let seeded = Task { try await seed() }

    /// Every note `viewerID` sees whose author's name holds `name` (or whose body does, with
    /// `bodies`), newest first, or nearest to `near` first: the plain statement, as the owner.
    static func expected(tenantID: Int64, viewerID: Int64, name: String, bodies: Bool = false, near: (lat: Double, lng: Double)? = nil,
                         radius: Double = 1e9) async throws -> [String] {
        let origin: PostgresQuery = "ST_SetSRID(ST_MakePoint(\(near?.lng ?? 0), \(near?.lat ?? 0)), 4326)::geography"
        let order: PostgresQuery = near == nil ? "n.created_at DESC, n.id DESC" : "ST_Distance(n.location, \(origin)), n.id"
        let text: PostgresQuery = bodies ? " OR strpos(n.body_folded, \(name)) > 0" : ""
        return try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT n.id FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
                WHERE n.tenant_id = \(tenantID) AND (n.visibility = 'public' OR n.user_id = \(viewerID))
                  AND (strpos(u.username_folded, \(name)) > 0\(text))
                  AND (\(near == nil) OR ST_DWithin(n.location, \(origin), \(radius)))
                ORDER BY \(order)
                """).map { String(try $0.decode(Int64.self, column: 0)) }
        }
    }

    /// `kim` matches 250 authors, past the 200 resolved up front; `kim.1` 111 (kim.1, kim.10-19,
    /// kim.100-199), whose ids the statement gets; `quiet` 210.
    @Test func aCommonNameIsTestedNoteByNote() async throws {
        let (_, tenantID) = try await Self.seeded.value
        let resolved = try await TestEnvironment.withAppPool { pool in
            try await pool.withTransaction(settings: [("app.tenant_id", String(tenantID))]) { connection in
                var found: [NoteFilters.Authors?] = []
                for name in ["kim", "kim.1", "quiet", "nobody"] {
                    var parameters = try QueryParameters(query: "q=\(name)&in=username")
                    let list = try NoteList(&parameters)
                    found.append(try await NoteStore().resolvingUsernames(list.filters, tenantID: tenantID, on: connection).search?.authors)
                }
                return found
            }
        }
        #expect(resolved[0] == .many)
        if case .ids(let ids) = resolved[1] { #expect(ids.count == 111) } else { Issue.record("kim.1: \(String(describing: resolved[1]))") }
        #expect(resolved[2] == .many)
        #expect(resolved[3] == .ids([]))
    }

    /// Through the API, page by page, for limits that end the walk at once (5), after walking
    /// further (50: 40 kim notes in the newest 1,000), and with every match (the quiet authors,
    /// none of whose notes is among the newest 16,000); bodies and names; nearest first.
    @Test(arguments: [5, 50, 200]) func pagesAreThePlainStatements(limit: Int) async throws {
        let (slug, tenantID) = try await Self.seeded.value
        try await withApp { client in
            let reader = try await client.signup("reader\(limit)", tenant: slug)
            let viewerID = Int64(reader.userID)!
            let sydney = (lat: -33.7707, lng: 151.2203)
            let cases: [(query: String, expected: [String])] = [
                ("q=kim&in=username", try await Self.expected(tenantID: tenantID, viewerID: viewerID, name: "kim")),
                ("q=KIM", try await Self.expected(tenantID: tenantID, viewerID: viewerID, name: "kim", bodies: true)),
                ("q=quiet&in=username", try await Self.expected(tenantID: tenantID, viewerID: viewerID, name: "quiet")),
                ("q=kim.1&in=username", try await Self.expected(tenantID: tenantID, viewerID: viewerID, name: "kim.1")),
                ("q=kim&in=username&near=\(sydney.lat),\(sydney.lng)&radius_m=1500",
                 try await Self.expected(tenantID: tenantID, viewerID: viewerID, name: "kim", near: sydney, radius: 1500)),
                ("q=quiet&near=\(sydney.lat),\(sydney.lng)",
                 try await Self.expected(tenantID: tenantID, viewerID: viewerID, name: "quiet", bodies: true, near: sydney)),
            ]
            for (query, expected) in cases {
                #expect(!expected.isEmpty, "\(query)")
                let ids = try await client.walk("/v1/notes?" + query, token: reader.accessToken, limit: limit).map(\.id)
                #expect(ids == expected, "\(query) limit \(limit)")
            }
        }
    }

    /// The plans: `kim` walks and looks each walked note's author up by the users' primary key;
    /// `quiet`, whose notes the walk does not find, reads every match through the author index,
    /// the authors' ids looked up by name in the statement (a table this small is read whole).
    @Test(.disabled(if: CitusRoutingTests.onCitus, "single-server plans"))
    func theWalkLooksAuthorsUpByKey() async throws {
        let (_, tenantID) = try await Self.seeded.value
        let common = try await NotesPlanTests.plan("q=kim&in=username", tenantID: tenantID, viewerID: 0, analyze: true)
        #expect(NotesPlanTests.branchesRun(common) == ["walked", "further"], "\(common)")
        #expect(NotesPlanTests.cte(common, "walked").contains("Index Scan using users_pkey on users"), "\(common)")
        let rare = try await NotesPlanTests.plan("q=quiet&in=username", tenantID: tenantID, viewerID: 0, analyze: true)
        #expect(NotesPlanTests.branchesRun(rare) == ["walked", "matches"], "\(rare)")
        let matches = NotesPlanTests.cte(rare, "matches")
        // Through the author index, walked or as a bitmap (the planner picks by the statistics of the moment).
        #expect(matches.contains("username_folded ~~ '%quiet%'")
                && (matches.contains("Scan on notes_author_newest") || matches.contains("Scan using notes_author_newest")), "\(rare)")
    }
}
