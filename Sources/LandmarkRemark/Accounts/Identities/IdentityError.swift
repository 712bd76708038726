/// Why signing in with an ID token, linking one, or a guest sign-up cannot be done
/// (`Problems+Domain.swift` says it in HTTP).
enum IdentityError: Error, Equatable {
    /// `401 id_token_invalid`; the reason names the check that failed.
    case tokenInvalid(String)
    /// The provider's keys cannot be fetched and none are cached: `503`.
    case providerUnavailable
    /// The tenant does not accept this provider.
    case providerNotEnabled(String)
    /// The identity belongs to another account of the tenant.
    case identityTaken
    /// The account already has an identity from this provider.
    case providerAlreadyLinked
    /// The account has no identity from this provider.
    case notLinked
    /// Removing it would leave the account with no way to sign in.
    case lastSignInMethod
    /// Neither a password nor an ID token was sent, and the account has one of them.
    case reauthenticationRequired
    case accountDisabled
    case guestsDisabled
    case tooManyGuests(retryAfter: Int)
    /// A chosen username is in use; `suggestion` is free (at the time of asking).
    case usernameTaken(suggestion: String?)
}
