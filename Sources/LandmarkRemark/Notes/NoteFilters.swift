import Credentials

/// The filters lists and clusters of notes share: the map's (`near` with `radius_m`, `bbox`,
/// `q`), and the notes' own: `in`, `author`, `place_id`. Parsing is strict; each bad
/// parameter is a `400` that names it.
struct NoteFilters: Sendable {
    enum Author: Sendable, Equatable {
        case me
        case others
        case username(String)
        /// Resolved beforehand, for `/v1/users/{username}/notes`.
        case user(id: Int64)
    }

    enum SearchField: String, Sendable {
        case all, body, username
    }

    struct Search: Sendable, Equatable {
        let text: SearchText
        let field: SearchField
        /// The users whose names match, once `NoteStore.resolvingUsernames` has looked them up.
        var authors: Authors?

        /// Whether no author's name is asked: none matched, or names are not searched (`in=body`).
        var asksNoAuthor: Bool { authors == nil || authors == .ids([]) }
    }

    /// The authors a search matched by name.
    enum Authors: Sendable, Equatable {
        /// Their ids, few enough to hand the statement as a value (`NoteStore.namesResolvedUpFront`).
        case ids([Int64])
        /// More: each note's author is tested by name as the note is read (`NoteStore.condition`).
        case many
    }

    var near: GeoPoint?
    var radius: Double?
    var bbox: BoundingBox?
    var search: Search?
    var author: Author?
    var placeID: Int64?

    /// Reads the filter parameters; `author` is not read when the path fixes it.
    init(_ parameters: inout QueryParameters, author fixedAuthor: Author? = nil) throws {
        let field = parameters.string("in")
        let map = try MapFilters(&parameters)
        (near, radius, bbox) = (map.near, map.radius, map.bbox)
        if let text = map.search {
            guard let parsedField = SearchField(rawValue: field ?? "all") else {
                throw AppError.malformed("in must be all, body or username")
            }
            search = Search(text: text, field: parsedField)
        } else if field != nil {
            throw AppError.malformed("in needs q")
        }
        if let fixedAuthor {
            author = fixedAuthor
        } else if let text = parameters.string("author") {
            switch text {
            case "me": author = .me
            case "others": author = .others
            default:
                guard Username.problem(text) == nil else {
                    throw AppError.malformed("author must be me, others or a username")
                }
                author = .username(text)
            }
        }
        if let text = parameters.string("place_id") {
            guard let id = ResourceID.parse(text) else { throw AppError.malformed("place_id must be a place id") }
            placeID = id
        }
        // LIKE '%…%' over folded note bodies is served by the trigram index when q holds a
        // trigram, and by the bigram index (migration 0034) when it holds two letters or digits
        // in a row (東京, 서울). A single letter, or symbols only, has neither: every note of the
        // tenant would be read and re-checked (0.35 s on 300,000 notes), so it is answered only
        // where one author's notes, or one place's, are read through their own index. Usernames
        // are few: any q is cheap there.
        if let search, search.field != .username, !search.text.isIndexed, !narrowsToFewNotes {
            throw AppError.queryTooBroad(
                field: "q", "needs 2 letters or digits in a row to search note bodies, unless author (me or a username) or place_id narrows the notes (or in=username)")
        }
    }

    /// Whether the notes are one author's or one place's, read through that index (see
    /// `walksNewestFirst`): what lets a search no index answers (one letter) run.
    var narrowsToFewNotes: Bool {
        if placeID != nil { return true }
        switch author {
        case .me, .user, .username: return true
        case .none, .others: return false
        }
    }

    /// Eight bytes that change with any filter, carried in cursors so a cursor
    /// is only honoured by the query that produced it.
    var fingerprint: [UInt8] {
        var map = MapFilters()
        (map.near, map.radius, map.bbox) = (near, radius, bbox)
        var canonical = "v1" + map.canonical
        // Length-prefixed, so no text inside q can imitate the parameters after it.
        if let search { canonical += "|in=\(search.field.rawValue)|q=\(search.text.text.utf8.count):\(search.text.text)" }
        switch author {
        case .none: break
        case .me: canonical += "|author=me"
        case .others: canonical += "|author=others"
        case .username(let name): canonical += "|author=@\(name.lowercased())"
        case .user(let id): canonical += "|author=#\(id)"
        }
        if let placeID { canonical += "|place=\(placeID)" }
        return Array(Tokens.sha256(canonical).prefix(8))
    }

    init() {}

    /// Whether a newest-first page first walks the newest notes (see `NoteList`): with a
    /// viewport, a search of note text, or many authors matched by name, unless an author or a
    /// place already narrows the notes to an index of their own. (A username search with a few
    /// authors has their ids, and the statement planned for them picks the author index or the
    /// walk; many authors' notes are a share of all the notes, found sooner walking than
    /// through each author's index.)
    var walksNewestFirst: Bool {
        guard bbox != nil || searchesText || search?.authors == .many, placeID == nil else { return false }
        switch author {
        case .none, .others: return true
        case .me, .user, .username: return false
        }
    }

    /// Whether `q` looks at note text (`in=body` or `all`).
    var searchesText: Bool { search.map { $0.field != .username } ?? false }

    /// Whether `q` looks at note text and no author matched by name: the text index
    /// (`notes_search`) answers the search alone, with its cell and time keys. (Authors matched
    /// by name make it an OR of two indexes, and the author index knows neither.)
    var searchesTextIndexAlone: Bool { searchesText && (search?.asksNoAuthor ?? true) }

    /// The area whose cells the text index is asked for (`notes_search`'s cell keys, migration
    /// 0038): for a search of note text in a radius (its circle's box) or a viewport, unless
    /// authors matched by name make the search an OR of two indexes. Nil: no area, or the
    /// rows' location is tested with the spatial index as before.
    var textSearchArea: BoundingBox? {
        guard searchesTextIndexAlone else { return nil }
        if let near, let radius { return BoundingBox(around: near, radius: radius) }
        return bbox
    }

    /// Whether a nearest-first page filters on something its KNN walk cannot use, and so
    /// walks a bounded number of notes before it sorts the matches instead (see `NoteList`).
    var narrowsNearest: Bool { search != nil || author != nil || bbox != nil || placeID != nil }

    /// Search patterns make good and bad plans depend on the text, so such statements
    /// are planned for their own values each time rather than prepared once.
    var needsCustomPlan: Bool { search != nil }

    /// Whether the list's statement is prepared, planned once for every value (`NoteStore.statement`).
    ///
    /// A walking newest-first page decides between its plans as it runs, so one plan fits
    /// every pattern and planning it once per connection saves ~2 ms a search. Authors
    /// matched by name too: PostgreSQL hashes `user_id = ANY(ids)` only when the array is
    /// known at planning (500 ids compared one by one on every walked row cost 8.3 ms a page
    /// against 5.7 ms planned each time; bench/results/2026-11-23-search.md), so the walks
    /// test the ids as a hashed subquery instead (`NoteStore.condition`), and planning the
    /// statement for 500 literal ids is no longer paid on every call (10 ms at ten million
    /// notes; bench/results/2026-11-28-search-10m.md).
    /// Words in a box were the exception too until the text index had cells (migration 0038):
    /// whether the box's index or the word's found the rare matches cheaper depended on both,
    /// and the one plan that fit a busy tenant's box took the spatial index for a rare word in
    /// London (740 ms a page at ten million notes; bench/results/2026-11-24-performance.md).
    /// Now one index answers both halves, and the spatial one is not offered (`textSearchArea`).
    /// Nearest first with a word too: its walk goes through the planar index whatever the word,
    /// its page within the walk's reach behind a fence, and only its every-match branch asks
    /// the word's index, with the circle's cells. Planning it cost 3-5 ms a search, a third to
    /// a half of the whole (bench/results/2026-11-29-near.md).
    var isPlannedOnce: Bool {
        if near == nil ? walksNewestFirst : narrowsNearest {
            return true
        }
        return !needsCustomPlan
    }
}
