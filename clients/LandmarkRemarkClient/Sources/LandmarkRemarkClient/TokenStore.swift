import Foundation

/// What a signed-in session is, as it is kept between launches.
public struct StoredSession: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String
    /// When the access token stops working (by this device's clock, from `expires_in`).
    public var accessTokenExpiresAt: Date
    public var user: User

    public init(accessToken: String, refreshToken: String, accessTokenExpiresAt: Date, user: User) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.user = user
    }
}

/// Where the session's tokens live between launches: the Keychain on Apple platforms
/// (`KeychainTokenStore`), memory in tests and on servers (`InMemoryTokenStore`), or your own.
public protocol TokenStore: Sendable {
    func load() async throws -> StoredSession?
    func save(_ session: StoredSession) async throws
    func clear() async throws
}

/// Keeps the session in memory only: gone when the process ends.
public actor InMemoryTokenStore: TokenStore {
    private var session: StoredSession?

    public init(_ session: StoredSession? = nil) {
        self.session = session
    }

    public func load() -> StoredSession? { session }
    public func save(_ session: StoredSession) { self.session = session }
    public func clear() { session = nil }
}

#if canImport(Security)
import Security

/// Keeps the session in the Keychain, readable only while the device is unlocked (after the
/// first unlock, so background refreshes work). With an `accessGroup`, app extensions of the
/// same team (a widget, a share extension) see the same session.
public struct KeychainTokenStore: TokenStore {
    public let service: String
    public let account: String
    public let accessGroup: String?

    public init(service: String = "dev.landmark-remark.session", account: String = "default", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    public struct KeychainError: Error, Sendable {
        public let status: OSStatus
    }

    private var query: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func load() async throws -> StoredSession? {
        var query = self.query
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw KeychainError(status: status) }
        return try JSONDecoder().decode(StoredSession.self, from: data)
    }

    public func save(_ session: StoredSession) async throws {
        let data = try JSONEncoder().encode(session)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    public func clear() async throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
    }
}
#endif
