import Credentials
import Foundation
import JWTKit
import Logging

/// An ID token that passed every check.
struct VerifiedIDToken: Sendable {
    let subject: String
    /// The tenant's client id the token was issued to.
    let clientID: String
    let email: String?
    let name: String?
    let issuedAt: Date
    let expiresAt: Date
    /// SHA-256 of the token's signing input (`header.payload`), for the replay check: the
    /// signature's encoding can be varied without breaking it (unused base64 bits, padding, an
    /// ECDSA signature's other `s`), the signed part cannot.
    let tokenHash: [UInt8]
}

/// Verifies an ID token for one tenant's provider: the header (RS256 or ES256, with a `kid`
/// the provider publishes, of the matching key type), the signature (jwt-kit), then `iss`,
/// `aud`/`azp`, `exp`/`nbf`/`iat` with 60 s of clock skew, and the nonce. A refusal is
/// `IdentityError.tokenInvalid` saying which check failed; the token itself is never logged.
struct IDTokenVerifier: Sendable {
    let keys: ProviderKeyCache
    static let clockSkew: TimeInterval = 60
    static let maximumTokenBytes = 16 * 1024

    func verify(
        _ token: String, nonce: String?, provider: IdentityProvider, now: Date = Date(), logger: Logger
    ) async throws -> VerifiedIDToken {
        do {
            return try await check(token, nonce: nonce, provider: provider, now: now, logger: logger)
        } catch IdentityError.tokenInvalid(let reason) {
            logger.info("ID token refused", metadata: ["provider": "\(provider.name)", "reason": "\(reason)"])
            throw IdentityError.tokenInvalid(reason)
        }
    }

    private func check(_ token: String, nonce: String?, provider: IdentityProvider, now: Date, logger: Logger) async throws -> VerifiedIDToken {
        guard token.utf8.count <= Self.maximumTokenBytes else { throw IdentityError.tokenInvalid("the token is longer than 16 KiB") }
        let header = try JOSEHeader(token: token)
        switch header.algorithm {
        case "RS256", "ES256": break
        case "none": throw IdentityError.tokenInvalid("unsigned tokens (alg none) are not accepted")
        case let other: throw IdentityError.tokenInvalid("alg \(Self.shown(other)) is not accepted; only RS256 and ES256 are")
        }
        // An OAuth access token (RFC 9068) of the same issuer can carry the same audience.
        if let type = header.type?.lowercased(), type == "at+jwt" || type == "application/at+jwt" {
            throw IdentityError.tokenInvalid("the token is an access token (typ at+jwt), not an ID token")
        }
        guard let kid = header.keyID else { throw IdentityError.tokenInvalid("the token names no key (kid)") }
        let shownKID = Self.shown(kid)

        let lookup: ProviderKeyCache.Lookup
        do {
            lookup = try await keys.key(id: kid, at: provider.keysURL, logger: logger)
        } catch let error as ProviderKeyCache.Unavailable {
            logger.warning("identity provider unavailable", metadata: ["provider": "\(provider.name)", "error": "\(error)"])
            throw IdentityError.providerUnavailable
        }
        guard case .found(let key) = lookup else {
            throw IdentityError.tokenInvalid("the provider publishes no key with kid \(shownKID)")
        }
        let jwk = key.jwk
        let expectedType: JWK.KeyType = header.algorithm == "RS256" ? .rsa : .ecdsa
        guard jwk.keyType == expectedType, header.algorithm == "RS256" || jwk.curve == .ecdsa(.p256),
            jwk.algorithm == nil || jwk.algorithm?.rawValue == header.algorithm
        else {
            throw IdentityError.tokenInvalid("key \(shownKID) is a \(jwk.keyType.rawValue) key, which cannot verify alg \(header.algorithm)")
        }

        let claims: IDTokenClaims
        do {
            // A collection holding this one key: jwt-kit, which parses the header again and
            // falls back to its default key for a kid it lacks, has no other key to pick.
            claims = try await key.collection.verify(token, as: IDTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw IdentityError.tokenInvalid("the signature does not verify with key \(shownKID)")
        } catch {
            throw IdentityError.tokenInvalid("the token cannot be read (\(error is JWTError ? "malformed" : "bad signature or claims"))")
        }
        return try Self.checkClaims(claims, token: token, nonce: nonce, provider: provider, now: now)
    }

    static func checkClaims(
        _ claims: IDTokenClaims, token: String, nonce: String?, provider: IdentityProvider, now: Date
    ) throws -> VerifiedIDToken {
        guard let issuer = claims.issuer, provider.issuers.contains(issuer) else {
            throw IdentityError.tokenInvalid("iss is not the \(provider.name) provider's issuer")
        }
        guard let audience = claims.audiences.first(where: provider.clientIDs.contains) else {
            throw IdentityError.tokenInvalid("aud is not one of this tenant's client ids for \(provider.name)")
        }
        // OpenID Connect Core 3.1.3.7: with several audiences azp must name the one it was issued
        // to, and when present it must be one of ours.
        if claims.audiences.count > 1 || claims.authorizedParty != nil {
            guard let party = claims.authorizedParty, provider.clientIDs.contains(party) else {
                throw IdentityError.tokenInvalid("azp is not one of this tenant's client ids for \(provider.name)")
            }
        }
        let seconds = now.timeIntervalSince1970
        guard let expiresAt = claims.expiresAt else { throw IdentityError.tokenInvalid("the token has no exp") }
        guard seconds <= expiresAt + clockSkew else { throw IdentityError.tokenInvalid("the token has expired (exp)") }
        if let notBefore = claims.notBefore, seconds < notBefore - clockSkew {
            throw IdentityError.tokenInvalid("the token is not valid yet (nbf)")
        }
        guard let issuedAt = claims.issuedAt else { throw IdentityError.tokenInvalid("the token has no iat") }
        guard issuedAt <= seconds + clockSkew else { throw IdentityError.tokenInvalid("the token was issued in the future (iat)") }
        guard let subject = claims.subject, (1...255).contains(subject.utf8.count) else {
            throw IdentityError.tokenInvalid("the token has no usable sub")
        }
        if let nonce {
            guard let carried = claims.nonce else { throw IdentityError.tokenInvalid("a nonce was sent but the token carries none") }
            let hashed = Tokens.hex(Tokens.sha256(nonce))
            let matches: Bool
            switch provider.nonce {
            case .hashed: matches = carried == hashed
            case .raw: matches = carried == nonce
            case .either: matches = carried == hashed || carried == nonce
            }
            guard matches else { throw IdentityError.tokenInvalid("the token's nonce does not match the nonce sent") }
        }
        return VerifiedIDToken(
            subject: subject, clientID: audience, email: claims.email.flatMap { $0.utf8.count <= 320 ? $0 : nil },
            name: claims.name, issuedAt: Date(timeIntervalSince1970: issuedAt),
            expiresAt: Date(timeIntervalSince1970: expiresAt),
            tokenHash: Tokens.sha256(String(token[..<(token.lastIndex(of: ".") ?? token.endIndex)])))
    }

    /// Text from the token as refusals and logs may show it: at most 64 printable ASCII characters.
    static func shown(_ text: String) -> String {
        let printable = text.unicodeScalars.prefix(64).map { (0x20...0x7E).contains($0.value) ? Character($0) : "?" }
        return String(printable) + (text.unicodeScalars.count > 64 ? "…" : "")
    }
}

/// The protected header of a compact JWS, read before any key is chosen: which algorithm
/// and key the token claims. (jwt-kit verifies; this only decides whether to let it.)
struct JOSEHeader {
    let algorithm: String
    let keyID: String?
    let type: String?

    init(token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[0]),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { throw IdentityError.tokenInvalid("the token is not a JWS (header.payload.signature)") }
        guard let algorithm = object["alg"] as? String else { throw IdentityError.tokenInvalid("the token's header has no alg") }
        if object["crit"] != nil { throw IdentityError.tokenInvalid("the token's header has critical extensions (crit)") }
        self.algorithm = algorithm
        keyID = object["kid"] as? String
        type = object["typ"] as? String
    }
}
