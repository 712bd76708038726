import Hummingbird

/// The problem codes only notes use (API.md, "Errors").
extension AppError {
    static let idempotencyKeyReused = AppError(
        .unprocessableContent, code: "idempotency_key_reused", title: "Idempotency key reused",
        detail: "this Idempotency-Key was used with a different request; use a new key for a new request")

    static let idempotencyInProgress = AppError(
        .conflict, code: "idempotency_in_progress", title: "Idempotent request in progress",
        detail: "the first request with this Idempotency-Key is still running; retry shortly")

    static let preconditionFailed = AppError(
        .preconditionFailed, code: "precondition_failed", title: "Precondition failed",
        detail: "If-Match does not match the note's current ETag; fetch the note again")

    /// A request the database could not answer within the statement timeout, refused before
    /// it runs: `detail` says what to narrow.
    static func queryTooBroad(field: String, _ message: String) -> AppError {
        AppError(
            .unprocessableContent, code: "query_too_broad", title: "Query too broad", detail: "\(field) \(message)",
            errors: [FieldError(field: field, message: message)])
    }
}
