/// How far the event log is final: every id at or below `head` is either in the log
/// for good or never will be, so a stream that has read up to it can move on without
/// ever missing an event that commits later.
///
/// Ids come from one sequence (migration 0008) and writers take no shared lock, so
/// they become visible out of order: while id 7's transaction still runs, 8 may be
/// committed. The horizon stops at such a gap until it is sure: a missing id below
/// one that a snapshot shows was taken by a transaction whose xid is below that
/// snapshot's `xmax` (the writer gets its xid before its id); once a later snapshot's
/// `xmin` passes that `xmax`, every such transaction has ended, and an id still
/// missing was rolled back (or never handed out). No clock, no guess.
struct EventHorizon: Sendable, Equatable {
    /// One look at the log: the snapshot's bounds and the visible ids above the head.
    struct Observation: Sendable {
        let snapshotXmin: Int64
        let snapshotXmax: Int64
        /// Visible ids above the head, ascending, each with its tenant.
        let ids: [Int64]
        let tenantIDs: [Int64]
    }

    /// A gap seen once: missing ids at or below `upTo` are final when `xmin >= xmax`.
    struct Watch: Sendable, Equatable {
        let upTo: Int64
        let xmax: Int64
    }

    /// Every id at or below is final.
    private(set) var head: Int64
    /// Until a snapshot's `xmin` reaches this, ids at or below the starting head may
    /// still commit: the head is not yet to be handed out.
    private(set) var startedBelow: Int64?
    private(set) var watches: [Watch] = []

    /// Starts at `head`, the newest id visible in a snapshot whose `xmax` was `snapshotXmax`.
    init(head: Int64, snapshotXmax: Int64) {
        self.head = head
        self.startedBelow = snapshotXmax
    }

    /// Whether `head` may be used: no transaction that was running at the start is left.
    var isReady: Bool { startedBelow == nil }

    /// Moves the head as far as the observation allows; returns the tenants that got
    /// final events, and whether it stopped at a gap that may still fill.
    mutating func advance(_ observation: Observation) -> (tenants: Set<Int64>, stoppedAtGap: Bool) {
        if let start = startedBelow {
            guard observation.snapshotXmin >= start else { return ([], true) }
            startedBelow = nil
        }
        let settled = watches.filter { $0.xmax <= observation.snapshotXmin }.map(\.upTo).max() ?? Int64.min
        var tenants: Set<Int64> = []
        var stopped = false
        for (id, tenant) in zip(observation.ids, observation.tenantIDs) where id > head {
            if id > head + 1, settled < id - 1 {
                // Missing ids below a visible one: keep the oldest watch that covers them.
                if !watches.contains(where: { $0.upTo >= id - 1 }) {
                    watches.append(Watch(upTo: id - 1, xmax: observation.snapshotXmax))
                }
                stopped = true
                break
            }
            head = id
            tenants.insert(tenant)
        }
        watches.removeAll { $0.upTo <= head }
        return (tenants, stopped)
    }
}
