/// Why a devices or watches operation cannot be done (`Problems+Domain.swift` says it in HTTP).
enum PushError: Error, Equatable {
    /// No such watch of the caller's.
    case watchNotFound
    /// The caller has `limit` watches already.
    case tooManyWatches(limit: Int)
    /// `place_id` names no place the caller sees.
    case unknownPlace
    /// The path's device token is not an APNs token in hex.
    case malformedDeviceToken
    /// `near` on a watch of a place, which stays around its place.
    case placeWatchMoved
}
