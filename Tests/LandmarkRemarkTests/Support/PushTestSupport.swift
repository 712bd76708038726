extension TestEnvironment {
    /// Expands what the tenant's writes matched into `push_matches`, as a sender does first in
    /// each pass; returns the notes taken.
    static func expandPushNotes(tenantID: Int64) async throws -> Int {
        try await ownerScalar("SELECT expand_push_notes(\(tenantID), 1000)", as: Int.self)
    }
}
