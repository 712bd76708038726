/// Why a safety request cannot be done (`Problems+Domain.swift` says it in HTTP).
enum SafetyError: Error, Equatable {
    /// No active user by that name.
    case userNotFound
    /// A user cannot block themselves.
    case cannotBlockSelf
    /// The user has as many blocks as a user may (`LR_BLOCKS_PER_USER`).
    case tooManyBlocks(limit: Int)
    /// No such note, place or user that the reporter may see.
    case targetNotFound(ReportTargetType)
    /// The target is the reporter, or their own note or place.
    case cannotReportOwnContent
    /// The reporter, or the tenant, made as many reports in the last hour as it may; retry after so many seconds.
    case tooManyReports(retryAfter: Int)
    /// The caller is not a moderator of their tenant.
    case notModerator
    /// A decision that does not fit its target: the field and why.
    case decisionRefused(field: String, message: String)
}
