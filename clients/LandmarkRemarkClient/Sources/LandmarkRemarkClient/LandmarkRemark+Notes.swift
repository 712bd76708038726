import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

extension LandmarkRemark {
    /// How a note's creation is retried when the network fails: with the same
    /// `Idempotency-Key`, so the service creates it once however many attempts reach it.
    static let createAttempts = 4

    /// Saves a note at `coordinate`. Sends an `Idempotency-Key` and retries a request that got
    /// no answer (or a `503`) with the same key: a flaky network never saves it twice. Pass your
    /// own `idempotencyKey` (kept with a draft in an outbox) to make retries after a relaunch
    /// safe too: the service replays the first answer for 24 hours.
    @discardableResult
    public func createNote(
        _ body: String, at coordinate: Coordinate, visibility: Visibility = .public, placeID: String? = nil,
        idempotencyKey key: String = UUID().uuidString
    ) async throws -> VersionedNote {
        // Keys are per user: a retry after someone else signed in would save it as theirs.
        let user = await session.signedInGeneration
        let request = Components.Schemas.CreateNoteRequest(
            body: body, lat: coordinate.latitude, lng: coordinate.longitude, visibility: .init(value1: visibility.schema), place_id: placeID)
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await Self.perform {
                    let created = try await api.createNote(headers: .init(Idempotency_hyphen_Key: key), body: .json(request)).created
                    return VersionedNote(note: Note(try created.body.json), etag: created.headers.ETag)
                }
            } catch let error as LandmarkRemarkError where attempt < Self.createAttempts && Self.isWorthRetrying(error) {
                try await Task.sleep(for: Self.backoff(attempt: attempt))
                guard await session.signedInGeneration == user else { throw LandmarkRemarkError.signedOut }
            }
        }
    }

    /// A note the caller may see, with its version for later edits.
    public func note(id: String) async throws -> VersionedNote {
        try await Self.perform {
            let ok = try await api.getNote(path: .init(id: id)).ok
            return VersionedNote(note: Note(try ok.body.json), etag: ok.headers.ETag)
        }
    }

    /// Changes the author's own note. With `ifMatch` (the `etag` of the version you edited), an
    /// edit made meanwhile by another device is not overwritten: it throws
    /// `LandmarkRemarkError.conflict` with the note as it is now.
    @discardableResult
    public func updateNote(
        id: String, body: String? = nil, visibility: Visibility? = nil, placeID: String? = nil, ifMatch: String? = nil
    ) async throws -> VersionedNote {
        do {
            return try await Self.perform {
                let ok = try await api.updateNote(
                    path: .init(id: id), headers: .init(If_hyphen_Match: ifMatch),
                    body: .json(.init(body: body, visibility: visibility?.schema, place_id: placeID))
                ).ok
                return VersionedNote(note: Note(try ok.body.json), etag: ok.headers.ETag)
            }
        } catch LandmarkRemarkError.api(let problem) where problem.code == .preconditionFailed {
            throw LandmarkRemarkError.conflict(current: try? await note(id: id))
        }
    }

    /// Deletes the author's own note; with `ifMatch`, only the version you saw (else `conflict`).
    public func deleteNote(id: String, ifMatch: String? = nil) async throws {
        do {
            _ = try await Self.perform { try await api.deleteNote(path: .init(id: id), headers: .init(If_hyphen_Match: ifMatch)).noContent }
        } catch LandmarkRemarkError.api(let problem) where problem.code == .preconditionFailed {
            throw LandmarkRemarkError.conflict(current: try? await note(id: id))
        }
    }

    /// Every note the query matches, page by page as you iterate (nearest first with `near`).
    public func notes(_ query: NoteQuery = NoteQuery()) -> Pages<Note> {
        Pages { cursor in try await self.notesPage(query, cursor: cursor) }
    }

    /// One page of notes; pass the previous page's `nextCursor` for the next.
    public func notesPage(_ query: NoteQuery = NoteQuery(), cursor: String? = nil) async throws -> Page<Note> {
        try await Self.perform {
            let page = try await api.listNotes(
                query: .init(
                    near: query.nearParameter, radius_m: query.radiusMeters, bbox: query.bbox?.parameter, q: query.text,
                    _in: query.searchIn.flatMap { .init(rawValue: $0.rawValue) }, author: query.author?.parameter,
                    place_id: query.placeID, limit: query.pageSize, cursor: cursor)
            ).ok.body.json
            return Page(items: page.items.map(Note.init), nextCursor: page.next_cursor)
        }
    }

    /// A user's notes (public ones, and your own private ones when it is you).
    public func notes(by username: String, _ query: NoteQuery = NoteQuery()) -> Pages<Note> {
        Pages { cursor in
            try await Self.perform {
                let page = try await self.api.listUserNotes(
                    path: .init(username: username),
                    query: .init(
                        near: query.nearParameter, radius_m: query.radiusMeters, bbox: query.bbox?.parameter, q: query.text,
                        _in: query.searchIn.flatMap { .init(rawValue: $0.rawValue) }, place_id: query.placeID,
                        limit: query.pageSize, cursor: cursor)
                ).ok.body.json
                return Page(items: page.items.map(Note.init), nextCursor: page.next_cursor)
            }
        }
    }

    /// Notes grouped for a map at `zoom` (0–22) over `bbox`, with the query's filters.
    public func clusters(in bbox: BoundingBox, zoom: Int, _ query: NoteQuery = NoteQuery()) async throws -> [Cluster] {
        try await Self.perform {
            try await api.listNoteClusters(
                query: .init(
                    bbox: bbox.parameter, zoom: zoom, near: query.nearParameter, radius_m: query.radiusMeters, q: query.text,
                    _in: query.searchIn.flatMap { .init(rawValue: $0.rawValue) }, author: query.author?.parameter,
                    place_id: query.placeID)
            ).ok.body.json.clusters.map(Cluster.init)
        }
    }

    /// No answer at all, or the service saying it is briefly unable: worth the same request again.
    static func isWorthRetrying(_ error: LandmarkRemarkError) -> Bool {
        switch error {
        case .network: true
        case .api(let problem): problem.code == .unavailable || problem.code == .idempotencyInProgress
        default: false
        }
    }

    /// 0.2 s, 0.4 s, 0.8 s … (at most 10 s), each with up to half again of random jitter.
    static func backoff(attempt: Int) -> Duration {
        let base = min(10.0, 0.2 * pow(2, Double(attempt - 1)))
        return .milliseconds(Int(base * Double.random(in: 1.0...1.5) * 1000))
    }
}
