import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LandmarkRemark
import Synchronization
import TestPolling
import Testing

/// A user uploading hostile files as fast as they can, on 8 connections: each costs that
/// upload a `422` (or a `429` past the user's one worker), never the service, another
/// tenant's reads, nor another tenant's upload. The decoders run in worker processes, so the
/// service's own memory does not follow them. Run with the latency suites (it floods both
/// cores); no bound in milliseconds, only who is served and what the service holds.
@Suite(.serialized, .timeLimit(.minutes(10))) struct PhotoFloodTests {
    static func residentMegabytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    @Test func aFloodOfHostileUploadsLeavesOthersServed() async throws {
        let flooderTenant = try await TestEnvironment.makeTenant()
        let otherTenant = try await TestEnvironment.makeTenant()
        let bombs = try ["bomb.png", "corrupt.heic", "truncated.jpg", "huge-exif.jpg", "polyglot.jpg", "page.html.jpg"]
            .map { ByteBuffer(bytes: try CameraPhotos.bytes($0)) }
        try await withLiveApp({
            $0.photos.workers = 2
            // Room for every sanitised copy: the flood keeps decoding, never stopped by the note's limit.
            $0.photos.perNote = 100
            $0.shares.queueTimeout = .seconds(2)
        }) { client, port in
            let flooder = try await client.signup("flooder", tenant: flooderTenant)
            let target = try await client.createNote(flooder, "Bombs away", lat: 1, lng: 1)
            let bystander = try await client.signup("bystander", tenant: otherTenant)
            let mine = try await client.createNote(bystander, "Quiet afternoon", lat: 2, lng: 2)
            // Warmed up once, so that the measure below is of the flood, not of first use.
            _ = try await client.upload(try CameraPhotos.bytes("plain.jpg"), to: mine.id, as: bystander)
            let before = Self.residentMegabytes()

            let flooding = FairShareTests.Switch()
            let answered = FairShareTests.Counter()
            let headers: HTTPFields = [.authorization: "Bearer \(flooder.accessToken)", .contentType: "image/jpeg"]
            try await withThrowingTaskGroup(of: [UInt].self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        try await TestClient.withClient(host: "localhost", port: port) { connection in
                            var statuses: [UInt] = []
                            var index = worker
                            while flooding.isOn {
                                let response = try await connection.post("/v1/notes/\(target.id)/photos", headers: headers, body: bombs[index % bombs.count])
                                statuses.append(UInt(response.status.code))
                                answered.add()
                                index += 1
                            }
                            return statuses
                        }
                    }
                }
                // The flood is on once the flooder's uploads are being answered.
                #expect(try await eventually(within: .seconds(60)) {
                    try await TestEnvironment.ownerScalar(
                        "SELECT count(*) FROM photos WHERE note_id = \(Int64(target.id)!)", as: Int64.self) >= 1
                })
                // Reads all through the flood, until it has had 40 answers.
                var reads: [HTTPResponse.Status] = []
                while reads.count < 30 || answered.value < 40 {
                    reads.append(try await client.call(.get, "/v1/notes/\(mine.id)", token: bystander.accessToken).status)
                }
                let upload = try await client.upload(try CameraPhotos.bytes("camera.jpg"), to: mine.id, as: bystander)
                let during = Self.residentMegabytes()
                flooding.turnOff()
                let flood = try await group.reduce(into: [UInt]()) { $0 += $1 }
                let counts = Dictionary(grouping: flood, by: { $0 }).mapValues(\.count).sorted { $0.key < $1.key }
                print("photo flood: \(flood.count) uploads \(counts), service RSS \(before) → \(during) MB")
                #expect(reads.allSatisfy { $0 == .ok }, "\(reads)")
                #expect(upload.status == .created, "another tenant's upload is served: \(upload.body)")
                // What the flood got: refusals, sanitised copies of the files that decode (a
                // truncated JPEG, a polyglot, a huge EXIF block), and 429 past its worker.
                #expect(!flood.isEmpty && Set(flood).isSubset(of: [201, 415, 422, 429]), "\(Set(flood))")
                #expect(flood.contains(422) && flood.contains(415))
                #expect(try await client.call(.get, "/healthz").status == .ok)
                // The decoders' memory is their processes': the service holds the uploads'
                // bytes (8 at most, 10 MB the largest) and the variants it stores, not pixels.
                #expect(during - before < 400, "the service's RSS grew from \(before) MB to \(during) MB")
            }
        }
    }

    /// Bodies that never finish: a user's uploads in flight are bounded before a body is read,
    /// so while two stalled bodies hold their share, the same user's third upload waits, then
    /// `429`, and another user's is served.
    @Test func stalledBodiesHoldOnlyTheirOwnersShare() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({
            $0.photos.uploadsPerUser = 2
            $0.photos.perNote = 100
            $0.shares.queueTimeout = .seconds(2)
        }) { client, port in
            let staller = try await client.signup("staller", tenant: tenant)
            let note = try await client.createNote(staller, "Never finished", lat: 1, lng: 1)
            let other = try await client.signup("finisher", tenant: tenant)
            let mine = try await client.createNote(other, "Finished", lat: 1, lng: 1)
            // Two uploads that declare a megabyte, send a JPEG's first bytes of it, then wait.
            var stalled: [Int32] = []
            defer { stalled.forEach { close($0) } }
            for _ in 0..<2 {
                let socket = try connectLoopback(port: port)
                stalled.append(socket)
                let head = Array("""
                    POST /v1/notes/\(note.id)/photos HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(staller.accessToken)\r\n\
                    Content-Type: image/jpeg\r\nContent-Length: 1000000\r\n\r\n
                    """.utf8) + [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: UInt8(ascii: "0"), count: 12)
                #expect(head.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) } == head.count)
            }
            // Both admitted, their bodies being read (the replica says so on /metrics) ...
            let held = try await TestPolling.eventually(within: .seconds(60)) {
                try await client.call(.get, "/metrics").body.contains("lr_photo_uploads_in_flight 2")
            }
            try #require(held, "the two stalled uploads are in flight")
            // ... so a third of the same user's waits its share and is refused: no third body in memory.
            let third = try await client.upload(try CameraPhotos.bytes("plain.jpg"), to: note.id, as: staller)
            #expect(third.status == .tooManyRequests && third.code == "rate_limited", "\(third.status) \(third.body)")
            let elsewhere = try await client.upload(try CameraPhotos.bytes("plain.jpg"), to: mine.id, as: other)
            #expect(elsewhere.status == .created, "another user's upload is served: \(elsewhere.body)")
            // Once they hang up, their shares are free again.
            stalled.forEach { close($0) }
            stalled = []
            let freed = try await TestPolling.eventually(within: .seconds(60)) {
                try await client.call(.get, "/metrics").body.contains("lr_photo_uploads_in_flight 0")
            }
            #expect(freed, "a hung-up upload gives its share back")
            let again = try await client.upload(try CameraPhotos.bytes("plain.jpg"), to: note.id, as: staller)
            #expect(again.status == .created, "\(again.status) \(again.body)")
        }
    }
}
