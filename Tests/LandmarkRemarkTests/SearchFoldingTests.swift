import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Testing

/// What matches what (issue 37): search ignores case, accents and character width on both
/// sides (`search_fold`, migration 0033), in note bodies, usernames and place names, in every
/// script; `%`, `_` and `\` still match themselves. (Usernames are ASCII: there the query folds.) One table: each query and exactly the
/// notes it finds.
@Suite(.timeLimit(.minutes(10))) struct SearchFoldingTests {
    static let bodies = [
        "Café de Flore", "Zürich HB at night", "Tokyo tower", "東京タワーの夜景", "서울타워 야경 맛집",
        "Straße am Hafen", "STRASSE DES 17. JUNI", "İstanbul boğazı", "ıslak zemin", "ＦＵＬＬ width letters",
        "São Paulo centro", "crème brûlée", "naïve résumé", "emoji 🍜 ramen", "100% sure", "Ωmega café",
        "Łódź Fabryczna", "ﬁne ligature", "cafeteria",
        // An ASCII pair where a run begins, inside one, after a separator, at the end, and
        // in runs beyond ASCII (whose bigrams alone are indexed, migration 0041).
        "jazz quartet", "#qjx tag", "yqj middle", "東qj mixed", "ωqj greek", "end qj", "QJ shouted",
    ]

    /// Query → the bodies it finds (and no other).
    static let table: [(String, [String])] = [
        ("cafe", ["Café de Flore", "Ωmega café", "cafeteria"]),
        ("CAFÉ", ["Café de Flore", "Ωmega café", "cafeteria"]),
        ("café de", ["Café de Flore"]),
        ("zurich", ["Zürich HB at night"]),
        ("ZÜRICH", ["Zürich HB at night"]),
        ("ＴＯＫＹＯ", ["Tokyo tower"]),
        ("TOKYO", ["Tokyo tower"]),
        ("full width", ["ＦＵＬＬ width letters"]),
        ("ｆｕｌｌ", ["ＦＵＬＬ width letters"]),
        ("strasse", ["Straße am Hafen", "STRASSE DES 17. JUNI"]),
        ("straße", ["Straße am Hafen", "STRASSE DES 17. JUNI"]),
        ("STRASSE DES", ["STRASSE DES 17. JUNI"]),
        ("istanbul", ["İstanbul boğazı"]),
        ("İSTANBUL", ["İstanbul boğazı"]),
        ("bogazi", ["İstanbul boğazı"]),
        ("islak", ["ıslak zemin"]),
        ("ISLAK", ["ıslak zemin"]),
        ("sao paulo", ["São Paulo centro"]),
        ("creme brulee", ["crème brûlée"]),
        ("naive resume", ["naïve résumé"]),
        ("ωmega", ["Ωmega café"]),
        ("ΩMEGA", ["Ωmega café"]),
        ("lodz", ["Łódź Fabryczna"]),
        ("fine lig", ["ﬁne ligature"]),
        ("東京タワー", ["東京タワーの夜景"]),
        ("タワーの", ["東京タワーの夜景"]),
        ("서울타워", ["서울타워 야경 맛집"]),
        ("🍜 ramen", ["emoji 🍜 ramen"]),
        // Two characters, over the whole tenant (the bigram index).
        ("夜景", ["東京タワーの夜景"]),
        ("야경", ["서울타워 야경 맛집"]),
        ("ｈｂ", ["Zürich HB at night"]),
        ("SS", ["Straße am Hafen", "STRASSE DES 17. JUNI"]),
        ("łó", ["Łódź Fabryczna", "Café de Flore", "São Paulo centro"]),
        ("17", ["STRASSE DES 17. JUNI"]),
        ("京タ", ["東京タワーの夜景"]),
        ("京夜", []),
        ("100%", ["100% sure"]),
        ("１００％", ["100% sure"]),
        ("100%_s", []),
        ("qj", ["#qjx tag", "yqj middle", "東qj mixed", "ωqj greek", "end qj", "QJ shouted"]),
        ("ＱＪ", ["#qjx tag", "yqj middle", "東qj mixed", "ωqj greek", "end qj", "QJ shouted"]),
        ("jx", ["#qjx tag"]),
        ("zz", ["jazz quartet"]),
        ("qu", ["jazz quartet"]),
        ("東QJ", ["東qj mixed"]),
        ("qj m", ["yqj middle", "東qj mixed"]),
        ("qx", []),
        ("zurichx", []),
        ("tokio", []),
    ]

    @Test func whatMatchesWhat() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let author = try await client.signup("folding_author", tenant: tenant)
            var ids: [String: String] = [:]
            for (index, body) in Self.bodies.enumerated() {
                ids[body] = try await client.createNote(author, body, lat: 10, lng: Double(index) / 1000).id
            }
            for (query, expected) in Self.table {
                let response = try await client.call(.get, "/v1/notes?q=\(queryValue(query))&in=body", token: author.accessToken)
                try #require(response.status == .ok, "q=\(query): \(response.body)")
                let found = Set(try response.decode(API.NotePage.self).items.map(\.id))
                let names = found.map { id in ids.first { $0.value == id }?.key ?? id }.sorted()
                #expect(found == Set(expected.map { ids[$0]! }), "q=\(query) found \(names)")
            }
            // So few notes are found by walking them; a search of many asks the index. For a
            // pair the index is asked two ways (SearchText.pairLookups, migration 0041): each
            // match must satisfy one of them, or a search of many notes would miss it.
            let tenantID = try await NotesFixture.tenantID(tenant)
            for (query, expected) in Self.table where SearchText(text: query).isPair {
                let asked = SearchText(text: query).matches("n.body_folded", bigramIndexed: true)
                let found = try await TestEnvironment.ownerScalar("""
                    SELECT coalesce(string_agg(n.id::text, ','), '') FROM notes n
                    WHERE n.tenant_id = \(tenantID) AND \(asked)
                    """, as: String.self)
                let names = found.split(separator: ",").map { id in ids.first { $0.value == String(id) }?.key ?? String(id) }
                #expect(Set(names) == Set(expected), "q=\(query) through the index's lookups: \(names)")
            }
        }
    }

    /// The folding and the bigrams run in every insert and edit of a note (its generated
    /// column and its index), every signup and every search. As SQL functions, which cannot be
    /// inlined, PostgreSQL 15 planned their bodies again in each statement (65 and 135 µs at
    /// 1M notes); in PL/pgSQL they are planned once a connection (migration 0040). The table
    /// above proves they still fold and pair alike.
    @Test func foldingAndBigramsArePlannedOnceAConnection() async throws {
        try await TestEnvironment.migrate()
        let languages = try await TestEnvironment.ownerScalar("""
            SELECT string_agg(p.proname || ' ' || l.lanname, ', ' ORDER BY p.proname)
            FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
            WHERE p.proname IN ('search_fold', 'search_bigrams') AND p.pronamespace = 'public'::regnamespace
            """, as: String.self)
        #expect(languages == "search_bigrams plpgsql, search_fold plpgsql")
    }

    @Test func usernamesAndPlaceNamesFoldAlike() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let zoe = try await client.signup("Zoe_Orsted", tenant: tenant)
            let other = try await client.signup("zoo_keeper", tenant: tenant)
            let note = try await client.createNote(zoe, "A note", lat: 11, lng: 11)
            _ = try await client.createNote(other, "Another", lat: 11, lng: 11.001)
            for query in ["zoe_o", "ZOË_Ø", "ｚｏｅ", "zoe_orsted"] {
                #expect(try await client.ids("/v1/notes?q=\(queryValue(query))&in=username", token: zoe.accessToken) == [note.id], "q=\(query)")
            }
            let cafe = try await client.createPlace(zoe, "Café Sydney", lat: -33.86, lng: 151.21)
            _ = try await client.createPlace(zoe, "Harbour Bridge", lat: -33.85, lng: 151.21)
            for query in ["cafe syd", "CAFÉ", "ｃａｆｅ"] {
                let places = try await client.page("/v1/places?near=-33.86,151.21&q=\(queryValue(query))", token: zoe.accessToken, of: API.Place.self).items
                #expect(places.map(\.id) == [cafe.id], "q=\(query)")
            }
        }
    }

    /// Two-character words are ordinary words in Chinese, Japanese and Korean: they are
    /// answered over the whole tenant (the bigram index, migration 0034); with the notes
    /// narrowed to one author's or one place's, any q is (one letter, folded alike); over the
    /// whole tenant, a q without two letters or digits in a row is refused up front.
    @Test func shortQueries() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let me = try await client.signup("short_query_me", tenant: tenant)
            let someone = try await client.signup("short_query_other", tenant: tenant)
            let place = try await client.createPlace(me, "Namsan", lat: 37.55, lng: 126.99)
            let tokyo = try await client.createNote(me, "東京の夜景", lat: 35.68, lng: 139.76)
            let seoul = try await client.call(.post, "/v1/notes", json: ["body": "서울 맛집", "lat": 37.55, "lng": 126.99, "place_id": place.id], token: someone.accessToken)
            #expect(seoul.status == .created, "\(seoul.body)")
            let seoulID = try seoul.decode(API.Note.self).id
            let cafe = try await client.createNote(me, "Ça va, café?", lat: 48.85, lng: 2.35)
            let tower = try await client.createNote(someone, "東京タワー", lat: 35.66, lng: 139.75)
            func found(_ query: String) async throws -> [String] {
                let response = try await client.call(.get, "/v1/notes?\(query)", token: me.accessToken)
                try #require(response.status == .ok, "\(query): \(response.body)")
                return try response.decode(API.NotePage.self).items.map(\.id)
            }
            #expect(try await found("q=\(queryValue("東京"))&author=me") == [tokyo.id])
            #expect(try await found("q=\(queryValue("夜景"))&author=me&in=body") == [tokyo.id])
            #expect(try await found("q=\(queryValue("東京"))&author=short_query_other").count == 1)
            #expect(try await found("q=\(queryValue("맛집"))&place_id=\(place.id)") == [seoulID])
            #expect(try await found("q=\(queryValue("서울"))&place_id=\(place.id)&in=body") == [seoulID])
            #expect(try await found("q=ca&author=me") == [cafe.id], "folded: Ça")
            let oneLetter = try await found("q=\(queryValue("é"))&author=me&in=body")
            #expect(oneLetter == [cafe.id], "one letter, folded to e: \(oneLetter) (tokyo \(tokyo.id), cafe \(cafe.id))")
            #expect(try await found("q=\(queryValue("%"))&author=me").isEmpty, "% is itself")
            let users = try await client.call(.get, "/v1/users/short_query_me/notes?q=\(queryValue("東京"))", token: someone.accessToken)
            #expect(try users.decode(API.NotePage.self).items.map(\.id) == [tokyo.id])
            #expect(try await found("q=\(queryValue("東京"))") == [tower.id, tokyo.id], "newest first, over everyone's notes")
            #expect(try await found("q=\(queryValue("東京"))&author=others") == [tower.id])
            #expect(try await found("q=\(queryValue("맛집"))&in=body") == [seoulID])
            #expect(try await found("q=CA&in=body") == [cafe.id], "folded: Ça")
            #expect(try await found("q=\(queryValue("京タ"))&near=35.67,139.75") == [tower.id], "two characters inside a longer run")
            #expect(try await found("q=\(queryValue("東 京"))&author=me").isEmpty, "a space is not skipped")
            for query in ["q=\(queryValue("東"))", "q=\(queryValue("東"))&author=others", "q=\(queryValue("é"))&in=body",
                          "q=\(queryValue("🍜🍜"))", "q=\(queryValue("a b"))", "q=\(queryValue("a\u{301}"))"] {
                let response = try await client.call(.get, "/v1/notes?\(query)", token: me.accessToken)
                #expect(response.status == .unprocessableContent && response.code == "query_too_broad", "\(query): \(response.body)")
            }
        }
    }

    /// Which texts are phrases (more than one word), which a newest-first search finds by
    /// walking further rather than window by window (NoteStore.newestStatement).
    @Test(arguments: [("great view", true), ("coffee note 999", true), ("a-b", true), ("東京 夜景", true),
                      ("crème", false), ("東京の夜景", false), (" café! ", false), ("100%", false), ("🙂 ok", false)])
    func phrases(text: String, isPhrase: Bool) {
        #expect(SearchText(text: text).isPhrase == isPhrase)
    }
}
