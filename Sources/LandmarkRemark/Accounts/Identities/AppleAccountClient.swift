import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore

/// Calls Apple's token endpoint: exchanges the authorization code an app got at sign-in for
/// a refresh token, and revokes that token when the user unlinks Apple or deletes the
/// account (App Store Review Guideline 5.1.1(v)). Both authenticate with a client secret:
/// a short ES256 JWT signed with the tenant's Sign in with Apple key.
struct AppleAccountClient: Sendable {
    let client: HTTPClient
    let settings: IdentitySettings

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The refresh token Apple gives for `code`, issued to `clientID`.
    func exchange(code: String, clientID: String, account: IdentityProvider.AppleAccount) async throws -> String {
        let body = try await call(
            account.tokenURL,
            form: ["client_id": clientID, "client_secret": try await clientSecret(clientID: clientID, account: account),
                   "code": code, "grant_type": "authorization_code"])
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let refreshToken = object["refresh_token"] as? String, !refreshToken.isEmpty, refreshToken.utf8.count <= 4096
        else { throw Failure(description: "Apple's token endpoint answered without a refresh_token") }
        return refreshToken
    }

    func revoke(refreshToken: String, clientID: String, account: IdentityProvider.AppleAccount) async throws {
        _ = try await call(
            account.revokeURL,
            form: ["client_id": clientID, "client_secret": try await clientSecret(clientID: clientID, account: account),
                   "token": refreshToken, "token_type_hint": "refresh_token"])
    }

    /// Apple's rules: `iss` the team id, `sub` the client id, `aud` Apple's issuer, at most six months.
    private func clientSecret(clientID: String, account: IdentityProvider.AppleAccount) async throws -> String {
        let key = try ES256PrivateKey(pem: account.privateKeyPEM)
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: account.keyID))
        let now = Date()
        let claims = ClientSecretClaims(
            iss: IssuerClaim(value: account.teamID), sub: SubjectClaim(value: clientID),
            aud: AudienceClaim(value: settings.apple.issuers.first ?? "https://appleid.apple.com"),
            iat: IssuedAtClaim(value: now), exp: ExpirationClaim(value: now.addingTimeInterval(300)))
        return try await keys.sign(claims, kid: JWKIdentifier(string: account.keyID))
    }

    private func call(_ url: String, form: [String: String]) async throws -> Data {
        guard ProviderURL.isAllowed(url, loopback: settings.allowLoopbackKeyURLs) else {
            throw Failure(description: "\(url) is not https")
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
        let response = try await client.execute(request, timeout: .init(settings.providerTimeout))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status == .ok else {
            throw Failure(description: "\(url) answered \(response.status.code): \(String(buffer: body).prefix(200))")
        }
        return Data(buffer: body)
    }
}

private struct ClientSecretClaims: JWTPayload {
    let iss: IssuerClaim
    let sub: SubjectClaim
    let aud: AudienceClaim
    let iat: IssuedAtClaim
    let exp: ExpirationClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// `application/x-www-form-urlencoded`, as OAuth token endpoints take it.
enum FormEncoding {
    static func encode(_ fields: [String: String]) -> String {
        // ASCII only: CharacterSet.alphanumerics would let other scripts' letters through unencoded.
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return fields.sorted { $0.key < $1.key }.map { key, value in
            "\(key.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}
