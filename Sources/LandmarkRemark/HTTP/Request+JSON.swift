import Foundation
import Hummingbird
import NIOCore

extension Request {
    /// Reads the body as a JSON object: `415` unless it is declared `application/json`,
    /// `413` past the limit, `400` when it is not JSON, not an object, or repeats a key in an object.
    mutating func jsonObject(context: AppRequestContext, limit: Int) async throws -> JSONObjectReader {
        guard let contentType = headers[.contentType], MediaType(from: contentType)?.isType(.applicationJson) == true else {
            throw AppError.unsupportedMediaType
        }
        let buffer: ByteBuffer
        do {
            buffer = try await collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw AppError.payloadTooLarge
        }
        guard buffer.readableBytes > 0 else { throw AppError.malformed("the request body is empty; a JSON object is required") }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(buffer.readableBytesView))
        } catch {
            throw AppError.malformed("the request body is not valid JSON")
        }
        guard case .object(let fields) = value else {
            throw AppError.malformed("the request body must be a JSON object, not \(value.typeName)")
        }
        if let key = buffer.withUnsafeReadableBytes(JSONDuplicateKeys.firstDuplicate(in:)) {
            throw AppError.malformed("the request body has the key \"\(key)\" twice; each key may appear once")
        }
        return JSONObjectReader(fields)
    }
}

/// A response body written by `JSONWriter`, the service's one way of writing JSON: a handler
/// returns the value (wrapped in `EditedResponse` for another status or more headers).
protocol JSONResponse: JSONWritable, ResponseGenerator, Sendable {}

extension JSONResponse {
    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: .ok, headers: [.contentType: JSONWriter.contentType], body: .init(byteBuffer: jsonBuffer))
    }
}

extension JSONWriter {
    static let contentType = "application/json; charset=utf-8"
}
