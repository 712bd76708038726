import Foundation
import LandmarkRemarkAPI

/// A point in WGS 84 degrees.
public struct Coordinate: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A signed-in user's account as the token answer gives it.
public struct User: Sendable, Hashable, Codable, Identifiable {
    public let id: String
    public let username: String
    public let email: String?
    public let createdAt: Date

    init(_ user: Components.Schemas.User) {
        (id, username, email, createdAt) = (user.id, user.username, user.email, user.created_at)
    }
}

/// Another user, as notes and places name them.
public struct Author: Sendable, Hashable, Identifiable {
    public let id: String
    public let username: String
}

public enum Visibility: String, Sendable, Hashable, CaseIterable {
    case `public`
    case `private`

    var schema: Components.Schemas.Visibility { self == .public ? ._public : ._private }
    init(_ value: Components.Schemas.Visibility) { self = value == ._public ? .public : .private }
}

/// A note at a place on the map.
public struct Note: Sendable, Hashable, Identifiable {
    public let id: String
    public let body: String
    public let coordinate: Coordinate
    public let author: Author
    /// Whether the signed-in user wrote it (and so may edit and delete it).
    public let isMine: Bool
    public let visibility: Visibility
    public let placeID: String?
    public let createdAt: Date
    public let updatedAt: Date
    /// Metres from the query's `near`, when it had one.
    public let distanceMeters: Double?
    /// Held for a moderator (enough users reported it): only its author sees it until then.
    public let isHeldForModeration: Bool
    /// Its photos, in the order they were added.
    public let photos: [Photo]

    init(_ note: Components.Schemas.Note) {
        id = note.id
        body = note.body
        coordinate = Coordinate(latitude: note.lat, longitude: note.lng)
        author = Author(id: note.author.id, username: note.author.username)
        isMine = note.is_mine
        visibility = Visibility(note.visibility)
        placeID = note.place_id
        createdAt = note.created_at
        updatedAt = note.updated_at
        distanceMeters = note.distance_m
        isHeldForModeration = note.moderation == .pending
        photos = note.photos.map(Photo.init)
    }
}

/// A photo on a note, as the service re-encoded it: JPEG in three sizes, without metadata.
public struct Photo: Sendable, Hashable, Identifiable {
    /// One size of a photo: where to read it (with the session's token) and its pixels.
    public struct Variant: Sendable, Hashable {
        /// The path on the service, e.g. `/v1/photos/88/thumb`; its bytes never change.
        public let path: String
        public let width: Int
        public let height: Int
        let photoID: String
        let size: Components.Parameters.PhotoVariantName

        init(_ variant: Components.Schemas.PhotoVariant, photoID: String, size: Components.Parameters.PhotoVariantName) {
            (path, width, height, self.photoID, self.size) = (variant.url, variant.width, variant.height, photoID, size)
        }
    }

    public let id: String
    /// The `full` variant's size: the photo's shape as people see it.
    public let width: Int
    public let height: Int
    public let createdAt: Date
    /// At most 256 pixels on the long side: lists and map pins.
    public let thumb: Variant
    /// At most 1280: a phone's screen.
    public let display: Variant
    /// At most 2048: zoomed in, or a large screen.
    public let full: Variant

    init(_ photo: Components.Schemas.Photo) {
        (id, width, height, createdAt) = (photo.id, photo.width, photo.height, photo.created_at)
        thumb = Variant(photo.variants.thumb, photoID: photo.id, size: .thumb)
        display = Variant(photo.variants.display, photoID: photo.id, size: .display)
        full = Variant(photo.variants.full, photoID: photo.id, size: .full)
    }
}

/// A note with its version, for edits that must not overwrite someone else's (`If-Match`).
public struct VersionedNote: Sendable, Hashable {
    public let note: Note
    /// The `ETag` to send back with an edit; nil if the service sent none.
    public let etag: String?
}

/// A named place: a default one curated by the operator, or a custom one a user added.
public struct Place: Sendable, Hashable, Identifiable {
    public enum Kind: String, Sendable, Hashable {
        case `default`
        case custom
    }

    public let id: String
    public let name: String
    public let coordinate: Coordinate
    public let kind: Kind
    public let createdBy: Author?
    public let noteCount: Int
    public let createdAt: Date
    public let distanceMeters: Double?
    /// Held for a moderator (enough users reported it): only its creator sees it until then.
    public let isHeldForModeration: Bool
    /// Its photos, in the order they were added.
    public let photos: [Photo]

    init(_ place: Components.Schemas.Place) {
        id = place.id
        name = place.name
        coordinate = Coordinate(latitude: place.lat, longitude: place.lng)
        kind = place.kind == ._default ? .default : .custom
        createdBy = place.created_by.map { Author(id: $0.id, username: $0.username) }
        noteCount = place.note_count
        createdAt = place.created_at
        distanceMeters = place.distance_m
        isHeldForModeration = place.moderation == .pending
        photos = place.photos.map(Photo.init)
    }
}

/// Notes grouped on the map when zoomed out.
public struct Cluster: Sendable, Hashable {
    public let coordinate: Coordinate
    public let count: Int
    /// The note itself when the cluster holds one.
    public let noteID: String?

    init(_ cluster: Components.Schemas.Cluster) {
        coordinate = Coordinate(latitude: cluster.lat, longitude: cluster.lng)
        count = cluster.count
        noteID = cluster.note_id?.value1
    }
}

/// One page of a list, and the cursor of the next (nil on the last).
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let nextCursor: String?
}

/// The signed-in user's own account.
public struct Me: Sendable, Hashable {
    public struct Identity: Sendable, Hashable {
        public let provider: String
        public let email: String?
        public let linkedAt: Date
    }

    public let id: String
    public let username: String
    public let email: String?
    /// Whether the user proved they read `email` (`verifyEmail`).
    public let isEmailVerified: Bool
    /// An address the email is being changed to, waiting for the code mailed to it; `email`
    /// stays the old one until then.
    public let pendingEmail: String?
    public let createdAt: Date
    public let isGuest: Bool
    public let hasPassword: Bool
    public let identities: [Identity]
    public let noteCount: Int
    public let placeCount: Int
    /// The version of the tenant's terms the user accepted; nil if none.
    public let termsVersion: String?
    /// Whether the account is held for a moderator (reported by the tenant's threshold of
    /// users): until a decision, no one else sees it or its notes. Say so in the app.
    public let isHeldForModeration: Bool
    /// Whether the user moderates the tenant: show them the moderation queue.
    public let isModerator: Bool
    /// The IANA time zone of the quiet hours; nil: UTC.
    public let timeZone: String?
    /// No pushes in this window ("22:00-07:00" in `timeZone`); nil: none.
    public let quietHours: String?

    init(_ me: Components.Schemas.Me) {
        id = me.id
        username = me.username
        email = me.email
        isEmailVerified = me.email_verified
        pendingEmail = me.pending_email
        createdAt = me.created_at
        isGuest = me.guest
        hasPassword = me.has_password
        identities = me.identities.map { Identity(provider: $0.provider, email: $0.email, linkedAt: $0.linked_at) }
        noteCount = me.note_count
        placeCount = me.place_count
        termsVersion = me.terms_version
        isHeldForModeration = me.moderation == .pending
        isModerator = me.moderator
        timeZone = me.time_zone
        quietHours = me.quiet_hours
    }
}

/// Another user's public profile.
public struct Profile: Sendable, Hashable {
    public let id: String
    public let username: String
    public let createdAt: Date
    /// Public notes only.
    public let noteCount: Int
}

/// What a user reports (`LandmarkRemark.report(_:reason:detail:)`).
public enum ReportTarget: Sendable, Hashable {
    case note(id: String)
    case place(id: String)
    case user(id: String)

    var schema: Components.Schemas.CreateReportRequest.targetPayload {
        switch self {
        case .note(let id): .init(_type: .note, id: id)
        case .place(let id): .init(_type: .place, id: id)
        case .user(let id): .init(_type: .user, id: id)
        }
    }

    init(_ target: Components.Schemas.Report.targetPayload) {
        self.init(type: target._type, id: target.id)
    }
}

/// Why content is objectionable.
public enum ReportReason: String, Sendable, Hashable, CaseIterable {
    case spam, harassment, hate, sexual, violence, selfHarm = "self_harm", illegal, privacy, other
}

/// A report the signed-in user made, and what became of it.
public struct Report: Sendable, Hashable, Identifiable {
    public enum State: String, Sendable, Hashable {
        case open, actioned, dismissed
    }

    public let id: String
    public let target: ReportTarget
    public let reason: ReportReason
    public let detail: String?
    public let state: State
    public let createdAt: Date

    init(_ report: Components.Schemas.Report) {
        id = report.id
        target = ReportTarget(report.target)
        reason = ReportReason(rawValue: report.reason.rawValue) ?? .other
        detail = report.detail
        state = State(rawValue: report.state.rawValue) ?? .open
        createdAt = report.created_at
    }
}

/// A reported target waiting for a moderator, as it is now (reporters are never named).
public struct ModerationItem: Sendable, Hashable {
    public let target: ReportTarget
    /// The note's body, the place's name or the username now; nil when it is gone.
    public let content: String?
    public let author: Author?
    public let isHeld: Bool
    public let openReports: Int
    /// Each reason given, the most given first.
    public let reasons: [ReportReason]
    public let firstReportedAt: Date
    /// 24 hours after the first report: what app review teams expect.
    public let dueAt: Date

    init(_ item: Components.Schemas.ModerationQueueItem) {
        target = ReportTarget(type: item.target._type, id: item.target.id)
        content = item.content
        author = item.author.map { Author(id: $0.id, username: $0.username) }
        isHeld = item.moderation == .pending
        openReports = item.open_reports
        reasons = item.reasons.compactMap { ReportReason(rawValue: $0.rawValue) }
        firstReportedAt = item.first_reported_at
        dueAt = item.due_at.value1
    }
}

/// What a moderator decides.
public enum ModerationAction: Sendable, Hashable {
    case dismiss
    case remove
    case suspendAuthor(until: Date)
    case banAuthor
}

/// A report filed or a decision taken, with the content as it was then.
public struct ModerationLogEntry: Sendable, Hashable, Identifiable {
    public let id: String
    public let isDecision: Bool
    public let target: ReportTarget
    public let author: Author?
    public let content: String?
    /// A report's reason.
    public let reason: ReportReason?
    /// A decision's action (`dismiss`, `remove`, `suspend_author`, `ban_author`).
    public let action: String?
    public let moderator: Author?
    public let until: Date?
    public let note: String?
    public let createdAt: Date

    init(_ entry: Components.Schemas.ModerationLogEntry) {
        id = entry.id
        isDecision = entry.kind == .decision
        target = ReportTarget(type: entry.target._type, id: entry.target.id)
        author = entry.author.map { Author(id: $0.id, username: $0.username) }
        content = entry.content
        reason = entry.reason.flatMap { ReportReason(rawValue: $0.rawValue) }
        action = entry.action?.rawValue
        moderator = entry.moderator.map { Author(id: $0.id, username: $0.username) }
        until = entry.until
        note = entry.note
        createdAt = entry.created_at
    }
}

extension ReportTarget {
    init(type: Components.Schemas.ReportTargetType, id: String) {
        switch type {
        case .note: self = .note(id: id)
        case .place: self = .place(id: id)
        case .user: self = .user(id: id)
        }
    }

    var pathType: Components.Schemas.ReportTargetType {
        switch self {
        case .note: .note
        case .place: .place
        case .user: .user
        }
    }

    var id: String {
        switch self {
        case .note(let id), .place(let id), .user(let id): id
        }
    }
}

/// What an app shows before anyone signs in (`LandmarkRemark.tenantInfo()`).
public struct TenantInfo: Sendable, Hashable {
    public let slug: String
    public let name: String
    public let termsURL: URL?
    public let termsVersion: String?
    /// Whether users must accept `termsVersion` (`acceptTerms(version:)`) before writing.
    public let termsRequired: Bool
    public let contactURL: URL?
    public let contactEmail: String?
    public let guestsEnabled: Bool
    public let signInProviders: [String]
    public let minPasswordLength: Int
    /// Whether accounts with a password must verify their email before posting.
    public let emailVerificationRequired: Bool
    /// Whether the tenant mails codes: password reset and email verification work.
    public let passwordResetAvailable: Bool

    init(_ info: Components.Schemas.TenantInfo) {
        slug = info.slug
        name = info.name
        termsURL = info.terms_url.flatMap(URL.init(string:))
        termsVersion = info.terms_version
        termsRequired = info.terms_required
        contactURL = info.contact_url.flatMap(URL.init(string:))
        contactEmail = info.contact_email
        guestsEnabled = info.guests_enabled
        signInProviders = info.sign_in_providers
        minPasswordLength = info.min_password_length
        emailVerificationRequired = info.email_verification_required
        passwordResetAvailable = info.password_reset_available
    }
}
