import Foundation
@testable import LandmarkRemark
import Testing

/// The request readers generated from openapi/openapi.json (scripts/generate-wire.py): each
/// field read with the JSON type, range, enumeration and nullability the contract gives it,
/// every problem recorded by field name.
@Suite struct WireReaderTests {
    static func read<Request>(_ text: String, as make: (inout JSONObjectReader) -> Request) throws -> (Request, [String: String]) {
        guard case .object(let fields) = try JSONValue(parsing: text) else { throw APIDecodingFailure(description: "not an object: \(text)") }
        var reader = JSONObjectReader(fields)
        let request = make(&reader)
        let problems = (try? reader.finish()).map { [String: String]() } ?? Dictionary(
            reader.errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
        return (request, problems)
    }

    @Test func aNoteBodyIsReadWithTheContractsTypesRangesAndChoices() throws {
        let (good, none) = try Self.read(#"{"body": " hi ", "lat": -90, "lng": 180, "visibility": "private", "place_id": "12"}"#) {
            CreateNoteRequest(reading: &$0)
        }
        #expect(none.isEmpty)
        // Read as sent: trimming and length are the feature's rules (`NoteRules.body`).
        #expect(good.body == " hi " && good.lat == -90 && good.lng == 180 && good.visibility == .private && good.placeID == .some(12))

        let (bad, problems) = try Self.read(#"{"body": 5, "lat": 90.5, "lng": -180.01, "visibility": "friends", "place_id": "12a", "x": 1}"#) {
            CreateNoteRequest(reading: &$0)
        }
        #expect(bad.body == nil && bad.lat == nil && bad.lng == nil && bad.visibility == nil && bad.placeID == .none)
        #expect(problems == [
            "body": "must be a string, not a number",
            "lat": "must be a number from -90 to 90",
            "lng": "must be a number from -180 to 180",
            "visibility": "must be public or private",
            "place_id": "must be an id (a string of digits)",
            "x": "is not a known field",
        ])

        let (missing, required) = try Self.read("{}") { CreateNoteRequest(reading: &$0) }
        #expect(missing.body == nil && required == ["body": "is required", "lat": "is required", "lng": "is required"])
    }

    @Test func aFieldThatMayBeNullTellsNullFromAbsent() throws {
        let (null, _) = try Self.read(#"{"place_id": null}"#) { UpdateNoteRequest(reading: &$0) }
        let (absent, _) = try Self.read("{}") { UpdateNoteRequest(reading: &$0) }
        #expect(null.placeID == .some(nil) && absent.placeID == .none)
        // Where the contract does not allow null, null is a problem.
        let (_, problems) = try Self.read(#"{"visibility": null}"#) { UpdateNoteRequest(reading: &$0) }
        #expect(problems == ["visibility": "must be a string, not null"])
    }

    @Test func nestedObjectsAreReadAndNamedByPath() throws {
        let (request, problems) = try Self.read(#"{"password": {"new": 7, "old": "x"}}"#) { UpdateMeRequest(reading: &$0) }
        #expect(request.password != nil && request.password?.new == nil && request.password?.current == nil)
        #expect(problems == ["password.new": "must be a string, not a number", "password.old": "is not a known field"])
    }
}
