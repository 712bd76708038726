import Logging
import Postgres

/// The moderators' workflows: each checks the caller's role in its own tenant first (a
/// moderator of one tenant is nobody in another), in the same transaction or reads.
struct ModerationService: Sendable {
    let pool: PostgresPool
    let moderation: ModerationStore
    /// Forgets the tenant's kept tokens once a suspension or ban has ended the author's sessions.
    let tokenCache: AccessTokenCache

    func queue(_ page: PageRequest, for identity: Identity, logger: Logger) async throws -> ModerationQueuePage {
        try await pool.withTenantReads(identity.tenantID, logger: logger) { reads in
            try await requireModerator(identity, on: reads)
            return try await moderation.queue(page, tenantID: identity.tenantID, on: reads)
        }
    }

    func log(_ page: PageRequest, for identity: Identity, logger: Logger) async throws -> ModerationLogPage {
        try await pool.withTenantReads(identity.tenantID, logger: logger) { reads in
            try await requireModerator(identity, on: reads)
            return try await moderation.log(page, tenantID: identity.tenantID, on: reads)
        }
    }

    /// Decides on `target` in one transaction with it locked: the checks, the effect, the
    /// target's open reports closed, and the decision logged with the content as it was.
    func decide(_ decision: ModerationDecision, on target: ReportTarget, by identity: Identity, logger: Logger) async throws -> ModerationLogEntry {
        let tenantID = identity.tenantID
        let entry = try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            try await requireModerator(identity, on: connection)
            guard let found = try await target.type.lock(id: target.id, tenantID: tenantID, viewerID: nil, .update, on: connection) else {
                return try await decideOnGone(decision, target: target, by: identity, on: connection)
            }
            switch decision.action {
            case .dismiss:
                try await moderation.release(target, tenantID: tenantID, on: connection)
            case .remove:
                guard target.type != .user else {
                    throw SafetyError.decisionRefused(field: "action", message: "cannot remove a user: suspend_author or ban_author")
                }
                try await moderation.remove(target, tenantID: tenantID, on: connection)
            case .suspendAuthor, .banAuthor:
                guard let author = found.authorID else {
                    throw SafetyError.decisionRefused(field: "action", message: "the target has no author (a default place): remove it")
                }
                guard author != identity.userID else {
                    throw SafetyError.decisionRefused(field: "action", message: "a moderator cannot suspend or ban themselves")
                }
                if target.type != .user { try await moderation.remove(target, tenantID: tenantID, on: connection) }
                try await moderation.disable(userID: author, until: decision.until, tenantID: tenantID, on: connection)
            }
            try await moderation.closeReports(
                of: target, as: decision.action == .dismiss ? .dismissed : .actioned, tenantID: tenantID, on: connection)
            let entry = try await moderation.logDecision(decision, on: target, found: found, moderator: identity, on: connection)
            logger.info("moderation decision", metadata: [
                "target": "\(target.type.rawValue) \(target.id)", "action": "\(decision.action.rawValue)"])
            return entry
        }
        if decision.action == .suspendAuthor || decision.action == .banAuthor { tokenCache.forget(tenantID: tenantID) }
        return entry
    }

    /// A target deleted since it was reported (by its author, or with their account): its
    /// open reports stay in the queue until a moderator closes them, by dismissing or removing
    /// (logged without content: there is none). Without open reports, or to suspend or ban, it
    /// is not found.
    private func decideOnGone(
        _ decision: ModerationDecision, target: ReportTarget, by identity: Identity, on connection: PostgresConnection
    ) async throws -> ModerationLogEntry {
        // Suspending or banning needs the author, who went with the target's row.
        guard decision.action == .dismiss || decision.action == .remove else { throw SafetyError.targetNotFound(target.type) }
        let closed = try await moderation.closeReports(
            of: target, as: decision.action == .dismiss ? .dismissed : .actioned, tenantID: identity.tenantID, on: connection)
        guard closed > 0 else { throw SafetyError.targetNotFound(target.type) }
        return try await moderation.logDecision(decision, on: target, found: nil, moderator: identity, on: connection)
    }

    private func requireModerator(_ identity: Identity, on connection: some PostgresQuerying) async throws {
        guard try await moderation.isModerator(tenantID: identity.tenantID, userID: identity.userID, on: connection) else {
            throw SafetyError.notModerator
        }
    }
}
