import Foundation
import JWTKit

/// The claims of an ID token the service reads. Decoding is lenient where providers differ
/// (`aud` a string or a list, Apple's `email_verified` a string); every check is made by
/// `IDTokenVerifier`, which says which one failed.
struct IDTokenClaims: JWTPayload {
    let issuer: String?
    let subject: String?
    let audiences: [String]
    let authorizedParty: String?
    let expiresAt: Double?
    let notBefore: Double?
    let issuedAt: Double?
    let nonce: String?
    let email: String?
    let name: String?

    private enum Keys: String, CodingKey {
        case iss, sub, aud, azp, exp, nbf, iat, nonce, email, name
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        issuer = try? container.decode(String.self, forKey: .iss)
        subject = try? container.decode(String.self, forKey: .sub)
        if let one = try? container.decode(String.self, forKey: .aud) {
            audiences = [one]
        } else {
            audiences = (try? container.decode([String].self, forKey: .aud)) ?? []
        }
        authorizedParty = try? container.decode(String.self, forKey: .azp)
        expiresAt = try? container.decode(Double.self, forKey: .exp)
        notBefore = try? container.decode(Double.self, forKey: .nbf)
        issuedAt = try? container.decode(Double.self, forKey: .iat)
        nonce = try? container.decode(String.self, forKey: .nonce)
        email = try? container.decode(String.self, forKey: .email)
        name = try? container.decode(String.self, forKey: .name)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(issuer, forKey: .iss)
        try container.encodeIfPresent(subject, forKey: .sub)
        try container.encode(audiences, forKey: .aud)
        try container.encodeIfPresent(expiresAt, forKey: .exp)
    }

    /// jwt-kit calls this after the signature; the claims are checked by the verifier instead,
    /// so that each refusal can say which claim failed.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
