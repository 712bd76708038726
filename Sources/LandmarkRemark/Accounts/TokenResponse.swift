import Foundation

/// The body of signup, login and refresh.
struct TokenResponse: JSONResponse {
    let user: UserRecord
    let tokens: IssuedTokens

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("access_token")
            json.string(tokens.accessToken)
            json.key("expires_in")
            json.integer(Int64(tokens.expiresIn))
            json.key("refresh_token")
            json.string(tokens.refreshToken)
            json.key("token_type")
            json.string("Bearer")
            json.key("user")
            json.object { json in
                json.key("created_at")
                json.timestamp(user.createdAt)
                // Present as null rather than left out: clients see a stable shape.
                json.key("email")
                json.string(user.email)
                json.key("id")
                json.string(String(user.id))
                json.key("username")
                json.string(user.username)
            }
        }
    }
}
