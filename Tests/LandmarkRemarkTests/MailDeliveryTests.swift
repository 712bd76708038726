import Foundation
import Postgres
import TestMailServer
import TestPolling
import Testing

@testable import LandmarkRemark

/// The outbox's senders against a real SMTP server: a sender that dies after the relay took a
/// message, a relay down for a minute, refusals for good. Each test drives senders of its own
/// on a clock of its own (no other suite's sender takes mail made on it).
@Suite struct MailDeliveryTests {
    @Test func aSenderThatDiesAfterTheRelayAcceptedLeavesAtMostOneMoreCopyOfTheSameMessage() async throws {
        let clock = TestClock()
        let rig = try await MailTestRig(clock: clock)
        try await withApp(rig.configure) { client in
            let ana = try await client.signup("anita", email: "anita@example.test", tenant: rig.tenant)
            try await TestEnvironment.withAppPool { pool in
                // Sender A dies between the relay's 250 and recording it.
                let a = rig.sender(pool: pool) { _ in throw Died() }
                await #expect(throws: Died.self) { try await a.drain(tenantID: rig.tenantID) }
                #expect(try rig.server.messages().count == 1)
                #expect(try await rig.outbox().map(\.state) == ["pending"])
                // B finds the queue held by A until A's lease ends, then sends it again.
                let b = rig.sender(pool: pool)
                try await b.drain(tenantID: rig.tenantID)
                #expect(try rig.server.messages().count == 1)
                clock.advance(MailSettings().lease.timeInterval + 1)
                try await b.drain(tenantID: rig.tenantID)
                try await b.drain(tenantID: rig.tenantID)
            }
            let copies = try rig.server.messages()
            #expect(copies.count == 2, "at least once, and no more than once again")
            #expect(Set(copies.map(\.messageID)).count == 1 && Set(copies.map(\.text)).count == 1)
            let rows = try await rig.outbox()
            #expect(rows.map(\.state) == ["sent"] && rows.map(\.attempts) == [2])
            let code = try MailTestRig.code(in: copies[1])
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": code], token: ana.accessToken).status == .ok)
        }
    }

    /// A replica stopping (its sender cancelled) lets the queue go: the next sender does not wait
    /// out the lease. Before, a test's service stopping mid-send stalled another suite's mail for
    /// the two-minute lease, longer than that suite waited.
    @Test func aSenderStoppedWhileSendingLetsTheQueueGoAtOnce() async throws {
        let clock = TestClock()
        let rig = try await MailTestRig(clock: clock)
        try await withApp(rig.configure) { client in
            _ = try await client.signup("stella", email: "stella@example.test", tenant: rig.tenant)
            try await TestEnvironment.withAppPool { pool in
                // Sender A is stopped between the relay's 250 and recording it: the widest window.
                let (accepted, signal) = AsyncStream.makeStream(of: Void.self)
                let a = rig.sender(pool: pool) { _ in
                    signal.yield()
                    try await Task.sleep(for: .seconds(86_400))  // until the cancellation below
                }
                let stopping = Task { try await a.drain(tenantID: rig.tenantID) }
                for await _ in accepted { break }
                stopping.cancel()
                await #expect(throws: CancellationError.self) { try await stopping.value }
                #expect(try rig.server.messages().count == 1)
                // B takes the queue on the same clock, without waiting out A's lease.
                try await rig.sender(pool: pool).drain(tenantID: rig.tenantID)
            }
            let copies = try rig.server.messages()
            #expect(copies.count == 2 && Set(copies.map(\.messageID)).count == 1, "sent once again, as after a sender that died")
            #expect(try await rig.outbox().map(\.state) == ["sent"])
        }
    }

    @Test func aRelayDownForAMinuteGetsEveryMessageAfterInOrder() async throws {
        let clock = TestClock()
        let rig = try await MailTestRig(clock: clock)
        try await withApp(rig.configure) { client in
            rig.server.stop()
            let names = ["ana1", "ana2", "ana3", "ana4"]
            for name in names { _ = try await client.signup(name, email: "\(name)@example.test", tenant: rig.tenant) }
            try await TestEnvironment.withAppPool { pool in
                let sender = rig.sender(pool: pool)
                // Down: the first message fails for the relay, and the queue rests, in order.
                try await sender.drain(tenantID: rig.tenantID)
                #expect(try await rig.outbox().map(\.state) == ["pending", "pending", "pending", "pending"])
                // Resting: no attempt, however often a sender looks.
                let attempts = try await rig.outbox().map(\.attempts)
                try await sender.drain(tenantID: rig.tenantID)
                #expect(try await rig.outbox().map(\.attempts) == attempts)
                // A minute of tries, the rest doubling from 5 s.
                for _ in 0..<6 {
                    clock.advance(11)
                    try await sender.drain(tenantID: rig.tenantID)
                }
                #expect(try rig.server.messages().isEmpty)
                try rig.server.start()
                clock.advance(MailSettings().relayBackoffCap.timeInterval + 1)
                try await sender.drain(tenantID: rig.tenantID)
            }
            let arrived = try rig.server.messages().flatMap(\.recipients)
            #expect(arrived == names.map { "\($0)@example.test" })
            #expect(try await rig.outbox().map(\.state) == ["sent", "sent", "sent", "sent"])
        }
    }

    @Test func anAddressRefusedForGoodIsNotTriedAgainAndATemporaryRefusalIsRetried() async throws {
        let clock = TestClock()
        let rig = try await MailTestRig(clock: clock)
        try await withApp(rig.configure) { client in
            let gone = try await client.signup("gone", email: "gone+perm@example.test", tenant: rig.tenant)
            _ = try await client.signup("busy", email: "busy+temp@example.test", tenant: rig.tenant)
            _ = try await client.signup("fine", email: "fine@example.test", tenant: rig.tenant)
            try await rig.deliver()
            // The refusal of one message does not hold up the next.
            #expect(try await rig.outbox().map(\.state) == ["failed", "pending", "sent"])
            // Mail to the refused address is kept, unsent.
            #expect(try await client.call(.post, "/v1/me/email/verification", token: gone.accessToken).status == .accepted)
            try await rig.deliver()
            #expect(try await rig.outbox().map(\.state) == ["failed", "pending", "sent", "suppressed"])
            // The 451 is tried again after its delay, not before.
            try await rig.deliver()
            #expect(try await rig.outbox()[1].attempts == 1)
            clock.advance(40)
            try await rig.deliver()
            #expect(try await rig.outbox()[1].attempts == 2)
            #expect(try rig.server.messages().map(\.recipients) == [["fine@example.test"]])
        }
    }
}
