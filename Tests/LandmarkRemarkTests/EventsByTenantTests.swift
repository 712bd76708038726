import Foundation
import Postgres
import Testing

@testable import LandmarkRemark

/// `TenantHorizon`: a tenant's head where Citus holds the event log (migration 0018).
@Suite struct EventsByTenantTests {
    typealias Probe = TenantHorizon.Probe
    static let floor: Int64 = 1 << 48 + 1

    @Test func aTenantWithoutEventsHasItsHeadAtOnce() {
        var horizon = TenantHorizon()
        #expect(horizon.head == nil && horizon.probeAfter == 0)
        #expect(horizon.advance(Probe(snapshotXmin: 10, snapshotXmax: 20, floor: Self.floor, newest: Self.floor - 1)) == .moved)
        #expect(horizon.head == Self.floor - 1 && horizon.floor == Self.floor)
    }

    @Test func theNewestIdIsFinalOnceALaterSnapshotsXminReachesTheXmaxItWasSeenIn() {
        var horizon = TenantHorizon()
        // Ids of other tenants lie between this tenant's: its ids are sparse.
        #expect(horizon.advance(Probe(snapshotXmin: 10, snapshotXmax: 20, floor: Self.floor, newest: Self.floor + 40)) == .none)
        #expect(horizon.head == nil && horizon.probeAfter == Self.floor + 40)
        // Transactions below 20 still run: whatever is newer, nothing is final yet.
        #expect(horizon.advance(Probe(snapshotXmin: 19, snapshotXmax: 25, floor: Self.floor, newest: Self.floor + 90)) == .none)
        #expect(horizon.head == nil)
        // Every holder of an id below 40 has ended; 90's may not have.
        #expect(horizon.advance(Probe(snapshotXmin: 20, snapshotXmax: 30, floor: Self.floor, newest: Self.floor + 90)) == .moved)
        #expect(horizon.head == Self.floor + 40)
        #expect(horizon.candidates == [.init(upTo: Self.floor + 90, xmax: 25)])
        // Nothing new: no move until 25 is passed, then straight to 90, over every gap.
        #expect(horizon.advance(Probe(snapshotXmin: 24, snapshotXmax: 30, floor: Self.floor, newest: Self.floor + 90)) == .none)
        #expect(horizon.advance(Probe(snapshotXmin: 30, snapshotXmax: 30, floor: Self.floor, newest: Self.floor + 90)) == .moved)
        #expect(horizon.head == Self.floor + 90 && horizon.candidates.isEmpty)
    }

    @Test func withNothingRunningTheNewestIdIsFinalAtOnce() {
        var horizon = TenantHorizon()
        #expect(horizon.advance(Probe(snapshotXmin: 50, snapshotXmax: 50, floor: Self.floor, newest: Self.floor + 7)) == .moved)
        #expect(horizon.head == Self.floor + 7)
        #expect(horizon.advance(Probe(snapshotXmin: 51, snapshotXmax: 51, floor: Self.floor, newest: Self.floor + 9)) == .moved)
        #expect(horizon.head == Self.floor + 9 && horizon.candidates.isEmpty)
    }

    @Test func aLongTransactionKeepsTheCandidatesFew() {
        var horizon = TenantHorizon()
        _ = horizon.advance(Probe(snapshotXmin: 1, snapshotXmax: 1, floor: Self.floor, newest: Self.floor))
        // xmin held at 5 by one transaction while ids and xids go on.
        for step in Int64(1)...100 {
            #expect(horizon.advance(Probe(snapshotXmin: 5, snapshotXmax: 10 + step, floor: Self.floor, newest: Self.floor + step)) == .none)
        }
        #expect(horizon.candidates.count == TenantHorizon.maxCandidates)
        #expect(horizon.candidates.last == .init(upTo: Self.floor + 100, xmax: 110))
        // It ends: everything seen up to xmax 110 settles when xmin gets there.
        #expect(horizon.advance(Probe(snapshotXmin: 14, snapshotXmax: 120, floor: Self.floor, newest: Self.floor + 100)) == .moved)
        #expect(horizon.head == Self.floor + 4)
        #expect(horizon.advance(Probe(snapshotXmin: 110, snapshotXmax: 120, floor: Self.floor, newest: Self.floor + 100)) == .moved)
        #expect(horizon.head == Self.floor + 100 && horizon.candidates.isEmpty)
    }

    @Test func aNewFloorStartsTheHeadAgainInTheNewRange() {
        let other: Int64 = 2 << 48 + 1
        var horizon = TenantHorizon()
        _ = horizon.advance(Probe(snapshotXmin: 10, snapshotXmax: 10, floor: Self.floor, newest: Self.floor + 5))
        _ = horizon.advance(Probe(snapshotXmin: 10, snapshotXmax: 12, floor: Self.floor, newest: Self.floor + 8))
        // The shard moved to a node with no ids of the tenant yet: known at once, below its range.
        var moved = horizon
        #expect(moved.advance(Probe(snapshotXmin: 3, snapshotXmax: 4, floor: other, newest: other - 1)) == .rangeChanged)
        #expect(moved.head == other - 1 && moved.floor == other && moved.candidates.isEmpty)
        // To a node that has some (it held the tenant before): known once they are final.
        #expect(horizon.advance(Probe(snapshotXmin: 3, snapshotXmax: 4, floor: other, newest: other + 30)) == .rangeChanged)
        #expect(horizon.head == nil && horizon.probeAfter == other + 30)
        #expect(horizon.advance(Probe(snapshotXmin: 4, snapshotXmax: 4, floor: other, newest: other + 30)) == .moved)
        #expect(horizon.head == other + 30)
        // And back to a lower range.
        #expect(horizon.advance(Probe(snapshotXmin: 20, snapshotXmax: 20, floor: Self.floor, newest: Self.floor + 9)) == .rangeChanged)
        #expect(horizon.head == Self.floor + 9)
    }
}

/// Where Citus holds the log, through the live service (skipped unless `LR_TEST_CITUS=1`,
/// which `scripts/test-citus.sh` sets).
extension EventsTests {
    static var onCitus: Bool { ProcessInfo.processInfo.environment["LR_TEST_CITUS"] == "1" }

    /// The floor of the node whose ids the tenant's events take now (`event_probe`, run on
    /// the tenant's worker).
    static func eventFloor(tenantID: Int64) async throws -> Int64 {
        try await TestEnvironment.ownerScalar("SELECT event_probe(\(tenantID), 0)", as: [Int64].self)[2]
    }

    /// Two new tenants whose shards are on different workers, with their floors.
    static func tenantsOnTwoWorkers() async throws -> [(slug: String, id: Int64, floor: Int64)] {
        var byFloor: [Int64: (slug: String, id: Int64, floor: Int64)] = [:]
        for _ in 0..<64 where byFloor.count < 2 {
            let slug = try await TestEnvironment.makeTenant()
            let id = try await NotesFixture.tenantID(slug)
            let floor = try await eventFloor(tenantID: id)
            if byFloor[floor] == nil { byFloor[floor] = (slug, id, floor) }
        }
        try #require(byFloor.count == 2, "every new tenant landed on one worker")
        return byFloor.values.sorted { $0.floor < $1.floor }
    }

    @Test(.enabled(if: onCitus)) func tenantsOnTwoWorkersEachGetTheirOwnEventsInOrder() async throws {
        let tenants = try await Self.tenantsOnTwoWorkers()
        try await withLiveApp { client, port in
            var accounts: [Account] = []
            var streams: [SSEClient] = []
            defer { streams.forEach { $0.close() } }
            for tenant in tenants {
                let account = try await client.signup("worker", tenant: tenant.slug)
                accounts.append(account)
                streams.append(try await account.stream(port: port))
            }
            // Both tenants write at once, through the API and from several connections.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, account) in accounts.enumerated() {
                    group.addTask {
                        for step in 0..<10 { _ = try await client.createNote(account, "api \(index) \(step)", lat: 0, lng: 0) }
                    }
                    group.addTask {
                        try await insertNotes(tenant: tenants[index].slug, userID: account.userID, count: 200, writers: 3, body: "bulk \(index)")
                    }
                }
                try await group.waitForAll()
            }
            for (index, stream) in streams.enumerated() {
                let events = try await stream.events(count: 210, timeout: .seconds(60))
                let ids = events.compactMap { $0.id.flatMap { Int64($0) } }
                let bodies = events.compactMap(\.noteBody)
                #expect(ids.count == 210 && Set(ids).count == 210)
                #expect(ids == ids.sorted())
                // The tenant's worker's ids, and only the tenant's notes.
                #expect(ids.allSatisfy { $0 >= tenants[index].floor && $0 < tenants[index].floor + (1 << 48) })
                #expect(bodies.filter { $0.hasPrefix("api \(index) ") } == (0..<10).map { "api \(index) \($0)" })
                #expect(Set(bodies.filter { $0.hasPrefix("bulk \(index) ") }).count == 200)
                #expect(bodies.allSatisfy { $0.hasPrefix("api \(index) ") || $0.hasPrefix("bulk \(index) ") })
            }
        }
    }
}

extension EventsTests {
    /// A rebalance: the tenant's shard moves to the other worker, whose range its ids now
    /// come from. Its stream is reset into the new range and goes on there; a resume from
    /// the old range is reset too. The tenant is first isolated in a shard of its own, so
    /// that no other test's tenant moves with it.
    @Test(.enabled(if: onCitus)) func aStreamWhoseTenantMovesToAnotherWorkerIsResetAndGoesOn() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await withLiveApp { client, port in
            let account = try await client.signup("mover", tenant: tenant)
            let stream = try await account.stream(port: port)
            defer { stream.close() }
            _ = try await client.createNote(account, "before the move", lat: 0, lng: 0)
            let before = try #require(try await stream.events(count: 1).first?.id.flatMap { Int64($0) })
            let oldFloor = try await Self.eventFloor(tenantID: tenantID)
            try await TestEnvironment.withOwnerPool { pool in
                let shard = try await pool.query("""
                    SELECT isolate_tenant_to_new_shard('events', \(tenantID), 'CASCADE', shard_transfer_mode => 'block_writes')
                    """)[0].decode(Int64.self, column: 0)
                try await pool.query("""
                    SELECT citus_move_shard_placement(\(shard), n.nodename, n.nodeport, o.nodename, o.nodeport,
                                                      shard_transfer_mode => 'block_writes')
                    FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid), pg_dist_node o
                    WHERE p.shardid = \(shard) AND o.groupid <> n.groupid AND o.noderole = 'primary' AND o.shouldhaveshards
                    LIMIT 1
                    """)
            }
            let newFloor = try await Self.eventFloor(tenantID: tenantID)
            #expect(newFloor != oldFloor)
            let reset = try #require(try await stream.events(count: 2).dropFirst().first)
            #expect(reset.event == "reset")
            #expect(try reset.decode(API.ResetEvent.self).reason == "unknown_position")
            #expect(reset.id.flatMap { Int64($0) } == newFloor - 1)
            _ = try await client.createNote(account, "after the move", lat: 0, lng: 0)
            let after = try #require(try await stream.events(count: 3).dropFirst(2).first)
            #expect(after.noteBody == "after the move")
            #expect(after.id.flatMap { Int64($0) }.map { $0 >= newFloor && $0 < newFloor + (1 << 48) } == true)
            // A client resuming from before the move cannot go on there.
            let resumed = try await account.stream(port: port, lastEventID: String(before))
            defer { resumed.close() }
            let again = try #require(try await resumed.events(count: 1).first)
            #expect(again.event == "reset")
            #expect(try again.decode(API.ResetEvent.self).reason == "unknown_position")
        }
    }
}
