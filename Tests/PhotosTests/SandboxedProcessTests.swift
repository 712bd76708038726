import Foundation
import Testing

@testable import Photos

/// What a decoder can reach from inside the sandbox, tried with a shell in its place.
@Suite struct SandboxedProcessTests {
    private func inSandbox(_ script: String, _ sandbox: PhotoSandbox = PhotoSandbox()) throws -> (Termination, String) {
        let job = try JobDirectory(in: FileManager.default.temporaryDirectory.path)
        defer { job.remove() }
        let (termination, _) = try SandboxedProcess.run(
            script: script, arguments: [sandbox.jobDirectory(job.path)], directory: job.path, sandbox: sandbox)
        let output = (job.read(".stdout") ?? []) + (job.read(".stderr") ?? [])
        return (termination, String(decoding: output, as: UTF8.self))
    }

    private func cpu(_ script: String) throws -> Duration {
        let sandbox = PhotoSandbox()
        let job = try JobDirectory(in: FileManager.default.temporaryDirectory.path)
        defer { job.remove() }
        let (termination, cpu) = try SandboxedProcess.run(
            script: script, arguments: [sandbox.jobDirectory(job.path)], directory: job.path, sandbox: sandbox)
        #expect(termination == .exited(0))
        return cpu
    }

    /// The kernel's count for the whole tree (bwrap, the shell, its commands), which /metrics
    /// and the benchmark report: a shell counting to 200,000 in a child shell costs tens of
    /// milliseconds at least, on any machine; doing nothing costs less.
    @Test func theCPUAWorkerUsedIsMeasured() throws {
        let idle = try cpu("true")
        let busy = try cpu("sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'")
        #expect(busy > .milliseconds(20) && busy > idle, "\(busy) \(idle)")
    }

    /// A port listening on this machine's loopback: reachable from a process without the
    /// sandbox, not from one inside (its network namespace has a loopback of its own).
    @Test func theMachinesNetworkIsNotThere() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let connect = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/\(port)' 2>/dev/null && echo CONNECTED || echo REFUSED"
        let (outside, reached) = try inSandbox(connect, PhotoSandbox(isolation: .limitsOnly))
        #expect(outside == .exited(0) && reached.contains("CONNECTED"), "\(reached)")
        let (inside, refused) = try inSandbox(connect)
        #expect(inside == .exited(0) && refused.contains("REFUSED"), "\(refused)")
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
        // Every descriptor above stderr that a command can write to (there is no /proc to
        // list them): an external one, since a shell's own redirections borrow descriptors.
        try #require(leaked >= 3 && leaked < 1024)
        let (termination, output) = try inSandbox("bash -c 'exec 2>/dev/null; for fd in $(seq 3 1023); do /usr/bin/true >&$fd && echo $fd; done; true'")
        #expect(termination == .exited(0))
        #expect(output.split(separator: "\n").isEmpty, "open: \(output), ours: \(leaked)")
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
