/// The body of every list endpoint: `{"items": […], "next_cursor": string or null}`.
/// `next_cursor` is always present, null on the last page.
struct ListPage<Item: Encodable & Sendable>: Encodable, Sendable {
    let items: [Item]
    let nextCursor: String?

    enum CodingKeys: String, CodingKey { case items, nextCursor }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}
