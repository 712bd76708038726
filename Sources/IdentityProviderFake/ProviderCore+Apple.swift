import Foundation
import Hummingbird
import JWTKit

/// What one of Apple's endpoints answers: a status and a JSON body, or no body.
struct EndpointReply: Sendable {
    let status: HTTPResponse.Status
    let json: String?

    /// An OAuth error (RFC 6749 §5.2), which Apple answers with 400.
    static func oauthError(_ code: String) -> EndpointReply {
        EndpointReply(status: .badRequest, json: #"{"error":"\#(code)"}"#)
    }
}

/// Apple's token endpoint answer (Sign in with Apple REST API, "TokenResponse").
private struct TokenResponse: Encodable {
    let accessToken: String
    let tokenType = "Bearer"
    let expiresIn = 3600
    let refreshToken: String
    let idToken: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
        case refreshToken = "refresh_token", idToken = "id_token"
    }
}

extension ProviderCore {
    /// `POST /auth/token` with `grant_type=authorization_code`: the client proves itself with its
    /// client secret, then spends a code for tokens. Client authentication comes first, as at
    /// Apple, so a request with a bad secret does not use up its code.
    func exchangeAuthorizationCode(form: [String: String]) async throws -> EndpointReply {
        state.withLock { $0.tokenRequests.append(form) }
        guard let clientID = form["client_id"], await isValidClientSecret(form["client_secret"], clientID: clientID) else {
            return .oauthError("invalid_client")
        }
        guard form["grant_type"] == "authorization_code" else { return .oauthError("unsupported_grant_type") }
        guard let code = form["code"], let grant = state.withLock({ $0.authorizationCodes.removeValue(forKey: code) }) else {
            return .oauthError("invalid_grant")
        }

        let idClaims = claims(
            subject: grant.subject, audience: clientID, nonce: grant.nonce, email: grant.email,
            issuedAt: Date(), lifetime: 600, notBefore: nil)
        let response = TokenResponse(
            accessToken: RandomToken.make(prefix: "at-"),
            refreshToken: RandomToken.make(prefix: "rt-"),
            idToken: try await mint(idClaims, key: .rsa, header: HeaderOverrides()))
        state.withLock { $0.issuedRefreshTokens.append(response.refreshToken) }
        return EndpointReply(status: .ok, json: String(decoding: try JSON.encode(response), as: UTF8.self))
    }

    /// `POST /auth/revoke`: records the revocation once the client secret checks out.
    func revoke(form: [String: String]) async -> EndpointReply {
        guard let clientID = form["client_id"], await isValidClientSecret(form["client_secret"], clientID: clientID) else {
            return .oauthError("invalid_client")
        }
        guard let token = form["token"], !token.isEmpty else { return .oauthError("invalid_request") }
        let revocation = Revocation(clientID: clientID, token: token, tokenTypeHint: form["token_type_hint"])
        state.withLock { $0.revocations.append(revocation) }
        return EndpointReply(status: .ok, json: nil)
    }

    /// A client secret as Apple requires one: a JWT signed ES256 by a key the developer registered
    /// (here: trusted with `trustClientSecretKey`), `iss` the team ID, `sub` the client ID, `aud`
    /// the provider, and not expired.
    func isValidClientSecret(_ secret: String?, clientID: String, now: Date = Date()) async -> Bool {
        guard !clientID.isEmpty, let secret, let parts = CompactJWS.parse(secret),
            parts.header["alg"] == .string("ES256")
        else { return false }
        let (trustedKeys, issuer) = state.withLock { ($0.clientSecretKeys, $0.issuer) }

        var signedByTrustedKey = false
        for key in trustedKeys where !signedByTrustedKey {
            let collection = JWTKeyCollection()
            await collection.add(ecdsa: key)
            if let algorithm = try? await collection.getKey() {
                signedByTrustedKey = (try? algorithm.verify(parts.signature, signs: Array(parts.signingInput.utf8))) == true
            }
        }
        guard signedByTrustedKey else { return false }

        let claims = parts.claims
        guard let teamID = claims["iss"]?.stringValue, !teamID.isEmpty,
            claims["sub"]?.stringValue == clientID,
            let expiry = claims["exp"]?.secondsValue, expiry > now.timeIntervalSince1970
        else { return false }
        switch claims["aud"] {
        case .string(let audience): return audience == issuer
        case .strings(let audiences): return audiences.contains(issuer)
        default: return false
        }
    }
}
