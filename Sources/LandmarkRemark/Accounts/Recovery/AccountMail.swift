import Foundation
import Logging
import Postgres

/// The account messages (codes, links, notices), written to the outbox in the caller's
/// transaction with their codes. Nil parts mean the service cannot mail at all (no data key to
/// seal messages and key codes with): every tenant is then `mail_not_configured`.
struct AccountMail: Sendable {
    let codes: AccountCodes?
    let outbox: MailOutbox?
    let tenants: TenantMailStore
    let templates: MailTemplates
    let limits: MailLimits
    let clock: WallClock
    /// Wakes this replica's sender once a message is committed.
    let sender: MailSender?

    /// The tenant's mail, or `mailNotConfigured`.
    func settings(tenantID: Int64, on connection: PostgresConnection, logger: Logger) async throws -> (TenantMail, AccountCodes, MailOutbox) {
        guard let codes, let outbox, let mail = try await tenants.mail(tenantID: tenantID, on: connection, logger: logger) else {
            throw RecoveryError.mailNotConfigured
        }
        return (mail, codes, outbox)
    }

    /// Whether the tenant can mail (`GET /v1/tenant`'s `password_reset_available`).
    func available(tenantID: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        guard codes != nil else { return false }
        return try await tenants.mail(tenantID: tenantID, on: connection, logger: logger) != nil
    }

    /// Makes a code and link for `purpose` and writes its message to `email`.
    func sendCode(
        _ purpose: AccountCodes.Purpose, to email: String, user: UserStore.MailFacts, mail: TenantMail, languages: [String],
        now: Date, on connection: PostgresConnection
    ) async throws -> AccountCodes.Issued {
        guard let codes, let outbox else { throw RecoveryError.mailNotConfigured }
        let reset = purpose == .resetPassword
        let issued = try await codes.issue(
            purpose, tenantID: mail.tenantID, userID: user.id, email: email, now: now, codeMinutes: mail.codeMinutes,
            linkMinutes: reset ? mail.resetLinkMinutes : mail.verificationLinkMinutes, on: connection)
        var values = ["tenant": mail.name, "username": user.username, "email": email, "code": issued.code, "minutes": "\(mail.codeMinutes)"]
        if let link = mail.link(reset ? "reset" : "verify", token: issued.linkToken) {
            let action = reset ? "set a new password" : "verify this address"
            values["link"] = link
            values["link_text"] = "\nOr open this link to \(action) (one tap on the page it opens):\n\(link)\n"
            values["link_html"] = "<p><a href=\"\(MailTemplates.htmlEscaped(link))\">\(reset ? "Set a new password" : "Verify this address")</a></p>"
        }
        let words = try await templates.render(
            reset ? .passwordReset : .verifyEmail, tenantID: mail.tenantID, languages: languages, values: values, on: connection)
        try await outbox.enqueue(
            .init(kind: reset ? .passwordReset : .verifyEmail, userID: user.id, recipient: email, words: words, notAfter: issued.linkExpiresAt),
            tenant: mail, now: now, on: connection)
        return issued
    }

    /// Writes a notice (no code) about the account to `email`.
    func sendNotice(
        _ kind: MailKind, to email: String, user: UserStore.MailFacts, mail: TenantMail, languages: [String], values extra: [String: String] = [:],
        now: Date, on connection: PostgresConnection
    ) async throws {
        guard let outbox else { throw RecoveryError.mailNotConfigured }
        let values = ["tenant": mail.name, "username": user.username].merging(extra) { $1 }
        let words = try await templates.render(kind, tenantID: mail.tenantID, languages: languages, values: values, on: connection)
        // A notice is worth sending for a day; then it is old news.
        try await outbox.enqueue(
            .init(kind: kind, userID: user.id, recipient: email, words: words, notAfter: now + 86400), tenant: mail, now: now, on: connection)
    }

    /// Tells the sender there is mail (after the transaction committed).
    func poke() { sender?.poke() }
}
