import Foundation

/// A validated `POST /v1/reports` body.
struct ReportDraft: RequestBody, Equatable {
    static let maximumDetailLength = 500

    let target: ReportTarget
    let reason: ReportReason
    /// Trimmed; nil when absent, null or blank.
    let detail: String?

    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = CreateReportRequest(reading: &reader)
        var detail: String?
        if case .some(.some(let raw)) = request.detail {
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.unicodeScalars.count > Self.maximumDetailLength {
                reader.fail("detail", "must be at most \(Self.maximumDetailLength) characters")
            } else if TextRules.containsForbiddenControl(trimmed) {
                reader.fail("detail", "must not contain control characters other than newline and tab")
            } else if !trimmed.isEmpty {
                detail = trimmed
            }
        }
        guard let type = request.target?.type, let id = request.target?.id, let reason = request.reason, reader.errors.isEmpty
        else { return nil }
        (self.target, self.reason, self.detail) = (ReportTarget(type: type, id: id), reason, detail)
    }
}
