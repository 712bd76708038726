import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

/// Push notifications: the service pushes a new public note inside one of the user's watched
/// areas to each of their registered devices (at most a few an hour, never in their quiet
/// hours). The app registers the APNs token iOS gives it, and lets the user watch areas.
public enum PushEnvironment: String, Sendable, Hashable {
    /// Apps from the App Store and TestFlight.
    case production
    /// Apps built and run from Xcode (a development provisioning profile).
    case sandbox
}

/// An area whose new notes are pushed to the user.
public struct Watch: Sendable, Hashable, Identifiable {
    public let id: String
    /// What the pushes call the area ("Home"); nil if none (then its place's name, or "nearby").
    public let label: String?
    public let center: Coordinate
    /// Metres on the spheroid.
    public let radiusMeters: Int
    /// The place it watches; nil for a circle around a point, and once the place is deleted.
    public let placeID: String?
    public let createdAt: Date
    public let updatedAt: Date

    init(_ watch: Components.Schemas.Watch) {
        id = watch.id
        label = watch.label
        center = Coordinate(latitude: watch.lat, longitude: watch.lng)
        radiusMeters = watch.radius_m
        placeID = watch.place_id
        createdAt = watch.created_at
        updatedAt = watch.updated_at
    }
}

extension LandmarkRemark {
    /// The token as APNs gave it (`didRegisterForRemoteNotificationsWithDeviceToken`), in the
    /// lower-case hex the API takes.
    public static func hex(deviceToken: Data) -> String {
        deviceToken.map { String(format: "%02x", $0) }.joined()
    }

    /// Registers this device for pushes, bound to the signed-in session: signing out (or any
    /// end of the session) stops its pushes. Call it at every launch, as Apple advises: it is
    /// idempotent, and a token another account registered moves to this one. `appID` is the
    /// app's bundle id (`Bundle.main.bundleIdentifier`).
    public func registerDevice(token: Data, appID: String, environment: PushEnvironment = .production) async throws {
        _ = try await Self.perform {
            try await api.registerDevice(
                path: .init(device_token: Self.hex(deviceToken: token)),
                body: .json(.init(platform: .apns, environment: environment == .sandbox ? .sandbox : .production, app_id: appID))
            ).noContent
        }
    }

    /// Stops pushes to this device (the user turned them off in the app).
    public func unregisterDevice(token: Data) async throws {
        _ = try await Self.perform { try await api.unregisterDevice(path: .init(device_token: Self.hex(deviceToken: token))).noContent }
    }

    /// The user's watched areas, oldest first (at most 10 unless the operator says otherwise).
    public func watches() async throws -> [Watch] {
        try await Self.perform { try await api.listWatches().ok.body.json.items.map(Watch.init) }
    }

    public func watch(id: String) async throws -> Watch {
        try await Self.perform { Watch(try await api.getWatch(path: .init(id: id)).ok.body.json) }
    }

    /// Watches a circle around `center` (100 m to 50 km unless the operator says otherwise).
    /// One more than the limit throws `.tooManyWatches`.
    @discardableResult
    public func watchArea(around center: Coordinate, radiusMeters: Int, label: String? = nil) async throws -> Watch {
        try await Self.perform {
            Watch(try await api.createWatch(body: .json(.init(near: NoteQuery.parameter(center), radius_m: radiusMeters, label: label))).created.body.json)
        }
    }

    /// Watches the area around a place (500 m unless `radiusMeters`); its pushes are titled
    /// with the place's name unless `label` says otherwise.
    @discardableResult
    public func watchPlace(id placeID: String, radiusMeters: Int? = nil, label: String? = nil) async throws -> Watch {
        try await Self.perform {
            Watch(try await api.createWatch(body: .json(.init(radius_m: radiusMeters, place_id: .init(value1: placeID), label: label))).created.body.json)
        }
    }

    /// Changes a watch: nil leaves a field as it is; a blank `label` removes it. A place's
    /// watch stays around its place (a new `center` is refused there).
    @discardableResult
    public func updateWatch(id: String, center: Coordinate? = nil, radiusMeters: Int? = nil, label: String? = nil) async throws -> Watch {
        try await Self.perform {
            let body = Components.Schemas.UpdateWatchRequest(near: center.map(NoteQuery.parameter), radius_m: radiusMeters, label: label)
            return Watch(try await api.updateWatch(path: .init(id: id), body: .json(body)).ok.body.json)
        }
    }

    public func deleteWatch(id: String) async throws {
        _ = try await Self.perform { try await api.deleteWatch(path: .init(id: id)).noContent }
    }

    /// No pushes between `start` and `end` ("22:00" and "07:00", a 24-hour clock) in
    /// `timeZone`; what matches meanwhile waits for the window's end.
    @discardableResult
    public func setQuietHours(from start: String, to end: String, in timeZone: TimeZone = .current) async throws -> Me {
        try await Self.perform {
            Me(try await api.updateMe(body: .json(.init(time_zone: timeZone.identifier, quiet_hours: "\(start)-\(end)"))).ok.body.json)
        }
    }
}
