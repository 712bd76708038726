/// A validated `PATCH /v1/notes/{id}` body: each field is either absent (keep) or a new value.
struct NotePatch: RequestBody, Equatable {
    var body: String?
    var visibility: Note.Visibility?
    /// `.none`: keep; `.some(nil)`: detach from its place; `.some(id)`: attach.
    var placeID: Int64??

    var isEmpty: Bool { body == nil && visibility == nil && placeID == nil }

    /// Reads and validates the body; null is refused for `body` and `visibility`, allowed for `place_id`.
    init?(reading reader: inout JSONObjectReader, rules: Void) {
        if let raw = reader.string("body", required: false) {
            switch NoteRules.body(raw) {
            case .success(let trimmed): body = trimmed
            case .failure(let problem): reader.fail("body", problem.message)
            }
        }
        if let raw = reader.string("visibility", required: false) {
            switch NoteRules.visibility(raw) {
            case .success(let value): visibility = value
            case .failure(let problem): reader.fail("visibility", problem.message)
            }
        }
        placeID = NoteRules.placeID(&reader)
        guard reader.errors.isEmpty else { return nil }
    }
}
