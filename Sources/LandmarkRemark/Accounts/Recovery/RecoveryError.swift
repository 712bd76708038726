/// Why a verification or reset cannot be done (`Problems+Domain.swift` says it in HTTP).
enum RecoveryError: Error, Equatable {
    /// The tenant has no mail relay, or the service no data key: nothing can be mailed.
    case mailNotConfigured
    /// The account has no email to verify.
    case noEmail
    /// The account's email is verified already and no change waits.
    case alreadyVerified
    /// Not the code or link (or no such account: never told apart).
    case invalidCode
    /// The code or link was used, replaced, ran out of tries or time.
    case codeExpired
    /// Too much mail to this address or from this client; retry after so many seconds.
    case tooMuchMail(retryAfter: Int)
    /// The tenant requires a verified email before posting.
    case emailNotVerified
}
