import Credentials
import Foundation
import JWTKit

/// One generation of the provider's signing keys: an RSA 2048 key for RS256 and an EC P-256 key
/// for ES256, each with a random `kid`.
struct SigningKeys: Sendable {
    let rsa: Insecure.RSA.PrivateKey
    let rsaKeyID: String
    let ec: ES256PrivateKey
    let ecKeyID: String

    static func generate() throws -> SigningKeys {
        SigningKeys(
            // jwt-kit has no RSA key generation of its own, but its initializer takes swift-crypto's
            // `_RSA.Signing.PrivateKey`, whose `init(keySize:)` is reachable through that parameter's
            // type without importing `_CryptoExtras` (which this target does not depend on).
            rsa: try Insecure.RSA.PrivateKey(backing: .init(keySize: .bits2048)),
            rsaKeyID: randomKeyID(prefix: "rsa"),
            ec: ES256PrivateKey(),
            ecKeyID: randomKeyID(prefix: "ec")
        )
    }

    /// The public halves as JWKs, RSA first, the way providers publish them.
    func publicJWKs() throws -> [[String: String]] {
        let rsaNumbers = try rsa.publicKey.getKeyPrimitives()
        var keys: [[String: String]] = [
            [
                "kty": "RSA", "kid": rsaKeyID, "use": "sig", "alg": "RS256",
                "n": Base64URL.encode(rsaNumbers.modulus), "e": Base64URL.encode(rsaNumbers.publicExponent),
            ]
        ]
        if let point = ec.publicKey.parameters {
            keys.append([
                "kty": "EC", "kid": ecKeyID, "use": "sig", "alg": "ES256", "crv": "P-256",
                "x": point.x, "y": point.y,
            ])
        }
        return keys
    }

    /// jwt-kit's signer for the RSA key (RS256) or the EC key (ES256). jwt-kit hands its algorithms
    /// out only through the key collection actor, hence async.
    func algorithm(rsa useRSA: Bool) async throws -> any JWTAlgorithm {
        let collection = JWTKeyCollection()
        if useRSA {
            await collection.add(rsa: rsa, digestAlgorithm: .sha256)
        } else {
            await collection.add(ecdsa: ec)
        }
        return try await collection.getKey()
    }

    private static func randomKeyID(prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.lowercased().prefix(13))"
    }
}

/// The keys the JWKS serves: the current generation, and the generations `rotateKeys(keepingOld:)`
/// kept (newest first).
struct KeyRing: Sendable {
    var current: SigningKeys
    var retired: [SigningKeys] = []

    var served: [SigningKeys] { [current] + retired }

    mutating func rotate(to next: SigningKeys, keepingOld: Bool) {
        retired = keepingOld ? [current] + retired : []
        current = next
    }
}
