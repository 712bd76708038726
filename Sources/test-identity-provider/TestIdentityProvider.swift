import ArgumentParser
import Dispatch
import Foundation
import IdentityProviderFake

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs ``FakeIdentityProvider`` as a process, for the README walkthrough and for trying the
/// service by hand: `test-identity-provider --port 9400 &`, then
/// `curl "http://127.0.0.1:9400/mint?sub=alice&aud=demo-app"`.
@main
struct TestIdentityProvider: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-identity-provider",
        abstract: "A fake OpenID Connect provider for tests: discovery, a JWKS, Apple's token and revoke endpoints, and GET /mint.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 9400

    @Option(help: "The issuer (iss) of minted tokens; the base URL when omitted.")
    var issuer: String?

    func run() async throws {
        // Taken over before the server starts, so a signal that comes early is not lost.
        let stopSignals = StopSignals([SIGINT, SIGTERM])

        let provider = try await FakeIdentityProvider.start(host: host, port: port, issuer: issuer)
        print("test-identity-provider: listening on \(provider.baseURL) (issuer \(provider.issuer))")
        // Whoever started us in the background waits for this line, and stdout to a pipe is
        // block-buffered. (`fflush(nil)` flushes every stream; naming `stdout` trips strict
        // concurrency checking, as it is a C global.)
        fflush(nil)

        await stopSignals.wait()
        await provider.stop()
    }
}

/// Turns SIGINT and SIGTERM into something to await, so the provider is stopped and the process
/// exits 0 instead of being killed mid-request.
final class StopSignals {
    private let sources: [any DispatchSourceSignal]
    private let received: AsyncStream<Void>

    init(_ signals: [Int32]) {
        let (received, continuation) = AsyncStream<Void>.makeStream()
        self.received = received
        self.sources = signals.map { signalNumber in
            // The default action (terminate) would pre-empt the dispatch source.
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
    }

    func wait() async {
        for await _ in received { return }
    }
}
