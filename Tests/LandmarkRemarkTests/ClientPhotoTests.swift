import Foundation
import LandmarkRemarkClient
import Synchronization
import Testing

@testable import LandmarkRemark

/// The Swift client's photos against a live service, through a proxy that loses answers.
@Suite struct ClientPhotoTests {
    /// The first answer to the upload is lost on the way back: the client retries with the
    /// same key, and the note has the photo once. Progress runs from 0 to 1.
    @Test func aLostAnswerToAnUploadIsRetriedAndAddsThePhotoOnce() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let proxy = try TCPProxy(upstreamPort: port)
            defer { proxy.close() }
            let remark = ClientTest.client(port: proxy.port, tenant: tenant)
            try await remark.signUp(username: "pia", password: "correct horse battery")
            let note = try await remark.createNote("Harbour at dusk", at: Coordinate(latitude: -33.857, longitude: 151.215))
            let fractions = Mutex<[Double]>([])
            proxy.faults.withLock { $0.dropAnswerTo = "POST /v1/notes/\(note.note.id)/photos " }
            let photo = try await remark.addPhoto(
                Data(try CameraPhotos.bytes("camera.jpg")), toNote: note.note.id, progress: { fraction in fractions.withLock { $0.append(fraction) } })
            #expect(proxy.faults.withLock { $0.answersDropped } == 1)
            #expect(photo.width == 900 && photo.height == 1200 && photo.thumb.width == 192)
            let seen = fractions.withLock { $0 }
            #expect(seen.first == 0 && seen.last == 1 && seen.count > 3, "\(seen)")
            let stored = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM photos WHERE note_id = \(Int64(note.note.id)!)", as: Int64.self)
            #expect(stored == 1)
            let read = try await remark.note(id: note.note.id).note
            #expect(read.photos == [photo])
            let thumb = try await remark.photoData(photo.thumb)
            #expect(thumb.starts(with: [0xFF, 0xD8, 0xFF]) && thumb.count > 1000)
            try await remark.deletePhoto(id: photo.id, fromNote: note.note.id)
            #expect(try await remark.note(id: note.note.id).note.photos.isEmpty)
            await #expect(throws: LandmarkRemarkError.self) { try await remark.photoData(photo.thumb) }
        }
    }

    @Test func aFileThatIsNotAPhotoSaysSo() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { _, port in
            let remark = ClientTest.client(port: port, tenant: tenant)
            try await remark.signUp(username: "quin", password: "correct horse battery")
            let note = try await remark.createNote("Not a photo", at: Coordinate(latitude: 1, longitude: 1))
            do {
                try await remark.addPhoto(Data("<svg/>".utf8), toNote: note.note.id)
                Issue.record("an SVG was accepted")
            } catch LandmarkRemarkError.api(let problem) {
                #expect(problem.code == .unsupportedPhotoFormat)
            }
        }
    }
}
