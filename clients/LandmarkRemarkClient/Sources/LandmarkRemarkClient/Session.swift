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
    /// Refreshes with a refresh token: the client's `refreshTokens` call.
    typealias Refresher = @Sendable (String) async throws -> StoredSession

    private let store: any TokenStore
    private let refresher: Refresher
    private var current: StoredSession?
    /// The stored session, read once; a sign-in or sign-out before it finishes wins over it.
    private var loaded = false
    private var loading: Task<StoredSession?, any Error>?
    /// Store writes, one after another in the order the actor made them.
    private var lastWrite: Task<Void, Never>?
    /// Bumped by every sign-in and sign-out: a refresh started under another generation is stale.
    private(set) var generation = 0
    private var refreshing: (generation: Int, task: Task<StoredSession, any Error>)?
    private var observers: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    /// Refresh this long before the access token's expiry rather than wait for a `401`.
    private static let margin: TimeInterval = 30

    init(store: any TokenStore, refresher: @escaping Refresher) {
        self.store = store
        self.refresher = refresher
    }

    private func loadIfNeeded() async {
        guard !loaded else { return }
        let task = loading ?? Task { [store] in try await store.load() }
        loading = task
        let result = await task.result
        guard !loaded else { return }  // signed in or out meanwhile: that wins
        switch result {
        case .success(let stored):
            loaded = true
            current = stored
            if stored != nil { publish() }
        case .failure:
            // The Keychain may be locked (a launch in the background before first unlock):
            // signed out for now, read again next time.
            loading = nil
        }
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

    /// Queues a store write behind the earlier ones (the state here changed already) and
    /// returns once it is done.
    private func write(_ operation: @escaping @Sendable (any TokenStore) async throws -> Void) async {
        let previous = lastWrite
        let task = Task { [store] in
            await previous?.value
            try? await operation(store)
        }
        lastWrite = task
        await task.value
    }

    func signedIn(_ session: StoredSession) async {
        loaded = true
        generation += 1
        refreshing = nil
        current = session
        publish()
        await write { try await $0.save(session) }
    }

    /// Forgets the session here; returns its access token, for ending it at the service.
    @discardableResult
    func signOut() async -> String? {
        await loadIfNeeded()
        let token = current?.accessToken
        loaded = true
        generation += 1
        refreshing?.task.cancel()
        refreshing = nil
        current = nil
        publish()
        await write { try await $0.clear() }
        return token
    }

    /// The user signed in now, if any: calls that retry check it has not changed meanwhile.
    var signedInGeneration: Int? {
        get async {
            await loadIfNeeded()
            return current == nil ? nil : generation
        }
    }

    /// An access token to send: the current one, or a fresh one when it is about to expire
    /// (the current one still, when refreshing cannot reach the service and it has not expired).
    func accessToken() async throws -> String {
        await loadIfNeeded()
        guard let session = current else { throw LandmarkRemarkError.signedOut }
        if session.accessTokenExpiresAt.timeIntervalSinceNow > Self.margin { return session.accessToken }
        do {
            return try await refresh(replacing: session.accessToken)
        } catch LandmarkRemarkError.network(let underlying) {
            guard session.accessTokenExpiresAt > Date() else { throw LandmarkRemarkError.network(underlying: underlying) }
            return session.accessToken
        }
    }

    /// A fresh access token after `token` was refused. If another call refreshed meanwhile,
    /// its token; if a refresh is under way, its result; else a new refresh.
    func refresh(replacing token: String) async throws -> String {
        await loadIfNeeded()
        guard let session = current else { throw LandmarkRemarkError.signedOut }
        if session.accessToken != token { return session.accessToken }
        if let refreshing, refreshing.generation == generation {
            return try await awaitRefresh(refreshing.task, generation: generation, from: session.refreshToken).accessToken
        }
        let started = generation
        let refreshToken = session.refreshToken
        let refresher = self.refresher
        let task = Task { try await Self.refreshRetryingNetwork(refreshToken, with: refresher) }
        refreshing = (started, task)
        return try await awaitRefresh(task, generation: started, from: refreshToken).accessToken
    }

    /// A refresh whose answer was lost retires the refresh token all the same; the service
    /// takes it again only within a few seconds (its grace window), after which it would end
    /// the session as reused. So a network failure is retried at once, a few times.
    private static func refreshRetryingNetwork(_ refreshToken: String, with refresher: Refresher) async throws -> StoredSession {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await refresher(refreshToken)
            } catch LandmarkRemarkError.network where attempt < 3 {
                try await Task.sleep(for: .milliseconds(300 * attempt))
            }
        }
    }

    private func awaitRefresh(
        _ task: Task<StoredSession, any Error>, generation started: Int, from refreshToken: String
    ) async throws -> StoredSession {
        do {
            let fresh = try await task.value
            // Signed out (or in as someone else) while the refresh ran: its tokens are not ours.
            guard started == generation else { throw LandmarkRemarkError.signedOut }
            if current?.refreshToken == refreshToken {
                current = fresh
                if refreshing?.generation == started { refreshing = nil }
                await write { try await $0.save(fresh) }
            }
            return fresh
        } catch {
            if started != generation { throw LandmarkRemarkError.signedOut }
            if refreshing?.generation == started { refreshing = nil }
            if case .api(let problem)? = error as? LandmarkRemarkError,
                problem.code == .refreshTokenReused || problem.code == .refreshTokenInvalid
            {
                // The session is over on the service's side: so it is here.
                await signOut()
                throw LandmarkRemarkError.signedOut
            }
            throw error
        }
    }
}
