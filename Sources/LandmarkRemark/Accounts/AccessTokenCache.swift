import Foundation
import Synchronization

/// What this replica knows of each tenant's revocations, so that most requests make no round
/// trip for their access token (issue 38): a signed token is verified with its key and
/// trusted here, and an opaque one looked up lately is kept.
///
/// A token is trusted only as far as what it was built on. A signed token carries the
/// tenant's revocation epoch its issue read in the same snapshot as its checks; a kept one,
/// the epoch its lookup read. Every revocation raises the tenant's epoch and writes a row
/// naming its user or session (migrations 0045, 0046). The poller reads, every
/// `pollInterval`, the epochs of the tenants followed here and the rows above what it knew,
/// and a token is trusted only while no revocation of its user or session has a higher epoch
/// than its own, and only while its tenant was confirmed (by a poll, or a kept token by its
/// own lookup) less than `maxAge` ago. A replica whose polls fail or stall goes back to the
/// database for every token, and refuses nothing the database would accept: a revocation
/// committed anywhere counts on every replica within `maxAge`, whatever happens to its feed.
///
/// This replica's own revocations (logout, a password change, a deletion, a moderator's
/// suspension) `forget` the tenant once committed: its tokens are looked up until a poll that
/// began afterwards has read the revocation, so they count at once here.
final class AccessTokenCache: Sendable {
    struct Settings: Sendable {
        /// Opaque tokens kept at most; 0 keeps none and trusts no signed token (every request
        /// looks its token up).
        var capacity: Int
        var pollInterval: Duration
        var maxAge: Duration
        /// How long a revocation is remembered once read: longer than any token it concerns
        /// lives (the access tokens' lifetime and a margin).
        var revocationMemory: Duration = .seconds(3600 + 300)
    }

    /// What a poll read of one tenant.
    struct TenantState: Sendable, Equatable {
        let epoch: Int64
        let slug: String
        let disabled: Bool
    }

    /// One row of `auth_revocations`: tokens of this user (or session) older than `epoch`
    /// are not trusted here.
    struct Revocation: Sendable, Equatable {
        let epoch: Int64
        let userID: Int64?
        let sessionID: Int64?
    }

    private struct Entry {
        let identity: Identity
        let epoch: Int64
        let expires: ContinuousClock.Instant
        /// When the lookup that read it began: nothing committed before then is missing from it.
        let checked: ContinuousClock.Instant
    }

    /// What this replica knows of one tenant.
    private struct Followed {
        /// Every revocation up to this epoch has been read; nil before the first poll.
        var epoch: Int64?
        var slug: String?
        var disabled = false
        /// When the last poll that read the tenant began.
        var confirmed: ContinuousClock.Instant?
        /// When this replica last revoked something here: nothing read before counts.
        var forgotten: ContinuousClock.Instant?
        /// Per user and per session, the highest epoch of a revocation read, and when it was read.
        var users: [Int64: (epoch: Int64, read: ContinuousClock.Instant)] = [:]
        var sessions: [Int64: (epoch: Int64, read: ContinuousClock.Instant)] = [:]
        var lastUsed: ContinuousClock.Instant

        /// Reads one revocation: each of its user and session keeps the highest epoch seen.
        mutating func remember(_ revocation: Revocation, at now: ContinuousClock.Instant) {
            Self.raise(&users, revocation.userID, to: revocation.epoch, at: now)
            Self.raise(&sessions, revocation.sessionID, to: revocation.epoch, at: now)
        }

        private static func raise(
            _ known: inout [Int64: (epoch: Int64, read: ContinuousClock.Instant)], _ id: Int64?, to epoch: Int64, at now: ContinuousClock.Instant
        ) {
            guard let id, (known[id]?.epoch ?? .min) < epoch else { return }
            known[id] = (epoch, now)
        }

        /// Forgets the revocations read `memory` ago or more, in place.
        mutating func forgetRevocations(before cutoff: ContinuousClock.Instant) {
            for id in users.compactMap({ $0.value.read <= cutoff ? $0.key : nil }) { users[id] = nil }
            for id in sessions.compactMap({ $0.value.read <= cutoff ? $0.key : nil }) { sessions[id] = nil }
        }

        /// Whether a kept token of this tenant must be dropped: its tenant disabled or renamed,
        /// or its user or session revoked since its lookup.
        func drops(_ entry: Entry) -> Bool {
            let identity = entry.identity
            return disabled || slug.map { $0 != identity.tenantSlug } ?? false
                || revokes(userID: identity.userID, sessionID: identity.sessionID, since: entry.epoch)
        }

        /// Whether a revocation newer than `epoch` names the user or the session.
        func revokes(userID: Int64, sessionID: Int64, since epoch: Int64) -> Bool {
            (users[userID]?.epoch ?? .min) > epoch || (sessions[sessionID]?.epoch ?? .min) > epoch
        }

        /// Confirmed by a poll that began less than `maxAge` before `now`, and after this
        /// replica's last revocation here.
        func isConfirmed(now: ContinuousClock.Instant, maxAge: Duration) -> Bool {
            guard let confirmed, now - confirmed < maxAge else { return false }
            return forgotten.map { confirmed > $0 } ?? true
        }
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        var tenants: [Int64: Followed] = [:]
        var pollWaiters: [(after: ContinuousClock.Instant, continuation: CheckedContinuation<Void, Never>)] = []
        /// Signed tokens trusted without the database, since the start (for tests and /metrics).
        var verifiedHere = 0
        /// When the poll last pruned what time alone makes stale (expired tokens, old
        /// revocations, idle tenants): every poll would cost O(entries), five times a second.
        var pruned: ContinuousClock.Instant?

        /// Removes the entries `drop` picks, in place: a poll that drops nothing (most of
        /// them, five a second) copies nothing.
        mutating func dropEntries(where drop: (Entry) -> Bool) {
            for key in entries.compactMap({ drop($0.value) ? $0.key : nil }) { entries[key] = nil }
        }

        /// Drops what time made stale: expired tokens, revocations older than any token they
        /// concern, and tenants with nothing kept and unused for `memory`.
        mutating func prune(now: ContinuousClock.Instant, memory: Duration) {
            pruned = now
            dropEntries { $0.expires <= now }
            var kept: Set<Int64> = []
            for entry in entries.values { kept.insert(entry.identity.tenantID) }
            for tenantID in tenants.compactMap({ kept.contains($0.key) || now - $0.value.lastUsed < memory ? nil : $0.key }) {
                tenants[tenantID] = nil
            }
            for tenantID in tenants.keys { tenants[tenantID]!.forgetRevocations(before: now - memory) }
        }

        mutating func follow(_ tenantID: Int64, now: ContinuousClock.Instant) {
            if tenants[tenantID] == nil {
                tenants[tenantID] = Followed(lastUsed: now)
            } else {
                tenants[tenantID]!.lastUsed = now
            }
        }
    }

    let settings: Settings
    let now: @Sendable () -> ContinuousClock.Instant
    /// Unix seconds, for the expiry a signed token carries.
    let unixTime: @Sendable () -> Int64
    private let state = Mutex(State())

    init(
        settings: Settings, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
        unixTime: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) {
        self.settings = settings
        self.now = now
        self.unixTime = unixTime
    }

    var isEnabled: Bool { settings.capacity > 0 }

    /// The identity a verified signed token carries, if it may be trusted here: unexpired,
    /// its tenant confirmed lately and enabled, and no revocation of its user or session
    /// newer than the token. Nil sends the request to the database.
    func identity(signed claims: AccessTokenSigner.Claims, accessTokenHash hash: [UInt8]) -> Identity? {
        guard isEnabled, claims.expires > unixTime() else { return nil }
        let now = now()
        let maxAge = settings.maxAge
        return state.withLock { state in
            state.follow(claims.tenantID, now: now)
            guard let tenant = state.tenants[claims.tenantID], let slug = tenant.slug, !tenant.disabled,
                tenant.isConfirmed(now: now, maxAge: maxAge),
                !tenant.revokes(userID: claims.userID, sessionID: claims.sessionID, since: claims.epoch)
            else { return nil }
            state.verifiedHere += 1
            return Identity(
                tenantID: claims.tenantID, tenantSlug: slug, userID: claims.userID, username: claims.username, sessionID: claims.sessionID,
                accessTokenHash: hash)
        }
    }

    /// The identity kept for this token hash, if it is unexpired, was confirmed recently
    /// enough, and no revocation read since names its user or session.
    func identity(accessTokenHash hash: [UInt8]) -> Identity? {
        guard isEnabled else { return nil }
        let now = now()
        let maxAge = settings.maxAge
        return state.withLock { state in
            guard let entry = state.entries[hash] else { return nil }
            guard entry.expires > now else {
                state.entries[hash] = nil
                return nil
            }
            let identity = entry.identity
            guard let tenant = state.tenants[identity.tenantID] else { return nil }
            // Its own lookup confirms it too, unless this replica revoked something since.
            let lookupFresh = now - entry.checked < maxAge && tenant.forgotten.map { entry.checked > $0 } ?? true
            // Kept, not used: a later poll may confirm it again.
            guard lookupFresh || tenant.isConfirmed(now: now, maxAge: maxAge) else { return nil }
            guard !tenant.revokes(userID: identity.userID, sessionID: identity.sessionID, since: entry.epoch) else { return nil }
            state.tenants[identity.tenantID]!.lastUsed = now
            return identity
        }
    }

    /// What is kept for this token hash, however long ago it was confirmed: for tests, which
    /// must not depend on how soon a busy machine runs the next poll.
    func keptIdentity(accessTokenHash hash: [UInt8]) -> Identity? {
        state.withLock { $0.entries[hash]?.identity }
    }

    /// How many signed tokens were trusted without the database.
    var verifiedHere: Int { state.withLock { $0.verifiedHere } }

    /// Keeps what a lookup that began at `checked` found: the identity, the tenant's epoch it
    /// read, and how long the token had left by the database's clock.
    func keep(_ identity: Identity, epoch: Int64, secondsLeft: Double, checked: ContinuousClock.Instant) {
        guard isEnabled, secondsLeft > 0 else { return }
        let expires = checked + .milliseconds(Int64(secondsLeft * 1000))
        let capacity = settings.capacity
        state.withLock { state in
            // Began before this replica's last revocation there: it may have read too early.
            if let forgotten = state.tenants[identity.tenantID]?.forgotten, checked <= forgotten { return }
            if state.entries.count >= capacity {
                state.dropEntries { $0.expires <= checked }
                guard state.entries.count < capacity else { return }
            }
            state.follow(identity.tenantID, now: checked)
            state.entries[identity.accessTokenHash] = Entry(identity: identity, epoch: epoch, expires: expires, checked: checked)
        }
    }

    /// After this replica committed a revocation in a tenant: drops the tenant's kept tokens,
    /// and trusts none of its signed ones until a poll that began afterwards has answered.
    func forget(tenantID: Int64) {
        let now = now()
        state.withLock { state in
            state.dropEntries { $0.identity.tenantID == tenantID }
            state.follow(tenantID, now: now)
            state.tenants[tenantID]!.forgotten = now
        }
    }

    /// The tenants a poll must read, each with the epoch up to which its revocations are
    /// known (nil: none read yet, read them all).
    func tenantsFollowed() -> [(tenantID: Int64, epoch: Int64?)] {
        state.withLock { state in state.tenants.map { ($0.key, $0.value.epoch) } }
    }

    /// What a poll that began at `started` read of the tenants it `asked` for: their states,
    /// and the revocations above the epochs `tenantsFollowed` gave. Confirms each tenant as of
    /// `started`, drops the kept tokens a revocation passed, and stops following a tenant
    /// gone. Every tenth of `revocationMemory` it also prunes what time made stale.
    func observe(
        _ read: [Int64: TenantState], revocations: [Int64: [Revocation]] = [:], asked: [Int64], started: ContinuousClock.Instant
    ) {
        let now = now()
        let memory = settings.revocationMemory
        let waiters = state.withLock { state in
            // The tenants whose kept tokens this poll may have made stale.
            var changed: Set<Int64> = []
            for tenantID in asked {
                // Taken out while it changes, so its dictionaries are not copied on write.
                guard var tenant = state.tenants.removeValue(forKey: tenantID) else { continue }
                guard let current = read[tenantID] else {
                    changed.insert(tenantID)
                    continue
                }
                let revoked = revocations[tenantID] ?? []
                for revocation in revoked { tenant.remember(revocation, at: now) }
                if !revoked.isEmpty || current.disabled != tenant.disabled || current.slug != tenant.slug { changed.insert(tenantID) }
                tenant.epoch = max(tenant.epoch ?? current.epoch, current.epoch)
                tenant.slug = current.slug
                tenant.disabled = current.disabled
                tenant.confirmed = max(tenant.confirmed ?? started, started)
                state.tenants[tenantID] = tenant
            }
            if !changed.isEmpty {
                let tenants = state.tenants
                state.dropEntries { entry in
                    let tenantID = entry.identity.tenantID
                    guard changed.contains(tenantID) else { return false }
                    return tenants[tenantID]?.drops(entry) ?? true
                }
            }
            if state.pruned.map({ now - $0 >= memory / 10 }) ?? true {
                state.prune(now: now, memory: memory)
            }
            let (ready, waiting) = state.pollWaiters.partitioned { $0.after <= started }
            state.pollWaiters = waiting
            return ready
        }
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// Returns once a poll that began after this call has been observed: for tests, which
    /// wait on that event rather than on time.
    func nextPoll() async {
        let after = now()
        await withCheckedContinuation { continuation in
            state.withLock { state in state.pollWaiters.append((after, continuation)) }
        }
    }
}

extension Array {
    /// The elements that satisfy `belongs`, and the others, each in order.
    fileprivate func partitioned(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
        var (yes, no) = ([Element](), [Element]())
        for element in self {
            if belongs(element) { yes.append(element) } else { no.append(element) }
        }
        return (yes, no)
    }
}
