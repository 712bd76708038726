import Foundation
/// Reads the fields of a JSON object one by one, collecting every problem
/// (missing, null, wrong type, unknown) so one `422` can name them all.
///
/// Usage: read each field, then call `finish()`, which throws if anything was wrong.
struct JSONObjectReader {
    private let fields: [String: JSONValue]
    private let prefix: String
    private var read: Set<String> = []
    private(set) var errors: [AppError.FieldError] = []

    init(_ fields: [String: JSONValue], prefix: String = "") {
        self.fields = fields
        self.prefix = prefix
    }

    /// Whether the client sent the field at all (PATCH bodies distinguish absent from present).
    func contains(_ name: String) -> Bool { fields[name] != nil }

    mutating func fail(_ name: String, _ message: String) {
        errors.append(.init(field: prefix + name, message: message))
    }

    private mutating func value(_ name: String, required: Bool) -> JSONValue? {
        read.insert(name)
        guard let value = fields[name] else {
            if required { fail(name, "is required") }
            return nil
        }
        return value
    }

    /// A string field (a field that may be null is read through `nullable`).
    mutating func string(_ name: String, required: Bool = true) -> String? {
        switch value(name, required: required) {
        case .none: return nil
        case .string(let text):
            // U+0000 cannot be stored in PostgreSQL text; refuse it here, by field name.
            guard !text.unicodeScalars.contains("\u{0}") else { fail(name, "must not contain NUL characters"); return nil }
            return text
        case .some(let other): fail(name, "must be a string, not \(other.typeName)"); return nil
        }
    }

    mutating func number(_ name: String, required: Bool = true) -> Double? {
        switch value(name, required: required) {
        case .none: return nil
        case .number(let number): return number
        case .some(let other): fail(name, "must be a number, not \(other.typeName)"); return nil
        }
    }

    /// A finite number within `range` (a schema's `minimum` and `maximum`).
    mutating func number(_ name: String, required: Bool = true, in range: ClosedRange<Double>) -> Double? {
        guard let number = number(name, required: required) else { return nil }
        guard number.isFinite, range.contains(number) else {
            fail(name, "must be a number from \(Self.spell(range.lowerBound)) to \(Self.spell(range.upperBound))")
            return nil
        }
        return number
    }

    /// A whole number within `range` (a schema's `minimum` and `maximum`): `1500` or
    /// `1500.0`, not `1500.5`, and not a string.
    mutating func integer(_ name: String, required: Bool = true, in range: ClosedRange<Int>) -> Int? {
        guard let number = number(name, required: required) else { return nil }
        guard number.isFinite, number.rounded() == number, Double(range.lowerBound) <= number, number <= Double(range.upperBound) else {
            fail(name, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return Int(number)
    }

    /// One of an enumeration's values, by its raw string.
    mutating func enumeration<Value: RawRepresentable & CaseIterable>(
        _ name: String, as type: Value.Type, required: Bool = true
    ) -> Value? where Value.RawValue == String {
        guard let text = string(name, required: required) else { return nil }
        guard let value = Value(rawValue: text) else {
            let names = Value.allCases.map(\.rawValue)
            let choice = names.count <= 2 ? names.joined(separator: " or ") : "one of " + names.joined(separator: ", ")
            fail(name, "must be \(choice)")
            return nil
        }
        return value
    }

    /// A time: an RFC 3339 string with a zone (`Timestamp.parse`).
    mutating func timestamp(_ name: String, required: Bool = true) -> Date? {
        guard let text = string(name, required: required) else { return nil }
        guard let date = Timestamp.parse(text) else { fail(name, "must be an RFC 3339 time with a zone, like 2026-12-24T00:00:00Z"); return nil }
        return date
    }

    /// An id: a string of decimal digits (`ResourceID`).
    mutating func id(_ name: String, required: Bool = true) -> Int64? {
        guard let text = string(name, required: required) else { return nil }
        guard let id = ResourceID.parse(text) else { fail(name, "must be an id (a string of digits)"); return nil }
        return id
    }

    /// A field that may be null, read by `read` otherwise: `.none` when it is absent (or
    /// `read` recorded a problem), `.some(nil)` for null. PATCH bodies tell the two apart.
    mutating func nullable<Value>(_ name: String, _ read: (inout JSONObjectReader) -> Value?) -> Value?? {
        if case .null = fields[name] {
            self.read.insert(name)
            return .some(nil)
        }
        return read(&self).map { .some($0) }
    }

    /// `-90` rather than `-90.0` in a message.
    private static func spell(_ bound: Double) -> String {
        bound.rounded() == bound && abs(bound) < 1e15 ? String(Int64(bound)) : String(bound)
    }

    mutating func object(_ name: String, required: Bool = true) -> JSONObjectReader? {
        switch value(name, required: required) {
        case .none: return nil
        case .object(let fields): return JSONObjectReader(fields, prefix: prefix + name + ".")
        case .some(let other): fail(name, "must be an object, not \(other.typeName)"); return nil
        }
    }

    /// Merges a nested reader's problems into this one.
    mutating func absorb(_ nested: JSONObjectReader) {
        var nested = nested
        nested.flagUnknown()
        errors += nested.errors
    }

    private mutating func flagUnknown() {
        for name in fields.keys.sorted() where !read.contains(name) {
            fail(name, "is not a known field")
        }
    }

    /// Throws `422 validation_failed` naming every problem, unknown fields included.
    mutating func finish() throws {
        flagUnknown()
        if !errors.isEmpty { throw AppError.validation(errors) }
    }
}
