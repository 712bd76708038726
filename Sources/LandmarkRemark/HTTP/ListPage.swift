/// The body of every list endpoint: `{"items": […], "next_cursor": string or null}`.
/// `next_cursor` is always present, null on the last page.
struct ListPage<Item: JSONWritable & Sendable>: JSONWritable, Sendable {
    let items: [Item]
    let nextCursor: String?

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("items")
            json.array(items)
            json.key("next_cursor")
            json.string(nextCursor)
        }
    }
}
