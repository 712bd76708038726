/// The mail senders every replica runs (`MailSender`), and the limits on what is mailed.
/// Each tenant's relay is the tenant's own setting (`admin.set_tenant_mail`).
public struct MailSettings: Sendable {
    /// Whether this replica delivers the outbox (every replica may; each message goes once).
    public var senderEnabled = true
    /// How often an idle sender looks for due mail; a message made on this replica wakes it at once.
    public var pollInterval: Duration = .seconds(1)
    /// Certificate authorities (a PEM file) to trust for relays instead of the system's; empty: the system's.
    public var caFile = ""
    /// The longest wait before trying a relay that could not be used again.
    public var relayBackoffCap: Duration = .seconds(30)
    /// How long a sender holds a tenant's queue without renewing it; another takes it over after.
    public var lease: Duration = .seconds(120)
    /// Messages per recipient per 15 minutes.
    public var perRecipient = 3
    /// Requests that send mail (a reset, a verification) per client address per hour.
    public var perAddress = 30

    public init() {}
}
