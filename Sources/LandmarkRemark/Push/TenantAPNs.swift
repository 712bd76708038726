import APNs
import Credentials
import Logging
import Postgres

/// A tenant's APNs credentials (migration 0050), opened with the service's data key. A key the
/// operator gave as text is sealed on first use and the text cleared, so it rests encrypted.
struct TenantAPNsStore: Sendable {
    let secrets: SecretBox

    static func binding(tenantID: Int64, keyID: String) -> [UInt8] { Array("apns-key/\(tenantID)/\(keyID)".utf8) }

    /// Nil when the tenant has none, or they cannot be opened with this replica's data key
    /// (logged: the operator must set them again, or give the replica the right key).
    func credentials(tenantID: Int64, on connection: some PostgresQuerying, logger: Logger) async throws -> APNsCredentials? {
        let rows = try await connection.query("""
            SELECT apns_team_id, apns_key_id, apns_private_key, apns_private_key_sealed FROM tenants
            WHERE id = \(tenantID) AND apns_team_id IS NOT NULL AND disabled_at IS NULL
            """)
        guard let row = rows.first else { return nil }
        let (teamID, keyID, text, sealed) = try row.decode((String, String, String?, PostgresBytes?).self)
        let binding = Self.binding(tenantID: tenantID, keyID: keyID)
        if let text {
            try await connection.query("""
                SELECT seal_tenant_apns_key(\(tenantID), \(text), \(PostgresBytes(secrets.seal(Array(text.utf8), binding: binding))))
                """)
            return APNsCredentials(teamID: teamID, keyID: keyID, privateKeyPEM: text)
        }
        guard let sealed, let opened = try? secrets.open(sealed.bytes, binding: binding) else {
            logger.error("the tenant's APNs key cannot be opened with this LR_DATA_KEY; set it again", metadata: ["tenant_id": "\(tenantID)"])
            return nil
        }
        return APNsCredentials(teamID: teamID, keyID: keyID, privateKeyPEM: String(decoding: opened, as: UTF8.self))
    }
}
