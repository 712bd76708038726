import Logging
import Mail
import Postgres

/// A tenant's mail as its operator set it (migration 0031): the relay, the sender, where links
/// point and how long codes live. A tenant without a relay sends nothing.
struct TenantMail: Sendable {
    let tenantID: Int64
    let slug: String
    /// The tenant's name, which every message carries.
    let name: String
    let endpoint: SMTPEndpoint
    let from: MailAddress
    let fromName: String
    /// `https://host` whose `/t/{slug}/links/…` pages take a link's tap; nil: messages carry codes only.
    let linkBaseURL: String?
    let codeMinutes: Int
    let resetLinkMinutes: Int
    let verificationLinkMinutes: Int

    /// The page a link opens, with the token in the fragment: it never reaches a server's log,
    /// nginx or a Referer header, and a scanner's GET of the page changes nothing.
    func link(_ page: String, token: String) -> String? {
        linkBaseURL.map { "\($0)/t/\(slug)/links/\(page)#t=\(token)" }
    }
}

/// Reads tenants' mail settings. Tenants are a global table (no row-level security).
struct TenantMailStore: Sendable {
    let settings: MailSettings

    /// The tenant's mail, or nil when it has no relay (or one this service cannot use).
    func mail(tenantID: Int64, on connection: some PostgresQuerying, logger: Logger) async throws -> TenantMail? {
        let rows = try await connection.query("""
            SELECT slug, name, mail_smtp_url, mail_smtp_username, mail_smtp_password, mail_smtp_auth, mail_from_address,
                   mail_from_name, link_base_url, code_minutes, reset_link_minutes, verification_link_minutes
            FROM tenants WHERE id = \(tenantID) AND mail_smtp_url IS NOT NULL
            """)
        guard let row = rows.first else { return nil }
        let (slug, name, url, username, password, auth, from, fromName) =
            try row.decode((String, String, String, String, String, String, String, String?).self)
        do {
            return TenantMail(
                tenantID: tenantID, slug: slug, name: name,
                endpoint: try SMTPEndpoint(
                    url: url, username: username, password: password, authentication: SMTPEndpoint.Authentication(rawValue: auth) ?? .plain,
                    caFile: settings.caFile.isEmpty ? nil : settings.caFile),
                from: try MailAddress(from), fromName: fromName ?? name,
                linkBaseURL: try row.decode(String?.self, column: 8),
                codeMinutes: try row.decode(Int.self, column: 9), resetLinkMinutes: try row.decode(Int.self, column: 10),
                verificationLinkMinutes: try row.decode(Int.self, column: 11))
        } catch let error as MailError {
            logger.error("the tenant's mail settings cannot be used", metadata: ["tenant": "\(slug)", "error": "\(error)"])
            return nil
        }
    }
}
