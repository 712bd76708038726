import Foundation
import Postgres

/// The words of a message: the tenant's own template in the user's language when it has one
/// (`mail_templates`), else the built-in English. Placeholders are `{{name}}`; in the HTML part
/// every value is escaped but the `…_html` ones, which the service builds itself.
struct MailTemplates: Sendable {
    struct Rendered: Sendable, Codable, Equatable {
        let subject: String
        let text: String
        let html: String
    }

    /// Renders `kind` for `languages` (most preferred first) with `values`.
    func render(
        _ kind: MailKind, tenantID: Int64, languages: [String], values: [String: String], on connection: some PostgresQuerying
    ) async throws -> Rendered {
        let wanted = Array(languages.prefix(5))
        var template = Self.english[kind]!
        if !wanted.isEmpty {
            let rows = try await connection.query("""
                SELECT subject, text_body, html_body FROM mail_templates
                WHERE tenant_id = \(tenantID) AND kind = \(kind.rawValue) AND language = ANY(\(wanted))
                ORDER BY array_position(\(wanted), language) LIMIT 1
                """)
            if let row = rows.first {
                let (subject, text, html) = try row.decode((String, String, String).self)
                template = Template(subject: subject, text: text, html: html)
            }
        }
        return Rendered(
            subject: Self.fill(template.subject, values, escape: false), text: Self.fill(template.text, values, escape: false),
            html: Self.fill(template.html, values, escape: true))
    }

    /// The primary language tags of an Accept-Language header, by preference: `fr-CA, fr;q=0.8,
    /// en;q=0.5` gives `fr, en`. Malformed parts are skipped.
    static func languages(acceptLanguage: String?) -> [String] {
        guard let header = acceptLanguage, header.utf8.count <= 500 else { return [] }
        var ranked: [(String, Double, Int)] = []
        for (index, part) in header.split(separator: ",").enumerated() {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first?.split(separator: "-").first?.lowercased(), (2...3).contains(tag.count),
                tag.allSatisfy({ $0.isASCII && $0.isLetter })
            else { continue }
            let quality = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            guard quality > 0 else { continue }
            ranked.append((tag, quality, index))
        }
        var seen: Set<String> = []
        return ranked.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.2 < $1.2 }.map(\.0).filter { seen.insert($0).inserted }
    }

    struct Template: Sendable {
        let subject: String
        let text: String
        let html: String
    }

    static func fill(_ template: String, _ values: [String: String], escape: Bool) -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            result += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            let value = values[name] ?? ""
            // `…_html` values are markup this service built (its values escaped already).
            result += escape && !name.hasSuffix("_html") ? htmlEscaped(value) : value
            rest = rest[close.upperBound...]
        }
        return result + rest
    }

    static func htmlEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// The built-in English. `{{link_text}}`/`{{link_html}}` are empty when the tenant has no link base.
    static let english: [MailKind: Template] = [
        .verifyEmail: Template(
            subject: "{{code}} is your {{tenant}} verification code",
            text: """
                Hello {{username}},

                Your code to verify {{email}} for {{tenant}} is {{code}}. It is valid for {{minutes}} minutes.
                {{link_text}}
                If you did not ask for this, ignore this message: nothing changes.
                """,
            html: """
                <p>Hello {{username}},</p>
                <p>Your code to verify {{email}} for {{tenant}} is <strong style="font-size:1.4em;letter-spacing:0.1em">{{code}}</strong>. \
                It is valid for {{minutes}} minutes.</p>
                {{link_html}}
                <p>If you did not ask for this, ignore this message: nothing changes.</p>
                """),
        .emailChangeNotice: Template(
            subject: "Your {{tenant}} email is being changed",
            text: """
                Hello {{username}},

                Someone signed in to your {{tenant}} account asked to change its email from this address to {{email}}. \
                The change happens once the new address is confirmed.

                If this was not you, change your password now and contact {{tenant}}.
                """,
            html: """
                <p>Hello {{username}},</p>
                <p>Someone signed in to your {{tenant}} account asked to change its email from this address to {{email}}. \
                The change happens once the new address is confirmed.</p>
                <p>If this was not you, change your password now and contact {{tenant}}.</p>
                """),
        .passwordReset: Template(
            subject: "{{code}} is your {{tenant}} password reset code",
            text: """
                Hello {{username}},

                Your code to set a new {{tenant}} password is {{code}}. It is valid for {{minutes}} minutes.
                {{link_text}}
                If you did not ask for this, ignore this message: your password stays as it is.
                """,
            html: """
                <p>Hello {{username}},</p>
                <p>Your code to set a new {{tenant}} password is <strong style="font-size:1.4em;letter-spacing:0.1em">{{code}}</strong>. \
                It is valid for {{minutes}} minutes.</p>
                {{link_html}}
                <p>If you did not ask for this, ignore this message: your password stays as it is.</p>
                """),
        .passwordChangedNotice: Template(
            subject: "Your {{tenant}} password was changed",
            text: """
                Hello {{username}},

                The password of your {{tenant}} account was reset, and every device signed in to it was signed out.

                If this was not you, reset your password again at once and contact {{tenant}}.
                """,
            html: """
                <p>Hello {{username}},</p>
                <p>The password of your {{tenant}} account was reset, and every device signed in to it was signed out.</p>
                <p>If this was not you, reset your password again at once and contact {{tenant}}.</p>
                """),
    ]
}
