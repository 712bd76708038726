import NIOCore
import Postgres

/// The events feature's store: all of its SQL. Reads the event log as one caller may see it
/// (every such statement names the tenant and runs as it under row-level security), and
/// the horizon's progress for `EventHub`.
struct EventLog: Sendable {
    /// Where the current JSON of the notes and places that events name comes from.
    let notes: any CurrentJSONSource
    let places: any CurrentJSONSource
    /// Whether a stream's access token still admits it (`AccessTokenStore`, from Accounts).
    let tokens: any LiveTokenCheck

    struct Entry: Sendable {
        let id: Int64
        let kind: String
        /// The object's JSON as `GET` shows it to this caller, or `{"id"}` for a deletion.
        let data: [UInt8]
    }

    struct Batch: Sendable {
        let entries: [Entry]
        /// Where the next read starts: past every event this read looked at, sent or not.
        let position: Int64
    }

    /// Events sent per batch at most.
    static let batchSize = 500
    /// Ids one statement looks at at most: ids are shared by every tenant, so a window
    /// of them holds at most this many of the tenant's events, whatever the filters.
    static let window: Int64 = 10_000

    /// The caller's events in `(after, upTo]`, at most `window` ids of it, inside `box`
    /// when given. Created and updated objects are read as they are now, through the same
    /// statements and writers as `GET`, and only when the caller may still see them: a
    /// note made private, deleted, or by a disabled or deleted account is not replayed.
    func read(
        tenantID: Int64, viewerID: Int64, after: Int64, upTo: Int64, box: BoundingBox?, on reads: some PostgresQuerying
    ) async throws -> Batch {
        let end = min(upTo, after + Self.window)
        guard end > after else { return Batch(entries: [], position: after) }
        let rows = try await reads.query(Self.windowStatement(tenantID: tenantID, viewerID: viewerID, after: after, end: end, box: box))
        var events: [(id: Int64, kind: String, object: Int64, owner: Int64?, becamePublic: Bool)] = []
        for row in rows {
            let (id, kind, object, owner, becamePublic) = try row.decode((Int64, String, Int64, Int64?, Bool).self)
            events.append((id, kind, object, owner, becamePublic))
        }
        let position = events.count == Self.batchSize ? events[events.count - 1].id : end
        let notes = try await self.notes.currentJSON(
            ids: events.filter { $0.kind == "note.created" || $0.kind == "note.updated" }.map(\.object),
            tenantID: tenantID, viewerID: viewerID, on: reads)
        let places = try await self.places.currentJSON(
            ids: events.filter { $0.kind == "place.created" || $0.kind == "place.updated" }.map(\.object),
            tenantID: tenantID, viewerID: viewerID, on: reads)
        var entries: [Entry] = []
        for event in events {
            switch event.kind {
            case "note.created", "note.updated":
                guard let note = notes[event.object] else { continue }
                // A note made public is new to everyone but its author.
                let kind = event.becamePublic && event.owner != viewerID ? "note.created" : event.kind
                entries.append(Entry(id: event.id, kind: kind, data: note))
            case "place.created", "place.updated":
                guard let place = places[event.object] else { continue }
                // A place released by a moderator is new to everyone but its creator.
                let kind = event.becamePublic && event.owner != viewerID ? "place.created" : event.kind
                entries.append(Entry(id: event.id, kind: kind, data: place))
            default:
                entries.append(Entry(id: event.id, kind: event.kind, data: DeletedEvent(id: event.object).jsonBytes))
            }
        }
        return Batch(entries: entries, position: position)
    }

    /// The events of one window, through the primary key `(tenant_id, id)`, which holds only
    /// the tenant's ids (the horizon's index, on `id + 0`, cannot serve it: migration 0008).
    static func windowStatement(tenantID: Int64, viewerID: Int64, after: Int64, end: Int64, box: BoundingBox?) -> PostgresQuery {
        var query: PostgresQuery = """
            SELECT e.id, e.kind, e.object_id, e.owner_id, e.became_public
            FROM events e
            WHERE e.tenant_id = \(tenantID) AND e.id > \(after) AND e.id <= \(end)
              AND (e.audience = 'all' OR (e.audience = 'owner' AND e.owner_id = \(viewerID))
                   OR (e.audience = 'others' AND e.owner_id IS DISTINCT FROM \(viewerID)))
            """
        if let box {
            query.append(" AND \(box.condition(latitude: "e.lat", longitude: "e.lng"))")
        }
        query.append(" ORDER BY e.id LIMIT \(Self.batchSize)")
        return query
    }

    /// Whether a stream may resume after `lastEventID` with its tenant's horizon at `head`:
    /// nil when it may (also past `head`, for an event the log holds), else why not. A replay is bounded: past `maxReplay` of the
    /// tenant's events the client is told to fetch afresh instead.
    ///
    /// With one horizon for the log (`head.floor` nil) the purge mark is the log's. Per
    /// tenant (Citus) an id outside the range the tenant's ids now come from is unknown
    /// (its shard moved since), and the mark is the tenant's for that range (`event_purges`).
    func resumeProblem(
        tenantID: Int64, lastEventID: Int64, head: EventHub.Head, maxReplay: Int, on reads: some PostgresQuerying
    ) async throws -> ResetEvent.Reason? {
        if lastEventID > head.id {
            // Past this replica's horizon: an event of the tenant's the client read where the
            // horizon was further on (another replica; this one polls every 100 ms) is resumed
            // from once this horizon passes it, as every id below it was final there. An id the
            // tenant's log does not hold is unknown, as is one of another range than the
            // tenant's ids now come from (Citus: its shard moved since).
            if let floor = head.floor, lastEventID >> Self.rangeShift != floor >> Self.rangeShift { return .unknownPosition }
            let held = try await reads.query("SELECT 1 FROM events WHERE tenant_id = \(tenantID) AND id = \(lastEventID)")
            return held.isEmpty ? .unknownPosition : nil
        }
        let purged: PostgresRows
        if let floor = head.floor {
            if lastEventID < floor - 1 { return .unknownPosition }
            purged = try await reads.query("""
                SELECT purged_through FROM event_purges WHERE tenant_id = \(tenantID) AND id_range = \(floor >> Self.rangeShift)
                """)
        } else {
            purged = try await reads.query("SELECT purged_through FROM event_log_state")
        }
        if let through = try purged.first?.decode(Int64.self, column: 0), lastEventID < through { return .expired }
        let pending = try await reads.query("""
            SELECT count(*) FROM (
                SELECT 1 FROM events WHERE tenant_id = \(tenantID) AND id > \(lastEventID) AND id <= \(head.id)
                LIMIT \(maxReplay + 1)
            ) missed
            """)
        return try pending[0].decode(Int.self, column: 0) > maxReplay ? .tooFarBehind : nil
    }

    /// Citus gives node group g the event ids from g << 48 on; `event_purges` keys its
    /// marks by `id >> 48` (migration 0018).
    static let rangeShift: Int64 = 48

    /// Whether the stream's access token still admits it: not expired, session not
    /// revoked, user and tenant not disabled (the check every request passes). The stream
    /// knows its tenant, so this is the lookup in that tenant alone, for a token of either
    /// form; `reads` has `tenantID` set.
    func isLive(tenantID: Int64, tokenHash: [UInt8], on reads: some PostgresQuerying) async throws -> Bool {
        try await tokens.isLive(tenantID: tenantID, accessTokenHash: tokenHash, on: reads)
    }

    /// Which horizon the log needs (`event_log_mode`, migration 0018): one for the whole
    /// log on one server, one per tenant where Citus holds it.
    static func mode(on pool: PostgresPool) async throws -> EventHub.Mode {
        let mode = try await pool.query("SELECT event_log_mode()")[0].decode(String.self, column: 0)
        return mode == "per_tenant" ? .perTenant : .global
    }

    /// Where a starting service's horizon begins: the newest final id, and the snapshot's
    /// xmax above which ids may still commit (`event_log_start`, migration 0008).
    static func start(on pool: PostgresPool) async throws -> (head: Int64, snapshotXmax: Int64) {
        let rows = try await pool.query("SELECT head, snapshot_xmax FROM event_log_start()")
        return try rows[0].decode((Int64, Int64).self)
    }

    /// The ids (and their tenants) committed after `head`, at most `limit`, with the snapshot
    /// they were read in (`event_ids_after`): what `EventHorizon` moves the horizon by.
    static func ids(after head: Int64, limit: Int, on pool: PostgresPool) async throws
        -> (snapshotXmin: Int64, snapshotXmax: Int64, ids: [Int64], tenantIDs: [Int64])
    {
        let rows = try await pool.query("SELECT snapshot_xmin, snapshot_xmax, ids, tenant_ids FROM event_ids_after(\(head), \(limit))")
        return try rows[0].decode((Int64, Int64, [Int64], [Int64]).self)
    }

    /// One tenant's newest visible id above `after` on the node that holds its events, with
    /// that node's snapshot and id floor (`event_probe`, migration 0018): what `TenantHorizon`
    /// moves the tenant's head by. Alone in its statement, as Citus needs to run it on the
    /// tenant's worker.
    static func probe(tenantID: Int64, after: Int64, on connection: some PostgresQuerying) async throws -> TenantHorizon.Probe {
        let values = try await connection.query("SELECT event_probe(\(tenantID), \(after))")[0].decode([Int64].self, column: 0)
        guard values.count == 4 else { throw PostgresError(kind: .decoding, message: "event_probe returned \(values.count) values, not 4") }
        return TenantHorizon.Probe(snapshotXmin: values[0], snapshotXmax: values[1], floor: values[2], newest: values[3])
    }
}
