/// An `/auth/revoke` request the fake accepted.
public struct Revocation: Sendable, Equatable {
    public let clientID: String
    public let token: String
    public let tokenTypeHint: String?

    public init(clientID: String, token: String, tokenTypeHint: String?) {
        self.clientID = clientID
        self.token = token
        self.tokenTypeHint = tokenTypeHint
    }
}
