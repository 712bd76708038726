import Foundation

/// `GET /v1/me`: the caller's own account.
struct Me: JSONResponse {
    let id: Int64
    let username: String
    let email: String?
    let createdAt: Date
    /// A guest: made with `POST /v1/auth/guest`, no password or identity yet.
    let guest: Bool
    let hasPassword: Bool
    var identities: [LinkedIdentity]
    let noteCount: Int
    let placeCount: Int

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("created_at")
            json.timestamp(createdAt)
            json.key("email")
            json.string(email)
            json.key("guest")
            json.bool(guest)
            json.key("has_password")
            json.bool(hasPassword)
            json.key("id")
            json.string(String(id))
            json.key("identities")
            json.array(identities)
            json.key("note_count")
            json.integer(Int64(noteCount))
            json.key("place_count")
            json.integer(Int64(placeCount))
            json.key("username")
            json.string(username)
        }
    }
}

/// `GET /v1/users/{username}`: what anyone in the tenant may see of an account.
struct PublicProfile: JSONResponse {
    let id: Int64
    let username: String
    let createdAt: Date
    /// Public notes only.
    let noteCount: Int

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("created_at")
            json.timestamp(createdAt)
            json.key("id")
            json.string(String(id))
            json.key("note_count")
            json.integer(Int64(noteCount))
            json.key("username")
            json.string(username)
        }
    }
}

/// One of `Me.identities`.
extension LinkedIdentity: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("email")
            json.string(email)
            json.key("linked_at")
            json.timestamp(linkedAt)
            json.key("provider")
            json.string(provider)
        }
    }
}
