import Hummingbird

/// A request body as a small validated type: it reads its fields from the JSON object and
/// records every problem in the reader, so one `422` names every bad field, and unknown
/// fields are refused. A handler gets the validated value and never checks it again.
protocol RequestBody: Sendable {
    /// What validating the body depends on besides itself (a tenant's password rules, say).
    associatedtype Rules: Sendable = Void

    /// Reads every field; nil only when it recorded at least one problem in `reader`.
    init?(reading reader: inout JSONObjectReader, rules: Rules)
}

extension Request {
    /// Reads the body as `Body`: `415`, `413` and `400` as `jsonObject` says, `422` naming
    /// every bad or unknown field.
    mutating func decode<Body: RequestBody>(
        _ type: Body.Type, rules: Body.Rules, context: AppRequestContext, limit: Int
    ) async throws -> Body {
        var reader = try await jsonObject(context: context, limit: limit)
        let body = Body(reading: &reader, rules: rules)
        try reader.finish()
        // The reader recorded no problem, so the type had what it needed: this cannot fail.
        guard let body else { throw AppError.internalError }
        return body
    }

    mutating func decode<Body: RequestBody>(_ type: Body.Type, context: AppRequestContext, limit: Int) async throws -> Body
    where Body.Rules == Void {
        try await decode(type, rules: (), context: context, limit: limit)
    }
}
