/// What became of one attempt to hand a message to the relay, in the terms a sender acts on.
public enum SMTPOutcome: Sendable, Equatable {
    /// The relay answered 250 to the message: delivered to it.
    case sent
    /// Refused for good (a 5xx to RCPT or to the message): do not try this message again.
    /// `recipient` is true when the relay refused the address itself (550 at RCPT), so later
    /// mail to it would be refused too.
    case rejected(recipient: Bool, code: Int, detail: String)
    /// Refused for now (a 4xx to RCPT or to the message): try this message again later.
    case deferred(code: Int, detail: String)
    /// The relay could not be used at all: unreachable, TLS or login refused, or it answered
    /// 421 or refused the sender. Nothing about this message is known to be wrong: wait and try
    /// the whole queue again, in order.
    case relayUnavailable(code: Int, detail: String)
    /// The connection broke after the message was sent and before the relay's answer: it may
    /// or may not have been accepted (RFC 1047). Try again, with the same Message-ID.
    case unknown(detail: String)
}
