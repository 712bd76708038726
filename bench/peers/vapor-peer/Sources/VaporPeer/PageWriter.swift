// A page of notes as JSON, written in order into one buffer: what a Vapor engineer writes
// for an endpoint this hot once the profile shows JSONEncoder on top. The same JSON as the
// service's (and as NoteJSON's Codable form): ids as strings, place_id null when unset,
// timestamps RFC 3339 in UTC with milliseconds, distance to 0.1 m.
import Foundation
import NIOCore
import Vapor

struct PageWriter {
    private var buffer: ByteBuffer
    private var first = true
    var more = false

    init(allocator: ByteBufferAllocator) {
        buffer = allocator.buffer(capacity: 16_384)
        buffer.writeStaticString("{\"items\":[")
    }

    mutating func note(
        id: Int64, body: String, lat: Double, lng: Double, userID: Int64, username: String, isMine: Bool, visibility: String,
        placeID: Int64?, createdAt: Date, updatedAt: Date, distance: Double
    ) {
        buffer.writeStaticString(first ? "{\"id\":\"" : ",{\"id\":\"")
        first = false
        buffer.writeString(String(id))
        buffer.writeStaticString("\",\"body\":")
        string(body)
        buffer.writeStaticString(",\"lat\":")
        buffer.writeString(lat.description)
        buffer.writeStaticString(",\"lng\":")
        buffer.writeString(lng.description)
        buffer.writeStaticString(",\"author\":{\"id\":\"")
        buffer.writeString(String(userID))
        buffer.writeStaticString("\",\"username\":")
        string(username)
        buffer.writeStaticString(isMine ? "},\"is_mine\":true,\"visibility\":" : "},\"is_mine\":false,\"visibility\":")
        string(visibility)
        if let placeID {
            buffer.writeStaticString(",\"place_id\":\"")
            buffer.writeString(String(placeID))
            buffer.writeStaticString("\",\"created_at\":")
        } else {
            buffer.writeStaticString(",\"place_id\":null,\"created_at\":")
        }
        timestamp(createdAt)
        buffer.writeStaticString(",\"updated_at\":")
        timestamp(updatedAt)
        buffer.writeStaticString(",\"distance_m\":")
        buffer.writeString(((distance * 10).rounded() / 10).description)
        buffer.writeStaticString("}")
    }

    consuming func response(nextCursor: String?) -> Response {
        buffer.writeStaticString("],\"next_cursor\":")
        if let nextCursor { string(nextCursor) } else { buffer.writeStaticString("null") }
        buffer.writeStaticString("}")
        var headers = HTTPHeaders()
        headers.contentType = .json
        return Response(status: .ok, headers: headers, body: .init(buffer: buffer))
    }

    /// A JSON string: quotes, backslashes and control characters escaped; the rest as is.
    private mutating func string(_ value: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var utf8 = value
        utf8.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<index])))
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0D: buffer.writeStaticString("\\r")
                case 0x09: buffer.writeStaticString("\\t")
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    buffer.writeStaticString("\\u00")
                    buffer.writeInteger(hex[Int(byte >> 4)])
                    buffer.writeInteger(hex[Int(byte & 0x0F)])
                }
                start = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start...])))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    /// `"2026-05-25T08:40:11.663Z"`, from the broken-down UTC time: no formatter.
    private mutating func timestamp(_ date: Date) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let millis = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out = [UInt8](repeating: 0, count: 26)
        func put(_ value: Int, _ at: Int, _ width: Int) {
            var value = value
            for offset in stride(from: width - 1, through: 0, by: -1) {
                out[at + offset] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        out[0] = UInt8(ascii: "\"")
        put(Int(parts.tm_year) + 1900, 1, 4)
        out[5] = UInt8(ascii: "-")
        put(Int(parts.tm_mon) + 1, 6, 2)
        out[8] = UInt8(ascii: "-")
        put(Int(parts.tm_mday), 9, 2)
        out[11] = UInt8(ascii: "T")
        put(Int(parts.tm_hour), 12, 2)
        out[14] = UInt8(ascii: ":")
        put(Int(parts.tm_min), 15, 2)
        out[17] = UInt8(ascii: ":")
        put(Int(parts.tm_sec), 18, 2)
        out[20] = UInt8(ascii: ".")
        put(millis, 21, 3)
        out[24] = UInt8(ascii: "Z")
        out[25] = UInt8(ascii: "\"")
        buffer.writeBytes(out)
    }
}
