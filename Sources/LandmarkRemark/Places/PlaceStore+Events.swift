import Postgres

extension PlaceStore: CurrentJSONSource {
    /// The places among `ids`, as `GET /v1/places/{id}` writes them for `viewer`.
    func currentJSON(ids: [Int64], tenantID: Int64, viewerID: Int64, on reads: some PostgresQuerying) async throws -> [Int64: [UInt8]] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await reads.query("""
            SELECT \(Self.placeColumns(viewer: viewerID, tenantID: tenantID)) FROM tenant_places p
            WHERE p.tenant_id = \(tenantID) AND p.id = ANY(\(ids)) AND \(Audience.seesPlace("p", tenantID: tenantID, viewerID: viewerID))
            """)
        var places: [Int64: [UInt8]] = [:]
        for row in rows {
            let place = try Self.place(from: row)
            places[place.id] = place.jsonBytes
        }
        return places
    }
}
