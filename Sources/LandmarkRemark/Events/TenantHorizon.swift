/// How far one tenant's events are final where Citus holds the log (migration 0018): the
/// per-tenant counterpart of `EventHorizon`, moved by `event_probe` on the tenant's worker.
///
/// A tenant's ids come from its worker's sequence, which every tenant of that worker
/// shares, so they are sparse: a gap may be another tenant's id or one of this tenant's
/// still being written, and no gap can be told apart. So the head never walks ids; it
/// jumps to the newest visible id `M` of a probe `S` once every transaction that could
/// hold a lower id has ended: a holder of an id below `M` took it before `M` was taken,
/// and its xid before that, so its xid is below `S.xmax`; once a later probe's `xmin`
/// reaches `S.xmax` every such id is visible or never coming. (At once when `S.xmin ==
/// S.xmax`: nothing was running.) The cost is at most one more poll.
///
/// The probe also says which node answered (its id floor). A new floor means the tenant's
/// shard moved and its ids now come from another range: the head starts again there and
/// the tenant's streams are reset.
struct TenantHorizon: Sendable, Equatable {
    /// One `event_probe`: the worker's snapshot bounds, its id floor, and the tenant's
    /// newest visible id in the worker's range (`floor - 1` when it has none).
    struct Probe: Sendable, Equatable {
        let snapshotXmin: Int64
        let snapshotXmax: Int64
        let floor: Int64
        let newest: Int64
    }

    /// An id seen visible, final once a snapshot's `xmin` reaches `xmax`.
    struct Candidate: Sendable, Equatable {
        let upTo: Int64
        let xmax: Int64
    }

    /// What a probe changed.
    enum Change: Sendable, Equatable {
        case none
        /// The head moved, or became known.
        case moved
        /// The tenant's ids now come from another node's range: the head starts again
        /// there (and is known at once only when the tenant has no ids there yet).
        case rangeChanged
    }

    /// Candidates kept at most; past it the newest is replaced by a later one (which
    /// settles no sooner), so a long transaction cannot make the list grow.
    static let maxCandidates = 16

    /// The floor of the node whose ids the head counts; nil before the first probe.
    private(set) var floor: Int64?
    /// Every id of the tenant in the floor's range at or below is final; nil until known.
    private(set) var head: Int64?
    /// Ids seen visible above the head, oldest first (both fields ascending).
    private(set) var candidates: [Candidate] = []

    init() {}

    /// Where the next probe reads from: above everything already seen (0 at the start,
    /// which the probe reads as "the whole range").
    var probeAfter: Int64 { max(head ?? 0, candidates.last?.upTo ?? 0) }

    mutating func advance(_ probe: Probe) -> Change {
        var change = Change.none
        if floor != probe.floor {
            if floor != nil { change = .rangeChanged }
            floor = probe.floor
            candidates = []
            // Nothing of the tenant visible in the range: every id of it at or below
            // floor - 1 (none) is final, so that head holds at once.
            head = probe.newest < probe.floor ? probe.floor - 1 : nil
            if head != nil, change == .none { change = .moved }
        }
        if probe.newest > max(head ?? Int64.min, candidates.last?.upTo ?? Int64.min) {
            if let last = candidates.last, last.xmax >= probe.snapshotXmax || candidates.count >= Self.maxCandidates {
                // Settles no sooner than the one it replaces, and covers it.
                candidates[candidates.count - 1] = Candidate(upTo: probe.newest, xmax: max(last.xmax, probe.snapshotXmax))
            } else {
                candidates.append(Candidate(upTo: probe.newest, xmax: probe.snapshotXmax))
            }
        }
        // The newest candidate whose possible holders have all ended.
        if let settled = candidates.last(where: { $0.xmax <= probe.snapshotXmin }) {
            head = settled.upTo
            candidates.removeAll { $0.upTo <= settled.upTo }
            if change == .none { change = .moved }
        }
        return change
    }
}
