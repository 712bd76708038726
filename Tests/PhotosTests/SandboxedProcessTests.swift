import Foundation
import Testing

@testable import Photos

/// What a decoder can reach from inside the sandbox, tried with a shell in its place.
@Suite struct SandboxedProcessTests {
    private func inSandbox(_ script: String, _ sandbox: PhotoSandbox = PhotoSandbox()) throws -> (Termination, String) {
        let job = try JobDirectory(in: FileManager.default.temporaryDirectory.path)
        defer { job.remove() }
        let termination = try SandboxedProcess.run(
            script: script, arguments: [sandbox.jobDirectory(job.path)], directory: job.path, sandbox: sandbox)
        let output = (job.read(".stdout") ?? []) + (job.read(".stderr") ?? [])
        return (termination, String(decoding: output, as: UTF8.self))
    }

    @Test func thereIsNoNetworkButLoopback() throws {
        let (termination, output) = try inSandbox("cat /proc/net/dev")
        #expect(termination == .exited(0))
        let interfaces = output.split(separator: "\n").dropFirst(2).compactMap { $0.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) }
        #expect(interfaces == ["lo"], "\(output)")
    }

    @Test func onlyUsrAndTheJobAreThere() throws {
        let (termination, output) = try inSandbox("ls / ; ls /etc; test -e /etc/passwd && echo PASSWD; test -e /root && echo ROOT; touch /usr/x 2>&1 || echo READONLY; touch \"$1/x\" && echo WRITABLE")
        #expect(termination == .exited(0))
        #expect(!output.contains("PASSWD") && !output.contains("ROOT") && !output.contains("work"), "\(output)")
        #expect(output.contains("READONLY") && output.contains("WRITABLE"), "\(output)")
    }

    @Test func noDescriptorOfTheServiceIsInherited() throws {
        // One of ours, open without close-on-exec, as a careless library's would be.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        let (termination, output) = try inSandbox("ls /proc/self/fd")
        #expect(termination == .exited(0))
        // 0, 1, 2 and the one ls opens to read the directory.
        #expect(output.split(separator: "\n").count <= 4 && !output.split(separator: "\n").contains("\(leaked)"[...]), "\(output)")
    }

    @Test func aHangIsKilledAtTheDeadline() throws {
        let started = ContinuousClock.now
        let (termination, _) = try inSandbox("sleep 60", PhotoSandbox(limits: .init(wallClock: .milliseconds(300))))
        #expect(termination == .timedOut)
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func aMemoryBombFailsItsAllocation() throws {
        let (termination, output) = try inSandbox(
            "awk 'BEGIN { s = \"x\"; while (1) s = s s }'", PhotoSandbox(limits: .init(memoryBytes: 64 << 20)))
        #expect(termination != .exited(0) && termination != .timedOut, "\(termination) \(output)")
    }

    @Test func aSpinningDecoderRunsOutOfCPU() throws {
        let (termination, _) = try inSandbox("while :; do :; done", PhotoSandbox(limits: .init(cpuSeconds: 1)))
        // RLIMIT_CPU: SIGXCPU at the soft limit (prlimit sets soft and hard alike, then SIGKILL).
        #expect(termination == .signalled(SIGXCPU) || termination == .signalled(SIGKILL), "\(termination)")
    }

    @Test func withoutBubblewrapTheLimitsStillHold() throws {
        let sandbox = PhotoSandbox(isolation: .limitsOnly, limits: .init(memoryBytes: 64 << 20, wallClock: .milliseconds(300)))
        #expect(try inSandbox("sleep 60", sandbox).0 == .timedOut)
        #expect(try inSandbox("awk 'BEGIN { s = \"x\"; while (1) s = s s }'", sandbox).0 != .exited(0))
    }
}
