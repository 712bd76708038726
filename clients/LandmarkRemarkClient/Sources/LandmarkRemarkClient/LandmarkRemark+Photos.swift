import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

extension LandmarkRemark {
    /// The largest photo variant the client reads (the service's are at most 2048 pixels on a
    /// side, a few hundred kilobytes).
    static let photoReadLimit = 16 << 20

    /// Adds a photo to the caller's note: `data` is the image file as it is (JPEG, PNG, WebP or
    /// an iPhone's HEIC); the service strips every metadata block, the location included, and
    /// keeps three sizes. `progress` hears the fraction of the bytes handed to the network, from
    /// 0 to 1, again from 0 on a retry. A request that got no answer (or a `503`) is retried with
    /// the same `Idempotency-Key`, so a flaky network never adds the photo twice; pass your own
    /// key (kept with the file in an outbox) to make retries after a relaunch safe too.
    @discardableResult
    public func addPhoto(
        _ data: Data, toNote noteID: String, idempotencyKey key: String = UUID().uuidString,
        progress: (@Sendable (Double) -> Void)? = nil
    ) async throws -> Photo {
        try await upload(data, key: key, progress: progress) { body in
            Photo(try await api.uploadNotePhoto(path: .init(id: noteID), headers: .init(Idempotency_hyphen_Key: key), body: .binary(body)).created.body.json)
        }
    }

    /// Adds a photo to a place: your own custom place, or a default place if you moderate the
    /// tenant. As `addPhoto(_:toNote:)` otherwise.
    @discardableResult
    public func addPhoto(
        _ data: Data, toPlace placeID: String, idempotencyKey key: String = UUID().uuidString,
        progress: (@Sendable (Double) -> Void)? = nil
    ) async throws -> Photo {
        try await upload(data, key: key, progress: progress) { body in
            Photo(try await api.uploadPlacePhoto(path: .init(id: placeID), headers: .init(Idempotency_hyphen_Key: key), body: .binary(body)).created.body.json)
        }
    }

    /// Sends `data` with `send`, retrying with the same key (the key is in `send`'s request).
    private func upload(
        _ data: Data, key: String, progress: (@Sendable (Double) -> Void)?, send: (HTTPBody) async throws -> Photo
    ) async throws -> Photo {
        let user = await session.signedInGeneration
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await Self.perform {
                    try await send(HTTPBody(UploadChunks(data: data, progress: progress), length: .known(Int64(data.count)), iterationBehavior: .multiple))
                }
            } catch let error as LandmarkRemarkError where attempt < Self.createAttempts && Self.isWorthRetrying(error) {
                try await Task.sleep(for: Self.backoff(attempt: attempt))
                guard await session.signedInGeneration == user else { throw LandmarkRemarkError.signedOut }
            }
        }
    }

    /// A variant's JPEG. Its bytes never change, so keep them as long as you like
    /// (`URLCache` or your own store, by `variant.path`).
    public func photoData(_ variant: Photo.Variant) async throws -> Data {
        try await Self.perform {
            let ok = try await api.getPhotoVariant(path: .init(photo_id: variant.photoID, variant: variant.size)).ok
            return try await Data(collecting: ok.body.jpeg, upTo: Self.photoReadLimit)
        }
    }

    /// Removes a photo from the caller's note, its bytes with it.
    public func deletePhoto(id: String, fromNote noteID: String) async throws {
        _ = try await Self.perform { try await api.deleteNotePhoto(path: .init(id: noteID, photo_id: id)).noContent }
    }

    /// Removes a photo from a place you may add photos to.
    public func deletePhoto(id: String, fromPlace placeID: String) async throws {
        _ = try await Self.perform { try await api.deletePlacePhoto(path: .init(id: placeID, photo_id: id)).noContent }
    }
}

/// An upload's bytes in 64 KB chunks, reporting how many the transport has taken: the
/// transport pulls the next chunk once it has sent (or buffered) the last.
struct UploadChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    static let chunkSize = 64 << 10

    let data: Data
    let progress: (@Sendable (Double) -> Void)?

    struct AsyncIterator: AsyncIteratorProtocol {
        let bytes: [UInt8]
        let progress: (@Sendable (Double) -> Void)?
        var offset = 0

        mutating func next() async -> ArraySlice<UInt8>? {
            guard offset < bytes.count else {
                if offset == 0 { offset = 1; progress?(1) }
                return nil
            }
            let end = Swift.min(offset + UploadChunks.chunkSize, bytes.count)
            defer {
                offset = end
                progress?(Double(end) / Double(bytes.count))
            }
            return bytes[offset..<end]
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        progress?(0)
        return AsyncIterator(bytes: [UInt8](data), progress: progress)
    }
}
