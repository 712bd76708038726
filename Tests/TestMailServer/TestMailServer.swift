import Foundation
import TestPolling

/// A real SMTP server on loopback for one test or suite: `scripts/test-smtp-server.py`
/// (aiosmtpd) with TLS (STARTTLS or implicit) and a required login, started as a process.
/// What it accepted lands in its mailbox directory, read with `messages()`; failures are asked
/// for by recipient (`+perm`, `+temp`, `+dataperm`, `+drop`, `+lostack` in the local part) or for
/// everyone with `setMode`. `stop()` and `start()` take it down and up again on the same port.
public final class TestMailServer: @unchecked Sendable {
    public enum TLS: String, Sendable { case startTLS = "starttls", implicit }

    public let tls: TLS
    public let mailbox: URL
    public let username = "sender"
    public let password = "secret"
    public private(set) var port = 0
    private var process: Process?
    private let control: URL

    /// The test certificate's PEM, which the sending side trusts as its CA.
    public static var caFile: String { ProcessInfo.processInfo.environment["LR_TEST_SMTP_CERT"] ?? "" }

    public init(tls: TLS = .startTLS) throws {
        self.tls = tls
        mailbox = FileManager.default.temporaryDirectory.appendingPathComponent("lr-mail-\(UUID().uuidString)")
        control = mailbox.appendingPathComponent("control")
        try FileManager.default.createDirectory(at: mailbox, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: mailbox)
    }

    /// `smtp://127.0.0.1:port` (STARTTLS) or `smtps://…` (implicit TLS).
    public var url: String { "\(tls == .startTLS ? "smtp" : "smtps")://127.0.0.1:\(port)" }

    /// Starts the server (again, on the same port and mailbox after `stop()`), returning once
    /// it listens.
    public func start() throws {
        guard process == nil else { return }
        let environment = ProcessInfo.processInfo.environment
        guard let python = environment["LR_TEST_SMTP_PYTHON"], let cert = environment["LR_TEST_SMTP_CERT"],
            let key = environment["LR_TEST_SMTP_KEY"]
        else { throw Missing() }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/test-smtp-server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            script.path, "--port", "\(port)", "--tls", tls.rawValue, "--cert", cert, "--key", key,
            "--maildir", mailbox.path, "--control", control.path, "--user", username, "--password", password,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The first line is "READY <port>", once the server listens.
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 0x0A {
            line.append(first)
        }
        guard let ready = String(data: line, encoding: .utf8), ready.hasPrefix("READY "), let port = Int(ready.dropFirst(6)) else {
            process.terminate()
            throw NotReady(output: String(decoding: line, as: UTF8.self))
        }
        self.port = port
        self.process = process
    }

    /// Stops the server: connections are refused until `start()`, as for a relay that is down.
    public func stop() {
        guard let process else { return }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
    }

    /// For everyone: `accept`, `tempfail` (421 at MAIL, then closes) or `permfail` (554 to the message).
    public func setMode(_ mode: String) throws {
        try Data(mode.utf8).write(to: control)
    }

    /// What the server accepted, in the order it accepted it.
    public func messages() throws -> [ReceivedMail] {
        let directory = mailbox.appendingPathComponent("new")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return try names.filter { $0.hasSuffix(".eml") }.sorted { Self.order($0) < Self.order($1) }.map { name in
            let json = directory.appendingPathComponent(String(name.dropLast(4)) + ".json")
            var mail = try JSONDecoder().decode(ReceivedMail.self, from: Data(contentsOf: json))
            mail.raw = try Data(contentsOf: directory.appendingPathComponent(name))
            return mail
        }
    }

    /// The messages to `address`, waiting until there are at least `count`.
    public func waitForMessages(to address: String, count: Int = 1) async throws -> [ReceivedMail] {
        var found: [ReceivedMail] = []
        let arrived = try await eventually {
            found = try self.messages().filter { $0.recipients.contains(address) }
            return found.count >= count
        }
        guard arrived else { throw NoMail(address: address, count: count, found: found.count) }
        return found
    }

    /// `<time_ns>-<n>.eml`: sorted by the time, then the counter.
    private static func order(_ name: String) -> (Int, Int) {
        let parts = name.dropLast(4).split(separator: "-")
        return (Int(parts.first ?? "") ?? 0, Int(parts.last ?? "") ?? 0)
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String { "LR_TEST_SMTP_PYTHON, _CERT or _KEY is not set: run the tests with `make test`" }
    }

    struct NotReady: Error, CustomStringConvertible {
        let output: String
        var description: String { "the test SMTP server did not start: \(output.debugDescription)" }
    }

    struct NoMail: Error, CustomStringConvertible {
        let address: String, count: Int, found: Int
        var description: String { "expected \(count) message(s) to \(address), the server has \(found)" }
    }
}

/// One accepted message, as the server stored it (its envelope, and its parts decoded).
public struct ReceivedMail: Decodable, Sendable {
    public let mailFrom: String
    public let recipients: [String]
    public let login: String?
    public let tls: Bool
    public let subject: String
    public let from: String
    public let to: String
    public let messageID: String
    public let date: String
    public let contentType: String
    public let text: String
    public let html: String
    /// The bytes as received.
    public var raw = Data()

    enum CodingKeys: String, CodingKey {
        case mailFrom = "mail_from", recipients = "rcpt_tos", login, tls, subject, from, to
        case messageID = "message_id", date, contentType = "content_type", text, html
    }
}
