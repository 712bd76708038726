#ifndef CSPAWN_SHIM_H
#define CSPAWN_SHIM_H
// The parts of glibc's posix_spawn that Swift's Glibc module hides behind _GNU_SOURCE
// (SandboxedProcess): a new session for the child, and closing every inherited descriptor
// above stderr, so that a decoder never holds one of the service's sockets.
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int);

static inline int lr_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// POSIX_SPAWN_SETSID (glibc 2.26 and later): the child starts its own session.
static const short lr_spawn_setsid = 0x80;

/// A descriptor that polls readable when `pid` exits (Linux 5.3 and later), so that a thread
/// can wait for a child with a deadline and kill it, never a reused pid, before reaping it.
/// syscall(2) is variadic, which Swift cannot call.
static inline int lr_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
#endif
