/// A check of what the worker wrote, made in the service on the bytes it will serve: a
/// baseline or progressive JPEG whose only segments are JFIF, tables, frame and scan headers,
/// and nothing after its end marker. So no metadata block (EXIF, XMP, ICC, IPTC, a comment)
/// and no appended payload (a ZIP of a polyglot) reaches a client, whatever the decoder did.
struct JPEGStructure {
    let width: Int
    let height: Int

    init(_ bytes: [UInt8]) throws(PhotoError) {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw .unreadable("the output is not a JPEG") }
        var offset = 2
        var frame: (width: Int, height: Int)?
        while offset + 2 <= bytes.count {
            guard bytes[offset] == 0xFF else { throw .unreadable("the output's segments are malformed") }
            let marker = bytes[offset + 1]
            if marker == 0xD9 {  // end of image: the last two bytes, or there is a payload after it
                guard offset + 2 == bytes.count else { throw .unreadable("the output has bytes after its end marker") }
                guard let frame, frame.width > 0, frame.height > 0 else { throw .unreadable("the output has no frame") }
                (width, height) = frame
                return
            }
            guard offset + 4 <= bytes.count else { break }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { throw .unreadable("the output's segments are malformed") }
            switch marker {
            case 0xE0:  // APP0, JFIF
                guard length >= 7, bytes[(offset + 4)..<(offset + 9)].elementsEqual("JFIF\0".utf8) else {
                    throw .unreadable("the output carries an APP0 block that is not JFIF")
                }
            case 0xC0, 0xC1, 0xC2:  // start of frame: baseline, extended, progressive
                guard length >= 8 else { throw .unreadable("the output's frame header is short") }
                frame = (Int(bytes[offset + 7]) << 8 | Int(bytes[offset + 8]), Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]))
            case 0xC4, 0xDB, 0xDD:  // Huffman tables, quantisation tables, restart interval
                break
            case 0xDA:  // start of scan: entropy-coded data follows, up to the next real marker
                offset = Self.endOfScan(bytes, from: offset + 2 + length)
                continue
            default:
                throw .unreadable("the output carries segment 0x\(String(marker, radix: 16, uppercase: true))")
            }
            offset += 2 + length
        }
        throw .unreadable("the output ends before its end marker")
    }

    /// The offset of the first marker after entropy-coded data: 0xFF followed by anything but
    /// a stuffed zero, a restart marker (0xD0–0xD7) or another 0xFF (fill).
    private static func endOfScan(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0xFF {
                let next = bytes[index + 1]
                if next != 0x00, next != 0xFF, !(0xD0...0xD7).contains(next) { return index }
            }
            index += 1
        }
        return bytes.count
    }
}
