import ArgumentParser
import Foundation
import TestAPNsServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs ``FakeAPNs`` as a process, for the benchmark's delivery rate (bench/push-delivery.sh):
/// HTTP/2 over TLS on a free loopback port, trusting one team's key for one topic, answering
/// every well-formed push `200`. It prints its URL and the certificate to trust, then serves
/// until it is killed.
@main
struct TestAPNs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-apns", abstract: "A fake APNs provider API (HTTP/2, TLS) on loopback, for benchmarks.")

    @Option(help: "The team id whose provider tokens it accepts.")
    var team: String

    @Option(help: "The key id of that team's key.")
    var keyID: String

    @Option(help: "The key's public half (PEM file).")
    var publicKey: String

    @Option(help: "The topic (app bundle id) pushes may name.")
    var topic: String

    func run() async throws {
        let fake = try await FakeAPNs.start()
        try fake.trust(teamID: team, keyID: keyID, publicKeyPEM: try String(contentsOfFile: publicKey, encoding: .utf8), topics: [topic])
        print("test-apns: listening on \(fake.url) ca \(fake.caFile)")
        // Whoever started us in the background waits for this line; stdout to a pipe is
        // block-buffered.
        fflush(nil)
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
