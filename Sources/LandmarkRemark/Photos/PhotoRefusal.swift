import Photos

/// Why a photo operation cannot be done, in the photos' own words (`Problems+Domain.swift`
/// says them in HTTP, with `PhotoError`, the sanitiser's).
enum PhotoRefusal: Error, Equatable {
    /// No such photo on a note the caller sees.
    case notFound
    /// The note already has as many photos as it may.
    case tooManyPhotos(limit: Int)
    /// The photo would take its uploader, or their tenant, past the bytes they may keep.
    case quotaExceeded(Quota, limit: Int)

    enum Quota: Equatable {
        case user
        case tenant
    }
}
