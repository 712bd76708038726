/// One page of `GET /v1/notes` (or `/v1/users/{username}/notes`) as the client asked for
/// it: nearest first when `near` is given, else newest first, with keyset pagination on the
/// order's own key. `NoteStore.page(_:tenantID:viewerID:on:)` runs it.
struct NoteList: Sendable {
    var filters: NoteFilters
    let page: PageRequest

    var limit: Int { page.limit }
    var cursor: KeysetCursor? { page.cursor }

    /// Reads the list's parameters; unknown ones are refused.
    init(_ parameters: inout QueryParameters, author: NoteFilters.Author? = nil) throws {
        filters = try NoteFilters(&parameters, author: author)
        page = try PageRequest(&parameters, nearest: filters.near != nil, fingerprint: filters.fingerprint)
        try parameters.finish()
    }
}
