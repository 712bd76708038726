import Postgres

/// Reads the event log as one caller may see it.
struct EventLog: Sendable {
    struct Entry: Sendable {
        let id: Int64
        let kind: String
        let data: String
    }

    /// Events read per query; a stream that is further behind reads again at once.
    static let batchSize = 500

    /// The newest event id of the tenant: where a stream without `Last-Event-ID` starts.
    func head(tenantID: Int64, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query("SELECT coalesce(max(last_id), 0) FROM event_counters WHERE tenant_id = \(tenantID)")
        return try rows[0].decode(Int64.self, column: 0)
    }

    /// Events after `position` that `userID` may see, inside `box` when given, in id order.
    /// Private notes reach their author only; `is_mine` is added per caller.
    func read(tenantID: Int64, userID: Int64, after position: Int64, box: BoundingBox?, on connection: PostgresConnection) async throws -> [Entry] {
        var query: PostgresQuery = """
            SELECT id, kind,
                   (CASE WHEN kind IN ('note.created', 'note.updated')
                         THEN data || jsonb_build_object('is_mine', owner_id = \(userID))
                         ELSE data END)::text
            FROM events
            WHERE tenant_id = \(tenantID) AND id > \(position)
              AND (audience = 'all' OR (audience = 'owner' AND owner_id = \(userID))
                   OR (audience = 'others' AND owner_id IS DISTINCT FROM \(userID)))
            """
        if let box {
            var ranges: [PostgresQuery] = []
            for (west, east) in box.longitudeRanges {
                ranges.append("(lng BETWEEN \(west) AND \(east))")
            }
            var longitudes = ranges[0]
            for range in ranges.dropFirst() { longitudes = longitudes + " OR " + range }
            query.append(" AND lat BETWEEN \(box.minLat) AND \(box.maxLat) AND (\(longitudes))")
        }
        query.append(" ORDER BY id LIMIT \(Self.batchSize)")
        return try await connection.query(query).map { row in
            let (id, kind, data) = try row.decode((Int64, String, String).self)
            return Entry(id: id, kind: kind, data: data)
        }
    }

    /// Whether the stream's session still stands (not revoked, not expired).
    func sessionIsLive(tenantID: Int64, sessionID: Int64, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("""
            SELECT 1 FROM sessions
            WHERE tenant_id = \(tenantID) AND id = \(sessionID) AND revoked_at IS NULL AND expires_at > now()
            """)
        return !rows.isEmpty
    }
}
