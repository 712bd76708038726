import Credentials
import HTTPTypes
import Hummingbird
import NIOCore
import Photos

/// `/v1/notes/{id}/photos`, `/v1/places/{id}/photos` and `/v1/photos/{photo_id}/{variant}`,
/// behind the authenticator.
struct PhotosController {
    let photos: PhotoService
    let maxBytes: Int
    /// Uploads in flight per user and per replica, taken before a body is read.
    let shares: FairShares

    /// Mounted at `/v1/notes`, beside `NotesController`'s routes.
    var noteEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post(":id/photos", use: upload)
            .delete(":id/photos/:photo_id", use: delete)
    }

    /// Mounted at `/v1/places`, beside `PlacesController`'s routes.
    var placeEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post(":id/photos", use: uploadToPlace)
            .delete(":id/photos/:photo_id", use: deleteFromPlace)
    }

    /// Mounted at `/v1/photos`.
    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(":photo_id/:variant", use: variant)
    }

    /// The body is the image's bytes (see the contract for why not multipart); what it is, is
    /// decided by its bytes, so its `Content-Type` is not looked at.
    @Sendable func upload(_ request: Request, context: AppRequestContext) async throws -> StoredJSONResponse {
        try await upload(request, to: .note(try context.resourceID(else: NoteError.notFound)), context: context)
    }

    @Sendable func uploadToPlace(_ request: Request, context: AppRequestContext) async throws -> StoredJSONResponse {
        try await upload(request, to: .place(try context.resourceID(else: PlaceError.notFound)), context: context)
    }

    private func upload(_ request: Request, to holder: PhotoHolder, context: AppRequestContext) async throws -> StoredJSONResponse {
        var request = request
        let identity = try context.requireIdentity()
        let key = try IdempotencyKey.parse(request.headers)
        // The body (up to 15 MB) is read only within the caller's share of uploads in flight:
        // one account's many connections cannot fill the replica's memory with bodies.
        return try await shares.withUploadShare {
            let bytes: [UInt8]
            do {
                bytes = Array(buffer: try await request.collectBody(upTo: maxBytes))
            } catch is NIOTooManyBytesError {
                throw PhotoError.tooManyBytes(limit: maxBytes)
            }
            return try await photos.upload(bytes, to: holder, by: identity, key: key, logger: context.logger)
        }
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await delete(from: .note(try context.resourceID(else: NoteError.notFound)), context: context)
    }

    @Sendable func deleteFromPlace(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await delete(from: .place(try context.resourceID(else: PlaceError.notFound)), context: context)
    }

    private func delete(from holder: PhotoHolder, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let photoID = try context.resourceID("photo_id", else: PhotoRefusal.notFound)
        try await photos.delete(photoID, from: holder, by: identity, logger: context.logger)
        return .noContent
    }

    /// A variant's JPEG. Its URL names its bytes for good (a photo never changes), so clients
    /// keep it a year; `private`, because who may see it is decided per viewer.
    ///
    /// Behind nginx (`X-LR-Photo-Accel`, which only nginx's own configuration sets), the
    /// answer is the decision alone: `X-Accel-Redirect` to nginx's internal location, which
    /// sends the bytes from its cache, keyed by their hash, and fetches them from here (without
    /// the header, so with the same check) only when it has not kept them.
    @Sendable func variant(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let photoID = try context.resourceID("photo_id", else: PhotoRefusal.notFound)
        guard let size = context.parameters.get("variant").flatMap(PhotoSize.init(rawValue:)) else { throw PhotoRefusal.notFound }
        let accelerated = request.headers[.photoAccel] == "1"
        let (sha256, data) = try await photos.variant(
            photoID, size: size, for: identity, withBytes: !accelerated, logger: context.logger)
        let tag = EntityTag.of(sha256: sha256)
        var headers: HTTPFields = [.eTag: tag, .cacheControl: "private, max-age=31536000, immutable"]
        if EntityTag.noneMatchHits(request.headers[.ifNoneMatch], current: tag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "image/jpeg"
        guard let data else {
            headers[.xAccelRedirect] = "/_lr_photo/\(Tokens.hex(sha256))/\(photoID)/\(size.rawValue)"
            return Response(status: .ok, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension HTTPField.Name {
    /// Set by nginx (deploy/nginx) on `GET /v1/photos/…`: it sends the bytes itself.
    static let photoAccel = Self("X-LR-Photo-Accel")!
    /// Where nginx is to take the response's body from instead.
    static let xAccelRedirect = Self("X-Accel-Redirect")!
}
