import Foundation
import Testing

@testable import Photos

/// The files `make-photos.sh` writes, made once per test run, and the tools that look at
/// outputs: Debian's exiftool (what metadata is left) and libvips (what the pixels are).
enum PhotoFiles {
    static let directory: String = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lr-photos-\(getpid())").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("make-photos.sh").path
        let (status, output) = run("/bin/bash", [script, directory])
        precondition(status == 0, "make-photos.sh failed: \(output)")
        return directory
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
    }

    /// exiftool's groups and tags of `bytes`, one "[Group] Tag" per line, without the groups
    /// every file has (the file system's, the file type's, the tool's own).
    static func metadata(_ bytes: [UInt8]) throws -> [String] {
        let path = try scratch(bytes, name: "out.jpg")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (status, output) = run("/usr/bin/exiftool", ["-a", "-G1", "-s", "-u", path])
        #expect(status == 0, "\(output)")
        return output.split(separator: "\n").map(String.init).filter { line in
            !["[ExifTool]", "[System]", "[File]", "[Composite]", "[JFIF]"].contains { line.hasPrefix($0) }
        }
    }

    /// The mean brightness of the top and the bottom halves of a JPEG, as libvips decodes it.
    static func halves(_ bytes: [UInt8], width: Int, height: Int) throws -> (top: Double, bottom: Double) {
        let path = try scratch(bytes, name: "halves.jpg")
        defer { try? FileManager.default.removeItem(atPath: path) }
        func mean(_ top: Int) -> Double {
            let (status, output) = run("/bin/sh", ["-c", "vips crop \"$0\" \"$0.v\" 0 \(top) \(width) \(height / 2) && vips avg \"$0.v\"; rm -f \"$0.v\"", path])
            return status == 0 ? Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 : -1
        }
        return (mean(0), mean(height - height / 2))
    }

    private static func scratch(_ bytes: [UInt8], name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lr-photo-\(UUID().uuidString)-\(name)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func run(_ executable: String, _ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch { return (-1, "\(error)") }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// A sanitiser over a fresh work directory, bubblewrap and the default limits unless told.
func makeSanitiser(
    limits: PhotoSanitiser.Limits = .init(), sandbox: PhotoSandbox = PhotoSandbox(), workers: Int = 2
) -> (PhotoSanitiser, workDirectory: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lr-photo-work-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return (PhotoSanitiser(limits: limits, sandbox: sandbox, workDirectory: directory, workers: PhotoWorkers(count: workers)), directory)
}
