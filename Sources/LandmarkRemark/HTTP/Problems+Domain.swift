import Hummingbird
import Photos

/// The one place where the features' own errors become problem details. Stores and services
/// throw these in their own words; `ProblemMiddleware` asks here what a client should hear.
extension AppError {
    init?(domain error: any Error) {
        switch error {
        case let error as NoteError: self = Self.problem(for: error)
        case let error as IdempotencyError: self = Self.problem(for: error)
        case let error as PlaceError: self = Self.problem(for: error)
        case let error as AccountError: self = Self.problem(for: error)
        case let error as TenantError: self = Self.problem(for: error)
        case let error as EventError: self = Self.problem(for: error)
        case let error as IdentityError: self = Self.problem(for: error)
        case let error as SafetyError: self = Self.problem(for: error)
        case let error as RecoveryError: self = Self.problem(for: error)
        case let error as PhotoRefusal: self = Self.problem(for: error)
        case let error as PhotoError: self = Self.problem(for: error)
        case let error as PushError: self = Self.problem(for: error)
        case let error as ContentRefused:
            self = AppError(
                .unprocessableContent, code: "content_refused", title: "Content refused",
                detail: "\(error.field) contains a word this app does not allow",
                errors: [FieldError(field: error.field, message: "contains a word this app does not allow")])
        default: return nil
        }
    }

    private static func problem(for error: NoteError) -> AppError {
        switch error {
        case .notFound: .notFound("note")
        case .notAuthor: .forbidden("only the author of a note can change or delete it")
        case .changedSince:
            AppError(
                .preconditionFailed, code: "precondition_failed", title: "Precondition failed",
                detail: "If-Match does not match the note's current ETag; fetch the note again")
        case .unknownPlace: .validation(field: "place_id", "is not a place")
        case .unknownAuthor: .notFound("user")
        }
    }

    private static func problem(for error: IdempotencyError) -> AppError {
        switch error {
        case .keyReused:
            AppError(
                .unprocessableContent, code: "idempotency_key_reused", title: "Idempotency key reused",
                detail: "this Idempotency-Key was used with a different request; use a new key for a new request")
        case .inProgress:
            AppError(
                .conflict, code: "idempotency_in_progress", title: "Idempotent request in progress",
                detail: "the first request with this Idempotency-Key is still running; retry shortly")
        }
    }

    private static func problem(for error: PhotoRefusal) -> AppError {
        switch error {
        case .notFound: .notFound("photo")
        case .tooManyPhotos(let limit):
            AppError(
                .unprocessableContent, code: "too_many_photos", title: "Too many photos",
                detail: "a note may have \(limit) photos; delete one to add another")
        case .quotaExceeded(.user, let limit):
            AppError(
                .contentTooLarge, code: "photo_quota_exceeded", title: "Photo quota exceeded",
                detail: "your photos may take \(limit) bytes in all; delete some to add more")
        case .quotaExceeded(.tenant, let limit):
            AppError(
                .contentTooLarge, code: "photo_quota_exceeded", title: "Photo quota exceeded",
                detail: "this app's photos may take \(limit) bytes in all, and have reached it")
        }
    }

    /// The sanitiser's refusals. The decoder's own words stay in the log: they say nothing
    /// a client can act on, and could say what a prober wants to know.
    private static func problem(for error: PhotoError) -> AppError {
        switch error {
        case .unsupportedFormat:
            AppError(
                .unsupportedMediaType, code: "unsupported_photo_format", title: "Unsupported photo format",
                detail: "the body is not a JPEG, PNG, WebP or HEIC/HEIF image (recognised by its bytes, not by its Content-Type or name)")
        case .tooManyBytes(let limit):
            AppError(.contentTooLarge, code: "photo_too_large", title: "Photo too large", detail: "a photo may be at most \(limit) bytes")
        case .tooManyPixels(let width, let height, let limit):
            AppError(
                .unprocessableContent, code: "photo_too_many_pixels", title: "Photo has too many pixels",
                detail: "the image declares \(width)×\(height) pixels; at most \(limit) are accepted")
        case .unreadable:
            AppError(
                .unprocessableContent, code: "photo_unreadable", title: "Photo unreadable",
                detail: "the image could not be decoded: it is damaged, or too costly to decode")
        case .sandboxUnavailable:
            AppError.unavailable()
        }
    }

    private static func problem(for error: SafetyError) -> AppError {
        switch error {
        case .userNotFound: .notFound("user")
        case .cannotBlockSelf:
            AppError(
                .unprocessableContent, code: "cannot_block_self", title: "Cannot block yourself",
                detail: "a user cannot block themselves", errors: [FieldError(field: "username", message: "is you")])
        case .tooManyBlocks(let limit):
            AppError(
                .unprocessableContent, code: "too_many_blocks", title: "Too many blocks",
                detail: "a user may block at most \(limit) users; unblock some first",
                errors: [FieldError(field: "username", message: "is one block too many")])
        case .targetNotFound(let type): .notFound(type.rawValue)
        case .cannotReportOwnContent:
            AppError(
                .unprocessableContent, code: "cannot_report_own_content", title: "Cannot report your own content",
                detail: "the target is you, or your own note or place", errors: [FieldError(field: "target", message: "is your own")])
        case .tooManyReports(let seconds): .rateLimited(retryAfter: seconds)
        case .notModerator: .forbidden("only the tenant's moderators may do this")
        case .decisionRefused(let field, let message): .validation(field: field, message)
        }
    }

    private static func problem(for error: PushError) -> AppError {
        switch error {
        case .watchNotFound: .notFound("watch")
        case .tooManyWatches(let limit):
            AppError(
                .unprocessableContent, code: "too_many_watches", title: "Too many watches",
                detail: "a user may watch at most \(limit) areas; delete one first")
        case .unknownPlace: .validation(field: "place_id", "is not a place")
        case .malformedDeviceToken: .validation(field: "device_token", "must be an APNs device token: 64 to 200 hex digits")
        case .placeWatchMoved: .validation(field: "near", "cannot move a watch of a place; watch a point instead")
        }
    }

    private static func problem(for error: PlaceError) -> AppError {
        switch error {
        case .notFound: .notFound("place")
        case .curated: .forbidden("default places are curated by the operator and cannot be changed")
        case .notCreator: .forbidden("only the creator of a place can change it")
        }
    }

    private static func problem(for error: AccountError) -> AppError {
        switch error {
        case .usernameTaken:
            AppError(
                .conflict, code: "username_taken", title: "Username taken", detail: "that username is already in use",
                errors: [FieldError(field: "username", message: "is already in use")])
        case .emailTaken:
            AppError(
                .conflict, code: "email_taken", title: "Email taken", detail: "that email is already in use",
                errors: [FieldError(field: "email", message: "is already in use")])
        case .invalidCredentials:
            AppError(.unauthorized, code: "invalid_credentials", title: "Invalid credentials", detail: "the username or password is wrong")
        case .tooManyFailures(let seconds): .rateLimited(retryAfter: seconds)
        case .refreshTokenInvalid:
            AppError(
                .unauthorized, code: "refresh_token_invalid", title: "Refresh token invalid",
                detail: "the refresh token is unknown, expired or revoked")
        case .refreshTokenReused:
            AppError(
                .unauthorized, code: "refresh_token_reused", title: "Refresh token reused",
                detail: "a retired refresh token was presented again; the session has been ended")
        case .sessionEnded: .unauthenticated
        case .userNotFound: .notFound("user")
        case .hashingBusy: .unavailable(retryAfter: 1)
        case .tooManyStreamTickets: .rateLimited(retryAfter: 5)
        }
    }

    private static func problem(for error: RecoveryError) -> AppError {
        switch error {
        case .mailNotConfigured:
            // Like guests_disabled: a feature the tenant's operator has not set up, not a failure.
            AppError(
                .forbidden, code: "mail_not_configured", title: "Mail not configured",
                detail: "this app cannot send email: its operator has not set up a mail relay")
        case .noEmail:
            AppError(.conflict, code: "no_email", title: "No email", detail: "the account has no email; set one with PATCH /v1/me first")
        case .alreadyVerified:
            AppError(.conflict, code: "email_already_verified", title: "Email already verified", detail: "the account's email is verified already")
        case .invalidCode:
            AppError(.unprocessableContent, code: "invalid_code", title: "Invalid code", detail: "the code or link is not right")
        case .codeExpired:
            AppError(
                .unprocessableContent, code: "code_expired", title: "Code expired",
                detail: "the code or link was used, replaced by a newer one, tried wrongly too often, or is too old; ask for a new one")
        case .tooMuchMail(let seconds):
            AppError(
                .tooManyRequests, code: "rate_limited", title: "Too many requests",
                detail: "too many messages to this address or from this client; retry after \(seconds) seconds", retryAfter: seconds)
        case .emailNotVerified:
            AppError(
                .forbidden, code: "email_not_verified", title: "Email not verified",
                detail: "this app asks for a verified email before posting: verify it (POST /v1/me/email/verification)")
        }
    }

    private static func problem(for error: IdentityError) -> AppError {
        switch error {
        case .tokenInvalid(let reason):
            AppError(.unauthorized, code: "id_token_invalid", title: "ID token invalid", detail: reason)
        case .providerUnavailable:
            AppError(
                .serviceUnavailable, code: "unavailable", title: "Service unavailable",
                detail: "the identity provider's keys cannot be fetched right now; retry shortly", retryAfter: 10)
        case .providerNotEnabled(let name): .validation(field: "provider", "\(name) is not enabled for this tenant")
        case .identityTaken:
            AppError(
                .conflict, code: "identity_taken", title: "Identity taken",
                detail: "this identity signs in to another account of this app; delete that account or unlink it there first")
        case .providerAlreadyLinked:
            AppError(
                .conflict, code: "identity_already_linked", title: "Identity already linked",
                detail: "this account already has an identity from that provider; unlink it first")
        case .notLinked: .notFound("identity")
        case .lastSignInMethod:
            AppError(
                .conflict, code: "last_sign_in_method", title: "Last sign-in method",
                detail: "this is the account's only way to sign in; link another identity or set a password first")
        case .reauthenticationRequired:
            .validation([
                FieldError(field: "password", message: "or id_token is required to confirm this change"),
            ])
        case .accountDisabled: .forbidden("this account is disabled")
        case .guestsDisabled:
            AppError(.forbidden, code: "guests_disabled", title: "Guests disabled", detail: "this app does not allow guest accounts")
        case .tooManyGuests(let seconds): .rateLimited(retryAfter: seconds)
        case .usernameTaken(let suggestion):
            AppError(
                .conflict, code: "username_taken", title: "Username taken",
                detail: suggestion.map { "that username is already in use; \($0) is free" } ?? "that username is already in use",
                errors: [FieldError(field: "username", message: suggestion.map { "is already in use; try \($0)" } ?? "is already in use")])
        }
    }

    private static func problem(for error: TenantError) -> AppError {
        switch error {
        case .headerMissing: .malformed("the X-Tenant header is required for this call")
        case .notFound: AppError(.notFound, code: "tenant_not_found", title: "Tenant not found", detail: "X-Tenant names no active tenant")
        case .mismatch:
            AppError(.forbidden, code: "tenant_mismatch", title: "Tenant mismatch", detail: "X-Tenant names a tenant other than the access token's")
        case .termsNotAccepted:
            AppError(
                .forbidden, code: "terms_not_accepted", title: "Terms not accepted",
                detail: "accept this app's current terms of use first (GET /v1/tenant, then POST /v1/me/terms)")
        case .notTheCurrentTerms(let current?): .validation(field: "version", "is not the current terms version (\(current)): fetch GET /v1/tenant again")
        case .notTheCurrentTerms(nil): .validation(field: "version", "names no terms: this app has none to accept")
        }
    }

    private static func problem(for error: EventError) -> AppError {
        switch error {
        case .tooManyStreams: .rateLimited(retryAfter: 5)
        case .unavailable: .unavailable()
        }
    }
}
