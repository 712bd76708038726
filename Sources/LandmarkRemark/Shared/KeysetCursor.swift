import Credentials
import Foundation

/// Where the next page of a list starts: the sort key of the last item returned. Notes and
/// places both page this way, on `(created_at, id)` newest first or `(distance, id)` nearest first.
///
/// On the wire it is base64url of 26 bytes: version (1), ordering (1), the query's
/// filter fingerprint (8), then the key: created_at in microseconds since 1970 or
/// the spheroid distance as IEEE 754 bits (8), and the item's id (8), big-endian.
///
/// It is not signed, and need not be: it holds only sort-key values, and every page
/// query still applies the tenant, visibility and filters, so a forged cursor can at
/// most start the walk at another point of what the caller may see anyway. Anything
/// that does not decode exactly, or that belongs to another ordering or another set of
/// filters, is `400 malformed_request`.
struct KeysetCursor: Sendable, Equatable {
    enum Key: Sendable, Equatable {
        /// Newest first: `(created_at, id)` descending.
        case newest(createdMicros: Int64, id: Int64)
        /// Nearest first: `(spheroid distance, id)` ascending.
        case nearest(distance: Double, id: Int64)
    }

    static let version: UInt8 = 1
    private static let length = 26

    let key: Key

    /// The opaque string for `next_cursor`.
    func encoded(fingerprint: [UInt8]) -> String {
        var bytes: [UInt8] = [Self.version]
        switch key {
        case .newest(let micros, let id):
            bytes.append(1)
            bytes += fingerprint.prefix(8)
            bytes += Self.bigEndian(UInt64(bitPattern: micros))
            bytes += Self.bigEndian(UInt64(bitPattern: id))
        case .nearest(let distance, let id):
            bytes.append(2)
            bytes += fingerprint.prefix(8)
            bytes += Self.bigEndian(distance.bitPattern)
            bytes += Self.bigEndian(UInt64(bitPattern: id))
        }
        return Base64URL.encode(bytes)
    }

    /// Decodes a client's cursor for a query with this ordering and filter fingerprint.
    init(parameter text: String, nearest: Bool, fingerprint: [UInt8]) throws {
        let invalid = AppError.malformed("cursor is not a cursor of this query; start again without it")
        guard text.utf8.count <= 64, let bytes = Base64URL.decode(text), bytes.count == Self.length,
            bytes[0] == Self.version, bytes[1] == (nearest ? 2 : 1), Array(bytes[2..<10]) == Array(fingerprint.prefix(8))
        else { throw invalid }
        let value = Self.integer(bytes[10..<18])
        let id = Int64(bitPattern: Self.integer(bytes[18..<26]))
        guard id > 0 else { throw invalid }
        if nearest {
            let distance = Double(bitPattern: value)
            // No spheroid distance is negative or beyond half the globe's circumference.
            guard distance.isFinite, distance >= 0, distance <= 20_100_000 else { throw invalid }
            key = .nearest(distance: distance, id: id)
        } else {
            // Up to 2^53 (the year 2255), which the keyset's interval arithmetic computes exactly.
            let micros = Int64(bitPattern: value)
            guard micros >= 0, micros < 1 << 53 else { throw invalid }
            key = .newest(createdMicros: micros, id: id)
        }
    }

    init(key: Key) {
        self.key = key
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }

    private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
