import Foundation
import NIOPosix

/// A photo as we serve it: re-encoded from decoded pixels, never the uploaded bytes.
public struct SanitisedPhoto: Sendable {
    public struct Rendition: Sendable {
        public let bytes: [UInt8]
        public let width: Int
        public let height: Int
    }

    /// What the upload was, by its bytes.
    public let source: PhotoFormat
    /// Every variant, as JPEG: oriented, sRGB, without any metadata.
    public let variants: [PhotoSize: Rendition]

    /// The variants' bytes together: what is stored, and what quotas count.
    public var storedBytes: Int { variants.values.reduce(0) { $0 + $1.bytes.count } }

    /// The largest variant's size: the photo's shape as people see it (orientation applied).
    public var width: Int { variants[.full]?.width ?? 0 }
    public var height: Int { variants[.full]?.height ?? 0 }
}

/// Turns untrusted bytes into `SanitisedPhoto`s. Only the first bytes and the size are read
/// here; everything a decoder touches happens in a sandboxed worker (`PhotoSandbox`) run by
/// libvips' command-line tools: first a probe of the header (the pixel count is refused
/// before a pixel is decoded), then the rendering. Its outputs are checked again here
/// (`JPEGStructure`) before anything is kept.
///
/// Why the command-line tools and not libvips linked into a worker of ours: they are
/// Debian's, kept and patched with the library, and the service then links no decoder at all.
/// A run costs two process starts (about 10 ms each under bubblewrap, measured in the
/// benchmark) on top of the decoding.
public struct PhotoSanitiser: Sendable {
    public struct Limits: Sendable, Hashable {
        public var maxBytes: Int
        public var maxPixels: Int

        public init(maxBytes: Int = 15_000_000, maxPixels: Int = 50_000_000) {
            self.maxBytes = maxBytes
            self.maxPixels = maxPixels
        }
    }

    public let limits: Limits
    public let sandbox: PhotoSandbox
    /// Where each job's directory is made (and removed): the input and the outputs, nothing else.
    public let workDirectory: String
    private let workers: PhotoWorkers

    public init(limits: Limits = Limits(), sandbox: PhotoSandbox = PhotoSandbox(), workDirectory: String, workers: PhotoWorkers) {
        self.limits = limits
        self.sandbox = sandbox
        self.workDirectory = workDirectory
        self.workers = workers
    }

    public func sanitise(_ bytes: [UInt8]) async throws(PhotoError) -> SanitisedPhoto {
        guard let format = PhotoFormat.sniff(bytes) else { throw .unsupportedFormat }
        guard bytes.count <= limits.maxBytes else { throw .tooManyBytes(limit: limits.maxBytes) }
        let (limits, sandbox, workers) = (self.limits, self.sandbox, self.workers)
        return try await inJob { job throws(PhotoError) in
            try job.write("in", bytes)
            try Self.probe(job, format: format, limits: limits, sandbox: sandbox, workers: workers)
            return try Self.render(job, format: format, sandbox: sandbox, workers: workers)
        }
    }

    /// Runs an empty job in the sandbox: whether this machine can run workers at all (bubblewrap
    /// and libvips installed, user namespaces allowed). The service checks it at start.
    public func checkSandbox() async throws(PhotoError) {
        let (sandbox, workers) = (self.sandbox, self.workers)
        do {
            try await inJob { job throws(PhotoError) in
                _ = try Self.run(
                    "command -v vipsthumbnail >/dev/null && command -v vipsheader >/dev/null", [], job: job, sandbox: sandbox, workers: workers)
            }
        } catch .unreadable(let why) {
            throw .sandboxUnavailable(why)
        }
    }

    /// `body` on one of the workers' threads, with a job directory of its own, removed after.
    private func inJob<T: Sendable>(_ body: @Sendable @escaping (JobDirectory) throws(PhotoError) -> T) async throws(PhotoError) -> T {
        let workDirectory = self.workDirectory
        let result: Result<T, PhotoError>
        do {
            result = try await workers.run {
                Result { () throws(PhotoError) in
                    let job = try JobDirectory(in: workDirectory)
                    defer { job.remove() }
                    return try body(job)
                }
            }
        } catch {
            throw .sandboxUnavailable("the photo workers are shut down")
        }
        return try result.get()
    }

    /// The header's size and the loader that recognised it, read in the sandbox.
    private static func probe(
        _ job: JobDirectory, format: PhotoFormat, limits: Limits, sandbox: PhotoSandbox, workers: PhotoWorkers
    ) throws(PhotoError) {
        let output = try run(Self.probeScript, [], job: job, sandbox: sandbox, workers: workers)
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.count == 3, let width = Int(lines[0]), let height = Int(lines[1]), width > 0, height > 0 else {
            throw .unreadable("the probe's answer is malformed: \(output.prefix(200))")
        }
        guard lines[2] == format.loader else {
            throw .unreadable("the bytes start as \(format.rawValue) but \(lines[2].prefix(40)) read them")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= limits.maxPixels else {
            throw .tooManyPixels(width: width, height: height, limit: limits.maxPixels)
        }
    }

    private static func render(
        _ job: JobDirectory, format: PhotoFormat, sandbox: PhotoSandbox, workers: PhotoWorkers
    ) throws(PhotoError) -> SanitisedPhoto {
        _ = try run(Self.renderScript, [], job: job, sandbox: sandbox, workers: workers)
        var variants: [PhotoSize: SanitisedPhoto.Rendition] = [:]
        for variant in PhotoSize.allCases {
            guard let bytes = job.read("\(variant.rawValue).jpg") else { throw .unreadable("the \(variant.rawValue) variant is missing") }
            let structure = try JPEGStructure(bytes)
            guard max(structure.width, structure.height) <= variant.longSide else {
                throw .unreadable("the \(variant.rawValue) variant is \(structure.width)×\(structure.height)")
            }
            variants[variant] = .init(bytes: bytes, width: structure.width, height: structure.height)
        }
        return SanitisedPhoto(source: format, variants: variants)
    }

    /// One sandboxed run, its cost counted in `workers`; its stdout when it exits 0, else why not.
    private static func run(
        _ script: String, _ arguments: [String], job: JobDirectory, sandbox: PhotoSandbox, workers: PhotoWorkers
    ) throws(PhotoError) -> String {
        let (termination, cpu) = try SandboxedProcess.run(
            script: script, arguments: [sandbox.jobDirectory(job.path)] + arguments, directory: job.path, sandbox: sandbox)
        workers.record(cpu: cpu)
        let stderr = job.read(".stderr").map { String(decoding: $0.prefix(500), as: UTF8.self) } ?? ""
        switch termination {
        case .exited(0):
            return job.read(".stdout").map { String(decoding: $0.prefix(4096), as: UTF8.self) } ?? ""
        case .exited(let code) where stderr.hasPrefix("bwrap: "):
            // bubblewrap itself could not start it (no user namespaces): the deployment's
            // problem, not the upload's.
            throw .sandboxUnavailable("bubblewrap exited with \(code): \(stderr)")
        case .exited(let code):
            throw .unreadable("the worker exited with \(code): \(stderr)")
        case .signalled(let signal):
            throw .unreadable("the worker was killed by signal \(signal): \(stderr)")
        case .timedOut:
            throw .unreadable("the worker ran past \(sandbox.limits.wallClock)")
        }
    }

    /// `$1` is the job's directory. Untrusted loaders (libvips' own list: those not fuzzed or
    /// not meant for hostile input) are blocked wherever the upload is read.
    static let probeScript = """
        set -e
        cd "$1"
        export VIPS_BLOCK_UNTRUSTED=1 VIPS_CONCURRENCY=1
        vipsheader -f width in
        vipsheader -f height in
        vipsheader -f vips-loader in
        """

    /// Decodes once into `full` (oriented, in sRGB) as libvips' own uncompressed format, then
    /// writes each variant from it: so a HEIC is decoded once, and no variant is a JPEG of a
    /// JPEG. `strip` drops every metadata block; `background` flattens transparency on white.
    /// The later steps read only our own intermediate and must not rotate it again.
    static var renderScript: String {
        func save(_ variant: PhotoSize) -> String {
            "\(variant.rawValue).jpg[Q=\(variant.quality),strip,optimize-coding,background=255]"
        }
        let full = PhotoSize.full
        var lines = [
            "set -e",
            "cd \"$1\"",
            "export VIPS_CONCURRENCY=1",
            "VIPS_BLOCK_UNTRUSTED=1 vipsthumbnail in --size '\(full.longSide)x\(full.longSide)>' --export-profile srgb -o full.v",
            "vips copy full.v '\(save(full))'",
        ]
        for variant in PhotoSize.allCases where variant != full {
            lines.append("vipsthumbnail full.v --no-rotate --size '\(variant.longSide)x\(variant.longSide)>' -o '\(save(variant))'")
        }
        lines.append("rm -f full.v in")
        return lines.joined(separator: "\n")
    }
}
