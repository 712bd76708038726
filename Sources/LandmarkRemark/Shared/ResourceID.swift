/// Ids of notes, places and users as the API spells them: strings of decimal digits.
enum ResourceID {
    /// Positive and fitting in a bigint; nil for anything else.
    static func parse(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int64(text), value > 0
        else { return nil }
        return value
    }
}

extension AppRequestContext {
    /// The id a path parameter names. A malformed one names nothing the caller could see, so
    /// it is `missing` (a `404`), like an id of another tenant.
    func resourceID(_ parameter: String = "id", else missing: some Error) throws -> Int64 {
        guard let id = parameters.get(parameter).flatMap(ResourceID.parse) else { throw missing }
        return id
    }
}
