import Foundation

/// One push to one device, as APNs's provider API takes it: the path names the device, the
/// headers say how to deliver, the body is the JSON payload.
public struct APNsNotification: Sendable, Equatable {
    public enum Environment: String, Sendable {
        case production, sandbox
    }

    /// The device token in hex.
    public var deviceToken: String
    public var environment: Environment
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    /// `apns-collapse-id`: notifications with the same one replace each other on the device;
    /// at most 64 bytes.
    public var collapseID: String?
    /// `apns-expiration`: APNs keeps trying until then if the device is offline.
    public var expiration: Date
    /// `apns-priority`: 10 sends at once, 5 when the device's power allows.
    public var priority: Int
    /// The JSON payload, `{"aps": {...}, ...}`: at most `maxPayloadBytes`.
    public var payload: [UInt8]

    /// APNs's limit for an alert's payload.
    public static let maxPayloadBytes = 4096

    public init(
        deviceToken: String, environment: Environment, topic: String, collapseID: String?, expiration: Date, priority: Int, payload: [UInt8]
    ) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.topic = topic
        self.collapseID = collapseID
        self.expiration = expiration
        self.priority = priority
        self.payload = payload
    }
}
