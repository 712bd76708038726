import Foundation

/// The body of signup, login and refresh.
struct TokenResponse: Encodable {
    struct User: Encodable {
        let id: String
        let username: String
        let email: String?
        let createdAt: Date

        init(_ record: UserRecord) {
            id = String(record.id)
            username = record.username
            email = record.email
            createdAt = record.createdAt
        }

        // Encode email as null rather than omitting it: clients see a stable shape.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(username, forKey: .username)
            try container.encode(email, forKey: .email)
            try container.encode(createdAt, forKey: .createdAt)
        }

        enum CodingKeys: String, CodingKey { case id, username, email, createdAt }
    }

    let user: User
    let accessToken: String
    let tokenType = "Bearer"
    let expiresIn: Int
    let refreshToken: String

    init(user: UserRecord, tokens: IssuedTokens) {
        self.user = User(user)
        accessToken = tokens.accessToken
        expiresIn = tokens.expiresIn
        refreshToken = tokens.refreshToken
    }
}
