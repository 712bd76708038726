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

    /// Apple's ids are ten upper-case letters or digits.
    public static func isAppleID(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) }
    }
}
