/// The signing keys and the JWKS endpoint's behaviour.
extension FakeIdentityProvider {
    /// The `kid` of the current RSA key (RS256).
    public var rsaKeyID: String { core.currentKeys.rsaKeyID }
    /// The `kid` of the current EC P-256 key (ES256).
    public var ecKeyID: String { core.currentKeys.ecKeyID }

    /// New RSA and EC keys with new kids; the JWKS serves only these from now on.
    public func rotateKeys() {
        rotateKeys(keepingOld: false)
    }

    /// New RSA and EC keys with new kids; with `keepingOld` the JWKS also keeps serving the keys
    /// it served until now (as providers do while tokens signed with the old key are still about).
    public func rotateKeys(keepingOld: Bool) {
        let next: SigningKeys
        do {
            next = try SigningKeys.generate()
        } catch {
            // Only BoringSSL running out of memory or randomness fails RSA key generation; a
            // test cannot carry on from that either.
            fatalError("FakeIdentityProvider: generating keys failed: \(error)")
        }
        core.state.withLock { $0.keys.rotate(to: next, keepingOld: keepingOld) }
    }

    /// The JWKS response's `Cache-Control` (default `public, max-age=3600`); nil leaves it out.
    public func setKeysCacheControl(_ value: String?) {
        core.state.withLock { $0.keysCacheControl = value }
    }

    /// How many `GET /jwks` requests arrived, including those answered 503 while unavailable.
    public var keysFetchCount: Int { core.state.withLock { $0.keysFetchCount } }

    /// While unavailable, every endpoint answers 503 with an empty body.
    public func setAvailable(_ available: Bool) {
        core.state.withLock { $0.available = available }
    }
}
