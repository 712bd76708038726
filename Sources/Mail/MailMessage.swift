import Foundation

/// One message to one recipient: multipart/alternative with a plain-text and an HTML part.
///
/// Everything that identifies it (`messageID`, `date`) is fixed by the caller when the message
/// is first made, so that a retry sends the same message: a recipient's client that sees two
/// copies after a lost acknowledgement sees the same Message-ID twice.
public struct MailMessage: Sendable, Equatable {
    public var from: MailAddress
    /// The sender's display name ("Acme Maps"); any Unicode, encoded as RFC 2047 words.
    public var fromName: String
    public var to: MailAddress
    public var subject: String
    public var text: String
    public var html: String
    /// `<unique@domain>`, with the angle brackets.
    public var messageID: String
    public var date: Date

    public init(from: MailAddress, fromName: String, to: MailAddress, subject: String, text: String, html: String, messageID: String, date: Date) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.messageID = messageID
        self.date = date
    }

    /// The top-level header lines (curl's MIME support adds MIME-Version and the boundary).
    public func headerLines() throws -> [String] {
        guard messageID.hasPrefix("<"), messageID.hasSuffix(">"), messageID.utf8.count <= 250,
            messageID.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { throw MailError.invalidHeader("Message-ID must be <printable ASCII>") }
        let name = fromName.isEmpty ? "" : MailHeaders.phrase(fromName) + " "
        return [
            "Date: \(MailHeaders.date(date))",
            "From: \(name)<\(from)>",
            "To: <\(to)>",
            "Message-ID: \(messageID)",
            MailHeaders.folded(name: "Subject", value: MailHeaders.unstructured(subject)),
            "Content-Type: multipart/alternative",
        ]
    }
}
