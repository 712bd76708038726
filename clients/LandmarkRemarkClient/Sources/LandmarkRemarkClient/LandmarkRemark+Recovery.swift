import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

/// Verified emails, password reset and the user's data. A mailed message carries a 6-digit
/// code to type and a link (`https://…/t/<tenant>/links/verify#t=<token>` or `…/reset#t=…`);
/// an app that opens the link as a universal link reads `t` from the URL's fragment
/// (`linkToken(from:)`) and passes it as `linkToken`.
extension LandmarkRemark {
    /// Mails a verification code to the account's email (or to `Me.pendingEmail`); returns where
    /// it went and when the code expires.
    @discardableResult
    public func requestEmailVerification() async throws -> (email: String, expiresAt: Date) {
        try await Self.perform {
            let sent = try await api.requestEmailVerification().accepted.body.json
            return (sent.email, sent.expires_at)
        }
    }

    /// Verifies the email with the code the user typed (signed in).
    @discardableResult
    public func verifyEmail(code: String) async throws -> String {
        try await Self.perform { try await api.verifyEmail(body: .json(.init(code: code))).ok.body.json.email }
    }

    /// Verifies the email with a link's token; needs no sign-in (the token names its tenant).
    @discardableResult
    public func verifyEmail(linkToken: String) async throws -> String {
        try await Self.perform { try await open.verifyEmail(body: .json(.init(token: linkToken))).ok.body.json.email }
    }

    /// Asks for a reset code for the account `login` names (username or email). The answer is
    /// the same whether or not such an account exists; only a verified email gets the message.
    public func requestPasswordReset(login: String) async throws {
        try await Self.perform { _ = try await open.forgotPassword(headers: .init(X_hyphen_Tenant: tenant), body: .json(.init(login: login))).accepted }
    }

    /// Sets a new password with the mailed code and signs in (every other session ended).
    @discardableResult
    public func resetPassword(login: String, code: String, newPassword: String) async throws -> User {
        try await signedIn {
            try await open.resetPassword(
                headers: .init(X_hyphen_Tenant: tenant), body: .json(.init(login: login, code: code, new_password: newPassword))
            ).ok.body.json
        }
    }

    /// Sets a new password with a link's token and signs in.
    @discardableResult
    public func resetPassword(linkToken: String, newPassword: String) async throws -> User {
        try await signedIn {
            try await open.resetPassword(body: .json(.init(token: linkToken, new_password: newPassword))).ok.body.json
        }
    }

    /// Everything the service holds about the user, as the JSON document it sends (to save or
    /// share as a file: GDPR's right of access and portability).
    public func exportData() async throws -> Data {
        try await Self.perform {
            let body = try await api.exportMe().ok.body.json
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(body)
        }
    }

    /// The token of a mailed link (`…#t=<token>`), for `verifyEmail(linkToken:)` and
    /// `resetPassword(linkToken:newPassword:)`; nil when the URL carries none.
    public static func linkToken(from url: URL) -> String? {
        guard let fragment = url.fragment else { return nil }
        return URLComponents(string: "x:?" + fragment)?.queryItems?.first { $0.name == "t" }?.value
    }
}
