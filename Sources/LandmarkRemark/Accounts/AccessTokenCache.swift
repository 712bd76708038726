import Synchronization

/// The access tokens this replica has looked up, so that a request with one it knows makes
/// no round trip for its token (issue 38).
///
/// What is kept must not outlive what it was built on. Each entry holds the tenant's
/// revocation epoch read in the lookup's own statement (migration 0045); the poller reads
/// the epochs of the tenants kept here every `pollInterval` and drops every entry an epoch
/// passed, and every entry of a tenant disabled, renamed or gone. An entry is used only
/// while it was confirmed (by its lookup or a poll) less than `maxAge` ago: a replica whose
/// polls fail or stall goes back to the database for every token, and refuses nothing the
/// database would accept. So a revocation committed anywhere reaches every replica within
/// `maxAge`, whatever happens to its feed.
///
/// This replica's own revocations (logout, a password change, a deletion, a moderator's
/// suspension) `forget` the tenant once committed, so they take effect at once here.
final class AccessTokenCache: Sendable {
    struct Settings: Sendable {
        /// Tokens kept at most; 0 keeps none (every request looks its token up).
        var capacity: Int
        var pollInterval: Duration
        var maxAge: Duration
    }

    /// What a poll read of one tenant.
    struct TenantState: Sendable, Equatable {
        let epoch: Int64
        let slug: String
        let disabled: Bool
    }

    private struct Entry {
        let identity: Identity
        let epoch: Int64
        let expires: ContinuousClock.Instant
        /// When the lookup that read it began: nothing committed before then is missing from it.
        let checked: ContinuousClock.Instant
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        /// When the last poll that answered began.
        var lastPoll: ContinuousClock.Instant?
        var pollWaiters: [(after: ContinuousClock.Instant, continuation: CheckedContinuation<Void, Never>)] = []

        /// Removes the entries `drop` picks, in place: a poll that drops nothing (most of
        /// them, five a second) copies nothing.
        mutating func dropEntries(where drop: (Entry) -> Bool) {
            for key in entries.compactMap({ drop($0.value) ? $0.key : nil }) { entries[key] = nil }
        }
    }

    let settings: Settings
    let now: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex(State())

    init(settings: Settings, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.settings = settings
        self.now = now
    }

    var isEnabled: Bool { settings.capacity > 0 }

    /// The identity kept for this token hash, if it is unexpired and was confirmed recently enough.
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
            let confirmed = max(entry.checked, state.lastPoll ?? entry.checked)
            // Kept, not used: a later poll may confirm it again.
            guard now - confirmed < maxAge else { return nil }
            return entry.identity
        }
    }

    /// What is kept for this token hash, however long ago it was confirmed: for tests, which
    /// must not depend on how soon a busy machine runs the next poll.
    func keptIdentity(accessTokenHash hash: [UInt8]) -> Identity? {
        state.withLock { $0.entries[hash]?.identity }
    }

    /// Keeps what a lookup that began at `checked` found: the identity, the tenant's epoch it
    /// read, and how long the token had left by the database's clock.
    func keep(_ identity: Identity, epoch: Int64, secondsLeft: Double, checked: ContinuousClock.Instant) {
        guard isEnabled, secondsLeft > 0 else { return }
        let expires = checked + .milliseconds(Int64(secondsLeft * 1000))
        let capacity = settings.capacity
        state.withLock { state in
            if state.entries.count >= capacity {
                state.dropEntries { $0.expires <= checked }
                guard state.entries.count < capacity else { return }
            }
            state.entries[identity.accessTokenHash] = Entry(identity: identity, epoch: epoch, expires: expires, checked: checked)
        }
    }

    /// Drops every token of a tenant: after this replica committed a revocation there.
    func forget(tenantID: Int64) {
        state.withLock { state in state.dropEntries { $0.identity.tenantID == tenantID } }
    }

    /// The tenants a poll must read.
    func tenantsKept() -> [Int64] {
        state.withLock { state in Array(Set(state.entries.values.map(\.identity.tenantID))) }
    }

    /// What a poll that began at `started` read of the tenants it `asked` for: drops what it
    /// passed, and confirms the rest as of `started`.
    func observe(_ read: [Int64: TenantState], asked: [Int64], started: ContinuousClock.Instant) {
        let asked = Set(asked)
        let now = now()
        let waiters = state.withLock { state in
            state.dropEntries { entry in
                guard entry.expires > now else { return true }
                let tenant = entry.identity.tenantID
                guard asked.contains(tenant) else { return false }
                guard let current = read[tenant] else { return true }
                return current.disabled || current.slug != entry.identity.tenantSlug || current.epoch > entry.epoch
            }
            state.lastPoll = max(state.lastPoll ?? started, started)
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
