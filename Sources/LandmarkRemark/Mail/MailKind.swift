/// What a message is for (`mail_outbox.kind`, `mail_templates.kind`).
enum MailKind: String, Sendable, CaseIterable {
    /// A code and link that verify an address (a new account's, or a new address before it replaces the old).
    case verifyEmail = "verify_email"
    /// To the old address: the account's email is being changed.
    case emailChangeNotice = "email_change_notice"
    /// A code and link that set a new password.
    case passwordReset = "password_reset"
    /// After a reset: the password was changed and every session ended.
    case passwordChangedNotice = "password_changed_notice"
}
