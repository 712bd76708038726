import Postgres

/// Objects of one kind (notes, places) as `GET` shows them now to one viewer, by id: how the
/// event log carries the object an event names without knowing what a note or a place is,
/// and why an event's `data` is the same JSON, byte for byte, as the REST body.
protocol CurrentJSONSource: Sendable {
    /// The JSON of those of `ids` that `viewerID` may see now; the others are left out.
    func currentJSON(ids: [Int64], tenantID: Int64, viewerID: Int64, on reads: some PostgresQuerying) async throws -> [Int64: [UInt8]]
}
