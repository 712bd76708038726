import Postgres

/// Who sees whose content, as SQL: the one definition every read composes, so that a block
/// holds in each list, a note by id, a profile and a place's count alike.
enum Audience {
    /// The users `viewer` does not see and who do not see `viewer`: those they blocked and
    /// those who blocked them (a block works both ways). A sub-select that names no outer
    /// row, so PostgreSQL runs it once per statement and probes a hash of it (`NOT IN` a
    /// hashed sub-plan), through the blocks' two indexes.
    static func blockedEitherWay(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        """
        (SELECT b.blocked_id FROM blocks b WHERE b.tenant_id = \(tenantID) AND b.blocker_id = \(viewerID)
         UNION ALL
         SELECT b.blocker_id FROM blocks b WHERE b.tenant_id = \(tenantID) AND b.blocked_id = \(viewerID))
        """
    }

    /// Whether `viewer` sees the note `alias` (a row of `notes` or `tenant_notes`): public or
    /// their own, and by no one blocked either way. (The view already hides disabled authors.)
    static func seesNote(_ alias: PostgresQuery, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        """
        (\(alias).visibility = 'public' OR \(alias).user_id = \(viewerID))
          AND \(alias).user_id NOT IN \(blockedEitherWay(tenantID: tenantID, viewerID: viewerID))
        """
    }
}
