import Testing

@testable import Photos

@Suite struct PhotoFormatTests {
    @Test(arguments: [
        ("camera.jpg", PhotoFormat.jpeg), ("camera.png", .png), ("camera.webp", .webp), ("camera.heic", .heif),
        ("polyglot.jpg", .jpeg), ("corrupt.heic", .heif),
    ])
    func aFileIsKnownByItsBytes(name: String, format: PhotoFormat) throws {
        #expect(PhotoFormat.sniff(try PhotoFiles.bytes(name)) == format)
    }

    @Test func textNamedAsAPhotoIsNoPhoto() throws {
        #expect(PhotoFormat.sniff(try PhotoFiles.bytes("image.svg.jpg")) == nil)
        #expect(PhotoFormat.sniff(try PhotoFiles.bytes("page.html.jpg")) == nil)
    }

    static let others: [(String, [UInt8])] = [
        ("GIF89a", [UInt8]("GIF89a\u{1}\0\u{1}\0".utf8)),
        ("ZIP", [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 26)),
        ("TIFF", [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]),
        ("AVIF", [0, 0, 0, 0x1C] + [UInt8]("ftypavif\0\0\0\0mif1miafMA1B".utf8)),
        ("RIFF WAVE", [UInt8]("RIFF\u{24}\0\0\0WAVEfmt ".utf8)),
        ("a JPEG's first two bytes", [0xFF, 0xD8]),
        ("nothing", []),
        ("an ftyp box of absurd size", [0xFF, 0xFF, 0xFF, 0xFF] + [UInt8]("ftypheic\0\0\0\0".utf8)),
    ]

    @Test(arguments: Self.others)
    func otherFormatsAreNotAccepted(name: String, bytes: [UInt8]) {
        #expect(PhotoFormat.sniff(bytes) == nil, "\(name)")
    }

    @Test func anIPhoneHEICIsKnownByItsCompatibleBrand() {
        let ftyp: [UInt8] = [0, 0, 0, 0x18] + [UInt8]("ftypmif1\0\0\0\0mif1heic".utf8)
        #expect(PhotoFormat.sniff(ftyp) == .heif)
    }
}
