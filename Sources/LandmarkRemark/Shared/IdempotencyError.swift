/// Why a create with an `Idempotency-Key` cannot be answered, for every feature that takes one
/// (notes, photos): `Problems+Domain.swift` says it in HTTP.
enum IdempotencyError: Error, Equatable {
    /// The key came back with a different request.
    case keyReused
    /// The first request with this key is still running.
    case inProgress
}
