import Foundation
import JWTKit

/// A team's token-based authentication with APNs: the key's id, the team's id, and the
/// private key Apple issued (the `.p8` file, PEM "BEGIN PRIVATE KEY").
public struct APNsCredentials: Sendable, Hashable {
    public let teamID: String
    public let keyID: String
    public let privateKeyPEM: String

    public init(teamID: String, keyID: String, privateKeyPEM: String) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
    }

    /// What is wrong with credentials an operator gave (`check()`), in their terms.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// The credentials as APNs and the database take them, or `Invalid`: ids in Apple's form,
    /// and a P-256 private key in PEM (the `.p8` file Apple issues, PKCS #8; the older
    /// "EC PRIVATE KEY" form is accepted and written as PKCS #8, the only form the tenants
    /// table stores). For the operator's command, which says so at once rather than leaving
    /// the first push to find it.
    public func checked() throws -> APNsCredentials {
        guard Self.isAppleID(teamID) else { throw Invalid(description: "the team id must be ten upper-case letters or digits") }
        guard Self.isAppleID(keyID) else { throw Invalid(description: "the key id must be ten upper-case letters or digits") }
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: privateKeyPEM)
        } catch {
            throw Invalid(description: "the key is not a P-256 private key in PEM (Apple's .p8 file)")
        }
        let pem = key.pemRepresentation.trimmingCharacters(in: .whitespacesAndNewlines)
        return APNsCredentials(teamID: teamID, keyID: keyID, privateKeyPEM: pem)
    }

    /// Apple's ids are ten upper-case letters or digits.
    public static func isAppleID(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) }
    }
}
