import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

/// A change the service reports as it happens.
public enum LiveEvent: Sendable, Hashable {
    case noteCreated(Note)
    case noteUpdated(Note)
    case noteDeleted(id: String)
    case placeCreated(Place)
    case placeUpdated(Place)
    case placeDeleted(id: String)
    /// The service cannot replay what was missed (too much, or too old): fetch what you
    /// show afresh; the stream goes on from now.
    case reset(reason: String)
}

/// Where an event stream keeps the id of the last event it delivered, so that a stream
/// started later (after a relaunch) resumes there.
public protocol EventPositionStore: Sendable {
    func load() async -> String?
    func save(_ id: String) async
}

/// Keeps the position in `UserDefaults` (per key), so a stream started after a relaunch
/// resumes where the last one stopped.
public struct UserDefaultsEventPositionStore: EventPositionStore, @unchecked Sendable {
    // UserDefaults is documented thread-safe; it is not marked Sendable.
    private let defaults: UserDefaults
    public let key: String

    public init(key: String = "dev.landmark-remark.events.last-id", defaults: UserDefaults = .standard) {
        self.key = key
        self.defaults = defaults
    }

    public func load() async -> String? { defaults.string(forKey: key) }
    public func save(_ id: String) async { defaults.set(id, forKey: key) }
}

/// Keeps the position for the life of the process only.
public actor InMemoryEventPositionStore: EventPositionStore {
    private var id: String?

    public init(_ id: String? = nil) {
        self.id = id
    }

    public func load() -> String? { id }
    public func save(_ id: String) { self.id = id }
}

extension LandmarkRemark {
    /// Live changes, for as long as you iterate. The stream reconnects by itself (jittered
    /// exponential backoff, 0.5 s doubling to 30 s) and resumes with `Last-Event-ID` from the
    /// last event it delivered, so nothing is missed and nothing repeats across reconnects.
    /// It ends with an error only when it cannot go on: signed out, or the service refused it
    /// (`APIProblem`). On iOS it disconnects in the background and resumes in the foreground.
    ///
    /// - Parameters:
    ///   - bbox: Only changes inside this viewport.
    ///   - position: Where the last delivered event's id is kept (and where the stream starts).
    public func events(bbox: BoundingBox? = nil, position: any EventPositionStore = InMemoryEventPositionStore()) -> AsyncThrowingStream<LiveEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<LiveEvent, any Error>.makeStream()
        let task = Task {
            let lifecycle = AppLifecycle()
            let progress = StreamProgress(lastID: await position.load())
            while !Task.isCancelled {
                await lifecycle.waitUntilActive()
                do {
                    let lastID = await progress.lastID
                    let body = try await Self.perform {
                        try await streaming.streamEvents(
                            query: .init(bbox: bbox?.parameter), headers: .init(Last_hyphen_Event_hyphen_ID: lastID)
                        ).ok.body.text_event_hyphen_stream
                    }
                    try await lifecycle.whileActive {
                        for try await event in ServerSentEvents(body: body) {
                            // An event this client cannot read (a newer service's) is skipped, not
                            // fetched again forever; a keep-alive may carry the position alone.
                            if let decoded = try? Self.liveEvent(event) { continuation.yield(decoded) }
                            if let id = event.id {
                                await progress.delivered(id)
                                await position.save(id)
                            }
                        }
                    }
                    // The service ended the stream (shutting down, the session's token expired):
                    // come back at once, refreshed as needed.
                    continue
                } catch is CancellationError {
                    if Task.isCancelled { break }
                } catch let error as LandmarkRemarkError {
                    switch error {
                    case .network, .unexpectedResponse: break
                    case .api(let problem) where problem.status == 429 || problem.status >= 500: break
                    default:
                        continuation.finish(throwing: error)
                        return
                    }
                } catch {
                    // A connection cut mid-stream: reconnect below.
                }
                let failures = await progress.failed()
                let delay = min(30.0, 0.5 * pow(2, Double(min(failures, 7) - 1))) * Double.random(in: 0.5...1.0)
                try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    static let eventDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return try ISO8601DateTranscoder.iso8601WithFractionalSeconds.decode(text)
        }
        return decoder
    }()

    static func liveEvent(_ event: ServerSentEvents.Event) throws -> LiveEvent? {
        guard event.hasData else { return nil }
        let data = Data(event.data.utf8)
        struct Deleted: Decodable { let id: String }
        struct Reset: Decodable { let reason: String }
        switch event.name {
        case "note.created": return .noteCreated(Note(try eventDecoder.decode(Components.Schemas.Note.self, from: data)))
        case "note.updated": return .noteUpdated(Note(try eventDecoder.decode(Components.Schemas.Note.self, from: data)))
        case "note.deleted": return .noteDeleted(id: try eventDecoder.decode(Deleted.self, from: data).id)
        case "place.created": return .placeCreated(Place(try eventDecoder.decode(Components.Schemas.Place.self, from: data)))
        case "place.updated": return .placeUpdated(Place(try eventDecoder.decode(Components.Schemas.Place.self, from: data)))
        case "place.deleted": return .placeDeleted(id: try eventDecoder.decode(Deleted.self, from: data).id)
        case "reset": return .reset(reason: try eventDecoder.decode(Reset.self, from: data).reason)
        default: return nil  // a kind this client does not know yet
        }
    }
}

/// Where a stream is: the last event delivered, and failures since the last delivery.
private actor StreamProgress {
    private(set) var lastID: String?
    private var failures = 0

    init(lastID: String?) {
        self.lastID = lastID
    }

    func delivered(_ id: String) {
        lastID = id
        failures = 0
    }

    /// Counts a failed connection; returns how many in a row.
    func failed() -> Int {
        failures += 1
        return failures
    }
}

/// `text/event-stream` parsed from a response body: events as they complete (a blank line),
/// keep-alive comments skipped.
struct ServerSentEvents: AsyncSequence {
    struct Event: Sendable {
        var id: String?
        var name: String?
        var data: String
        var hasData = false
    }

    let body: HTTPBody

    struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: HTTPBody.AsyncIterator
        var buffer: [UInt8] = []
        var pending = Event(id: nil, name: nil, data: "")
        var hasData = false

        mutating func next() async throws -> Event? {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    if line.isEmpty {
                        defer { pending = Event(id: nil, name: nil, data: ""); hasData = false }
                        // An event, or a position alone (an `id` with no data).
                        if hasData || pending.id != nil {
                            pending.hasData = hasData
                            return pending
                        }
                        continue
                    }
                    field(String(decoding: line, as: UTF8.self))
                    continue
                }
                guard let chunk = try await bytes.next() else { return nil }
                buffer.append(contentsOf: chunk)
            }
        }

        private mutating func field(_ line: String) {
            if line.hasPrefix(":") { return }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            var value = parts.count > 1 ? String(parts[1]) : ""
            if value.hasPrefix(" ") { value.removeFirst() }
            switch name {
            case "id": pending.id = value
            case "event": pending.name = value
            case "data":
                pending.data += hasData ? "\n" + value : value
                hasData = true
            default: break
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: body.makeAsyncIterator()) }
}
