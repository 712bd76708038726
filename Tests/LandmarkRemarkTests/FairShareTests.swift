import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LandmarkRemark
import Synchronization
import Testing

/// One user, tenant or client address flooding the service holds no more than its share
/// of the database pool or of password hashing; everybody else is served as before.
/// Serialized: each measures latency, which the other's flood would disturb.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FairShareTests {
    /// Tells flooding workers when to stop.
    final class Switch: Sendable {
        private let on = Atomic(true)
        var isOn: Bool { on.load(ordering: .acquiring) }
        func turnOff() { on.store(false, ordering: .releasing) }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// One user sends the heaviest requests still allowed, 30 at a time on 30 connections,
    /// with a pool of 6: another tenant's reads stay fast (p99 under 50 ms) and never `503`.
    /// Before fair shares the flood held every connection and the bystander queued behind it.
    @Test func oneUserFloodingLeavesAnotherTenantServed() async throws {
        let world = try await LargeTenant.world.value
        let otherTenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({
            $0.poolSize = 6
            $0.statementTimeout = .milliseconds(300)
            $0.shareQueueTimeout = .seconds(2)
        }) { client, port in
            let bystander = try await client.signup("bystander", tenant: otherTenant)
            let noteID = try await client.createNote(bystander, "mine", lat: 1, lng: 1).id
            let heavy = [
                "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=4", "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=4&q=not",
                "/v1/notes?q=not&in=body&bbox=-180,-85,180,85",
            ]
            let flooding = Switch()
            let headers: HTTPFields = [.authorization: "Bearer \(world.author.accessToken)"]
            try await withThrowingTaskGroup(of: [UInt].self) { group in
                for worker in 0..<30 {
                    group.addTask {
                        try await TestClient.withClient(host: "localhost", port: port) { flooder in
                            var statuses: [UInt] = []
                            while flooding.isOn {
                                statuses.append(UInt(try await flooder.get(heavy[worker % heavy.count], headers: headers).status.code))
                            }
                            return statuses
                        }
                    }
                }
                // The flood is on once the flooder holds its connection.
                #expect(try await LargeTenant.within(.seconds(10)) { try await client.connectionsInUse() ?? 0 >= 1 })
                var latencies: [Double] = []
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<100 {
                    let started = ContinuousClock.now
                    let response = try await client.call(.get, "/v1/notes/\(noteID)", token: bystander.accessToken)
                    latencies.append(Self.milliseconds(ContinuousClock.now - started))
                    statuses.append(response.status)
                }
                flooding.turnOff()
                let flood = try await group.reduce(into: [UInt]()) { $0 += $1 }
                #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses.filter { $0 != .ok })")
                let p99 = latencies.sorted()[98]
                // On Citus (make test-citus) three PostgreSQL instances share the same two cores
                // as the service and the flooders, and the flood's statements are dearer there
                // (docs/operations.md, "Running on Citus"): 72 ms was measured; twice the bound.
                let bound: Double = CitusRoutingTests.onCitus ? 100 : 50
                #expect(p99 < bound, "bystander p99 \(p99) ms; slowest \(latencies.max() ?? 0) ms")
                #expect(!flood.isEmpty && flood.allSatisfy { [200, 429, 503].contains($0) }, "\(Set(flood))")
                #expect(flood.contains(429), "past its share the flooder waits, then gets 429")
            }
        }
    }

    /// 20 signups at once from one address: another address's login waits for no one, and
    /// takes about as long as on an idle service. Before, it queued behind the signups' hashes.
    @Test func signupsFromOneAddressDoNotHoldUpAnotherAddressesLogin() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({
            $0.scrypt = .init(logN: 15, r: 8, p: 1)
            $0.hashConcurrency = 4
            $0.trustedProxies = TrustedProxies(list: "127.0.0.1, ::1")!
            $0.hashQueueTimeout = .seconds(60)
            $0.shareQueueTimeout = .seconds(60)
        }) { client, port in
            let bystanderAddress: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: "10.0.0.2"]
            let signup = try await client.call(
                .post, "/v1/auth/signup", json: ["username": "bystander", "password": "a sturdy passphrase"], tenant: tenant,
                headers: bystanderAddress)
            #expect(signup.status == .created)
            func login() async throws -> (HTTPResponse.Status, Double) {
                let started = ContinuousClock.now
                let response = try await client.call(
                    .post, "/v1/auth/login", json: ["username": "bystander", "password": "a sturdy passphrase"], tenant: tenant,
                    headers: bystanderAddress)
                return (response.status, Self.milliseconds(ContinuousClock.now - started))
            }
            var alone: [Double] = []
            for _ in 0..<3 { alone.append(try await login().1) }
            let baseline = alone.min() ?? 0

            try await withThrowingTaskGroup(of: UInt.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await TestClient.withClient(host: "localhost", port: port) { flooder in
                            let body = ByteBuffer(string: #"{"username":"flood\#(index)","password":"a sturdy passphrase"}"#)
                            let response = try await flooder.post(
                                "/v1/auth/signup",
                                headers: [.contentType: "application/json", HTTPField.Name("X-Tenant")!: tenant,
                                          HTTPField.Name("X-Forwarded-For")!: "10.0.0.1"],
                                body: body)
                            return UInt(response.status.code)
                        }
                    }
                }
                #expect(try await LargeTenant.within(.seconds(10)) { try await client.hashingInFlight() ?? 0 >= 1 })
                for _ in 0..<3 {
                    let (status, elapsed) = try await login()
                    #expect(status == .ok)
                    // Without the per-address share it took 18 times as long (2.6 s against 0.14 s);
                    // the margin is for other suites running at the same time.
                    #expect(elapsed < baseline * 6 + 100, "login took \(elapsed) ms; alone \(baseline) ms")
                }
                let flood = try await group.reduce(into: [UInt]()) { $0.append($1) }
                #expect(flood.allSatisfy { $0 == 201 || $0 == 429 }, "\(flood)")
            }
        }
    }
}
