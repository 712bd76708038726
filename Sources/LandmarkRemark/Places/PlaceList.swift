import Credentials

/// One page of `GET /v1/places` as the client asked for it: `near`, `radius_m`, `bbox`,
/// `q` (name), `limit`, `cursor`, read as for notes. Nearest first with `near`, else newest
/// first. `PlaceStore.page(_:tenantID:viewerID:on:)` runs it.
struct PlaceList: Sendable {
    let filters: MapFilters
    let page: PageRequest

    var limit: Int { page.limit }
    var cursor: KeysetCursor? { page.cursor }

    init(_ parameters: inout QueryParameters) throws {
        // The notes-only filters are refused by name, before anything else is read.
        for name in ["in", "author", "place_id"] where parameters.contains(name) {
            throw AppError.malformed("\(name) is not a known query parameter here")
        }
        filters = try MapFilters(&parameters)
        page = try PageRequest(&parameters, nearest: filters.near != nil, fingerprint: Self.fingerprint(filters))
        try parameters.finish()
    }

    private static func fingerprint(_ filters: MapFilters) -> [UInt8] {
        var canonical = "places-v1" + filters.canonical
        if let search = filters.search { canonical += "|q=\(search.text.utf8.count):\(search.text)" }
        return Array(Tokens.sha256(canonical).prefix(8))
    }
}
