import Postgres

/// Who sees whose content, as SQL: the one definition every read composes, so that blocks,
/// reports and moderation hold in each list, a note by id, a profile and a place's count alike.
///
/// Each is a sub-select that names no outer row, so PostgreSQL runs it once per statement
/// and probes a hash of it (`NOT IN` a hashed sub-plan), each part through an index of its
/// own: the blocks' two, the reporter's reports, the held users' partial index.
enum Audience {
    /// The users whose content `viewer` does not see: those hidden from them for a reason of
    /// their own (a block either way, a report of the user: `hidden_authors`, kept by
    /// triggers, migration 0029) and those held for a moderator (but for themselves).
    static func hiddenUsers(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        """
        (\(hiddenByViewer(tenantID: tenantID, viewerID: viewerID))
         UNION ALL
         \(heldUsers(tenantID: tenantID, viewerID: viewerID)))
        """
    }

    /// The authors `viewer` does not see for a reason of their own.
    static func hiddenByViewer(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        "SELECT v.author_id FROM hidden_authors v WHERE v.tenant_id = \(tenantID) AND v.viewer_id = \(viewerID)"
    }

    /// The accounts held for a moderator, hidden from everyone but themselves.
    static func heldUsers(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        "SELECT h.id FROM users h WHERE h.tenant_id = \(tenantID) AND h.moderation IS NOT NULL AND h.id <> \(viewerID)"
    }

    /// The ids of the `type` targets `viewer` reported, open or decided: gone for them.
    static func reported(_ type: StaticString, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        """
        SELECT r.target_id FROM reports r
        WHERE r.tenant_id = \(tenantID) AND r.reporter_id = \(viewerID) AND r.target_type = '\(unsafeSQL: type)'
        """
    }

    /// Whether `viewer` sees the note `alias` (a row of `notes` or `tenant_notes`): public or
    /// their own, not held for a moderator unless their own, not one they reported, and by no
    /// one hidden from them. (The view already hides disabled authors.)
    static func seesNote(_ alias: PostgresQuery, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        """
        (\(alias).visibility = 'public' OR \(alias).user_id = \(viewerID))
          AND (\(alias).moderation IS NULL OR \(alias).user_id = \(viewerID))
          AND \(alias).user_id NOT IN \(hiddenUsers(tenantID: tenantID, viewerID: viewerID))
          AND \(alias).id NOT IN (\(reported("note", tenantID: tenantID, viewerID: viewerID)))
        """
    }

    /// Whether `viewer` sees the place `alias`: not held for a moderator unless they made it,
    /// and not one they reported.
    static func seesPlace(_ alias: PostgresQuery, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        """
        (\(alias).moderation IS NULL OR \(alias).created_by = \(viewerID))
          AND \(alias).id NOT IN (\(reported("place", tenantID: tenantID, viewerID: viewerID)))
        """
    }
}
