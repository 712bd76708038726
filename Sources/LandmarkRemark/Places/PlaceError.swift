/// Why a places operation cannot be done (`Problems+Domain.swift` says it in HTTP).
enum PlaceError: Error, Equatable {
    /// No such place in the caller's tenant.
    case notFound
    /// Default places are curated by operators.
    case curated
    /// A custom place someone else created.
    case notCreator
}
