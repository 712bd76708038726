/// Why a notes operation cannot be done, in the notes' own words (`Problems+Domain.swift` says them in HTTP).
enum NoteError: Error, Equatable {
    /// No such note, or one the caller may not see.
    case notFound
    /// The note is visible but someone else's.
    case notAuthor
    /// `If-Match` names another version of the note.
    case changedSince
    /// `place_id` names no place of the tenant.
    case unknownPlace
    /// `/v1/users/{username}/notes` names no active user.
    case unknownAuthor
}
