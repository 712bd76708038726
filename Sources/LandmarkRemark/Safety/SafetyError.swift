/// Why a safety request cannot be done (`Problems+Domain.swift` says it in HTTP).
enum SafetyError: Error, Equatable {
    /// No active user by that name.
    case userNotFound
    /// A user cannot block themselves.
    case cannotBlockSelf
    /// The user has as many blocks as a user may (`LR_BLOCKS_PER_USER`).
    case tooManyBlocks(limit: Int)
}
