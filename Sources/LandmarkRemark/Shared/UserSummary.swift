/// A user as notes and places name them (a note's `author`, a place's `created_by`): `{"id", "username"}`.
struct UserSummary: Sendable, Equatable, JSONWritable {
    let id: Int64
    let username: String

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("id")
            json.quotedInteger(id)
            json.key("username")
            json.string(username)
        }
    }
}
