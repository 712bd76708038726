import Postgres

/// What page of a list the client asks for: `limit` (1–200, 50 by default) and `cursor`.
struct PageRequest: Sendable {
    static let defaultLimit = 50
    static let maximumLimit = 200

    let limit: Int
    let cursor: KeysetCursor?
    /// The ordering and the filters' fingerprint: what a cursor must match, and what the
    /// next page's cursor carries.
    let nearest: Bool
    let fingerprint: [UInt8]

    /// Reads `limit` and `cursor`; a cursor must come from the same ordering and filters.
    init(_ parameters: inout QueryParameters, nearest: Bool, fingerprint: [UInt8]) throws {
        (self.nearest, self.fingerprint) = (nearest, fingerprint)
        limit = try parameters.integer("limit", in: 1...Self.maximumLimit) ?? Self.defaultLimit
        cursor = try parameters.string("cursor").map {
            try KeysetCursor(parameter: $0, nearest: nearest, fingerprint: fingerprint)
        }
    }

    /// Cuts a page from rows fetched with `limit + 1`: each row's item, then its sort key in
    /// column `keyColumn` (the spheroid distance when `nearest`, else `created_at` in
    /// microseconds). One row more than the page means there is a next page. `item` is
    /// given the distance as the API shows it (`distance_m`: metres rounded to 0.1); the
    /// cursor keeps the exact one.
    func page<Item>(
        from rows: PostgresRows, keyColumn: Int, item: (PostgresRow, _ shownDistance: Double?) throws -> (item: Item, id: Int64)
    ) throws -> Page<Item> {
        var items: [Item] = []
        var last: KeysetCursor.Key?
        for row in rows.prefix(limit) {
            if nearest {
                let distance = try row.decode(Double.self, column: keyColumn)
                let (value, id) = try item(row, (distance * 10).rounded() / 10)
                items.append(value)
                last = .nearest(distance: distance, id: id)
            } else {
                let micros = try row.decode(Int64.self, column: keyColumn)
                let (value, id) = try item(row, nil)
                items.append(value)
                last = .newest(createdMicros: micros, id: id)
            }
        }
        let next = rows.count > limit ? last.map { KeysetCursor(key: $0).encoded(fingerprint: fingerprint) } : nil
        return Page(items: items, nextCursor: next)
    }
}

extension PageRequest {
    /// The keyset past the cursor of a list ordered by `(time, id)`, newest first (`<`) or,
    /// `oldestFirst`, oldest first (`>`): a row comparison an index on those columns starts its
    /// scan from, so a deep page costs what the first does. Nil on the first page.
    func timeKeyset(_ time: StaticString, _ id: StaticString, oldestFirst: Bool = false) -> PostgresQuery? {
        guard case .newest(let micros, let lastID)? = cursor?.key else { return nil }
        let after: PostgresQuery = "(timestamptz 'epoch' + \(micros) * interval '1 microsecond', \(lastID))"
        return oldestFirst
            ? "(\(unsafeSQL: time), \(unsafeSQL: id)) > \(after)"
            : "(\(unsafeSQL: time), \(unsafeSQL: id)) < \(after)"
    }
}
