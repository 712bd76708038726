import Foundation

/// Whether someone is signed in, as `LandmarkRemark.authState` reports it.
public enum AuthState: Sendable, Equatable {
    case signedOut
    case signedIn(User)
}

/// Owns the tokens. One refresh at a time, however many calls need one; a refresh that
/// finishes after the user signed out (or in as someone else) is dropped; a refresh the
/// service refuses (`refresh_token_reused`, `refresh_token_invalid`) signs out.
actor Session {
    /// Refreshes with a refresh token; the client's `refreshTokens` call.
    typealias Refresher = @Sendable (String) async throws -> StoredSession

    private let store: any TokenStore
    private var current: StoredSession?
    private var loaded = false
    /// Bumped by every sign-in and sign-out: a refresh started under another generation is stale.
    private var generation = 0
    private var refreshing: (generation: Int, task: Task<StoredSession, any Error>)?
    private var refresher: Refresher?
    private var observers: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    /// How many refreshes were made (tests and diagnostics).
    private(set) var refreshCount = 0
    /// Refresh this long before the access token's expiry rather than wait for a `401`.
    private static let margin: TimeInterval = 30

    init(store: any TokenStore) {
        self.store = store
    }

    func setRefresher(_ refresher: @escaping Refresher) {
        self.refresher = refresher
    }

    private func loadIfNeeded() async {
        guard !loaded else { return }
        loaded = true
        current = (try? await store.load()) ?? nil
    }

    var state: AuthState {
        get async {
            await loadIfNeeded()
            return current.map { .signedIn($0.user) } ?? .signedOut
        }
    }

    /// The current state, then every change, until the caller stops iterating.
    func states() async -> AsyncStream<AuthState> {
        let (stream, continuation) = AsyncStream<AuthState>.makeStream()
        let id = UUID()
        observers[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeObserver(id) } }
        continuation.yield(await state)
        return stream
    }

    private func removeObserver(_ id: UUID) {
        observers[id] = nil
    }

    private func publish() {
        let state: AuthState = current.map { .signedIn($0.user) } ?? .signedOut
        for observer in observers.values { observer.yield(state) }
    }

    func signedIn(_ session: StoredSession) async {
        await loadIfNeeded()
        generation += 1
        refreshing = nil
        current = session
        try? await store.save(session)
        publish()
    }

    func signOut() async {
        await loadIfNeeded()
        generation += 1
        refreshing = nil
        current = nil
        try? await store.clear()
        publish()
    }

    /// The access token as it is, for ending the session at the service.
    var currentAccessToken: String? {
        get async {
            await loadIfNeeded()
            return current?.accessToken
        }
    }

    /// An access token to send: the current one, or a fresh one when it is about to expire.
    func accessToken() async throws -> String {
        await loadIfNeeded()
        guard let session = current else { throw LandmarkRemarkError.signedOut }
        if session.accessTokenExpiresAt.timeIntervalSinceNow > Self.margin { return session.accessToken }
        return try await refresh(replacing: session.accessToken)
    }

    /// A fresh access token after `token` was refused. If another call refreshed meanwhile,
    /// its token; if a refresh is under way, its result; else a new refresh.
    func refresh(replacing token: String) async throws -> String {
        await loadIfNeeded()
        guard let session = current else { throw LandmarkRemarkError.signedOut }
        if session.accessToken != token { return session.accessToken }
        if let refreshing, refreshing.generation == generation {
            return try await awaitRefresh(refreshing.task, generation: generation).accessToken
        }
        guard let refresher else { throw LandmarkRemarkError.signedOut }
        let started = generation
        let refreshToken = session.refreshToken
        refreshCount += 1
        let task = Task { try await refresher(refreshToken) }
        refreshing = (started, task)
        return try await awaitRefresh(task, generation: started).accessToken
    }

    private func awaitRefresh(_ task: Task<StoredSession, any Error>, generation started: Int) async throws -> StoredSession {
        do {
            let fresh = try await task.value
            // Signed out (or in as someone else) while the refresh ran: its tokens are not ours.
            guard started == generation else { throw LandmarkRemarkError.signedOut }
            if current?.refreshToken != fresh.refreshToken {
                current = fresh
                try? await store.save(fresh)
                if refreshing?.generation == started { refreshing = nil }
            }
            return fresh
        } catch {
            if started == generation, refreshing?.generation == started { refreshing = nil }
            if case .api(let problem)? = error as? LandmarkRemarkError,
                problem.code == .refreshTokenReused || problem.code == .refreshTokenInvalid
            {
                // The session is over on the service's side: so it is here.
                if started == generation { await signOut() }
                throw LandmarkRemarkError.signedOut
            }
            throw error
        }
    }
}
