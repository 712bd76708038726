import Credentials
import Foundation
import HummingbirdTesting
import IdentityProviderFake
import JWTKit
import LandmarkRemark
import Testing

/// Sign-in tests run the real service against a real identity provider on 127.0.0.1: the
/// fake serves discovery, a JWKS of keys made at its start, and Apple's token endpoints, and
/// mints tokens with any claims.
enum IdentityTest {
    /// The client ids the test tenant's apps use.
    static let iosApp = "dev.landmark.ios"
    static let webApp = "dev.landmark.web"

    /// Runs `body` with a provider started for it, stopped after.
    static func withProvider(_ body: (FakeIdentityProvider) async throws -> Void) async throws {
        let provider = try await FakeIdentityProvider.start()
        do {
            try await body(provider)
            await provider.stop()
        } catch {
            await provider.stop()
            throw error
        }
    }

    /// The service trusts the fake as Apple and as Google too (their issuers and endpoints
    /// pinned there), calls it over plain http on loopback, and can seal Apple's tokens.
    static func trusting(_ provider: FakeIdentityProvider) -> (inout AppConfiguration) -> Void {
        { configuration in
            configuration.identity.allowLoopbackKeyURLs = true
            configuration.identity.apple = BuiltInIdentityProvider(
                issuers: [provider.issuer], keysURL: provider.jwksURL, tokenURL: provider.tokenURL, revokeURL: provider.revokeURL)
            configuration.identity.google = BuiltInIdentityProvider(
                issuers: [provider.issuer, "accounts.fake.test"], keysURL: provider.jwksURL)
            configuration.identity.dataKey = Tokens.randomBytes(count: 32)
        }
    }

    /// Makes the tenant accept `name` through the operators' command; an `oidc:` provider
    /// is the fake itself.
    static func enable(
        _ name: String = "oidc:test", tenant: String, provider: FakeIdentityProvider,
        clientIDs: [String] = [iosApp, webApp], nonce: String? = nil
    ) async throws {
        let oidc = name.hasPrefix("oidc:")
        try await AdminCommands.setIdentityProvider(
            tenant: tenant, provider: name, clientIDs: clientIDs,
            issuer: oidc ? provider.issuer : nil, keysURL: oidc ? provider.jwksURL : nil, nonce: nonce,
            configuration: try TestEnvironment.configuration(), logger: TestEnvironment.logger)
    }

    /// The tenant accepts `apple` (the fake, for the iOS app) with a Sign in with Apple key the
    /// fake trusts for client secrets: authorization codes are exchanged, tokens revoked.
    static func enableApple(tenant: String, provider: FakeIdentityProvider) async throws -> Bool {
        try await enable("apple", tenant: tenant, provider: provider, clientIDs: [iosApp])
        let key = ES256PrivateKey()
        try provider.trustClientSecretKey(publicKeyPEM: key.publicKey.pemRepresentation)
        return try await AdminCommands.setAppleKey(
            tenant: tenant, teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: key.pemRepresentation,
            configuration: try TestEnvironment.configuration(), logger: TestEnvironment.logger)
    }

    /// A token for `subject`, issued now to the iOS app unless told otherwise, with a token id of its own.
    static func token(
        _ provider: FakeIdentityProvider, subject: String, audience: String = iosApp, email: String? = nil,
        nonce: String? = nil, key: KeyChoice = .rsa, adjust: (inout [String: ClaimValue]) -> Void = { _ in }
    ) async throws -> String {
        var claims = provider.claims(subject: subject, audience: audience, nonce: nonce, email: email)
        // RS256 signatures are deterministic: without a token id, two tokens for the same user
        // within a second would be the same token, which the service rightly takes for a replay.
        claims["jti"] = .string(UUID().uuidString)
        adjust(&claims)
        return try await provider.mint(claims, key: key)
    }

    /// SHA-256 in lowercase hex: what Apple puts in a token for the app's nonce.
    static func hashed(_ nonce: String) -> String { Tokens.hex(Tokens.sha256(nonce)) }

    static var now: Double { Date().timeIntervalSince1970.rounded(.down) }

    /// Users in the tenant, counted past row-level security.
    static func userCount(tenant: String) async throws -> Int {
        try await TestEnvironment.ownerScalar(
            "SELECT count(*)::bigint FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE t.slug = \(tenant)", as: Int.self)
    }
}

extension TestClientProtocol {
    /// `POST /v1/auth/id-token`.
    func signIn(
        idToken: String, provider: String = "oidc:test", nonce: String? = nil, username: String? = nil,
        authorizationCode: String? = nil, tenant: String
    ) async throws -> APIResponse {
        var json: [String: Any] = ["provider": provider, "id_token": idToken]
        if let nonce { json["nonce"] = nonce }
        if let username { json["username"] = username }
        if let authorizationCode { json["authorization_code"] = authorizationCode }
        return try await call(.post, "/v1/auth/id-token", json: json, tenant: tenant)
    }

    /// Signs in with a token that must be accepted; the access token and user id.
    func signedIn(idToken: String, provider: String = "oidc:test", tenant: String) async throws -> (token: String, userID: String) {
        let response = try await signIn(idToken: idToken, provider: provider, tenant: tenant)
        #expect(response.status == .created || response.status == .ok, "sign-in failed: \(response.body)")
        let tokens = try response.decode(API.TokenResponse.self)
        return (tokens.accessToken, tokens.user.id)
    }

    func me(_ token: String) async throws -> API.Me {
        let response = try await call(.get, "/v1/me", token: token)
        #expect(response.status == .ok, "\(response.body)")
        return try response.decode(API.Me.self)
    }
}
