/* rtn-init's seccomp policy as data: which syscall gets which treatment. Nothing includes
 * it but the build-time generator, tools/gen-seccomp.c, which turns these lists into the BPF
 * programs init/seccomp.c installs (docs/policy.md, "seccomp", explains each choice; the
 * generator's head comment how the programs are built and checked).
 *
 * To add a rule: put the syscall's name in one list below (allow_names, trace_names,
 * eperm_names, enosys_names) or, for a check on an argument, a row in special[] with one of
 * the kinds (a new kind needs its emitter in gen-seccomp.c's emit_block). A name may stand in
 * one place only: the generator fails the build on a name listed twice, and lists in its
 * output the numbers of this architecture that no list classifies (they get ENOSYS). Then change
 * the tests with it: tests/security/ syscalls.sh (what a command inside may and may not call, and
 * the errno it gets), tests/unit/init/test_seccomp.c (the installed filter, syscall by syscall),
 * and docs/policy.md's table. The filter for the agent, the one for --allow-ptrace, the file
 * server's and provisioning's all come from these lists. */
#pragma once

enum kind {
        K_ALLOW, /* allowed unconditionally */
        K_EPERM, /* denied: dangerous or privileged; EPERM like a missing capability */
        K_TRACE, /* EPERM, but allowed to the agent of a sandbox made with --allow-ptrace */
        K_ENOSYS, /* denied as "not implemented" so libc and tools fall back */
        K_IOCTL, /* allowed but TIOCSTI/TIOCLINUX → EPERM */
        K_CLONE, /* allowed unless a CLONE_NEW* flag is set → EPERM */
        K_SOCKET, /* allowed for AF_UNIX, AF_INET, AF_INET6, AF_NETLINK; else EAFNOSUPPORT */
        K_PERSONA, /* allowed for the harmless personalities; else EPERM */
        K_SELF, /* allowed when arg 0 (a pid) is 0, the caller; else EPERM */
        K_MODE1, /* allowed unless the mode (arg 1) has S_ISUID or S_ISGID: EPERM */
        K_MODE2, /* the same for a mode in arg 2 */
        K_OPEN, /* allowed unless flags (arg 1) create and the mode (arg 2) is set-id */
        K_OPENAT, /* the same with flags in arg 2 and the mode in arg 3 */
        K_OPENAT2, /* the agent: ENOSYS (its mode is behind a pointer); others: allowed */
};

struct rule {
        const char *name;
        enum kind kind;
};

/* clang-format off */
/* The syscalls every policy allows: ordinary file, memory, process, time, IPC and socket
 * work. Names unknown on the build architecture (32-bit variants, newer calls than this
 * libseccomp knows) are skipped and so fall to the default ENOSYS, which is safe. */
static const char *const allow_names[] = {
        /* files and directories */
        "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev",
        "preadv2", "pwritev2", "close", "close_range",
        "lseek", "_llseek", "dup", "dup2", "dup3", "fcntl", "fcntl64", "flock", "fsync",
        "fdatasync", "sync", "syncfs", "sync_file_range", "truncate", "ftruncate",
        "truncate64", "ftruncate64", "fallocate", "fadvise64", "fadvise64_64", "readahead",
        "sendfile", "sendfile64", "splice", "tee", "vmsplice", "copy_file_range", "stat",
        "fstat", "lstat", "stat64", "fstat64", "lstat64", "newfstatat", "fstatat64", "statx",
        "statfs", "fstatfs", "statfs64", "fstatfs64", "access", "faccessat", "faccessat2",
        "getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir",
        "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "unlink",
        "unlinkat", "readlink", "readlinkat",
        "chown", "fchown", "lchown", "fchownat", "chown32", "fchown32", "lchown32", "umask",
        "utime", "utimes", "utimensat", "futimesat", "getxattr",
        "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr", "listxattr",
        "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
        "getxattrat", "setxattrat", "listxattrat", "removexattrat", "file_getattr",
        "file_setattr", "inotify_init", "inotify_init1", "inotify_add_watch",
        "inotify_rm_watch", "memfd_create", "io_setup", "io_destroy", "io_submit", "io_cancel",
        "io_getevents", "io_pgetevents",
        /* memory */
        "brk", "mmap", "mmap2", "mprotect", "munmap", "mremap", "madvise", "mincore", "msync",
        "mlock", "mlock2", "munlock", "mlockall", "munlockall", "remap_file_pages",
        "pkey_alloc", "pkey_free", "pkey_mprotect", "membarrier", "mbind", "get_mempolicy",
        "set_mempolicy", "set_mempolicy_home_node", "map_shadow_stack", "mseal", "cachestat",
        "memfd_secret",
        /* processes, threads, signals, time */
        "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid",
        "waitpid", "getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp", "getsid",
        "setsid", "kill", "tkill", "tgkill", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
        "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
        "rt_sigsuspend", "sigaltstack", "sigreturn", "pause", "alarm", "getitimer",
        "setitimer", "nanosleep", "clock_nanosleep", "clock_gettime", "clock_getres",
        "gettimeofday", "time", "times", "timer_create", "timer_settime", "timer_gettime",
        "timer_getoverrun", "timer_delete", "timerfd_create", "timerfd_settime",
        "timerfd_gettime", "getrusage", "getrlimit", "ugetrlimit", "setrlimit",
        "getpriority", "setpriority", "sched_yield", "sched_getaffinity", "sched_setaffinity",
        "sched_getparam", "sched_setparam", "sched_getscheduler", "sched_setscheduler",
        "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval",
        "sched_getattr", "sched_setattr", "prctl", "arch_prctl", "set_tid_address",
        "set_robust_list", "get_robust_list", "futex", "futex_waitv", "futex_wake",
        "futex_wait", "futex_requeue", "rseq", "restart_syscall", "uname", "sysinfo",
        "getrandom", "getcpu", "capget", "capset", "get_thread_area", "set_thread_area",
        "ioprio_get", "ioprio_set", "pidfd_open", "pidfd_send_signal", "process_mrelease",
        "seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
        /* credentials (capabilities decide; the agent has none) */
        "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
        "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
        "setfsuid", "setfsgid", "getuid32", "geteuid32", "getgid32", "getegid32",
        "getresuid32", "getresgid32", "getgroups32", "setuid32", "setgid32", "setreuid32",
        "setregid32", "setresuid32", "setresgid32", "setgroups32", "setfsuid32", "setfsgid32",
        /* events and IPC */
        "signalfd", "signalfd4", "eventfd", "eventfd2", "epoll_create", "epoll_create1",
        "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select",
        "_newselect", "pselect6", "pipe", "pipe2", "msgget", "msgsnd", "msgrcv", "msgctl",
        "semget", "semop", "semtimedop", "semctl", "shmget", "shmat", "shmdt", "shmctl",
        "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
        "mq_getsetattr",
        /* sockets (socket() itself is K_SOCKET) */
        "socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname",
        "getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
        "shutdown", "setsockopt", "getsockopt",
};

/* Denied with EPERM in every policy (docs/policy.md, "seccomp"), and a few of the same kind. */
/* What strace and gdb need of another process: EPERM like eperm_names, but allowed by the
 * agent_trace filters (docs/policy.md, "--allow-ptrace"). */
static const char *const trace_names[] = {"ptrace", "process_vm_readv", "process_vm_writev"};

static const char *const eperm_names[] = {
        /* namespaces and mounts: the sandbox's walls */
        "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
        "fsmount", "fspick", "open_tree", "open_tree_attr", "move_mount", "mount_setattr",
        /* kernel keyrings: not namespaced */
        "keyctl", "add_key", "request_key",
        /* other processes' memory and fds (ptrace and process_vm_*: trace_names) */
        "pidfd_getfd", "kcmp", "process_madvise",
        /* large kernel attack surface */
        "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
        "io_uring_register", "fanotify_init", "fanotify_mark",
        /* the machine itself */
        "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
        "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "adjtimex",
        "clock_adjtime", "stime", "syslog", "quotactl", "quotactl_fd", "sethostname",
        "setdomainname", "vhangup", "iopl", "ioperm", "modify_ldt", "lookup_dcookie",
        "uselib", "_sysctl",
        /* file handles bypass path-based checks (CVE-2014-3519, "shocker") */
        "open_by_handle_at", "name_to_handle_at",
};

/* Denied with ENOSYS on purpose: callers fall back to an older, checkable interface. */
static const char *const enosys_names[] = {
        "clone3",    /* flags live in memory seccomp cannot read; glibc falls back to clone */
        "statmount", /* util-linux falls back to /proc/self/mountinfo */
        "listmount",
};

/* clang-format on */

static const struct rule special[] = {
        {"ioctl", K_IOCTL},
        {"clone", K_CLONE},
        {"unshare", K_CLONE},
        {"socket", K_SOCKET},
        {"personality", K_PERSONA},
        /* Another process's limits: rtn-init's loop thread runs as the agent's uid, and a
         * lowered RLIMIT_NOFILE or RLIMIT_CPU there would cripple the sandbox's PID 1
         * (docs/policy.md, "The confined loop"). The caller's own (pid 0) stay open. */
        {"prlimit64", K_SELF},
        /* Set-id modes (S_ISUID, S_ISGID): the mode's argument, or flags and mode. */
        {"chmod", K_MODE1},
        {"fchmod", K_MODE1},
        {"fchmodat", K_MODE2},
        {"fchmodat2", K_MODE2},
        {"creat", K_MODE1},
        {"mknod", K_MODE1},
        {"mknodat", K_MODE2},
        {"open", K_OPEN},
        {"openat", K_OPENAT},
        {"openat2", K_OPENAT2},
};
