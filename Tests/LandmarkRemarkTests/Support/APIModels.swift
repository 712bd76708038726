import Foundation
import HTTPTypes
import Testing

@testable import LandmarkRemark

// The API's JSON objects as openapi/openapi.json describes them, generated from it for the
// tests (`APIModels+Generated.swift`, by scripts/generate-wire.py): never the service's own
// Swift types, so a test reads the wire format the way a client does, and a renamed or
// reshaped internal type cannot make a test agree with the service by construction.
//
// Decoding is strict:
// - a required field that is missing, or has the wrong JSON type, fails to decode;
// - a field that is required but may be null (`place_id`, `created_by`, `email`,
//   `next_cursor`) must be present: `@Nullable` is not optional itself, so a missing
//   key fails, and only an explicit null decodes as `nil`;
// - timestamps must have the RFC 3339 millisecond form (`Timestamp`);
// - `APIResponse.decode` and `decodeAPI` re-encode what they decoded and compare it with
//   the body, so a field the model does not know (`additionalProperties: false` in the
//   document) fails too.

/// A model of one of the API's JSON objects: decodes strictly and encodes back to the same JSON.
protocol APIModel: Codable, Sendable, Equatable {}

/// The models, in a namespace of their own: the service has types of the same names
/// (`Note`, `Place`, `Problem`, ...), visible to the files that `@testable import` it.
enum API {
    /// A required field whose value may be null: the key must be there, and the value is `nil` for null.
    @propertyWrapper
    struct Nullable<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
        var wrappedValue: Value?

        init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
        }
    }

    /// `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`: RFC 3339 in UTC with milliseconds.
    struct Timestamp: Codable, Sendable, Equatable, Comparable, CustomStringConvertible {
        let text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            text = try container.decode(String.self)
            guard Self.isWellFormed(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not RFC 3339 with milliseconds in UTC: \(text)")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }

        static func isWellFormed(_ text: String) -> Bool {
            let pattern = "dddd-dd-ddTdd:dd:dd.dddZ"
            guard text.count == pattern.count else { return false }
            return zip(text, pattern).allSatisfy { character, expected in
                expected == "d" ? character.isASCII && character.isNumber : character == expected
            }
        }

        /// The same-width form sorts as the moment does.
        static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.text < rhs.text }
        var description: String { text }
    }
}

extension API.Problem {
    /// The fields named by `errors`, in order.
    var fields: [String] { errors?.map(\.field) ?? [] }
}

// MARK: - Decoding

/// Any JSON value, for comparing documents value for value (numbers compare as numbers,
/// objects ignore key order): the service's own `JSONValue` (Foundation's `JSONDecoder`
/// does the parsing), with what the tests need on top.
typealias JSONTree = JSONValue

extension JSONValue: Encodable, CustomStringConvertible {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Parses `text` as one JSON value.
    init(parsing text: String) throws {
        self = try JSONDecoder().decode(JSONTree.self, from: Data(text.utf8))
    }

    subscript(key: String) -> JSONTree? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    subscript(index: Int) -> JSONTree? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The keys of an object (empty for anything else).
    var keys: Set<String> {
        if case .object(let members) = self { return Set(members.keys) }
        return []
    }

    public var description: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }

    /// Where two values differ, as dotted paths (`author.username`); empty when they are equal.
    func differences(from other: JSONTree, at path: String = "") -> [String] {
        switch (self, other) {
        case (.object(let mine), .object(let theirs)):
            return Set(mine.keys).union(theirs.keys).sorted().flatMap { key -> [String] in
                let child = path.isEmpty ? key : "\(path).\(key)"
                switch (mine[key], theirs[key]) {
                case (let a?, let b?): return a.differences(from: b, at: child)
                case (_?, nil): return ["\(child) (only in the first)"]
                default: return ["\(child) (only in the second)"]
                }
            }
        case (.array(let mine), .array(let theirs)) where mine.count == theirs.count:
            return zip(mine, theirs).enumerated().flatMap { index, pair in pair.0.differences(from: pair.1, at: "\(path)[\(index)]") }
        default:
            return self == other ? [] : ["\(path.isEmpty ? "(root)" : path): \(self) ≠ \(other)"]
        }
    }
}

struct APIDecodingFailure: Error, CustomStringConvertible {
    let description: String
}

/// Decodes `text` as `T`, strictly: what `T` does not model (an unknown field, a number
/// that is not the one decoded) fails as a missing or mistyped field does.
func decodeAPI<T: APIModel>(_ type: T.Type, from text: String) throws -> T {
    let data = Data(text.utf8)
    let value: T
    do {
        value = try JSONDecoder().decode(T.self, from: data)
    } catch {
        throw APIDecodingFailure(description: "\(T.self) does not decode from \(text): \(error)")
    }
    let original = try JSONDecoder().decode(JSONTree.self, from: data)
    let roundTrip = try JSONDecoder().decode(JSONTree.self, from: JSONEncoder().encode(value))
    let differences = original.differences(from: roundTrip)
    guard differences.isEmpty else {
        throw APIDecodingFailure(description: "\(T.self) does not model all of \(text): \(differences.joined(separator: "; "))")
    }
    return value
}

extension APIResponse {
    /// The body as `T`, strictly (see `decodeAPI`).
    func decode<T: APIModel>(_ type: T.Type) throws -> T {
        try decodeAPI(T.self, from: body)
    }

    /// The body as problem details, checked against the response: same status, a `type`
    /// that names the `code`, and the `X-Request-Id` as `request_id`.
    func problem() throws -> API.Problem {
        let problem = try decode(API.Problem.self)
        var mismatches: [String] = []
        if problem.status != Int(status.code) { mismatches.append("status \(problem.status) in a \(status.code) response") }
        let expectedType = "https://landmark-remark.dev/problems/" + problem.code.replacingOccurrences(of: "_", with: "-")
        if problem.type != expectedType { mismatches.append("type \(problem.type), expected \(expectedType)") }
        if let requestID = headers[HTTPField.Name("X-Request-Id")!], problem.requestID != requestID {
            mismatches.append("request_id \(problem.requestID), X-Request-Id \(requestID)")
        }
        guard mismatches.isEmpty else { throw APIDecodingFailure(description: "problem \(body): \(mismatches.joined(separator: "; "))") }
        return problem
    }
}

extension SSEClient.Event {
    /// The event's `data` as `T`, strictly (see `decodeAPI`).
    func decode<T: APIModel>(_ type: T.Type) throws -> T {
        try decodeAPI(T.self, from: data)
    }

    /// The `data` of a `note.created` or `note.updated`.
    func note() throws -> API.Note { try decode(API.Note.self) }
}
