import Hummingbird

/// A failure the client should hear about, rendered as RFC 9457 problem details
/// by `ProblemMiddleware`. `code` is the stable, machine-readable name of `docs/api.md`'s error table.
/// The HTTP edge's own problems are here; the features' errors become problems in `Problems+Domain.swift`.
struct AppError: Error, Sendable, Equatable {
    /// One field's problem, as `errors` sends it.
    typealias FieldError = LandmarkRemark.FieldError

    var status: HTTPResponse.Status
    var code: String
    var title: String
    var detail: String
    var errors: [FieldError]
    /// Seconds, for `429` and `503`.
    var retryAfter: Int?

    init(
        _ status: HTTPResponse.Status, code: String, title: String, detail: String,
        errors: [FieldError] = [], retryAfter: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.errors = errors
        self.retryAfter = retryAfter
    }

    static func malformed(_ detail: String) -> AppError {
        AppError(.badRequest, code: "malformed_request", title: "Malformed request", detail: detail)
    }

    static func validation(_ errors: [FieldError]) -> AppError {
        let detail = errors.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
        return AppError(.unprocessableContent, code: "validation_failed", title: "Validation failed", detail: detail, errors: errors)
    }

    static func validation(field: String, _ message: String) -> AppError {
        validation([FieldError(field: field, message: message)])
    }

    static let unauthenticated = AppError(
        .unauthorized, code: "unauthenticated", title: "Unauthenticated",
        detail: "a valid access token is required (Authorization: Bearer …)")

    static func forbidden(_ detail: String) -> AppError {
        AppError(.forbidden, code: "forbidden", title: "Forbidden", detail: detail)
    }

    static func notFound(_ what: String) -> AppError {
        AppError(.notFound, code: "not_found", title: "Not found", detail: "\(what) not found")
    }

    static let payloadTooLarge = AppError(
        .contentTooLarge, code: "payload_too_large", title: "Payload too large",
        detail: "the request body is larger than the server accepts")

    static let unsupportedMediaType = AppError(
        .unsupportedMediaType, code: "unsupported_media_type", title: "Unsupported media type",
        detail: "the request body must be application/json")

    static func rateLimited(retryAfter: Int) -> AppError {
        AppError(
            .tooManyRequests, code: "rate_limited", title: "Too many requests",
            detail: "too many attempts; retry after \(retryAfter) seconds", retryAfter: retryAfter)
    }

    static let internalError = AppError(
        .internalServerError, code: "internal", title: "Internal error",
        detail: "something went wrong on our side; the request id identifies it in our logs")

    static func unavailable(retryAfter: Int = 2) -> AppError {
        AppError(
            .serviceUnavailable, code: "unavailable", title: "Service unavailable",
            detail: "the service is temporarily overloaded or cannot reach its database", retryAfter: retryAfter)
    }

    /// A request that ran past its deadline, or whose statement ran past the statement
    /// timeout, and was cancelled: `503 unavailable`, as for an overloaded service, since
    /// retrying later may well work; a request that could never finish in time is refused
    /// up front instead (`422 query_too_broad`).
    static let deadlineExceeded = AppError(
        .serviceUnavailable, code: "unavailable", title: "Service unavailable",
        detail: "the request took longer than the service allows and was cancelled; retry later, or narrow it",
        retryAfter: 2)

    /// A user, tenant or client address past its share of the database or of password
    /// hashing for longer than the share queue timeout (`FairShares`).
    static let shareExceeded = AppError(
        .tooManyRequests, code: "rate_limited", title: "Too many requests",
        detail: "too many requests at once from this user, tenant or address; retry after 1 second", retryAfter: 1)

    /// A request the database could not answer within the statement timeout, refused before
    /// it runs: `detail` says what to narrow.
    static func queryTooBroad(field: String, _ message: String) -> AppError {
        AppError(
            .unprocessableContent, code: "query_too_broad", title: "Query too broad", detail: "\(field) \(message)",
            errors: [FieldError(field: field, message: message)])
    }
}
