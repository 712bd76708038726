/// One claim's value in a token the fake mints.
///
/// Tests write claims as they would appear on the wire, including wrong ones: `aud` as a string
/// or an array, `exp` as an integer or a fractional number, `email_verified` as a bool or a string.
/// The literal conformances keep that short: `["sub": "alice", "exp": 1_700_000_000]`.
/// (There is no nil literal on purpose: `claims["nbf"] = nil` removes a claim, `.null` writes one.)
public enum ClaimValue: Sendable, Equatable, Hashable {
    case string(String)
    case int(Int)
    case number(Double)
    case bool(Bool)
    case strings([String])
    case null
}

extension ClaimValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension ClaimValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension ClaimValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension ClaimValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension ClaimValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: String...) { self = .strings(elements) }
}

extension ClaimValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .strings(try container.decode([String].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

extension ClaimValue {
    /// The value when it is a string; the client-secret checks read `iss`, `sub` and `aud` this way.
    var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The value as seconds since the epoch when it is a number; for `exp`.
    var secondsValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
}
