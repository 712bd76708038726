import APNs
import Foundation
import JWTKit
import Logging
import Synchronization
import TestAPNsServer
import Testing

/// The provider API client against the fake APNs (HTTP/2 over TLS on loopback): what it sends,
/// how it keeps its provider token, and what it makes of each answer.
@Suite(.timeLimit(.minutes(5))) struct APNsClientTests {
    /// A clock the test moves; the client and the fake each read their own.
    final class Clock: Sendable {
        private let date = Mutex(Date(timeIntervalSince1970: 1_900_000_000))
        var now: Date { date.withLock { $0 } }
        func advance(minutes: Double) { date.withLock { $0 += minutes * 60 } }
    }

    struct Team {
        let credentials: APNsCredentials
        let publicKeyPEM: String

        init(_ teamID: String) {
            let key = ES256PrivateKey()
            credentials = APNsCredentials(teamID: teamID, keyID: "KEY" + teamID.prefix(7), privateKeyPEM: key.pemRepresentation)
            publicKeyPEM = key.publicKey.pemRepresentation
        }
    }

    static let topic = "com.example.landmarks"
    static let logger = Logger(label: "apns-tests")

    static func delivered(_ outcome: APNsOutcome) -> Bool {
        if case .delivered = outcome { return true }
        return false
    }

    static func device(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    static func notification(_ device: String, collapseID: String? = "watch-1", payloadBytes: Int? = nil) -> APNsNotification {
        var payload = Array(#"{"aps":{"alert":{"title":"Near Home","body":"ana: a note"}},"note_id":"42"}"#.utf8)
        if let payloadBytes { payload = Array(#"{"aps":{"alert":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: payloadBytes) + Array(#""}}"#.utf8) }
        return APNsNotification(
            deviceToken: device, environment: .production, topic: topic, collapseID: collapseID,
            expiration: Date(timeIntervalSince1970: 1_900_086_400), priority: 10, payload: payload)
    }

    /// A fake trusting `teams`, and a client pointed at it, each on its own clock.
    static func rig(
        _ teams: [Team], clientClock: Clock = Clock(), apnsClock: Clock = Clock(), timeout: Duration = .seconds(30),
        _ body: (FakeAPNs, APNsClient) async throws -> Void
    ) async throws {
        let fake = try await FakeAPNs.start(now: { apnsClock.now })
        for team in teams {
            try fake.trust(teamID: team.credentials.teamID, keyID: team.credentials.keyID, publicKeyPEM: team.publicKeyPEM, topics: [topic])
        }
        var configuration = APNsClient.Configuration()
        configuration.productionURL = fake.url
        configuration.sandboxURL = fake.url
        configuration.caFile = fake.caFile
        configuration.timeout = timeout
        let client = APNsClient(configuration: configuration, now: { clientClock.now })
        do {
            try await body(fake, client)
        } catch {
            await client.shutdown()
            await fake.stop()
            throw error
        }
        await client.shutdown()
        await fake.stop()
    }

    @Test func aNotificationGoesOverHTTP2WithItsHeadersAndASignedProviderToken() async throws {
        let team = Team("TEAM000001")
        try await Self.rig([team]) { fake, client in
            let outcome = await client.send(Self.notification(Self.device(1)), credentials: team.credentials, logger: Self.logger)
            guard case .delivered(let id) = outcome else { Issue.record("\(outcome)"); return }
            #expect(id != nil)
            let request = try #require(fake.received.first)
            #expect(request.http2 && request.status == 200 && request.teamID == team.credentials.teamID)
            #expect(request.headers["apns-push-type"] == "alert" && request.headers["apns-topic"] == Self.topic)
            #expect(request.headers["apns-priority"] == "10" && request.headers["apns-expiration"] == "1900086400")
            #expect(request.headers["apns-collapse-id"] == "watch-1")
            #expect((request.json?["note_id"] as? String) == "42")
            // No collapse id, no header.
            _ = await client.send(Self.notification(Self.device(1), collapseID: nil), credentials: team.credentials, logger: Self.logger)
            #expect(fake.received.last?.headers["apns-collapse-id"] == nil)
        }
    }

    @Test func theProviderTokenIsReusedForFiftyMinutesThenRenewedAndEachTeamHasOneConnection() async throws {
        let (first, second) = (Team("TEAM000001"), Team("TEAM000002"))
        let clock = Clock()
        try await Self.rig([first, second], clientClock: clock, apnsClock: clock) { fake, client in
            let sends = [0.0, 10, 20, 19.5]  // 49.5 minutes in all
            var tokens: [String] = []
            for step in sends {
                clock.advance(minutes: step)
                #expect(await Self.delivered(client.send(Self.notification(Self.device(2)), credentials: first.credentials, logger: Self.logger)))
                tokens.append(try #require(fake.received.last?.providerToken))
            }
            #expect(Set(tokens).count == 1, "one token for 49.5 minutes")
            clock.advance(minutes: 1)
            let outcome = await client.send(Self.notification(Self.device(2)), credentials: first.credentials, logger: Self.logger)
            guard case .delivered = outcome else { Issue.record("\(outcome)"); return }
            let renewed = try #require(fake.received.last)
            #expect(renewed.providerToken != tokens[0] && renewed.status == 200, "a new token after 50 minutes, which APNs takes")
            // The other team: its own token, its own connection; the first team kept one.
            for _ in 0..<5 {
                _ = await client.send(Self.notification(Self.device(3)), credentials: second.credentials, logger: Self.logger)
            }
            let byTeam = Dictionary(grouping: fake.received, by: { $0.teamID ?? "" }).mapValues { Set($0.map(\.connection)) }
            #expect(byTeam[first.credentials.teamID]?.count == 1 && byTeam[second.credentials.teamID]?.count == 1)
            #expect(byTeam[first.credentials.teamID] != byTeam[second.credentials.teamID])
        }
    }

    @Test func anExpiredTokenIsRenewedOnceButAYoungOneIsNotAndAnUnknownKeyIsRefused() async throws {
        let team = Team("TEAM000003")
        let (clientClock, apnsClock) = (Clock(), Clock())
        try await Self.rig([team], clientClock: clientClock, apnsClock: apnsClock) { fake, client in
            #expect(await Self.delivered(client.send(Self.notification(Self.device(4)), credentials: team.credentials, logger: Self.logger)))
            let first = try #require(fake.received.last?.providerToken)
            // APNs's clock runs 61 minutes on, ours 30: it calls our token expired, and ours
            // is old enough to renew.
            apnsClock.advance(minutes: 61)
            clientClock.advance(minutes: 30)
            let renewed = await client.send(Self.notification(Self.device(4)), credentials: team.credentials, logger: Self.logger)
            guard case .delivered = renewed else { Issue.record("\(renewed)"); return }
            #expect(fake.received.suffix(2).map(\.status) == [403, 200])
            #expect(fake.received.last?.providerToken != first)
            // Called expired at 5 minutes old: the clocks disagree; renewing would earn a 429.
            apnsClock.advance(minutes: 65)
            clientClock.advance(minutes: 5)
            let young = await client.send(Self.notification(Self.device(4)), credentials: team.credentials, logger: Self.logger)
            guard case .retryLater(403, _, _) = young else { Issue.record("\(young)"); return }
            #expect(fake.received.last?.status == 403 && fake.received.filter { $0.status == 429 }.isEmpty)
        }
        // A key APNs does not know.
        let stranger = Team("TEAM000004")
        try await Self.rig([team]) { _, client in
            let refused = await client.send(Self.notification(Self.device(5)), credentials: stranger.credentials, logger: Self.logger)
            #expect(refused == .credentialsRefused(reason: "InvalidProviderToken"))
        }
    }

    @Test func eachAnswerMeansWhatTheSenderMustDo() async throws {
        let team = Team("TEAM000005")
        try await Self.rig([team], timeout: .seconds(5)) { fake, client in
            func send(_ device: String, _ notification: APNsNotification? = nil) async -> APNsOutcome {
                await client.send(notification ?? Self.notification(device), credentials: team.credentials, logger: Self.logger)
            }
            let gone = Self.device(10)
            fake.reply(to: gone, with: .status(410, reason: "Unregistered"))
            #expect(await send(gone) == .unregistered(reason: "Unregistered"))
            #expect(await send(String(repeating: "zz", count: 32)) == .unregistered(reason: "BadDeviceToken"))
            let busy = Self.device(11)
            fake.reply(to: busy, with: .status(429, reason: "TooManyRequests"), .status(500, reason: "InternalServerError"), .status(503, reason: "ServiceUnavailable"))
            #expect(await send(busy) == .retryLater(status: 429, reason: "TooManyRequests", retryAfter: nil))
            #expect(await send(busy) == .retryLater(status: 500, reason: "InternalServerError", retryAfter: nil))
            #expect(await send(busy) == .retryLater(status: 503, reason: "ServiceUnavailable", retryAfter: nil))
            guard case .delivered = await send(busy) else { Issue.record("the fourth is delivered"); return }
            // Too big is refused before it is sent; at the limit it goes.
            let sent = fake.received.count
            #expect(await send(busy, Self.notification(busy, payloadBytes: 4096)) == .rejected(status: 413, reason: "PayloadTooLarge"))
            #expect(fake.received.count == sent)
            guard case .delivered = await send(busy, Self.notification(busy, payloadBytes: 4096 - 23)) else { Issue.record("4096 bytes go"); return }
            var wrongTopic = Self.notification(busy)
            wrongTopic.topic = "com.example.other"
            #expect(await send(busy, wrongTopic) == .rejected(status: 400, reason: "TopicDisallowed"))
            // A server that takes the request and never answers: given up after the timeout.
            let hung = Self.device(12)
            fake.reply(to: hung, with: .hang)
            guard case .retryLater(nil, _, _) = await send(hung) else { Issue.record("a hung request is retried later"); return }
            // The connection is still good for the next.
            guard case .delivered = await send(busy) else { Issue.record("delivered after a hang"); return }
        }
    }
}
