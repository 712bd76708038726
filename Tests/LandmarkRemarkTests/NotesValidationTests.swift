import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Bad input on every endpoint and parameter: the documented status and code, and nothing written.
@Suite(.timeLimit(.minutes(10))) struct NotesValidationTests {
    @Test func badNoteBodies() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let otherTenant = try await TestEnvironment.makeTenant()
        let foreignPlace = try await NotesFixture.makePlace(otherTenant)
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let valid: [String: Any] = ["body": "fine", "lat": 1, "lng": 2]
            func with(_ changes: [String: Any?]) -> [String: Any] {
                var json = valid
                for (key, value) in changes { json[key] = value }
                return json
            }
            let cases: [([String: Any], [String])] = [
                ([:], ["body", "lat", "lng"]),
                (with(["body": nil]), ["body"]),
                (with(["body": "   \n\t "]), ["body"]),
                (with(["body": String(repeating: "a", count: 501)]), ["body"]),
                (with(["body": String(repeating: "é", count: 501)]), ["body"]),
                (with(["body": "bell \u{7}"]), ["body"]),
                (with(["body": "carriage\r\nreturn"]), ["body"]),
                (with(["body": "nul \u{0} byte"]), ["body"]),
                (with(["body": "escape \u{1B}[31m"]), ["body"]),
                (with(["body": 42]), ["body"]),
                (with(["body": NSNull()]), ["body"]),
                (with(["lat": 90.0001]), ["lat"]),
                (with(["lat": -91]), ["lat"]),
                (with(["lng": 180.5]), ["lng"]),
                (with(["lng": -181]), ["lng"]),
                (with(["lat": "10"]), ["lat"]),
                (with(["lng": NSNull()]), ["lng"]),
                (with(["lat": true]), ["lat"]),
                (with(["visibility": "secret"]), ["visibility"]),
                (with(["visibility": NSNull()]), ["visibility"]),
                (with(["visibility": "PUBLIC"]), ["visibility"]),
                (with(["place_id": 7]), ["place_id"]),
                (with(["place_id": "abc"]), ["place_id"]),
                (with(["place_id": "-1"]), ["place_id"]),
                (with(["place_id": "999999999"]), ["place_id"]),
                (with(["place_id": foreignPlace]), ["place_id"]),
                (with(["title": "typo"]), ["title"]),
                (with(["Body": "typo"]), ["Body"]),
            ]
            for (json, fields) in cases {
                let response = try await client.call(.post, "/v1/notes", json: json, token: alice.accessToken)
                #expect(response.status == .unprocessableContent, "\(json)")
                #expect(response.code == "validation_failed")
                let named = response.errorFields
                #expect(Set(named) == Set(fields), "\(json): \(response.body)")
            }
            let raw: [(String?, String, HTTPResponse.Status, String)] = [
                (nil, "not json", .badRequest, "malformed_request"),
                (nil, "[1, 2]", .badRequest, "malformed_request"),
                (nil, "", .badRequest, "malformed_request"),
                (nil, #"{"body": "x", "lat": 1, "lng": 2"#, .badRequest, "malformed_request"),
                ("text/plain", #"{"body": "x", "lat": 1, "lng": 2}"#, .unsupportedMediaType, "unsupported_media_type"),
                (nil, #"{"body": ""# + String(repeating: "a", count: 70_000) + #"", "lat": 1, "lng": 2}"#, .contentTooLarge, "payload_too_large"),
            ]
            for (contentType, body, status, code) in raw {
                let headers: HTTPFields = contentType.map { [.contentType: $0] } ?? [:]
                let response = try await client.call(.post, "/v1/notes", raw: body, token: alice.accessToken, headers: headers)
                #expect(response.status == status, "\(body.prefix(40))")
                #expect(response.code == code)
            }
            #expect(try await NotesFixture.noteCount(tenant) == 0, "nothing was written")

            // The edges of the rules are accepted.
            let edges: [[String: Any]] = [
                with(["body": "  " + String(repeating: "é", count: 500) + "\n "]),
                with(["body": "tab\tand\nnewline", "lat": 90, "lng": -180]),
                with(["lat": -90, "lng": 180, "visibility": "private", "place_id": NSNull()]),
            ]
            for json in edges {
                #expect(try await client.call(.post, "/v1/notes", json: json, token: alice.accessToken).status == .created, "\(json)")
            }
            #expect(try await NotesFixture.noteCount(tenant) == 3)
        }
    }

    @Test func badPatchesChangeNothing() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let id = try await client.createNote(alice, "original", lat: 1, lng: 1).id
            let before = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken)
            let cases: [([String: Any], String)] = [
                (["body": NSNull()], "body"), (["body": ""], "body"), (["body": " "], "body"), (["body": 5], "body"),
                (["visibility": "hidden"], "visibility"), (["visibility": NSNull()], "visibility"),
                (["place_id": "x"], "place_id"), (["place_id": "424242424"], "place_id"), (["lat": 3], "lat"), (["lng": 3], "lng"),
            ]
            for (json, field) in cases {
                let response = try await client.call(.patch, "/v1/notes/\(id)", json: json, token: alice.accessToken)
                #expect(response.status == .unprocessableContent, "\(json)")
                #expect(response.errorFields.first == field)
            }
            let notJSON = try await client.call(.patch, "/v1/notes/\(id)", raw: "body=x", token: alice.accessToken)
            #expect(notJSON.status == .badRequest)
            let after = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken)
            #expect(after.body == before.body)
        }
    }

    @Test func malformedNoteIDsAreNotFound() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            try await client.createNote(alice, "keep me", lat: 0, lng: 0)
            for id in ["abc", "0", "-1", "1.5", "99999999999999999999", "9223372036854775807", "%20", "1e3", "０１"] {
                for method in [HTTPRequest.Method.get, .patch, .delete] {
                    let response = try await client.call(method, "/v1/notes/\(id)", json: method == .patch ? ["body": "x"] : nil, token: alice.accessToken)
                    #expect(response.status == .notFound, "\(method) /v1/notes/\(id)")
                    #expect(response.code == "not_found")
                }
            }
            #expect(try await NotesFixture.noteCount(tenant) == 1)
        }
    }

    @Test func badListParametersNameThemselves() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let cases: [(String, String)] = [
                ("near=abc", "near"), ("near=1", "near"), ("near=91,0", "near"), ("near=0,181", "near"), ("near=1,2,3", "near"),
                ("near=", "near"), ("near=nan,1", "near"), ("near=1,inf", "near"), ("near=1%2C", "near"),
                ("radius_m=100", "radius_m"), ("near=0,0&radius_m=0", "radius_m"), ("near=0,0&radius_m=20037510", "radius_m"),
                ("near=0,0&radius_m=abc", "radius_m"), ("near=0,0&radius_m=-5", "radius_m"), ("near=0,0&radius_m=", "radius_m"),
                ("bbox=1,2,3", "bbox"), ("q=", "q"), ("in=body", "in"), ("q=a&in=everything", "in"),
                ("author=a%20b", "author"), ("author=xy", "author"), ("author=", "author"), ("place_id=abc", "place_id"),
                ("place_id=0", "place_id"), ("place_id=", "place_id"), ("limit=0", "limit"), ("cursor=%%%", "cursor"),
                ("cursor=abc", "cursor"), ("radius=1000", "radius"), ("limit=1&limit=2", "limit"), ("q=%zz", "q"),
                ("q=%FF", "q"),
            ]
            for (query, parameter) in cases {
                let response = try await client.call(.get, "/v1/notes?" + query, token: alice.accessToken)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.code == "malformed_request")
                #expect(response.detail?.contains(parameter) == true, "\(query): \(response.detail ?? "")")
            }
            // The same parameters are checked for a user's list, where author is fixed by the path.
            for (query, parameter) in [("near=abc", "near"), ("author=me", "author"), ("limit=500", "limit")] {
                let response = try await client.call(.get, "/v1/users/alice/notes?" + query, token: alice.accessToken)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.detail?.contains(parameter) == true)
            }
            for username in ["nobody", "no", "bad%20name"] {
                let response = try await client.call(.get, "/v1/users/\(username)/notes", token: alice.accessToken)
                #expect(response.status == .notFound, "\(username)")
                #expect(response.code == "not_found")
            }
        }
    }
}
