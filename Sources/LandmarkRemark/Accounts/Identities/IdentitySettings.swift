/// The service-wide side of sign-in with ID tokens; what each tenant accepts is in the
/// database (`identity_providers`, set by operators).
public struct IdentitySettings: Sendable {
    /// Where Apple's and Google's issuers, keys and endpoints are. Pinned here; tests point
    /// them at a provider on loopback.
    public var apple = BuiltInIdentityProvider.apple
    public var google = BuiltInIdentityProvider.google
    /// Key URLs (and Apple's endpoints) over plain http to 127.0.0.1/localhost/[::1] are
    /// refused unless this is set (`LR_IDENTITY_ALLOW_LOOPBACK`): for tests and the walkthrough.
    public var allowLoopbackKeyURLs = false
    /// Guest accounts one client address may make per tenant per hour.
    public var guestsPerAddressPerHour = 10
    /// Seals Apple's refresh tokens at rest (`LR_DATA_KEY`, 32 bytes). Without it an Apple
    /// authorization code is not exchanged (nothing could be kept safely).
    public var dataKey: [UInt8]?
    /// How long one fetch of a provider's keys or one call to Apple may take.
    public var providerTimeout: Duration = .seconds(5)
    /// Keys are kept this long when the provider says nothing (`Cache-Control`).
    public var defaultKeysLifetime: Duration = .seconds(3600)
    /// A token naming a key the cached set lacks makes the set be fetched again, at most
    /// this often per provider.
    public var unknownKeyRefetchInterval: Duration = .seconds(60)

    public init() {}
}

/// A provider whose issuers and endpoints the service knows.
public struct BuiltInIdentityProvider: Sendable {
    public var issuers: [String]
    public var keysURL: String
    /// Apple only: the authorization-code exchange and token revocation.
    public var tokenURL: String?
    public var revokeURL: String?

    public init(issuers: [String], keysURL: String, tokenURL: String? = nil, revokeURL: String? = nil) {
        self.issuers = issuers
        self.keysURL = keysURL
        self.tokenURL = tokenURL
        self.revokeURL = revokeURL
    }

    /// Apple documents one issuer; its tokens' `aud` is the app's bundle id or services id.
    public static let apple = BuiltInIdentityProvider(
        issuers: ["https://appleid.apple.com"], keysURL: "https://appleid.apple.com/auth/keys",
        tokenURL: "https://appleid.apple.com/auth/token", revokeURL: "https://appleid.apple.com/auth/revoke")
    /// Google signs with either spelling of its issuer (its ID-token guide says to accept both).
    public static let google = BuiltInIdentityProvider(
        issuers: ["https://accounts.google.com", "accounts.google.com"], keysURL: "https://www.googleapis.com/oauth2/v3/certs")
}
