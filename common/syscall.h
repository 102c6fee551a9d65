/* Thin wrappers for the syscalls glibc 2.36 does not wrap (or wraps behind headers that clash
 * with <linux/mount.h>). Every one is static inline, returns what the kernel returns with
 * errno set (-1 on failure), and falls back to ENOSYS when the build headers lack the number.
 * This is the only place raw syscall numbers appear (house style). Structures and constants
 * newer than the build's kernel headers (Landlock ABI 4-9) are defined here under rtn_ names
 * so the binary can use them when the running kernel has them. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1U << 0)
#endif

/* glibc wraps these two; musl 1.2.3 (rtn-init's libc when musl-gcc is there) does not. */
static inline int sys_renameat2(int olddir, const char *oldpath, int newdir, const char *newpath,
                                unsigned flags) {
        return (int)syscall(__NR_renameat2, olddir, oldpath, newdir, newpath, flags);
}
static inline ssize_t sys_getdents64(int fd, void *buf, size_t len) {
        return (ssize_t)syscall(__NR_getdents64, fd, buf, len);
}
/* musl on 64-bit wraps sendmmsg as one sendmsg per message (its msghdr's padding); the
 * system call is one (the padding is zero in a msghdr made by an initializer). */
struct mmsghdr;
static inline int sys_sendmmsg(int fd, struct mmsghdr *msgs, unsigned n, int flags) {
        return (int)syscall(__NR_sendmmsg, fd, msgs, n, flags);
}

static inline pid_t sys_clone3(struct clone_args *args, size_t size) {
        return (pid_t)syscall(__NR_clone3, args, size);
}
/* A plain child with a pidfd through clone(2), for where a seccomp profile denies clone3:
 * with CLONE_PIDFD the pidfd is written where parent_tid points (x86-64 argument order:
 * flags, stack, parent_tid, child_tid, tls). */
static inline pid_t sys_clone_pidfd(int *ret_pidfd) {
        return (pid_t)syscall(__NR_clone, CLONE_PIDFD | SIGCHLD, 0, ret_pidfd, 0, 0);
}

static inline int sys_pivot_root(const char *new_root, const char *put_old) {
        return (int)syscall(__NR_pivot_root, new_root, put_old);
}

static inline int sys_close_range(unsigned first, unsigned last, unsigned flags) {
        return (int)syscall(__NR_close_range, first, last, flags);
}

static inline int sys_openat2(int dirfd, const char *path, struct open_how *how, size_t size) {
        return (int)syscall(__NR_openat2, dirfd, path, how, size);
}

static inline int sys_pidfd_open(pid_t pid, unsigned flags) {
        return (int)syscall(__NR_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags) {
        return (int)syscall(__NR_pidfd_send_signal, pidfd, sig, info, flags);
}

static inline int sys_pidfd_getfd(int pidfd, int targetfd, unsigned flags) {
        return (int)syscall(__NR_pidfd_getfd, pidfd, targetfd, flags);
}

static inline int sys_open_tree(int dfd, const char *path, unsigned flags) {
        return (int)syscall(__NR_open_tree, dfd, path, flags);
}

static inline int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to,
                                 unsigned flags) {
        return (int)syscall(__NR_move_mount, from_dfd, from, to_dfd, to, flags);
}

static inline int sys_mount_setattr(int dfd, const char *path, unsigned flags,
                                    struct mount_attr *attr, size_t size) {
        return (int)syscall(__NR_mount_setattr, dfd, path, flags, attr, size);
}

static inline int sys_fsopen(const char *fsname, unsigned flags) {
        return (int)syscall(__NR_fsopen, fsname, flags);
}

static inline int sys_fsconfig(int fd, unsigned cmd, const char *key, const void *value, int aux) {
        return (int)syscall(__NR_fsconfig, fd, cmd, key, value, aux);
}

static inline int sys_fsmount(int fd, unsigned flags, unsigned attr_flags) {
        return (int)syscall(__NR_fsmount, fd, flags, attr_flags);
}

/* Landlock. The build headers stop at ABI 3; these mirror the kernel's uapi for ABI <= 9. */
struct rtn_landlock_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net; /* ABI 4 */
        uint64_t scoped; /* ABI 6 */
};

struct rtn_landlock_net_port_attr {
        uint64_t allowed_access;
        uint64_t port;
};

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_FS_RESOLVE_UNIX /* ABI 9, Linux 7.1: connect/sendmsg to a pathname socket  \
                                         */
#define LANDLOCK_ACCESS_FS_RESOLVE_UNIX (1ULL << 16)
#endif
#ifndef LANDLOCK_RULE_NET_PORT
#define LANDLOCK_RULE_NET_PORT 2
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif

static inline int sys_landlock_create_ruleset(const struct rtn_landlock_ruleset_attr *attr,
                                              size_t size, uint32_t flags) {
        return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int sys_landlock_add_rule(int ruleset_fd, int rule_type, const void *rule_attr,
                                        uint32_t flags) {
        return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags);
}

static inline int sys_landlock_restrict_self(int ruleset_fd, uint32_t flags) {
        return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

/* seccomp(2) and capget/capset(2): glibc 2.36 wraps neither. */
struct __user_cap_header_struct;
struct __user_cap_data_struct;

static inline int sys_seccomp(unsigned op, unsigned flags, void *args) {
        return (int)syscall(__NR_seccomp, op, flags, args);
}

static inline int sys_capget(struct __user_cap_header_struct *hdr,
                             struct __user_cap_data_struct *data) {
        return (int)syscall(__NR_capget, hdr, data);
}

static inline int sys_capset(struct __user_cap_header_struct *hdr,
                             const struct __user_cap_data_struct *data) {
        return (int)syscall(__NR_capset, hdr, data);
}
