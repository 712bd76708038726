import Foundation

/// A validated `POST /v1/moderation/targets/{type}/{id}/decision` body.
struct ModerationDecision: RequestBody, Equatable {
    static let maximumNoteLength = 1000
    /// How far ahead a suspension may end: longer is a ban.
    static let longestSuspension: TimeInterval = 366 * 24 * 3600

    let action: ModerationAction
    /// A suspension's end; nil for the other actions.
    let until: Date?
    let note: String?

    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = ModerationDecisionRequest(reading: &reader)
        var note: String?
        if case .some(.some(let raw)) = request.note {
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.unicodeScalars.count > Self.maximumNoteLength {
                reader.fail("note", "must be at most \(Self.maximumNoteLength) characters")
            } else if !trimmed.isEmpty {
                note = trimmed
            }
        }
        let until = request.until ?? nil
        switch (request.action, until) {
        case (.suspendAuthor?, nil):
            // Present but unreadable: the reader said so already.
            if case .none = request.until, reader.contains("until") { break }
            reader.fail("until", "is required to suspend: when the suspension ends")
        case (.suspendAuthor?, let end?):
            let ahead = end.timeIntervalSinceNow
            if ahead <= 0 || ahead > Self.longestSuspension { reader.fail("until", "must be in the future and within a year") }
        case (_?, _?):
            reader.fail("until", "is only for suspend_author")
        default:
            break
        }
        guard let action = request.action, reader.errors.isEmpty else { return nil }
        (self.action, self.until, self.note) = (action, until, note)
    }
}
