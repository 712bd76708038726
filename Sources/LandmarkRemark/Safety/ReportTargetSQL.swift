import Postgres

/// The one place that knows where a report's target lives: its table, its text, its author
/// and its hold, for notes, places and users alike. Reports, the queue and decisions use it.
extension ReportTargetType {
    var table: PostgresQuery {
        switch self {
        case .note: "notes"
        case .place: "places"
        case .user: "users"
        }
    }

    /// `content, author_id, author_name, moderation` of the target of this type whose id is
    /// `id` (a value or a column of an outer query), when `condition` holds. A default place
    /// has no author (nulls).
    func content(tenantID: Int64, id: PostgresQuery, when condition: PostgresQuery = "true") -> PostgresQuery {
        select(tenantID: tenantID, id: id, when: condition)
    }

    /// The statement of `content(…)` with `more` columns after the four and `suffix` at the
    /// end. Users are joined on the row's own `tenant_id`, so that on Citus the join is on the
    /// distribution column and the statement stays in one shard group.
    private func select(
        tenantID: Int64, id: PostgresQuery, when condition: PostgresQuery = "true", more: PostgresQuery = "", suffix: PostgresQuery = ""
    ) -> PostgresQuery {
        switch self {
        case .note:
            """
            SELECT n.body AS content, n.user_id AS author_id, u.username AS author_name, n.moderation\(more)
            FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
            WHERE \(condition) AND n.tenant_id = \(tenantID) AND n.id = \(id)
            \(suffix)
            """
        case .place:
            """
            SELECT p.name AS content, p.created_by AS author_id, u.username AS author_name, p.moderation\(more)
            FROM places p LEFT JOIN users u ON u.tenant_id = p.tenant_id AND u.id = p.created_by
            WHERE \(condition) AND p.tenant_id = \(tenantID) AND p.id = \(id)
            \(suffix)
            """
        case .user:
            """
            SELECT u.username AS content, u.id AS author_id, u.username AS author_name, u.moderation\(more)
            FROM users u
            WHERE \(condition) AND u.tenant_id = \(tenantID) AND u.id = \(id)
            \(suffix)
            """
        }
    }

    /// The alias `select(…)` gives the target's own table.
    private var alias: PostgresQuery {
        switch self {
        case .note: "n"
        case .place: "p"
        case .user: "u"
        }
    }

    /// Whether `viewerID` sees the target (`Audience`'s rule for the type), over `select`'s aliases.
    private func visible(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        switch self {
        case .note:
            "NOT n.author_disabled AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID))"
        case .place:
            Audience.seesPlace("p", tenantID: tenantID, viewerID: viewerID)
        case .user:
            "u.disabled_at IS NULL AND (u.id = \(viewerID) OR u.id NOT IN \(Audience.hiddenUsers(tenantID: tenantID, viewerID: viewerID)))"
        }
    }
}

/// A target as a report or a decision finds it, locked in the caller's transaction.
struct LockedTarget: Sendable {
    /// Its author, creator or self; nil for a default place (the operator's).
    let authorID: Int64?
    let authorName: String?
    /// The note's text, the place's name or the username, as it is now.
    let content: String
    /// Whether the viewer the lock was asked for sees it now (always true without one).
    let visible: Bool
}

enum TargetLock {
    /// A report changes at most the target's hold, never its key.
    case noKeyUpdate
    /// A decision may delete it.
    case update

    var clause: PostgresQuery {
        switch self {
        case .noKeyUpdate: "FOR NO KEY UPDATE"
        case .update: "FOR UPDATE"
        }
    }
}

extension ReportTargetType {
    /// Locks the target and reads it; nil when there is no such target in the tenant. With
    /// `viewerID`, also whether that user sees it.
    func lock(
        id: Int64, tenantID: Int64, viewerID: Int64?, _ lock: TargetLock, on connection: PostgresConnection
    ) async throws -> LockedTarget? {
        let visible: PostgresQuery = viewerID.map { self.visible(tenantID: tenantID, viewerID: $0) } ?? "true"
        let statement = select(tenantID: tenantID, id: "\(id)", more: ", \(visible)", suffix: "\(lock.clause) OF \(alias)")
        guard let row = try await connection.query(statement).first else { return nil }
        return LockedTarget(
            authorID: try row.decode(Int64?.self, column: 1), authorName: try row.decode(String?.self, column: 2),
            content: try row.decode(String.self, column: 0), visible: try row.decode(Bool.self, column: 4))
    }
}
