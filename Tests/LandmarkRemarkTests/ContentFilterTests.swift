import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Testing

/// The tenant's word list (issue 34): the skeleton comparison against a table of evasions and
/// of innocent words, then refusing and holding through the API.
@Suite(.timeLimit(.minutes(10))) struct ContentFilterTests {
    static let filter = ContentFilter(action: .refuse, words: ["scam", "bad word", "ass", "東京タワー", "Кот"])

    @Test(arguments: [
        ("scam", "as written"),
        ("SCAM", "upper case"),
        ("Scám", "an accent"),
        ("s\u{0301}cam", "a combining accent"),
        ("ｓｃａｍ", "full-width letters"),
        ("ѕсаm", "Cyrillic look-alikes (ѕ, с, а)"),
        ("sc\u{200B}am", "a zero-width space inside"),
        ("sc\u{00AD}am", "a soft hyphen inside"),
        ("sc4m", "a digit for a letter"),
        ("$cam", "a sign for a letter"),
        ("what a scam!", "in a sentence, before punctuation"),
        ("it's a BAD  WORD, really", "a phrase, with space between as written"),
        ("b4d w0rd", "a phrase with digit swaps"),
        ("kot", "a Cyrillic word typed in Latin"),
        ("今日は東京タワーへ", "a word of a script without spaces, inside a sentence"),
        ("a$$", "a short word spelt with signs"),
    ])
    func evasionsAreCaught(text: String, how: String) {
        #expect(Self.filter.matches(text), "\(how): \(text)")
    }

    @Test(arguments: [
        ("a classic assessment", "the word inside longer words"),
        ("scampi and scammers", "the word as the start of others"),
        ("bad words", "a phrase whose last word runs on"),
        ("a bad, wordy note", "the phrase's words apart"),
        ("s c a m", "letters spread apart (not caught: documented)"),
        ("東京", "part of the word"),
        ("", "nothing"),
    ])
    func innocentTextIsNot(text: String, why: String) {
        #expect(!Self.filter.matches(text), "\(why): \(text)")
    }

    static func setFilter(_ tenant: String, words: String, action: String = "refuse") async throws {
        try await TestEnvironment.withOwnerPool {
            try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'filter_words', \(words))")
            try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'filter_action', \(action))")
        }
    }

    @Test func refusedTextIsNamedAndNothingIsSaved() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.setFilter(tenant, words: " scam , ,free money,scam ")
        try await withApp { client in
            let user = try await client.signup("writer_f", tenant: tenant)
            let refused = try await client.call(
                .post, "/v1/notes", json: ["body": "F.R.E.E money here: FREE MONEY", "lat": 0, "lng": 0], token: user.accessToken)
            #expect(refused.code == "content_refused" && refused.errorFields == ["body"], "\(refused.body)")
            #expect(try await client.ids("/v1/notes?author=me", token: user.accessToken).isEmpty)
            let note = try await client.createNote(user, "honest advice", lat: 0, lng: 0).id
            let edit = try await client.call(.patch, "/v1/notes/\(note)", json: ["body": "a Scâm"], token: user.accessToken)
            #expect(edit.code == "content_refused" && edit.errorFields == ["body"])
            #expect(try await client.call(.get, "/v1/notes/\(note)", token: user.accessToken).decode(API.Note.self).body == "honest advice")
            let place = try await client.call(.post, "/v1/places", json: ["name": "Scam Alley", "lat": 0, "lng": 0], token: user.accessToken)
            #expect(place.code == "content_refused" && place.errorFields == ["name"])
            let innocent = try await client.call(.post, "/v1/auth/signup", json: ["username": "scampi_fan", "password": "a sturdy passphrase"], tenant: tenant)
            #expect(innocent.status == .created)
            for name in ["sc4m_artist", "the-scam", "SCAM"] {
                let named = try await client.call(.post, "/v1/auth/signup", json: ["username": name, "password": "a sturdy passphrase"], tenant: tenant)
                #expect(named.code == "content_refused" && named.errorFields == ["username"], "\(name)")
            }
            // Another tenant's list is not this one's.
            let other = try await TestEnvironment.makeTenant()
            let elsewhere = try await client.signup("writer_g", tenant: other)
            #expect(try await client.call(.post, "/v1/notes", json: ["body": "scam", "lat": 0, "lng": 0], token: elsewhere.accessToken).status == .created)
        }
    }

    @Test func heldTextIsSavedForItsAuthorAndAModerator() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.setFilter(tenant, words: "scam", action: "hold")
        try await withApp { client in
            let author = try await client.signup("writer_h", tenant: tenant)
            let bystander = try await client.signup("reader_h", tenant: tenant)
            let held = try await client.createNote(author, "not a SCAM at all", lat: -33.86, lng: 151.21)
            #expect(held.moderation == "pending")
            #expect(try await !client.sees(note: held.id, as: bystander))
            #expect(try await client.sees(note: held.id, as: author))
            let clean = try await client.createNote(author, "a fine day", lat: -33.86, lng: 151.21)
            #expect(try await client.sees(note: clean.id, as: bystander))
            let edited = try await client.call(.patch, "/v1/notes/\(clean.id)", json: ["body": "now a scam"], token: author.accessToken)
            #expect(try edited.decode(API.Note.self).moderation == "pending")
            #expect(try await !client.sees(note: clean.id, as: bystander))
            let place = try await client.createPlace(author, "Scam corner", lat: 0, lng: 0)
            #expect(place.moderation == "pending")
            #expect(try await client.call(.get, "/v1/places/\(place.id)", token: bystander.accessToken).status == .notFound)
            // Usernames are refused either way.
            let named = try await client.call(.post, "/v1/auth/signup", json: ["username": "scam", "password": "a sturdy passphrase"], tenant: tenant)
            #expect(named.code == "content_refused")
        }
    }

    @Test func operatorsSetTheListAndTheActionAndBadValuesAreRefused() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.setFilter(tenant, words: "b, a ,b,,c")
        let words = try await TestEnvironment.ownerScalar("SELECT array_to_string(filter_words, '|') FROM tenants WHERE slug = \(tenant)", as: String.self)
        #expect(words == "a|b|c")
        await #expect(throws: (any Error).self) { try await Self.setFilter(tenant, words: "x", action: "shout") }
        try await Self.setFilter(tenant, words: "")
        let none = try await TestEnvironment.ownerScalar("SELECT cardinality(filter_words)::int8 FROM tenants WHERE slug = \(tenant)", as: Int.self)
        #expect(none == 0)
    }
}
