/// A validated `PATCH /v1/notes/{id}` body: each field is either absent (keep) or a new value.
struct NotePatch: RequestBody, Equatable {
    var body: String?
    var visibility: Visibility?
    /// `.none`: keep; `.some(nil)`: detach from its place; `.some(id)`: attach.
    var placeID: Int64??

    var isEmpty: Bool { body == nil && visibility == nil && placeID == nil }

    /// Reads and validates the body; null is refused for `body` and `visibility`, allowed for `place_id`.
    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = UpdateNoteRequest(reading: &reader)
        body = request.body.flatMap { NoteRules.body($0, in: &reader) }
        visibility = request.visibility
        placeID = request.placeID
        guard reader.errors.isEmpty else { return nil }
    }
}
