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

    /// A string field. `nullable` lets JSON null through as nil without an error.
    mutating func string(_ name: String, required: Bool = true, nullable: Bool = false) -> String? {
        switch value(name, required: required) {
        case .none: return nil
        case .string(let text):
            // U+0000 cannot be stored in PostgreSQL text; refuse it here, by field name.
            guard !text.unicodeScalars.contains("\u{0}") else { fail(name, "must not contain NUL characters"); return nil }
            return text
        case .null where nullable: return nil
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
