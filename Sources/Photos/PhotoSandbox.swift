/// What a decoder runs inside: always the resource limits, and with bubblewrap also
/// namespaces of its own. Without bubblewrap's namespaces (`.limitsOnly`: a container that
/// forbids user namespaces, where the container is the boundary) the limits still hold.
public struct PhotoSandbox: Sendable, Hashable {
    public enum Isolation: String, Sendable, Hashable, CaseIterable {
        /// bubblewrap: no network, no IPC, its own pid namespace, `/usr` read-only, the job's
        /// directory the only writable place, every capability dropped.
        case bubblewrap
        /// rlimits, a clean environment and a session of its own, nothing more.
        case limitsOnly = "limits-only"
    }

    public struct Limits: Sendable, Hashable {
        /// Address space (RLIMIT_AS): a memory bomb fails its allocation, not the machine.
        public var memoryBytes: Int
        /// CPU time (RLIMIT_CPU), all threads together.
        public var cpuSeconds: Int
        /// The largest file it may write (RLIMIT_FSIZE): bounds its outputs and spills.
        public var fileBytes: Int
        /// Killed at this deadline, hung or not.
        public var wallClock: Duration

        public init(memoryBytes: Int = 1 << 30, cpuSeconds: Int = 20, fileBytes: Int = 64 << 20, wallClock: Duration = .seconds(30)) {
            self.memoryBytes = memoryBytes
            self.cpuSeconds = cpuSeconds
            self.fileBytes = fileBytes
            self.wallClock = wallClock
        }
    }

    public var isolation: Isolation
    public var limits: Limits

    public init(isolation: Isolation = .bubblewrap, limits: Limits = Limits()) {
        self.isolation = isolation
        self.limits = limits
    }

    /// `prlimit` (util-linux, in every Debian image) sets the limits and then executes the
    /// rest in the same process, so the pid SandboxedProcess waits for is the sandbox's.
    func commandLine(script: String, arguments: [String], directory: String) -> [String] {
        let limited = [
            "/usr/bin/prlimit", "--as=\(limits.memoryBytes)", "--cpu=\(limits.cpuSeconds)",
            "--fsize=\(limits.fileBytes)", "--nofile=64", "--core=0", "--",
        ]
        let shell = ["/bin/sh", "-c", script, "photo-worker"] + arguments
        switch isolation {
        case .limitsOnly:
            return limited + shell
        case .bubblewrap:
            return limited + [
                "/usr/bin/bwrap",
                "--ro-bind", "/usr", "/usr",
                "--symlink", "usr/lib", "/lib",
                "--symlink", "usr/lib64", "/lib64",
                "--symlink", "usr/bin", "/bin",
                "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
                "--bind", directory, "/job",
                // No /proc: the decoders need none, and inside a container (podman's masked
                // /proc) mounting a new one is refused.
                "--dev", "/dev",
                "--tmpfs", "/tmp",
                "--chdir", "/job",
                "--unshare-all",
                // The shell is the namespace's first process, so bwrap itself waits for it
                // and the kernel adds the whole tree's CPU to what the service reaps; with
                // bwrap's own init in between, that reports through a pipe, is never waited
                // for, and its CPU is lost.
                "--as-pid-1",
                "--die-with-parent",
                "--new-session",
                "--cap-drop", "ALL",
                "--clearenv",
                "--setenv", "PATH", "/usr/bin:/bin",
                "--setenv", "TMPDIR", "/job",
                "--setenv", "HOME", "/job",
                "--",
            ] + shell
        }
    }

    /// The directory the script sees as its own: `/job` inside bubblewrap, `directory` as it
    /// is without.
    func jobDirectory(_ directory: String) -> String {
        isolation == .bubblewrap ? "/job" : directory
    }
}
