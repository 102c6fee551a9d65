/* Attacks on the seccomp filters of init/seccomp.c: each test installs a policy's filter in a
 * forked child (after no_new_privs, as rtn-init does) and checks that the call fails with the
 * documented errno or kills the process, and that ordinary work still runs. Arguments are
 * chosen so that, unfiltered, a call as root fails differently (EFAULT, EINVAL) or succeeds:
 * an EPERM can only come from the filter. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "init/policy.h"
#include "tests/unit/init/child.h"

static int confine(int fd, enum init_policy policy) {
        struct rtn_error err = {0};
        CHILD_CHECK(fd, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
        CHILD_CHECK(fd, init_seccomp_install(policy, &err) == 0, "install: %s", err.msg);
        return 0;
}

static int check_namespaces(int fd, void *arg) {
        if (confine(fd, *(enum init_policy *)arg))
                return 1;
        CHILD_EXPECT_ERRNO(fd, unshare(CLONE_NEWUSER), EPERM);
        CHILD_EXPECT_ERRNO(fd, unshare(CLONE_NEWNS), EPERM);
        CHILD_EXPECT_ERRNO(fd, unshare(CLONE_NEWTIME), EPERM);
        /* high bits must not hide a CLONE_NEW* flag */
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_unshare, (1UL << 40) | CLONE_NEWNET), EPERM);
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM);
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0), EPERM);
        struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_clone3, &ca, sizeof ca), ENOSYS);
        CHILD_EXPECT_ERRNO(fd, setns(0, 0), EPERM);
        /* unshare of non-namespace state stays allowed */
        CHILD_CHECK(fd, unshare(CLONE_FILES) == 0, "unshare(CLONE_FILES)");
        return 0;
}

Test(init_seccomp_install, agent_blocks_namespaces) {
        enum init_policy p = INIT_POLICY_AGENT;
        struct child_result r = run_child(check_namespaces, &p);
        assert_child_ok(r);
}

Test(init_seccomp_install, provision_blocks_namespaces) {
        enum init_policy p = INIT_POLICY_PROVISION;
        struct child_result r = run_child(check_namespaces, &p);
        assert_child_ok(r);
}

/* The control: without the filter, root in this test can create a user namespace, so the
 * EPERM above is the filter's doing. */
static int check_unfiltered(int fd, void *arg) {
        CHILD_CHECK(fd, unshare(CLONE_NEWUSER) == 0, "unshare(CLONE_NEWUSER) unfiltered");
        return 0;
}

Test(init_seccomp_install, control_unfiltered_userns_works) {
        struct child_result r = run_child(check_unfiltered, NULL);
        assert_child_ok(r);
}

struct denied {
        const char *name;
        long nr;
        long a0, a1, a2, a3, a4;
        int want;
};

/* Bad pointers (1) and magic numbers make each call harmless even if it got through. */
static const struct denied denied_calls[] = {
        {"mount", SYS_mount, 0, 0, 0, 0, 0, EPERM},
        {"umount2", SYS_umount2, 1, 0, 0, 0, 0, EPERM},
        {"pivot_root", SYS_pivot_root, 1, 1, 0, 0, 0, EPERM},
        {"chroot", SYS_chroot, 1, 0, 0, 0, 0, EPERM},
        {"fsopen", SYS_fsopen, 1, 0, 0, 0, 0, EPERM},
        {"fsmount", SYS_fsmount, -1, 0, 0, 0, 0, EPERM},
        {"fspick", SYS_fspick, -1, 1, 0, 0, 0, EPERM},
        {"open_tree", SYS_open_tree, -1, 1, 0, 0, 0, EPERM},
        {"move_mount", SYS_move_mount, -1, 1, -1, 1, 0, EPERM},
        {"mount_setattr", SYS_mount_setattr, -1, 1, 0, 1, 0, EPERM},
        {"keyctl", SYS_keyctl, 0, 0, 0, 0, 0, EPERM},
        {"add_key", SYS_add_key, 1, 1, 0, 0, 0, EPERM},
        {"request_key", SYS_request_key, 1, 1, 0, 0, 0, EPERM},
        {"ptrace", SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0, 0, EPERM},
        {"process_vm_readv", SYS_process_vm_readv, 1, 1, 1, 1, 1, EPERM},
        {"process_vm_writev", SYS_process_vm_writev, 1, 1, 1, 1, 1, EPERM},
        {"bpf", SYS_bpf, 0, 1, 0, 0, 0, EPERM},
        {"perf_event_open", SYS_perf_event_open, 1, 0, -1, -1, 0, EPERM},
        {"userfaultfd", SYS_userfaultfd, 0, 0, 0, 0, 0, EPERM},
        {"io_uring_setup", SYS_io_uring_setup, 1, 1, 0, 0, 0, EPERM},
        {"io_uring_enter", SYS_io_uring_enter, -1, 0, 0, 0, 0, EPERM},
        {"io_uring_register", SYS_io_uring_register, -1, 0, 0, 0, 0, EPERM},
        {"kexec_load", SYS_kexec_load, 0, 0, 1, 0, 0, EPERM},
        {"kexec_file_load", SYS_kexec_file_load, -1, -1, 0, 1, 0, EPERM},
        {"init_module", SYS_init_module, 1, 0, 1, 0, 0, EPERM},
        {"finit_module", SYS_finit_module, -1, 1, 0, 0, 0, EPERM},
        {"delete_module", SYS_delete_module, 1, 0, 0, 0, 0, EPERM},
        {"reboot", SYS_reboot, 0, 0, 0, 0, 0, EPERM},
        {"swapon", SYS_swapon, 1, 0, 0, 0, 0, EPERM},
        {"swapoff", SYS_swapoff, 1, 0, 0, 0, 0, EPERM},
        {"acct", SYS_acct, 1, 0, 0, 0, 0, EPERM},
        {"settimeofday", SYS_settimeofday, 1, 0, 0, 0, 0, EPERM},
        {"clock_settime", SYS_clock_settime, 0, 1, 0, 0, 0, EPERM},
        {"adjtimex", SYS_adjtimex, 1, 0, 0, 0, 0, EPERM},
        {"clock_adjtime", SYS_clock_adjtime, 0, 1, 0, 0, 0, EPERM},
        {"open_by_handle_at", SYS_open_by_handle_at, -1, 1, 0, 0, 0, EPERM},
        {"name_to_handle_at", SYS_name_to_handle_at, -1, 1, 1, 1, 0, EPERM},
        {"quotactl", SYS_quotactl, 0, 1, 0, 1, 0, EPERM},
        {"syslog", SYS_syslog, -1, 0, 0, 0, 0, EPERM},
        {"setns", SYS_setns, -1, 0, 0, 0, 0, EPERM},
        {"pidfd_getfd", SYS_pidfd_getfd, -1, 0, 0, 0, 0, EPERM},
        {"clone3", SYS_clone3, 1, 1, 0, 0, 0, ENOSYS},
        {"unknown 1000", 1000, 0, 0, 0, 0, 0, ENOSYS},
        {"unknown 4095", 4095, 0, 0, 0, 0, 0, ENOSYS},
};

static int check_denied(int fd, void *arg) {
        if (confine(fd, *(enum init_policy *)arg))
                return 1;
        for (size_t i = 0; i < ARRAY_SIZE(denied_calls); i++) {
                const struct denied *d = &denied_calls[i];
                errno = 0;
                long r = syscall(d->nr, d->a0, d->a1, d->a2, d->a3, d->a4, 0);
                if (r != -1 || errno != d->want) {
                        dprintf(fd, "%s: returned %ld errno %d (%s), want %d\n", d->name, r, errno,
                                strerror(errno), d->want);
                        return 1;
                }
        }
        return 0;
}

Test(init_seccomp_install, agent_denies_table) {
        enum init_policy p = INIT_POLICY_AGENT;
        struct child_result r = run_child(check_denied, &p);
        assert_child_ok(r);
}

Test(init_seccomp_install, provision_denies_table) {
        enum init_policy p = INIT_POLICY_PROVISION;
        struct child_result r = run_child(check_denied, &p);
        assert_child_ok(r);
}

static int check_args(int fd, void *arg) {
        if (confine(fd, INIT_POLICY_AGENT))
                return 1;
        char c = 'x';
        /* the kernel truncates ioctl's cmd to 32 bits; the filter must too */
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_ioctl, 0, TIOCSTI, &c), EPERM);
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c), EPERM);
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_ioctl, 0, (0xdeadUL << 32) | TIOCLINUX, &c), EPERM);
        /* other ioctls pass: FIONREAD on a pipe */
        int p[2], n = -1;
        CHILD_CHECK(fd, pipe(p) == 0, "pipe");
        CHILD_CHECK(fd, ioctl(p[0], FIONREAD, &n) == 0 && n == 0, "FIONREAD");
        /* socket families */
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHILD_CHECK(fd, s >= 0, "AF_UNIX");
        s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        CHILD_CHECK(fd, s >= 0, "AF_INET6");
        CHILD_EXPECT_ERRNO(fd, socket(AF_PACKET, SOCK_RAW, 0), EAFNOSUPPORT);
        CHILD_EXPECT_ERRNO(fd, socket(AF_VSOCK, SOCK_STREAM, 0), EAFNOSUPPORT);
        CHILD_EXPECT_ERRNO(fd, socket(AF_ALG, SOCK_SEQPACKET, 0), EAFNOSUPPORT);
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_socket, (1UL << 32) | AF_PACKET, SOCK_RAW, 0),
                           EAFNOSUPPORT);
        /* personality: query and PER_LINUX pass, ASLR off does not */
        CHILD_CHECK(fd, personality(0xffffffff) >= 0, "personality query");
        CHILD_CHECK(fd, personality(PER_LINUX) >= 0, "personality PER_LINUX");
        CHILD_EXPECT_ERRNO(fd, personality(PER_LINUX | ADDR_NO_RANDOMIZE), EPERM);
        CHILD_EXPECT_ERRNO(fd, personality(READ_IMPLIES_EXEC), EPERM);
        return 0;
}

Test(init_seccomp_install, argument_checks) {
        struct child_result r = run_child(check_args, NULL);
        assert_child_ok(r);
}

static int check_ordinary(int fd, void *arg) {
        if (confine(fd, *(enum init_policy *)arg))
                return 1;
        int f = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0, "open");
        char buf[4096];
        ssize_t n = read(f, buf, sizeof buf - 1);
        CHILD_CHECK(fd, n > 0, "read");
        buf[n] = '\0';
        CHILD_CHECK(fd, strstr(buf, "Seccomp:\t2") != NULL, "not in filter mode:\n%s", buf);
        pid_t pid = fork(); /* glibc's fork uses clone without namespace flags */
        CHILD_CHECK(fd, pid >= 0, "fork");
        if (pid == 0) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
        }
        int st;
        CHILD_CHECK(fd, waitpid(pid, &st, 0) == pid, "waitpid");
        CHILD_CHECK(fd, WIFEXITED(st) && WEXITSTATUS(st) == 0, "/bin/true status 0x%x", st);
        /* a shell pipeline: threads, pipes, exec, dup2 */
        int r = system("echo ok | /bin/cat > /dev/null");
        CHILD_CHECK(fd, r == 0, "system() = %d", r);
        return 0;
}

Test(init_seccomp_install, agent_ordinary_work) {
        enum init_policy p = INIT_POLICY_AGENT;
        struct child_result r = run_child(check_ordinary, &p);
        assert_child_ok(r);
}

Test(init_seccomp_install, provision_ordinary_work) {
        enum init_policy p = INIT_POLICY_PROVISION;
        struct child_result r = run_child(check_ordinary, &p);
        assert_child_ok(r);
}

/* Set-id modes (docs/security-invariants.md, 14): every call that sets a mode refuses
 * S_ISUID and S_ISGID for the agent, in a temp dir the test owns, so that without the filter
 * each call would succeed; the same calls with a plain mode succeed; a mode without O_CREAT
 * is not looked at; openat2 is ENOSYS for the agent only. */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; the same number on x86_64 and arm64 */
#endif

struct setid_arg {
        enum init_policy policy;
        bool files; /* the file server's filter instead */
        char dir[64];
};

static int check_setid(int fd, void *argp) {
        struct setid_arg *a = argp;
        struct rtn_error err = {0};
        CHILD_CHECK(fd, chdir(a->dir) == 0, "chdir");
        int f = open("f", O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
        CHILD_CHECK(fd, f >= 0, "create f");
        CHILD_CHECK(fd, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
        if (a->files)
                CHILD_CHECK(fd, init_seccomp_install_files(&err) == 0, "install: %s", err.msg);
        else
                CHILD_CHECK(fd, init_seccomp_install(a->policy, &err) == 0, "install: %s", err.msg);
        struct open_how how = {.flags = O_CREAT | O_WRONLY | O_CLOEXEC, .mode = 04755};
        long o2 = syscall(SYS_openat2, AT_FDCWD, "o2", &how, sizeof how);
        int o2_errno = errno;
        if (a->policy == INIT_POLICY_AGENT && !a->files) {
                CHILD_EXPECT_ERRNO(fd, chmod("f", 04755), EPERM);
                CHILD_EXPECT_ERRNO(fd, chmod("f", 02755), EPERM);
                CHILD_EXPECT_ERRNO(fd, fchmod(f, 06755), EPERM);
                CHILD_EXPECT_ERRNO(fd, syscall(SYS_fchmod, f, (0xdeadUL << 32) | 04755), EPERM);
                CHILD_EXPECT_ERRNO(fd, fchmodat(AT_FDCWD, "f", 04755, 0), EPERM);
                CHILD_EXPECT_ERRNO(fd, syscall(SYS_fchmodat2, AT_FDCWD, "f", 02755, 0), EPERM);
                CHILD_EXPECT_ERRNO(fd, creat("c", 04755), EPERM);
                CHILD_EXPECT_ERRNO(fd, syscall(SYS_open, "o", O_CREAT | O_WRONLY, 04755), EPERM);
                CHILD_EXPECT_ERRNO(fd, openat(AT_FDCWD, "o", O_CREAT | O_WRONLY, 02755), EPERM);
                CHILD_EXPECT_ERRNO(fd, openat(AT_FDCWD, ".", O_TMPFILE | O_WRONLY, 04755), EPERM);
                CHILD_EXPECT_ERRNO(fd, mknod("n", S_IFREG | 04755, 0), EPERM);
                CHILD_EXPECT_ERRNO(fd, mknodat(AT_FDCWD, "n", S_IFREG | 02755, 0), EPERM);
                CHILD_CHECK(fd, o2 == -1 && o2_errno == ENOSYS, "openat2: %ld %d", o2, o2_errno);
        } else {
                CHILD_CHECK(fd, chmod("f", 04755) == 0 || a->files, "chmod 4755");
                CHILD_CHECK(fd, o2 >= 0 || o2_errno != ENOSYS, "openat2 ENOSYS");
        }
        /* ordinary modes, and a set-id "mode" where open does not create, pass */
        CHILD_CHECK(fd, chmod("f", 01777) == 0 && fchmod(f, 0644) == 0, "plain chmod");
        CHILD_CHECK(fd, syscall(SYS_fchmodat2, AT_FDCWD, "f", 0600, 0) == 0 || errno == ENOSYS,
                    "fchmodat2");
        int g = (int)syscall(SYS_openat, AT_FDCWD, "f", O_RDONLY | O_CLOEXEC, 04755);
        CHILD_CHECK(fd, g >= 0, "open without O_CREAT");
        CHILD_CHECK(fd, openat(AT_FDCWD, "p", O_CREAT | O_WRONLY | O_CLOEXEC, 0755) >= 0, "create");
        struct stat st;
        CHILD_CHECK(fd, stat("f", &st) == 0, "stat");
        return 0;
}

static void run_setid(enum init_policy policy, bool files) {
        struct setid_arg a = {.policy = policy, .files = files};
        strcpy(a.dir, "/tmp/rtn-setid-XXXXXX");
        cr_assert_not_null(mkdtemp(a.dir));
        struct child_result r = run_child(check_setid, &a);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", a.dir);
        cr_assert_eq(system(cmd), 0);
        assert_child_ok(r);
}

Test(init_seccomp_install, agent_refuses_setid_modes) {
        run_setid(INIT_POLICY_AGENT, false);
}

Test(init_seccomp_install, provision_allows_setid_modes) {
        run_setid(INIT_POLICY_PROVISION, false);
}

Test(init_seccomp_install, files_keeps_openat2) {
        run_setid(INIT_POLICY_AGENT, true);
}

#if defined(__x86_64__)
static int do_int80(int fd, void *arg) {
        if (confine(fd, INIT_POLICY_AGENT))
                return 1;
        long ret = 20; /* getpid on i386 */
        __asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
        dprintf(fd, "int 0x80 returned %ld\n", ret);
        return 1;
}

/* Whether this kernel runs ia32 system calls at all: without IA32 emulation (built out, or
 * ia32_emulation=0 since Linux 6.7) `int 0x80` faults with SIGSEGV before seccomp sees it,
 * so there is no foreign-ABI entry for the filter to close. */
static bool host_has_ia32(void) {
        pid_t pid = fork();
        if (pid == 0) {
                long ret = 20;
                __asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
                _exit(ret > 0 ? 0 : 1);
        }
        int st = 0;
        return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

Test(init_seccomp_install, ia32_int80_kills) {
        if (!host_has_ia32())
                cr_skip_test(
                        "the kernel has no ia32 emulation: int 0x80 faults outside any filter");
        struct child_result r = run_child(do_int80, NULL);
        cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSYS, "status 0x%x: %s",
                  r.status, r.msg);
}

static int do_x32(int fd, void *arg) {
        if (confine(fd, INIT_POLICY_AGENT))
                return 1;
        long ret = syscall(0x40000000L | SYS_getpid);
        dprintf(fd, "x32 getpid returned %ld errno %d\n", ret, errno);
        return 1;
}

Test(init_seccomp_install, x32_kills) {
        struct child_result r = run_child(do_x32, NULL);
        cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSYS, "status 0x%x: %s",
                  r.status, r.msg);
}
#endif

static int check_nnp_required(int fd, void *arg) {
        struct rtn_error err = {0};
        int r = init_seccomp_install(INIT_POLICY_AGENT, &err);
        CHILD_CHECK(fd, r == -EPERM, "install without nnp returned %d: %s", r, err.msg);
        CHILD_CHECK(fd, err.code == EPERM && strstr(err.msg, "no_new_privs"), "msg %s", err.msg);
        r = init_seccomp_install((enum init_policy)7, &err);
        CHILD_CHECK(fd, r == -EINVAL, "unknown policy returned %d", r);
        /* and nothing was installed */
        CHILD_CHECK(fd, prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0, "a filter is in place");
        return 0;
}

Test(init_seccomp_install, refuses_without_nnp) {
        struct child_result r = run_child(check_nnp_required, NULL);
        assert_child_ok(r);
}
