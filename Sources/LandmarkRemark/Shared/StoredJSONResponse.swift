import HTTPTypes
import Hummingbird

/// A resource's JSON (a note, a photo), encoded once so its ETag is the hash of exactly the
/// bytes sent; also an idempotent replay of a stored create (`IdempotentCreates`).
struct StoredJSONResponse: ResponseGenerator, Sendable {
    let body: [UInt8]
    var status: HTTPResponse.Status = .ok
    var location: String?
    var replayed = false

    init(_ value: some JSONWritable, status: HTTPResponse.Status = .ok, location: String? = nil) {
        self.init(body: value.jsonBytes, status: status, location: location)
    }

    init(body: [UInt8], status: HTTPResponse.Status, location: String?, replayed: Bool = false) {
        (self.body, self.status, self.location, self.replayed) = (body, status, location, replayed)
        entityTag = EntityTag.of(body)
    }

    /// The hash of exactly these bytes, computed once (`show` compares it with `If-None-Match`).
    let entityTag: String

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: JSONWriter.contentType, .eTag: entityTag]
        if let location { headers[.location] = location }
        if replayed { headers[.idempotentReplayed] = "true" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// A note's JSON as sent.
typealias NoteResponse = StoredJSONResponse

extension HTTPField.Name {
    /// Set on a response replayed for a repeated `Idempotency-Key`.
    static let idempotentReplayed = Self("Idempotent-Replayed")!
}
