import Postgres

/// What a photo is on: a note or a place. Each keeps its photos' summary in its own row
/// (`photos`, migration 0032), and decides who may add them and who sees them.
enum PhotoHolder: Sendable, Equatable {
    case note(Int64)
    case place(Int64)

    var id: Int64 {
        switch self {
        case .note(let id), .place(let id): id
        }
    }

    /// The table whose row holds the summary.
    var table: PostgresQuery {
        switch self {
        case .note: "notes"
        case .place: "places"
        }
    }

    /// The column of `photos` that names it.
    var column: PostgresQuery {
        switch self {
        case .note: "note_id"
        case .place: "place_id"
        }
    }

    /// No such note or place the caller sees.
    var notFound: any Error {
        switch self {
        case .note: NoteError.notFound
        case .place: PlaceError.notFound
        }
    }

    /// Seen, but the caller may not add or remove its photos.
    var forbidden: any Error {
        switch self {
        case .note: NoteError.notAuthor
        case .place: PlaceError.notCreator
        }
    }
}
