import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which peers may tell us the client's address in `X-Forwarded-For`.
///
/// Only a configured proxy (nginx) is believed; anyone else could forge the header
/// to dodge the per-address login limit. Entries are addresses or CIDR ranges.
public struct TrustedProxies: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let bytes: [UInt8]
        let prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefixLength
            for index in 0..<bytes.count where remaining > 0 {
                let bits = min(remaining, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let ranges: [Range]

    public static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) { self.ranges = ranges }

    /// Parses `"127.0.0.1, 10.0.0.0/8, ::1"`; nil when an entry is not an address or range.
    public init?(list: String) {
        var ranges: [Range] = []
        for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = Self.parse(parts[0]) else { return nil }
            let maximum = bytes.count * 8
            var prefix = maximum
            if parts.count == 2 {
                guard let length = Int(parts[1]), (0...maximum).contains(length) else { return nil }
                prefix = length
            }
            ranges.append(Range(bytes: bytes, prefixLength: prefix))
        }
        self.ranges = ranges
    }

    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.parse(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client address: the peer itself, unless the peer is a trusted proxy, in
    /// which case the right-most `X-Forwarded-For` entry that is not a trusted proxy.
    public func clientAddress(peer: String, forwardedFor: String?) -> String {
        guard contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where !hop.isEmpty {
            guard Self.parse(hop) != nil else { return peer }
            if !contains(hop) { return hop }
        }
        return peer
    }

    /// IPv4 or IPv6 text to bytes, through the C library's own parser.
    static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
