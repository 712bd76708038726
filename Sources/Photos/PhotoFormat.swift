/// The image formats an upload may be, recognised by their first bytes only: a declared
/// `Content-Type` or a file name says nothing about what a decoder will be fed.
public enum PhotoFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg
    case png
    case webp
    case heif

    /// The libvips loader that must report the file (the probe checks it, so that a file that
    /// starts like one format and parses as another is refused).
    var loader: String {
        switch self {
        case .jpeg: "jpegload"
        case .png: "pngload"
        case .webp: "webpload"
        case .heif: "heifload"
        }
    }

    /// HEIF brands that carry HEVC-coded images (iPhones write `heic`, with `mif1` compatible).
    /// AVIF (`avif`, `avis`) is the same container with another codec and is not accepted.
    static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx"]

    /// The format `bytes` start as, or nil for anything else (SVG, HTML, GIF, TIFF, AVIF, ...).
    public static func sniff<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> PhotoFormat? {
        let head = Array(bytes.prefix(64))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        // RIFF, a size, WEBP, then the first chunk: VP8 (lossy), VP8L (lossless) or VP8X (extended).
        if head.count >= 16, head[0..<4].elementsEqual("RIFF".utf8), head[8..<15].elementsEqual("WEBPVP8".utf8),
            " LX".utf8.contains(head[15])
        {
            return .webp
        }
        if isHEIF(head) { return .heif }
        return nil
    }

    /// An ISO base media file whose first box is `ftyp` naming a HEVC image brand, as the
    /// major brand or a compatible one.
    private static func isHEIF(_ head: [UInt8]) -> Bool {
        guard head.count >= 16, head[4..<8].elementsEqual("ftyp".utf8) else { return false }
        let size = head[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard size >= 16, size % 4 == 0 else { return false }
        let end = min(size, head.count)
        var brands = [head[8..<12]]
        var offset = 16  // after the major brand and the minor version
        while offset + 4 <= end {
            brands.append(head[offset..<offset + 4])
            offset += 4
        }
        return brands.contains { heifBrands.contains(String(decoding: $0, as: UTF8.self)) }
    }
}
