/// Changes to the JOSE header of a minted token. The default is `{"alg":…,"typ":"JWT","kid":…}`
/// with the signing key's own `kid`.
public struct HeaderOverrides: Sendable, Equatable {
    /// A `kid` to write instead of the signing key's (e.g. `"nope"`, a kid the JWKS lacks).
    public var kid: String?
    /// Leaves `kid` out of the header altogether (wins over `kid`).
    public var omitKid: Bool
    /// A `typ` to write instead of `"JWT"`.
    public var typ: String?
    /// Leaves `typ` out of the header.
    public var omitTyp: Bool
    /// An `alg` to write instead of the key's own. The signature is still the key's (RS256 or ES256),
    /// so this makes a token whose header lies about its algorithm, e.g. `"RS384"` on an RS256
    /// signature, or `"ES256"` on an RSA signature.
    public var alg: String?

    public init(kid: String? = nil, omitKid: Bool = false, typ: String? = nil, omitTyp: Bool = false, alg: String? = nil) {
        self.kid = kid
        self.omitKid = omitKid
        self.typ = typ
        self.omitTyp = omitTyp
        self.alg = alg
    }
}
