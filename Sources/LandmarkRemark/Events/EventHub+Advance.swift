import Postgres

/// One poll of the log: the horizon of the mode the log needs, then the wake-ups.
extension EventHub {
    /// Moves the horizon (or the watched tenants' heads) as far as the log allows, wakes
    /// the streams of the tenants whose head moved and hands heads to streams waiting for one.
    func advance() async throws {
        let mode: Mode
        if let known = state.withLock({ $0.mode }) {
            mode = known
        } else {
            mode = try await EventLog.mode(on: pool)
            state.withLock { $0.mode = mode }
        }
        let woken = switch mode {
        case .global: try await advanceGlobal()
        case .perTenant: try await advanceTenants()
        }
        let (subscribers, waiters) = state.withLock { state -> ([Subscriber], [(ReadyWaiter, Head)]) in
            state.polls += 1
            var ready: [(ReadyWaiter, Head)] = []
            var waiting: [ReadyWaiter] = []
            for waiter in state.readyWaiters {
                if let head = state.head(of: waiter.tenantID) { ready.append((waiter, head)) } else { waiting.append(waiter) }
            }
            state.readyWaiters = waiting
            return (state.subscribers.values.filter { woken.contains($0.tenantID) }, ready)
        }
        for (waiter, head) in waiters { waiter.continuation.resume(returning: head) }
        for subscriber in subscribers { subscriber.continuation.yield(.wake) }
    }

    /// One server: walks every tenant's new ids in order (`EventHorizon`); the tenants that
    /// got final events.
    private func advanceGlobal() async throws -> Set<Int64> {
        guard var horizon = state.withLock({ $0.horizon }) else {
            let (head, xmax) = try await EventLog.start(on: pool)
            state.withLock { $0.horizon = EventHorizon(head: head, snapshotXmax: xmax) }
            return try await advanceGlobal()
        }
        var woken: Set<Int64> = []
        while true {
            let (xmin, xmax, ids, tenants) = try await EventLog.ids(after: horizon.head, limit: Self.probeSize, on: pool)
            let moved = horizon.advance(.init(snapshotXmin: xmin, snapshotXmax: xmax, ids: ids, tenantIDs: tenants))
            woken.formUnion(moved.tenants)
            if moved.stoppedAtGap || ids.count < Self.probeSize { break }
        }
        state.withLock { $0.horizon = horizon }
        // Before the horizon is ready no stream has started: nobody to wake.
        return horizon.isReady ? woken : []
    }

    /// Citus: probes each tenant with streams on its worker, one statement after another on
    /// one connection (the statement must stand alone for Citus to send it to the worker);
    /// the tenants whose head moved or whose ids moved to another node. Tenants left
    /// without streams are forgotten: their heads are not kept up to date.
    private func advanceTenants() async throws -> Set<Int64> {
        let watched = state.withLock { state -> [(Int64, Int64)] in
            let tenants = Set(state.subscribers.values.map(\.tenantID))
            state.tenants = state.tenants.filter { tenants.contains($0.key) }
            for tenant in tenants where state.tenants[tenant] == nil {
                state.tenants[tenant] = TenantState(generation: state.nextGeneration)
                state.nextGeneration += 1
            }
            return state.tenants.map { ($0.key, $0.value.horizon.probeAfter) }
        }
        guard !watched.isEmpty else { return [] }
        let probes = try await pool.withConnection { connection in
            var probes: [(Int64, TenantHorizon.Probe)] = []
            for (tenant, after) in watched {
                probes.append((tenant, try await EventLog.probe(tenantID: tenant, after: after, on: connection)))
            }
            return probes
        }
        return state.withLock { state -> Set<Int64> in
            var woken: Set<Int64> = []
            for (tenant, probe) in probes {
                guard var tenantState = state.tenants[tenant] else { continue }
                switch tenantState.horizon.advance(probe) {
                case .none: break
                case .moved: woken.insert(tenant)
                case .rangeChanged:
                    // Its streams are reset to the new head once it is known (at once when the
                    // tenant has no ids in the new range yet, else when it settles: `.moved`).
                    tenantState.generation = state.nextGeneration
                    state.nextGeneration += 1
                    if tenantState.horizon.head != nil { woken.insert(tenant) }
                }
                state.tenants[tenant] = tenantState
            }
            return woken
        }
    }
}
