/// Why an account operation cannot be done (`Problems+Domain.swift` says it in HTTP).
enum AccountError: Error, Equatable {
    case usernameTaken
    case emailTaken
    /// Wrong username or password; the two are never told apart.
    case invalidCredentials
    /// Too many failed logins for this account, address or pair; retry after so many seconds.
    case tooManyFailures(retryAfter: Int)
    case refreshTokenInvalid
    /// A retired refresh token came back: the session was ended.
    case refreshTokenReused
    /// The access token's session or user is gone.
    case sessionEnded
    /// No active user by that name.
    case userNotFound
    /// Password hashing is saturated; nothing was checked.
    case hashingBusy
    /// The access token has as many stream tickets waiting as it may.
    case tooManyStreamTickets
}
