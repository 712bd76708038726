import Foundation
import JWTKit
import Synchronization

/// The provider tokens of each team: an ES256 JWT (`iss` the team, `iat` when it was made,
/// `kid` the key), made once and reused for `lifetime`. Apple refuses a token older than an
/// hour (`403 ExpiredProviderToken`) and answers `429 TooManyProviderTokenUpdates` to a team
/// that changes its token more often than every 20 minutes, so a token is renewed at about 50
/// minutes, and early only when APNs calls it expired and it is at least `minimumAge` old.
final class ProviderTokens: Sendable {
    struct Token: Sendable {
        let jwt: String
        let issued: Date
    }

    private struct Claims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    let lifetime: TimeInterval
    let minimumAge: TimeInterval
    let now: @Sendable () -> Date
    private let tokens = Mutex<[APNsCredentials: Token]>([:])

    init(lifetime: TimeInterval, minimumAge: TimeInterval = 20 * 60, now: @escaping @Sendable () -> Date) {
        self.lifetime = lifetime
        self.minimumAge = minimumAge
        self.now = now
    }

    /// The team's token, made now if it has none young enough.
    func token(for credentials: APNsCredentials) async throws -> Token {
        let now = now()
        if let token = tokens.withLock({ $0[credentials] }), now.timeIntervalSince(token.issued) < lifetime, token.issued <= now {
            return token
        }
        return try await make(credentials, at: now)
    }

    /// After APNs called `stale` expired: a new token, unless `stale` is younger than
    /// `minimumAge` (then the clocks disagree, and renewing would only earn a 429); nil then.
    func renew(_ stale: Token, for credentials: APNsCredentials) async throws -> Token? {
        let now = now()
        if let current = tokens.withLock({ $0[credentials] }), current.jwt != stale.jwt { return current }
        guard now.timeIntervalSince(stale.issued) >= minimumAge else { return nil }
        return try await make(credentials, at: now)
    }

    private func make(_ credentials: APNsCredentials, at now: Date) async throws -> Token {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: credentials.keyID)
        await keys.add(ecdsa: try ES256PrivateKey(pem: credentials.privateKeyPEM), kid: kid)
        // Whole seconds: `iat` is a NumericDate, and the token's age is reckoned from it.
        let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let jwt = try await keys.sign(Claims(iss: IssuerClaim(value: credentials.teamID), iat: IssuedAtClaim(value: issued)), kid: kid)
        let token = Token(jwt: jwt, issued: issued)
        tokens.withLock { $0[credentials] = token }
        return token
    }
}
