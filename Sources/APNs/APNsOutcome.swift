/// What became of one notification, as the sender must act on it.
public enum APNsOutcome: Sendable, Equatable {
    /// Accepted by APNs (`200`), with the id it gave.
    case delivered(apnsID: String?)
    /// The device token is no longer valid for the topic (`410 Unregistered`, `400
    /// BadDeviceToken`, `DeviceTokenNotForTopic`): remove the device, never send to it again.
    case unregistered(reason: String)
    /// Refused for something in this notification (`400`, `413`): do not send it again.
    case rejected(status: Int, reason: String)
    /// APNs is busy or failing (`429 TooManyRequests`, `5xx`), or did not answer in time, or
    /// could not be reached: try again later, after at least `retryAfter` seconds when it said.
    case retryLater(status: Int?, reason: String, retryAfter: Int?)
    /// The team's credentials were refused (`403` but an expired token, which the client renews
    /// itself): nothing of this team can be sent until the operator mends them.
    case credentialsRefused(reason: String)
}
