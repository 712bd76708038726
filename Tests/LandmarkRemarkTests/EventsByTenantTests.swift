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
