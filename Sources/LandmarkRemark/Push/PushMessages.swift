import Foundation

/// The words and payload of a push: one note ("Near Home" / "ana: the ferry at dawn"), or a
/// summary of several ("5 new notes near Home" / "ana, bo and 3 more"). The payload carries
/// the ids the app opens, and stays far under APNs's 4 KB.
enum PushMessages {
    struct Message: Sendable, Equatable {
        let title: String
        let body: String
        /// `apns-collapse-id` and `thread-id`: one per watch.
        let collapseID: String
        let payload: [UInt8]
    }

    /// The start of a note's body shown in a push, in characters.
    static let bodyLength = 120

    static func single(_ match: PushOutbox.Due) -> Message {
        let title = match.area.map { "Near \($0)" } ?? "Nearby"
        let body = "\(match.author): \(excerpt(match.body))"
        return message(title: title, body: body, watchID: match.watchID, extra: ["note_id": String(match.noteID)])
    }

    /// Several matches in one push, titled by the watch most of them came through.
    static func summary(_ matches: [PushOutbox.Due]) -> Message {
        let counts = Dictionary(grouping: matches, by: \.watchID).mapValues(\.count)
        let watchID = counts.max { ($0.value, -$0.key) < ($1.value, -$1.key) }!.key
        let area = matches.first { $0.watchID == watchID }?.area
        let title = "\(matches.count) new notes " + (area.map { "near \($0)" } ?? "nearby")
        var authors: [String] = []
        for match in matches where !authors.contains(match.author) { authors.append(match.author) }
        let named = authors.prefix(2).joined(separator: ", ")
        let body = authors.count > 2 ? "\(named) and \(authors.count - 2) more" : named
        // The newest first, as many as an app could want to open: 20.
        let noteIDs = matches.suffix(20).reversed().map { String($0.noteID) }
        return message(title: title, body: body, watchID: watchID, extra: ["note_ids": noteIDs])
    }

    private static func message(title: String, body: String, watchID: Int64, extra: [String: Any]) -> Message {
        let collapseID = "watch-\(watchID)"
        var object: [String: Any] = [
            "aps": ["alert": ["title": title, "body": body], "sound": "default", "thread-id": collapseID],
            "watch_id": String(watchID),
        ]
        object.merge(extra) { $1 }
        // Cannot fail: strings, arrays and dictionaries of them.
        let payload = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return Message(title: title, body: body, collapseID: collapseID, payload: Array(payload))
    }

    /// The first `bodyLength` characters on one line, with an ellipsis when cut.
    static func excerpt(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count <= bodyLength ? line : String(line.prefix(bodyLength - 1)) + "…"
    }
}
