import Foundation

/// The rules a watch's fields follow beyond their JSON types: the operator's radius bounds.
struct WatchRules: Sendable {
    let radius: ClosedRange<Int>
    /// A place's watch without `radius_m`: within `radius`.
    var placeRadius: Int { min(max(500, radius.lowerBound), radius.upperBound) }

    func radius(_ value: Int, in reader: inout JSONObjectReader) -> Int? {
        guard radius.contains(value) else {
            reader.fail("radius_m", "must be from \(radius.lowerBound) to \(radius.upperBound) metres")
            return nil
        }
        return value
    }

    func near(_ text: String, in reader: inout JSONObjectReader) -> GeoPoint? {
        guard let point = GeoPoint(parameter: text) else {
            reader.fail("near", "must be \"lat,lng\": a latitude from -90 to 90 and a longitude from -180 to 180")
            return nil
        }
        return point
    }

    /// The label as stored: trimmed, nil when blank or null; 1–60 characters, one line.
    func label(_ raw: String??, in reader: inout JSONObjectReader) -> String?? {
        guard let raw else { return .none }
        let trimmed = raw?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if trimmed.isEmpty { return .some(nil) }
        guard trimmed.unicodeScalars.count <= 60, !TextRules.containsForbiddenControl(trimmed), !trimmed.contains("\n"), !trimmed.contains("\t") else {
            reader.fail("label", "must be at most 60 characters on one line, without control characters")
            return .none
        }
        return .some(trimmed)
    }
}

/// `POST /v1/me/watches`: a circle around a point, or around a place.
struct WatchDraft: RequestBody {
    enum Center: Sendable, Equatable {
        case point(GeoPoint)
        case place(Int64)
    }

    let center: Center
    let radius: Int
    let label: String?

    init?(reading body: inout JSONObjectReader, rules: WatchRules) {
        let request = CreateWatchRequest(reading: &body)
        let near = request.near.flatMap { rules.near($0, in: &body) }
        let radius = request.radiusM.flatMap { rules.radius($0, in: &body) }
        let label = rules.label(request.label, in: &body)
        switch (body.contains("near"), body.contains("place_id")) {
        case (true, true): body.fail("place_id", "cannot be given with near: watch a place or a point")
        case (false, false): body.fail("near", "is required, unless place_id is given")
        case (true, false) where !body.contains("radius_m"): body.fail("radius_m", "is required with near")
        default: break
        }
        guard body.errors.isEmpty else { return nil }
        if let near, let radius {
            center = .point(near)
            self.radius = radius
        } else if let place = request.placeID {
            center = .place(place)
            self.radius = radius ?? rules.placeRadius
        } else {
            return nil
        }
        self.label = label ?? nil
    }
}

/// `PATCH /v1/me/watches/{id}`: the fields given change.
struct WatchPatch: RequestBody {
    let near: GeoPoint?
    let radius: Int?
    /// `.none`: unchanged; `.some(nil)`: cleared.
    let label: String??

    init?(reading body: inout JSONObjectReader, rules: WatchRules) {
        let request = UpdateWatchRequest(reading: &body)
        near = request.near.flatMap { rules.near($0, in: &body) }
        radius = request.radiusM.flatMap { rules.radius($0, in: &body) }
        label = rules.label(request.label, in: &body)
        if body.errors.isEmpty, near == nil, radius == nil, label == nil {
            body.fail("label", "or near or radius_m is required: nothing to change")
        }
        guard body.errors.isEmpty else { return nil }
    }
}

/// `PUT /v1/me/devices/{device_token}`.
struct DeviceRegistration: RequestBody {
    let environment: DeviceEnvironment
    let appID: String

    init?(reading body: inout JSONObjectReader, rules: Void) {
        let request = RegisterDeviceRequest(reading: &body)
        if let appID = request.appID, !Self.isBundleID(appID) {
            body.fail("app_id", "must be a bundle id like com.example.app (letters, digits, hyphens and dots, at most 155)")
        }
        guard let environment = request.environment, request.platform != nil, let appID = request.appID, body.errors.isEmpty else { return nil }
        (self.environment, self.appID) = (environment, appID)
    }

    static func isBundleID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 155 && parts.count >= 2
            && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { $0 == UInt8(ascii: "-") || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) } }
    }

    /// The path's token as stored (lower-case hex), or nil if it is not 64–200 hex digits.
    static func token(_ text: String) -> String? {
        guard (64...200).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }) else {
            return nil
        }
        return text.lowercased()
    }
}
