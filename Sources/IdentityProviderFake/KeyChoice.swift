/// Which key signs a token from ``FakeIdentityProvider/mint(_:key:header:)``.
public enum KeyChoice: Sendable, Equatable {
    /// The current RSA key (RS256), served in the JWKS.
    case rsa
    /// The current EC P-256 key (ES256), served in the JWKS.
    case ec
    /// An RSA key the JWKS never serves, while the header names the current RSA key's `kid`:
    /// a token whose signature does not verify.
    case foreignRSA
    /// An EC P-256 key the JWKS never serves, with the current EC key's `kid`.
    case foreignEC
}
