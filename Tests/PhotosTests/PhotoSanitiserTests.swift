import Foundation
import Testing

@testable import Photos

/// Real camera-like files through the real sandbox and libvips: every output is checked with
/// exiftool for any metadata left, and with libvips for the orientation of its pixels.
@Suite struct PhotoSanitiserTests {
    /// Each format as a phone leaks it; the scene is dark on its left half. With EXIF
    /// orientation 6 (JPEG, PNG, WebP) it is shown rotated, dark on top: 900×1200. A HEIC's
    /// orientation is its own `irot` box: absent, it stays 1200×900; 90° clockwise
    /// (`add-irot.py`, as an iPhone writes it), it is dark on top too.
    @Test(arguments: [
        ("camera.jpg", PhotoFormat.jpeg, true), ("camera.png", .png, true), ("camera.webp", .webp, true),
        ("camera.heic", .heif, false), ("camera-irot.heic", .heif, true),
    ])
    func everyFormatComesOutOrientedWithoutAnyMetadata(name: String, format: PhotoFormat, rotated: Bool) async throws {
        let input = try PhotoFiles.bytes(name)
        #expect(try PhotoFiles.metadata(input).contains { $0.contains("GPS") }, "the fixture carries GPS")
        let (sanitiser, _) = makeSanitiser()
        let photo = try await sanitiser.sanitise(input)
        #expect(photo.source == format)
        let upright: [Int] = rotated ? [900, 1200] : [1200, 900]
        let small: [Int] = rotated ? [192, 256] : [256, 192]
        #expect([photo.width, photo.height] == upright)
        // Never larger than the original: only the thumbnail is smaller than 1200.
        let display = try #require(photo.variants[.display])
        let thumb = try #require(photo.variants[.thumb])
        #expect([display.width, display.height] == upright)
        #expect([thumb.width, thumb.height] == small)
        for (variant, rendition) in photo.variants {
            let left = try PhotoFiles.metadata(rendition.bytes)
            #expect(left.isEmpty, "\(name) \(variant): \(left)")
            #expect(!String(decoding: rendition.bytes, as: UTF8.self).contains("SECRET"), "\(name) \(variant)")
            let (top, bottom) = try PhotoFiles.halves(rendition.bytes, width: rendition.width, height: rendition.height)
            if rotated {
                #expect(top < 80 && bottom > 180, "\(name) \(variant): dark on top, top \(top) bottom \(bottom)")
            } else {
                #expect(abs(top - bottom) < 20, "\(name) \(variant): halves of the same brightness, \(top) \(bottom)")
            }
        }
    }

    @Test func transparencyIsFlattenedOnWhite() async throws {
        let (sanitiser, _) = makeSanitiser()
        let photo = try await sanitiser.sanitise(try PhotoFiles.bytes("transparent.png"))
        let full = try #require(photo.variants[.full])
        let (top, bottom) = try PhotoFiles.halves(full.bytes, width: full.width, height: full.height)
        #expect(top > 240 && bottom > 240, "\(top) \(bottom)")
    }

    @Test func aPolyglotLeavesItsArchiveBehind() async throws {
        let (sanitiser, _) = makeSanitiser()
        let photo = try await sanitiser.sanitise(try PhotoFiles.bytes("polyglot.jpg"))
        for rendition in photo.variants.values {
            #expect(!rendition.bytes.indices.dropLast(3).contains { index in
                rendition.bytes[index] == 0x50 && rendition.bytes[index + 1] == 0x4B && rendition.bytes[index + 2] == 3
            })
            #expect(try PhotoFiles.metadata(rendition.bytes).isEmpty)
        }
    }

    @Test func aHugeEXIFBlockIsDroppedWithTheRest() async throws {
        let input = try PhotoFiles.bytes("huge-exif.jpg")
        #expect(input.count > 9_000_000)
        let (sanitiser, _) = makeSanitiser()
        let photo = try await sanitiser.sanitise(input)
        #expect((photo.width, photo.height) == (1200, 900))
        #expect(try PhotoFiles.metadata(try #require(photo.variants[.full]).bytes).isEmpty)
    }

    /// libjpeg decodes what there is of a truncated file and fills the rest with grey: what
    /// comes out is a photo of our making, with no metadata, not an error.
    @Test func aTruncatedJPEGIsSanitisedAsFarAsItGoes() async throws {
        let (sanitiser, _) = makeSanitiser()
        let photo = try await sanitiser.sanitise(try PhotoFiles.bytes("truncated.jpg"))
        #expect((photo.width, photo.height) == (1200, 900))
        #expect(try PhotoFiles.metadata(try #require(photo.variants[.full]).bytes).isEmpty)
    }

    @Test func aPixelBombIsRefusedFromItsHeaderAlone() async throws {
        let workers = PhotoWorkers(count: 1)
        let (_, directory) = makeSanitiser()
        let sanitiser = PhotoSanitiser(workDirectory: directory, workers: workers)
        await #expect(throws: PhotoError.tooManyPixels(width: 100_000, height: 100_000, limit: 50_000_000)) {
            try await sanitiser.sanitise(try PhotoFiles.bytes("bomb.png"))
        }
        // Refused before decoding: 40 GB of pixels would take minutes of CPU, or fail on
        // memory. Counted as the workers' CPU, not wall time, which a busy machine stretches.
        #expect(workers.cpu < .seconds(5), "\(workers.cpu)")
        try await workers.shutdown()
    }

    @Test func aCorruptHEICIsUnreadable() async throws {
        let (sanitiser, _) = makeSanitiser()
        await #expect {
            try await sanitiser.sanitise(try PhotoFiles.bytes("corrupt.heic"))
        } throws: { error in
            if case PhotoError.unreadable = error { return true }
            return false
        }
    }

    @Test func textAndOversizedFilesAreRefusedBeforeAnyWorker() async throws {
        let (sanitiser, _) = makeSanitiser(limits: .init(maxBytes: 1_000_000))
        await #expect(throws: PhotoError.unsupportedFormat) { try await sanitiser.sanitise(try PhotoFiles.bytes("image.svg.jpg")) }
        await #expect(throws: PhotoError.unsupportedFormat) { try await sanitiser.sanitise(try PhotoFiles.bytes("page.html.jpg")) }
        await #expect(throws: PhotoError.tooManyBytes(limit: 1_000_000)) {
            try await sanitiser.sanitise(try PhotoFiles.bytes("huge-exif.jpg"))
        }
    }

    @Test func everyJobDirectoryIsRemoved() async throws {
        let (sanitiser, directory) = makeSanitiser()
        _ = try await sanitiser.sanitise(try PhotoFiles.bytes("camera.jpg"))
        _ = try? await sanitiser.sanitise(try PhotoFiles.bytes("corrupt.heic"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    /// A decoder out of memory or of time costs its upload an `unreadable`, nothing more.
    @Test func theLimitsEndAWorker() async throws {
        let tight = PhotoSandbox(limits: .init(memoryBytes: 48 << 20))
        let (starved, _) = makeSanitiser(sandbox: tight)
        await #expect {
            try await starved.sanitise(try PhotoFiles.bytes("camera.heic"))
        } throws: { error in
            if case PhotoError.unreadable = error { return true }
            return false
        }
        let hasty = PhotoSandbox(limits: .init(wallClock: .milliseconds(1)))
        let (late, _) = makeSanitiser(sandbox: hasty)
        await #expect(throws: PhotoError.unreadable("the worker ran past 0.001 seconds")) {
            try await late.sanitise(try PhotoFiles.bytes("camera.jpg"))
        }
    }
}
