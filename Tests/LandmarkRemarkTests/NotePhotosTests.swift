import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import LandmarkRemark

/// Photos on notes through the real router, the real sandboxed worker and PostgreSQL:
/// `POST /v1/notes/{id}/photos`, `GET /v1/photos/{photo_id}/{variant}`, `DELETE …/photos/{photo_id}`.
@Suite struct NotePhotosTests {
    @Test func anUploadComesBackInThreeSizesAndIsServedAsStored() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: slug)
            let note = try await client.createNote(alice, "The view", lat: -33.86, lng: 151.21)
            let upload = try await client.upload(try CameraPhotos.bytes("camera.jpg"), to: note.id, as: alice)
            #expect(upload.status == .created, "\(upload.body)")
            let photo = try upload.decode(API.Photo.self)
            // EXIF orientation 6 applied: 1200×900 shown upright is 900×1200.
            #expect(photo.width == 900 && photo.height == 1200)
            #expect(photo.variants.thumb.url == "/v1/photos/\(photo.id)/thumb")
            #expect(photo.variants.thumb.width == 192 && photo.variants.thumb.height == 256)
            #expect(photo.variants.display.width == 900 && photo.variants.display.height == 1200)
            let (status, headers, jpeg) = try await client.download(photo.variants.thumb.url, as: alice)
            #expect(status == .ok && headers[.contentType] == "image/jpeg")
            #expect(headers[.cacheControl] == "private, max-age=31536000, immutable")
            #expect(jpeg.starts(with: [0xFF, 0xD8, 0xFF]) && !String(decoding: jpeg, as: UTF8.self).contains("SECRET"))
            let tag = try #require(headers[.eTag])
            let (again, _, empty) = try await client.download(photo.variants.thumb.url, as: alice, ifNoneMatch: tag)
            #expect(again == .notModified && empty.isEmpty)
            let stored = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM photo_variants WHERE photo_id = \(Int64(photo.id)!)", as: Int64.self)
            #expect(stored == 3)
        }
    }

    /// The note's JSON carries its photos, in every read: by id, in lists, in events.
    @Test func aNoteSaysItsPhotosWhereverItIsRead() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let mia = try await client.signup("mia", tenant: slug)
            let noah = try await client.signup("noah", tenant: slug)
            let note = try await client.createNote(mia, "Two views", lat: -33.85, lng: 151.2)
            #expect(note.photos.isEmpty)
            let first = try await client.upload(try CameraPhotos.bytes("camera.jpg"), to: note.id, as: mia).decode(API.Photo.self)
            let second = try await client.upload(try CameraPhotos.bytes("camera.webp"), to: note.id, as: mia).decode(API.Photo.self)
            let read = try await client.call(.get, "/v1/notes/\(note.id)", token: noah.accessToken).decode(API.Note.self)
            #expect(read.photos == [first, second])
            #expect(read.updatedAt > note.updatedAt, "a photo added is a change to the note")
            let listed = try await client.page("/v1/notes?near=-33.85,151.2&limit=5", token: noah.accessToken).items
            #expect(listed.first { $0.id == note.id }?.photos == [first, second])
            let mine = try await client.page("/v1/users/mia/notes", token: mia.accessToken).items
            #expect(mine.first?.photos.map(\.id) == [first.id, second.id])
            #expect(try await client.call(.delete, "/v1/notes/\(note.id)/photos/\(first.id)", token: mia.accessToken).status == .noContent)
            let after = try await client.call(.get, "/v1/notes/\(note.id)", token: noah.accessToken).decode(API.Note.self)
            #expect(after.photos == [second])
            // Each change logged a note.updated event for the note.
            let events = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM events WHERE kind = 'note.updated' AND object_id = \(Int64(note.id)!)", as: Int64.self)
            #expect(events == 3)
        }
    }

    @Test func whatIsNotAPhotoIsRefusedAndNothingIsKept() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp({ $0.photos.maxBytes = 5_000_000 }) { client in
            let bob = try await client.signup("bob", tenant: slug)
            let note = try await client.createNote(bob, "Refusals", lat: 1, lng: 1)
            let svg = try await client.upload(try CameraPhotos.bytes("image.svg.jpg"), to: note.id, as: bob, contentType: "image/jpeg")
            #expect(svg.status == .unsupportedMediaType && svg.code == "unsupported_photo_format")
            let bomb = try await client.upload(try CameraPhotos.bytes("bomb.png"), to: note.id, as: bob)
            #expect(bomb.status == .unprocessableContent && bomb.code == "photo_too_many_pixels")
            let corrupt = try await client.upload(try CameraPhotos.bytes("corrupt.heic"), to: note.id, as: bob)
            #expect(corrupt.status == .unprocessableContent && corrupt.code == "photo_unreadable")
            let huge = try await client.upload(try CameraPhotos.bytes("huge-exif.jpg"), to: note.id, as: bob)
            #expect(huge.status == .contentTooLarge && huge.code == "photo_too_large")
            let empty = try await client.upload([], to: note.id, as: bob)
            #expect(empty.status == .unsupportedMediaType)
            let kept = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM photos WHERE note_id = \(Int64(note.id)!)", as: Int64.self)
            #expect(kept == 0)
        }
    }

    @Test func onlyTheAuthorAddsAndRemovesAndANoteHasFourAtMost() async throws {
        let slug = try await TestEnvironment.makeTenant()
        let other = try await TestEnvironment.makeTenant()
        try await withApp({ $0.photos.perNote = 2 }) { client in
            let carol = try await client.signup("carol", tenant: slug)
            let dave = try await client.signup("dave", tenant: slug)
            let eve = try await client.signup("eve", tenant: other)
            let note = try await client.createNote(carol, "Mine", lat: 2, lng: 2)
            let secret = try await client.createNote(carol, "Private", lat: 2, lng: 2, visibility: "private")
            let jpeg = try CameraPhotos.bytes("plain.jpg")
            #expect(try await client.upload(jpeg, to: note.id, as: dave).code == "forbidden")
            #expect(try await client.upload(jpeg, to: secret.id, as: dave).code == "not_found")
            #expect(try await client.upload(jpeg, to: note.id, as: eve).code == "not_found")
            let first = try await client.upload(jpeg, to: note.id, as: carol).decode(API.Photo.self)
            #expect(try await client.upload(jpeg, to: note.id, as: carol).status == .created)
            let third = try await client.upload(jpeg, to: note.id, as: carol)
            #expect(third.status == .unprocessableContent && third.code == "too_many_photos")
            #expect(try await client.call(.delete, "/v1/notes/\(note.id)/photos/\(first.id)", token: dave.accessToken).code == "forbidden")
            #expect(try await client.call(.delete, "/v1/notes/\(note.id)/photos/\(first.id)", token: carol.accessToken).status == .noContent)
            #expect(try await client.download(first.variants.full.url, as: carol).0 == .notFound)
            #expect(try await client.call(.delete, "/v1/notes/\(note.id)/photos/\(first.id)", token: carol.accessToken).code == "not_found")
            #expect(try await client.upload(jpeg, to: note.id, as: carol).status == .created)
        }
    }

    /// A photo is seen by exactly those who see its note: private, blocked, another tenant.
    @Test func aPhotoFollowsItsNotesVisibility() async throws {
        let slug = try await TestEnvironment.makeTenant()
        let other = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let frank = try await client.signup("frank", tenant: slug)
            let grace = try await client.signup("grace", tenant: slug)
            let heidi = try await client.signup("heidi", tenant: slug)
            let ivan = try await client.signup("ivan", tenant: other)
            let jpeg = try CameraPhotos.bytes("plain.jpg")
            let open = try await client.createNote(frank, "Public", lat: 3, lng: 3)
            let closed = try await client.createNote(frank, "Private", lat: 3, lng: 3, visibility: "private")
            let seen = try await client.upload(jpeg, to: open.id, as: frank).decode(API.Photo.self)
            let hidden = try await client.upload(jpeg, to: closed.id, as: frank).decode(API.Photo.self)
            #expect(try await client.download(seen.variants.thumb.url, as: grace).0 == .ok)
            #expect(try await client.download(hidden.variants.thumb.url, as: frank).0 == .ok)
            #expect(try await client.download(hidden.variants.thumb.url, as: grace).0 == .notFound)
            #expect(try await client.download(seen.variants.thumb.url, as: ivan).0 == .notFound)
            #expect(try await client.download("/v1/photos/\(seen.id)/original", as: grace).0 == .notFound)
            #expect(try await client.download("/v1/photos/x/thumb", as: grace).0 == .notFound)
            // A block either way hides the author's photos as it hides their notes.
            #expect(try await client.call(.put, "/v1/me/blocks/frank", token: heidi.accessToken).status == .noContent)
            #expect(try await client.download(seen.variants.thumb.url, as: heidi).0 == .notFound)
            #expect(try await client.call(.put, "/v1/me/blocks/grace", token: frank.accessToken).status == .noContent)
            #expect(try await client.download(seen.variants.thumb.url, as: grace).0 == .notFound)
            // Private later: gone for others at once.
            #expect(try await client.call(.patch, "/v1/notes/\(open.id)", json: ["visibility": "private"], token: frank.accessToken).status == .ok)
            let outsider = try await client.signup("judy", tenant: slug)
            #expect(try await client.download(seen.variants.thumb.url, as: outsider).0 == .notFound)
        }
    }

    @Test func deletingTheNoteOrTheAccountDeletesThePhotosForGood() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let kim = try await client.signup("kim", tenant: slug)
            let jpeg = try CameraPhotos.bytes("plain.jpg")
            let note = try await client.createNote(kim, "Gone soon", lat: 4, lng: 4)
            let photo = try await client.upload(jpeg, to: note.id, as: kim).decode(API.Photo.self)
            #expect(try await client.call(.delete, "/v1/notes/\(note.id)", token: kim.accessToken).status == .noContent)
            #expect(try await TestEnvironment.ownerScalar("SELECT count(*) FROM photo_variants WHERE photo_id = \(Int64(photo.id)!)", as: Int64.self) == 0)
            let kept = try await client.createNote(kim, "Kept until the account goes", lat: 4, lng: 4)
            _ = try await client.upload(jpeg, to: kept.id, as: kim).decode(API.Photo.self)
            let deleted = try await client.call(.delete, "/v1/me", json: ["password": kim.password], token: kim.accessToken)
            #expect(deleted.status == .noContent, "\(deleted.body)")
            let left = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM photos p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = \(slug)", as: Int64.self)
            #expect(left == 0)
        }
    }

    /// Quotas count the stored variants' bytes, per user and per tenant, kept by a trigger:
    /// a photo deleted with its note or its account counts out too. /metrics shows them.
    @Test func quotasStopUploadsAndDeletingFreesTheRoom() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp({
            $0.photos.bytesPerUser = 1_000_000
            $0.photos.bytesPerTenant = 1_500_000
        }) { client in
            let olga = try await client.signup("olga", tenant: slug)
            let pete = try await client.signup("pete", tenant: slug)
            let jpeg = try CameraPhotos.bytes("camera.jpg")
            // The tenant's count with no user, else the user's.
            func usage(_ user: String?) async throws -> Int64 {
                guard let user else {
                    return try await TestEnvironment.ownerScalar(
                        "SELECT coalesce(sum(u.bytes), 0)::bigint FROM tenant_photo_usage u JOIN tenants t ON t.id = u.tenant_id WHERE t.slug = \(slug)",
                        as: Int64.self)
                }
                return try await TestEnvironment.ownerScalar("""
                    SELECT coalesce(sum(u.bytes), 0)::bigint FROM photo_usage u JOIN tenants t ON t.id = u.tenant_id
                    JOIN users us ON us.tenant_id = u.tenant_id AND us.id = u.user_id WHERE t.slug = \(slug) AND us.username = \(user)
                    """, as: Int64.self)
            }
            // Olga fills her megabyte: each photo keeps a few hundred kilobytes.
            var notes: [API.Note] = []
            var refused: APIResponse?
            for index in 0..<8 where refused == nil {
                let note = try await client.createNote(olga, "Roll \(index)", lat: 6, lng: 6)
                notes.append(note)
                let response = try await client.upload(jpeg, to: note.id, as: olga)
                if response.status != .created { refused = response }
            }
            let full = try #require(refused)
            #expect(full.status == .contentTooLarge && full.code == "photo_quota_exceeded", "\(full.body)")
            let olgas = try await usage("olga")
            #expect(olgas > 0 && olgas <= 1_000_000)
            let stored = try await TestEnvironment.ownerScalar(
                "SELECT sum(stored_bytes)::bigint FROM photos p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = \(slug)", as: Int64.self)
            #expect(stored == olgas, "the trigger's count is the photos' sum")
            // Pete has room of his own until the tenant's 1.5 MB are taken.
            let petes = try await client.createNote(pete, "Mine", lat: 6, lng: 6)
            var tenantFull: APIResponse?
            for _ in 0..<4 where tenantFull == nil {
                let response = try await client.upload(jpeg, to: petes.id, as: pete)
                if response.status != .created { tenantFull = response }
            }
            #expect(tenantFull?.code == "photo_quota_exceeded")
            #expect(try await usage(nil) <= 1_500_000)
            let metrics = try await client.call(.get, "/metrics").body
            #expect(metrics.contains("lr_photo_bytes_stored{tenant=\"\(slug)\"} \(try await usage(nil))"), "\(metrics.split(separator: "\n").filter { $0.contains("photo") })")
            // What the workers used, as the kernel counted it.
            let figures = Dictionary(metrics.split(separator: "\n").compactMap { line -> (String, Double)? in
                let parts = line.split(separator: " ")
                guard parts.count == 2, let value = Double(parts[1]) else { return nil }
                return (String(parts[0]), value)
            }, uniquingKeysWith: { $1 })
            #expect((figures["lr_photo_worker_cpu_seconds_total"] ?? 0) > 0.01, "\(figures.filter { $0.key.contains("worker") })")
            // Deleting a note frees its photos' room; deleting the account, all of it.
            let before = try await usage("olga")
            #expect(try await client.call(.delete, "/v1/notes/\(notes[0].id)", token: olga.accessToken).status == .noContent)
            #expect(try await usage("olga") < before)
            #expect(try await client.upload(jpeg, to: notes[0].id, as: olga).code == "not_found")
            #expect(try await client.upload(jpeg, to: notes[1].id, as: olga).status != .internalServerError)
            #expect(try await client.call(.delete, "/v1/me", json: ["password": pete.password], token: pete.accessToken).status == .noContent)
            #expect(try await usage(nil) == (try await usage("olga")))
        }
    }

    @Test func aRetryWithTheSameKeyGetsTheSamePhoto() async throws {
        let slug = try await TestEnvironment.makeTenant()
        try await withApp({ $0.photos.perNote = 1 }) { client in
            let liam = try await client.signup("liam", tenant: slug)
            let note = try await client.createNote(liam, "Once", lat: 5, lng: 5)
            let jpeg = try CameraPhotos.bytes("plain.jpg")
            let first = try await client.upload(jpeg, to: note.id, as: liam, key: "upload-1")
            let retry = try await client.upload(jpeg, to: note.id, as: liam, key: "upload-1")
            #expect(first.status == .created && retry.status == .created)
            #expect(retry.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
            #expect(try first.decode(API.Photo.self).id == retry.decode(API.Photo.self).id)
            let other = try await client.upload(try CameraPhotos.bytes("camera.png"), to: note.id, as: liam, key: "upload-1")
            #expect(other.code == "idempotency_key_reused")
        }
    }
}

/// The camera-like and hostile files of Tests/PhotosTests/make-photos.sh, made once.
enum CameraPhotos {
    static let directory: String = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lr-service-photos-\(getpid())").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PhotosTests/make-photos.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, directory]
        try? process.run()
        process.waitUntilExit()
        precondition(process.terminationStatus == 0, "make-photos.sh failed")
        return directory
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
    }
}

extension TestClientProtocol {
    /// `POST /v1/notes/{noteID}/photos`, or to `path` (a place's).
    func upload(
        _ bytes: [UInt8], to noteID: String = "", path: String? = nil, as account: Account, key: String? = nil,
        contentType: String = "application/octet-stream"
    ) async throws -> APIResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(account.accessToken)", .contentType: contentType]
        if let key { headers[HTTPField.Name("Idempotency-Key")!] = key }
        return try await execute(uri: path ?? "/v1/notes/\(noteID)/photos", method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) {
            APIResponse(status: $0.status, headers: $0.headers, body: String(buffer: $0.body))
        }
    }

    func download(_ path: String, as account: Account, ifNoneMatch: String? = nil) async throws -> (HTTPResponse.Status, HTTPFields, [UInt8]) {
        var headers: HTTPFields = [.authorization: "Bearer \(account.accessToken)"]
        if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
        return try await execute(uri: path, method: .get, headers: headers) {
            ($0.status, $0.headers, Array(buffer: $0.body))
        }
    }
}
