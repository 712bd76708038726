import Foundation
import JWTKit
import Synchronization

/// The provider's state and signing, shared by the public ``FakeIdentityProvider`` and the route
/// handlers. It is separate from ``FakeIdentityProvider`` so the routes do not hold on to the
/// provider: a provider a test drops without `stop()` can then still shut its server down in
/// `deinit`.
final class ProviderCore: Sendable {
    let state: Mutex<ProviderState>
    /// Keys the JWKS never serves, for tokens with a bad signature. Made on first use, as an RSA
    /// key takes a noticeable fraction of a second and most tests never ask for one.
    private let foreignKeys = Mutex<SigningKeys?>(nil)

    init(keys: SigningKeys) {
        self.state = Mutex(ProviderState(keys: KeyRing(current: keys)))
    }

    var issuer: String { state.withLock { $0.issuer } }
    var baseURL: String { state.withLock { $0.baseURL } }
    var currentKeys: SigningKeys { state.withLock { $0.keys.current } }

    // MARK: Minting

    /// The usual ID-token claims for a subject; tests then change one to make a bad token.
    func claims(
        subject: String, audience: String, nonce: String?, email: String?,
        issuedAt: Date, lifetime: TimeInterval, notBefore: Date?
    ) -> [String: ClaimValue] {
        var claims: [String: ClaimValue] = [
            "iss": .string(issuer),
            "sub": .string(subject),
            "aud": .string(audience),
            "iat": .int(Int(issuedAt.timeIntervalSince1970)),
            "exp": .int(Int(issuedAt.addingTimeInterval(lifetime).timeIntervalSince1970)),
        ]
        if let notBefore { claims["nbf"] = .int(Int(notBefore.timeIntervalSince1970)) }
        if let nonce { claims["nonce"] = .string(nonce) }
        if let email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(true)
        }
        return claims
    }

    /// Signs `claims` exactly as given with the chosen key, under the header the overrides describe.
    func mint(_ claims: [String: ClaimValue], key choice: KeyChoice, header overrides: HeaderOverrides) async throws -> String {
        let current = currentKeys
        let signingKeys: SigningKeys
        let useRSA: Bool
        switch choice {
        case .rsa: (signingKeys, useRSA) = (current, true)
        case .ec: (signingKeys, useRSA) = (current, false)
        case .foreignRSA: (signingKeys, useRSA) = (try madeForeignKeys(), true)
        case .foreignEC: (signingKeys, useRSA) = (try madeForeignKeys(), false)
        }
        // A foreign key still claims the served key's kid: the verifier finds a key, and the
        // signature is what fails.
        let servedKeyID = useRSA ? current.rsaKeyID : current.ecKeyID
        var header: CompactJWS.Header = [("alg", overrides.alg ?? (useRSA ? "RS256" : "ES256"))]
        if !overrides.omitTyp { header.append(("typ", overrides.typ ?? "JWT")) }
        if !overrides.omitKid { header.append(("kid", overrides.kid ?? servedKeyID)) }

        let signingInput = CompactJWS.signingInput(header: header, claims: claims)
        let algorithm = try await signingKeys.algorithm(rsa: useRSA)
        return CompactJWS.token(signingInput: signingInput, signature: try algorithm.sign(Array(signingInput.utf8)))
    }

    private func madeForeignKeys() throws -> SigningKeys {
        try foreignKeys.withLock { made in
            if let made { return made }
            let keys = try SigningKeys.generate()
            made = keys
            return keys
        }
    }

    /// `{"alg":"none"}` with an empty signature: a verifier must refuse it whatever the claims say.
    func mintUnsigned(_ claims: [String: ClaimValue]) -> String {
        let header: CompactJWS.Header = [("alg", "none"), ("typ", "JWT"), ("kid", currentKeys.rsaKeyID)]
        return CompactJWS.token(signingInput: CompactJWS.signingInput(header: header, claims: claims), signature: [])
    }

    /// The key-confusion attack: HS256 keyed with the RSA public key's PEM text, which anyone can
    /// fetch. A verifier that lets the token's `alg` pick the algorithm would accept it.
    func mintHS256WithPublicKey(_ claims: [String: ClaimValue]) async throws -> String {
        let rsa = currentKeys
        let header: CompactJWS.Header = [("alg", "HS256"), ("typ", "JWT"), ("kid", rsa.rsaKeyID)]
        let signingInput = CompactJWS.signingInput(header: header, claims: claims)
        // jwt-kit's HMAC signer, rather than swift-crypto's HMAC directly: this target depends on
        // JWTKit only, and jwt-kit hands out its signers through a key collection.
        let collection = JWTKeyCollection()
        await collection.add(hmac: HMACKey(from: rsa.rsa.publicKey.pemRepresentation), digestAlgorithm: .sha256)
        let algorithm = try await collection.getKey()
        return CompactJWS.token(signingInput: signingInput, signature: try algorithm.sign(Array(signingInput.utf8)))
    }

    // MARK: Serving

    /// The JWKS document, with every key generation still served.
    func jwksJSON() throws -> String {
        let served = state.withLock { $0.keys.served }
        let document = ["keys": try served.flatMap { try $0.publicJWKs() }]
        return String(decoding: try JSON.encode(document), as: UTF8.self)
    }
}
