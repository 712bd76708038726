import Foundation

/// Every failure of a call: the service's answer (`api`), or no answer at all (`network`),
/// kept apart so an app retries the second and shows the first.
public enum LandmarkRemarkError: Error, Sendable {
    /// The service answered with problem details.
    case api(APIProblem)
    /// An edit lost a race: `If-Match` named an older version. `current` is the note as it is
    /// now, with its `etag` for the next try (nil when it was deleted meanwhile); merge and edit again.
    case conflict(current: VersionedNote?)
    /// The request did not get an answer: no connection, a dropped connection, a timeout.
    case network(underlying: any Error)
    /// An answer that is not in the contract (a proxy's error page, say).
    case unexpectedResponse(status: Int)
    /// The call needs a signed-in user and there is none (never signed in, signed out, or the
    /// session ended: `refresh_token_reused`/`refresh_token_invalid`).
    case signedOut

    /// The problem's code, when the service answered with one.
    public var code: ProblemCode? {
        if case .api(let problem) = self { return problem.code }
        return nil
    }
}

/// RFC 9457 problem details, as the service sends them (`docs/api.md`, "Errors").
public struct APIProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public struct FieldError: Sendable, Equatable {
        public let field: String
        public let message: String
    }

    public let status: Int
    public let code: ProblemCode
    public let title: String
    /// For people: show it.
    public let detail: String
    /// With `validation_failed` (and `username_taken`/`email_taken`): every bad field.
    public let fieldErrors: [FieldError]
    /// Seconds to wait, with `429` and `503`.
    public let retryAfter: Int?
    /// The response's `X-Request-Id`, which finds the request in the service's logs.
    public let requestID: String

    public var description: String { "\(status) \(code.rawValue): \(detail)" }
}

/// The stable, machine-readable problem codes; switch on these. A code this version of the
/// client does not know yet is `.other`.
public enum ProblemCode: Sendable, Hashable, RawRepresentable, CaseIterable {
    case malformedRequest
    case unauthenticated
    case invalidCredentials
    case refreshTokenInvalid
    case refreshTokenReused
    case idTokenInvalid
    case forbidden
    case guestsDisabled
    case tenantMismatch
    case termsNotAccepted
    /// The tenant wants a verified email before posting: `requestEmailVerification()`.
    case emailNotVerified
    case notFound
    case tenantNotFound
    case usernameTaken
    case emailTaken
    case identityTaken
    case identityAlreadyLinked
    case lastSignInMethod
    /// `requestEmailVerification()`: the account has no email, or it is verified already.
    case noEmail
    case emailAlreadyVerified
    case idempotencyInProgress
    case preconditionFailed
    case payloadTooLarge
    case unsupportedMediaType
    case validationFailed
    case idempotencyKeyReused
    case queryTooBroad
    /// A mailed code or link is not right, or was used, replaced, tried too often or is too old.
    case invalidCode
    case codeExpired
    case cannotBlockSelf
    case tooManyBlocks
    case cannotReportOwnContent
    case contentRefused
    case rateLimited
    case `internal`
    case unavailable
    /// The tenant cannot send email (`TenantInfo.passwordResetAvailable` is false).
    case mailNotConfigured
    /// A photo upload over the service's size limit (15 MB by default).
    case photoTooLarge
    /// A photo upload that is not JPEG, PNG, WebP or HEIC/HEIF by its bytes.
    case unsupportedPhotoFormat
    /// A photo whose header declares more pixels than the service decodes (50 million by default).
    case photoTooManyPixels
    /// A photo that could not be decoded (damaged, or too costly).
    case photoUnreadable
    /// The note has as many photos as it may (4 by default).
    case tooManyPhotos
    /// The photo would take the user's (or the app's) photos past their quota.
    case photoQuotaExceeded
    /// The user watches as many areas as they may (10 by default).
    case tooManyWatches
    case other(String)

    public static let allCases: [ProblemCode] = [
        .malformedRequest, .unauthenticated, .invalidCredentials, .refreshTokenInvalid, .refreshTokenReused, .idTokenInvalid,
        .forbidden, .guestsDisabled, .tenantMismatch, .termsNotAccepted, .notFound, .tenantNotFound, .usernameTaken, .emailTaken, .identityTaken,
        .identityAlreadyLinked, .lastSignInMethod, .idempotencyInProgress, .preconditionFailed, .payloadTooLarge,
        .unsupportedMediaType, .validationFailed, .idempotencyKeyReused, .queryTooBroad, .cannotBlockSelf, .tooManyBlocks, .cannotReportOwnContent, .contentRefused, .rateLimited,
        .internal, .unavailable, .emailNotVerified, .noEmail, .emailAlreadyVerified, .invalidCode, .codeExpired, .mailNotConfigured,
        .photoTooLarge, .unsupportedPhotoFormat, .photoTooManyPixels, .photoUnreadable, .tooManyPhotos, .photoQuotaExceeded,
        .tooManyWatches,
    ]

    public init(rawValue: String) {
        self = Self.allCases.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }

    public var rawValue: String {
        switch self {
        case .malformedRequest: "malformed_request"
        case .unauthenticated: "unauthenticated"
        case .invalidCredentials: "invalid_credentials"
        case .refreshTokenInvalid: "refresh_token_invalid"
        case .refreshTokenReused: "refresh_token_reused"
        case .idTokenInvalid: "id_token_invalid"
        case .forbidden: "forbidden"
        case .guestsDisabled: "guests_disabled"
        case .tenantMismatch: "tenant_mismatch"
        case .termsNotAccepted: "terms_not_accepted"
        case .notFound: "not_found"
        case .tenantNotFound: "tenant_not_found"
        case .usernameTaken: "username_taken"
        case .emailTaken: "email_taken"
        case .identityTaken: "identity_taken"
        case .identityAlreadyLinked: "identity_already_linked"
        case .lastSignInMethod: "last_sign_in_method"
        case .idempotencyInProgress: "idempotency_in_progress"
        case .preconditionFailed: "precondition_failed"
        case .payloadTooLarge: "payload_too_large"
        case .unsupportedMediaType: "unsupported_media_type"
        case .validationFailed: "validation_failed"
        case .idempotencyKeyReused: "idempotency_key_reused"
        case .queryTooBroad: "query_too_broad"
        case .cannotBlockSelf: "cannot_block_self"
        case .tooManyBlocks: "too_many_blocks"
        case .tooManyWatches: "too_many_watches"
        case .cannotReportOwnContent: "cannot_report_own_content"
        case .contentRefused: "content_refused"
        case .rateLimited: "rate_limited"
        case .internal: "internal"
        case .unavailable: "unavailable"
        case .emailNotVerified: "email_not_verified"
        case .noEmail: "no_email"
        case .emailAlreadyVerified: "email_already_verified"
        case .invalidCode: "invalid_code"
        case .codeExpired: "code_expired"
        case .mailNotConfigured: "mail_not_configured"
        case .photoTooLarge: "photo_too_large"
        case .unsupportedPhotoFormat: "unsupported_photo_format"
        case .photoTooManyPixels: "photo_too_many_pixels"
        case .photoUnreadable: "photo_unreadable"
        case .tooManyPhotos: "too_many_photos"
        case .photoQuotaExceeded: "photo_quota_exceeded"
        case .other(let code): code
        }
    }
}
