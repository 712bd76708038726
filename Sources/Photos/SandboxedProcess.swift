#if canImport(Glibc)
import Glibc
#endif
import CSpawn

/// How a sandboxed command ended.
public enum Termination: Sendable, Equatable {
    case exited(Int32)
    /// Killed by a signal: a crash (SIGSEGV, SIGABRT), the CPU limit (SIGXCPU, SIGKILL) or
    /// the memory limit turned into an abort.
    case signalled(Int32)
    /// Still running at the wall-clock deadline, and killed then.
    case timedOut
}

/// One run of `/bin/sh -c script` in its own session, with its descriptors closed above
/// stderr, its stdout and stderr in files, the limits applied by `prlimit` and, for
/// `.bubblewrap`, in namespaces of its own: no network, no other process, nothing of the file
/// system but `/usr` read-only and `directory` as `/job`.
///
/// Blocking: call it from a thread that may wait (PhotoWorkers' pool), never from the
/// cooperative pool or an event loop.
enum SandboxedProcess {
    static func run(
        script: String, arguments: [String], directory: String, sandbox: PhotoSandbox
    ) throws(PhotoError) -> (Termination, cpu: Duration) {
        let argv = sandbox.commandLine(script: script, arguments: arguments, directory: directory)
        let pid = try spawn(argv, directory: directory)
        let pidfd = lr_pidfd_open(pid)
        defer { if pidfd >= 0 { close(pidfd) } }
        guard pidfd >= 0 else {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            throw PhotoError.sandboxUnavailable("pidfd_open: \(String(cString: strerror(errno))) (Linux 5.3 or later is needed)")
        }
        var timedOut = false
        var deadline = ContinuousClock.now + sandbox.limits.wallClock
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { timedOut = true; break }
            var poller = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            let (seconds, attoseconds) = left.components
            let ready = poll(&poller, 1, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
            if ready > 0 { break }
            if ready < 0, errno != EINTR { deadline = .now }  // cannot wait: end it now
        }
        // Not reaped yet, so the pid is still this child's: killing it can hit no other.
        // bubblewrap's sandboxed children die with it (--die-with-parent, its pid namespace).
        if timedOut { kill(pid, SIGKILL) }
        var status: Int32 = 0
        var resources = rusage()
        while wait4(pid, &status, 0, &resources) < 0, errno == EINTR {}
        // User and system time of the whole tree (each process's reaped children are added
        // to it). Not `ru_maxrss`: a spawned child starts from the service's own peak
        // (the kernel keeps the larger at `exec`), so it would say nothing of the worker.
        let cpu = Self.duration(resources.ru_utime) + Self.duration(resources.ru_stime)
        if timedOut { return (.timedOut, cpu) }
        let signal = status & 0x7F
        guard signal == 0 else { return (.signalled(signal), cpu) }
        let code = (status >> 8) & 0xFF
        // bubblewrap reports a child killed by a signal as 128 + the signal, as shells do.
        return (sandbox.isolation == .bubblewrap && code > 128 ? .signalled(code - 128) : .exited(code), cpu)
    }

    private static func duration(_ time: timeval) -> Duration {
        .seconds(time.tv_sec) + .microseconds(time.tv_usec)
    }

    private static func spawn(_ argv: [String], directory: String) throws(PhotoError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/.stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/.stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        lr_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own session (a signal to the service's group never reaches it), no blocked
        // signals, and every signal at its default action.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | lr_spawn_setsid)
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let variables: [String] = ["PATH=/usr/bin:/bin", "LC_ALL=C"]
        let environment = variables.map { strdup($0) } + [nil]
        defer { environment.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, environment)
        guard result == 0 else {
            throw PhotoError.sandboxUnavailable("cannot start \(argv[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}
