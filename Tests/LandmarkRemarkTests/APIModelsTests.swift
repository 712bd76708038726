import Foundation
import HTTPTypes
import Testing

/// The test models themselves (Support/APIModels.swift): a response that differs from the
/// document in any field fails to decode, so the tests that read through them can fail.
@Suite struct APIModelsTests {
    /// The note the contract gives as its example (`components.schemas.Note.example`), keys
    /// sorted and without spaces, so the cases below can edit it as text.
    static let note: String = {
        let document = try? OpenAPITests.document()
        let components = document?["components"] as? [String: Any]
        let example = (components?["schemas"] as? [String: Any])?["Note"].flatMap { ($0 as? [String: Any])?["example"] }
        let data = example.flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .withoutEscapingSlashes]) }
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "openapi.json has no Note example"
    }()

    /// `note` with `old` replaced by `new`; both are written as in the docs (`"key": value`).
    static func replacing(_ old: String, with new: String) -> String {
        let (old, new) = (compact(old), compact(new))
        #expect(note.contains(old), "the change must apply: \(old) in \(note)")
        return note.replacingOccurrences(of: old, with: new)
    }

    static func compact(_ text: String) -> String {
        text.replacingOccurrences(of: "\": ", with: "\":").replacingOccurrences(of: ", \"", with: ",\"")
    }

    @Test func aNoteAsTheDocumentSaysDecodes() throws {
        let note = try decodeAPI(API.Note.self, from: Self.note)
        #expect(note.id == "7" && note.author == API.UserSummary(id: "3", username: "alice") && note.placeID == nil && note.distanceM == nil)
        #expect(try decodeAPI(API.Note.self, from: Self.replacing(#""place_id": null"#, with: #""place_id": "12""#)).placeID == "12")
        #expect(try decodeAPI(API.Note.self, from: Self.replacing(#""lat": -33.8688"#, with: #""lat": -33.8688, "distance_m": 12.5"#)).distanceM == 12.5)
    }

    @Test(arguments: [
        (#""updated_at": "2026-11-21T09:30:00.123Z""#, #""updated_at_": "2026-11-21T09:30:00.123Z""#),  // a missing field
        (#""place_id": null,"#, ""),  // a required nullable field missing
        (#""is_mine": true"#, #""is_mine": "true""#),  // a mistyped field
        (#""is_mine": true"#, #""is_mine": 1"#),
        (#""id": "7""#, #""id": 7"#),
        (#""lat": -33.8688"#, #""lat": null"#),
        (#""created_at": "2026-11-21T09:30:00.123Z""#, #""created_at": "2026-11-21T09:30:00Z""#),  // not the millisecond form
        (#""created_at": "2026-11-21T09:30:00.123Z""#, #""created_at": "2026-11-21 09:30:00.123Z""#),
        (#""visibility": "public""#, #""visibility": "public", "colour": "red""#),  // a field the document does not have
        (#""username": "alice""#, #""username": "alice", "email": "a@example.com""#),  // ... also nested
    ])
    func aNoteThatDiffersFromTheDocumentDoesNot(_ change: (String, String)) {
        #expect(throws: (any Error).self) { try decodeAPI(API.Note.self, from: Self.replacing(change.0, with: change.1)) }
    }

    @Test func problemsAreCheckedAgainstTheirResponse() throws {
        let body = #"""
            {"type": "https://landmark-remark.dev/problems/not-found", "title": "Not Found", "status": 404,
             "code": "not_found", "detail": "No such note.", "request_id": "abc"}
            """#
        let response = APIResponse(status: .notFound, headers: [.init("X-Request-Id")!: "abc"], body: body)
        #expect(response.code == "not_found")
        #expect(try response.problem().fields == [])
        let wrongStatus = APIResponse(status: .gone, headers: [:], body: body)
        #expect(wrongStatus.code?.hasPrefix("not a problem") == true)
        let wrongRequest = APIResponse(status: .notFound, headers: [.init("X-Request-Id")!: "xyz"], body: body)
        #expect(throws: (any Error).self) { try wrongRequest.problem() }
        let withoutDetail = APIResponse(status: .notFound, headers: [:], body: body.replacingOccurrences(of: #""detail": "No such note.", "#, with: ""))
        #expect(withoutDetail.code != "not_found")
        #expect(APIResponse(status: .ok, headers: [:], body: "{}").code == nil)
    }

    @Test func treesCompareValuesAndNameTheirDifferences() throws {
        let a = try JSONTree(parsing: #"{"a": 1, "b": {"c": [true, null]}, "d": "x"}"#)
        #expect(try JSONTree(parsing: #"{"d": "x", "b": {"c": [true, null]}, "a": 1.0}"#) == a)
        let b = try JSONTree(parsing: #"{"a": 1, "b": {"c": [1, null]}, "e": "x"}"#)
        #expect(a.differences(from: b) == ["b.c[0]: true ≠ 1", "d (only in the first)", "e (only in the second)"])
    }
}
