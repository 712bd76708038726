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

/// The one JSON encoder of the service: snake_case keys, RFC 3339 millisecond timestamps.
enum JSONCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()
}

extension Response {
    /// A JSON response with the service's encoding.
    static func json<Value: Encodable>(
        _ value: Value, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) throws -> Response {
        let data = try JSONCoding.encoder.encode(value)
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A JSON response written by the value itself (the hot paths; see `JSONWritable`).
    static func json(
        _ value: some JSONWritable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: value.jsonBuffer))
    }

    static func noContent() -> Response {
        Response(status: .noContent)
    }
}
