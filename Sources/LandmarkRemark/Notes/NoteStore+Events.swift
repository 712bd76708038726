import Postgres

extension NoteStore: CurrentJSONSource {
    /// The notes among `ids` that `viewer` may see now, as `GET /v1/notes/{id}` writes them
    /// (`tenant_notes` hides a disabled author's notes: migration 0010; `Audience` those of
    /// users blocked either way, so a block holds on live streams and replays alike, from the
    /// next batch on).
    func currentJSON(ids: [Int64], tenantID: Int64, viewerID: Int64, on reads: some PostgresQuerying) async throws -> [Int64: [UInt8]] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await reads.query("""
            SELECT \(Self.noteColumns)
            FROM tenant_notes n
            JOIN tenant_users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            WHERE n.tenant_id = \(tenantID) AND n.id = ANY(\(ids))
              AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID))
            """)
        var notes: [Int64: [UInt8]] = [:]
        for row in rows {
            let note = try Self.note(from: row, viewer: viewerID)
            notes[note.id] = note.jsonBytes
        }
        return notes
    }
}
