/* rtn-init's Landlock policy as data: the rights each ABI can handle, the paths the agent
 * reads, the /dev nodes it may use and the rights it has in its writable directories.
 * init/landlock.c alone includes it and turns these tables into a ruleset (the walk for
 * "all but", the choice of what is handled per policy and flag); docs/policy.md has the
 * table and the reasons for each rule.
 *
 * To add a rule: a /dev node is a row of dev_rules; a system directory readable without
 * namespaces is a name in RTN_HOST_BASE_DIRS (common/sandbox_dirs.h, shared with the mounts);
 * a new kernel ABI is a row of abi_masks and ABI_KNOWN. Then change the tests with it:
 * tests/unit/init/test_landlock.c (the ruleset, right by right), tests/security/policy.sh and
 * fs.sh (a full sandbox's reads and writes), tests/security/landlock_mode.sh (--isolation
 * landlock, where these tables are the only wall), and docs/policy.md's table. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/sandbox_dirs.h"
#include "common/syscall.h"

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_RX (FS_READ | LANDLOCK_ACCESS_FS_EXECUTE)
#define FS_RW_FILE (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE)
/* Rights that make sense on a non-directory; landlock_add_rule(2) rejects others (EINVAL). */
#define FS_FILE_RIGHTS                                                                             \
        (LANDLOCK_ACCESS_FS_EXECUTE | FS_RW_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                   \
         LANDLOCK_ACCESS_FS_IOCTL_DEV | LANDLOCK_ACCESS_FS_RESOLVE_UNIX)
#define FS_DEVICES (LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK)
/* ABI 1: every right from EXECUTE (bit 0) to MAKE_SYM (bit 12). */
#define FS_V1 ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1)
#define FS_V2 (FS_V1 | LANDLOCK_ACCESS_FS_REFER)
#define FS_V3 (FS_V2 | LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_V5 (FS_V3 | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define FS_V9 (FS_V5 | LANDLOCK_ACCESS_FS_RESOLVE_UNIX)
#define NET_TCP (LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP)
#define SCOPES (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL)
#define ABI_KNOWN 9

/* What each ABI can handle. ABI 7 only adds audit-logging flags to restrict_self, ABI 8
 * (Linux 7.0) a flag to restrict every thread at once; ABI 9 (Linux 7.1) rules connect and
 * sendmsg to pathname unix sockets (RESOLVE_UNIX). */
static const struct rtn_landlock_ruleset_attr abi_masks[ABI_KNOWN + 1] = {
        [1] = {FS_V1, 0, 0},
        [2] = {FS_V2, 0, 0},
        [3] = {FS_V3, 0, 0},
        [4] = {FS_V3, NET_TCP, 0},
        [5] = {FS_V5, NET_TCP, 0},
        [6] = {FS_V5, NET_TCP, SCOPES},
        [7] = {FS_V5, NET_TCP, SCOPES},
        [8] = {FS_V5, NET_TCP, SCOPES},
        [9] = {FS_V9, NET_TCP, SCOPES},
};

/* The /dev nodes a shell and ordinary tools need (the sandbox's minimal /dev). Missing ones
 * are skipped: no node, no access. ioctl only on terminals (ABI 5 checks IOCTL_DEV). `ns`:
 * only where the sandbox mounted its own (INIT_LANDLOCK_HOST has none): the host's /dev/pts
 * holds every terminal of every user on the machine, and its /dev/shm every program's shared
 * memory. Without them a command keeps the terminal rtn gave it (its stdio and /dev/tty, both
 * opened before Landlock applies) but cannot open a new pty or a POSIX shm object. */
static const struct {
        const char *path;
        uint64_t access;
        bool ns;
} dev_rules[] = {
        {"/dev/null", FS_RW_FILE, false},
        {"/dev/zero", FS_RW_FILE, false},
        {"/dev/full", FS_RW_FILE, false},
        {"/dev/random", FS_RW_FILE, false},
        {"/dev/urandom", FS_RW_FILE, false},
        {"/dev/tty", FS_RW_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV, false},
        {"/dev/ptmx", FS_RW_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV, true},
        {"/dev/pts", FS_RW_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV | LANDLOCK_ACCESS_FS_READ_DIR, true},
        /* POSIX shm and semaphores (shm_open, Python multiprocessing) */
        {"/dev/shm", FS_V5 & ~FS_DEVICES, true},
};

/* The agent's rights in its writable directories: everything but creating device nodes (it
 * never needs one, and a writable dir is where a stray mknod would land). */
#define AGENT_WRITE_RIGHTS (FS_V9 & ~FS_DEVICES)

/* --user root (INIT_LANDLOCK_ROOTFS): the agent may write the rootfs, whose changes land in
 * the overlay's upper as a package manager's do, but not these: the kernel's own files (in
 * the sandbox's user namespace uid 0 is the owner of its net sysctls and of what else the
 * namespace owns, and an owner needs no capability to write) and the device nodes, which
 * keep dev_rules' rights only. "/" itself accepts no new entries. */
static const char *const rootfs_closed[] = {"/proc", "/sys", "/dev"};

/* Without a mount namespace (INIT_LANDLOCK_HOST) "/" is the host's own root: only these
 * system directories are readable and executable, plus /proc for the program's own status.
 * /root, /home, /srv, /run, /var and every user's data stay out of reach. */
static const char *const host_read[] = {RTN_HOST_BASE_DIRS(RTN_DIR_ABS) "/proc"};
