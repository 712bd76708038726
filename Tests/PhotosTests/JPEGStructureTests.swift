import Testing

@testable import Photos

/// The check the service makes on every output before keeping it.
@Suite struct JPEGStructureTests {
    @Test func aStrippedJPEGPassesWithItsSize() throws {
        let structure = try JPEGStructure(try PhotoFiles.bytes("plain.jpg"))
        #expect(structure.width == 1200 && structure.height == 900)
    }

    @Test func metadataOrAPayloadIsRefused() throws {
        let plain = try PhotoFiles.bytes("plain.jpg")
        let exif: [UInt8] = [0xFF, 0xE1, 0, 10] + [UInt8]("Exif\0\0II".utf8)
        let comment: [UInt8] = [0xFF, 0xFE, 0, 8] + [UInt8]("hello!".utf8)
        for bad in [
            [0xFF, 0xD8] + exif + plain.dropFirst(2),
            [0xFF, 0xD8] + comment + plain.dropFirst(2),
            plain + [UInt8]("PK\u{3}\u{4}".utf8),
            Array(plain.prefix(plain.count / 2)),
            try PhotoFiles.bytes("camera.jpg"),
        ] {
            #expect(throws: PhotoError.self) { try JPEGStructure(bad) }
        }
    }
}
