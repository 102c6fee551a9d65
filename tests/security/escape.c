/* Attacks from inside a sandbox through system calls the policy forbids. Each attack is a
 * named function; `escape NAME...` runs them and prints one line each: "blocked NAME: ..."
 * when the attempt failed the way docs/policy.md says (the exact errno, or SIGSYS), and
 * "ESCAPED NAME: ..." otherwise. Exit 0 only if every named attack was blocked as expected.
 * The shell suites beside this file also check that nothing on the host changed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#define __NR_open_tree 428
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static int failures;

static void report(const char *name, int ok, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void report(const char *name, int ok, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        printf("%s %s: ", ok ? "blocked" : "ESCAPED", name);
        vprintf(fmt, ap);
        putchar('\n');
        va_end(ap);
        fflush(stdout);
        if (!ok)
                failures++;
}

/* A call that must fail with errno want. */
static void expect_errno(const char *name, long r, int want) {
        int e = errno;
        if (r == -1 && e == want)
                report(name, 1, "%s", strerror(e));
        else if (r == -1)
                report(name, 0, "failed with %s, expected %s", strerror(e), strerror(want));
        else
                report(name, 0, "succeeded (returned %ld), expected %s", r, strerror(want));
}
#define EXPECT(call, want) expect_errno(__func__ + 2, (long)(errno = 0, (call)), want)

static void a_mount(void) {
        EXPECT(mount("tmpfs", "/tmp", "tmpfs", 0, NULL), EPERM);
}
static void a_umount(void) {
        EXPECT(umount2("/proc", MNT_DETACH), EPERM);
}
static void a_remount_ro(void) {
        EXPECT(mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL), EPERM);
}
static void a_pivot_root(void) {
        EXPECT(syscall(SYS_pivot_root, ".", "."), EPERM);
}
static void a_chroot(void) {
        EXPECT(chroot("/tmp"), EPERM);
}
static void a_fsopen(void) {
        EXPECT(syscall(__NR_fsopen, "tmpfs", 0), EPERM);
}
static void a_open_tree(void) {
        EXPECT(syscall(__NR_open_tree, AT_FDCWD, "/", 1 /* CLONE */), EPERM);
}
static void a_unshare_user(void) {
        EXPECT(unshare(CLONE_NEWUSER), EPERM);
}
static void a_unshare_mount(void) {
        EXPECT(unshare(CLONE_NEWNS), EPERM);
}
static void a_unshare_net(void) {
        EXPECT(unshare(CLONE_NEWNET), EPERM);
}
static void a_unshare_time(void) {
        EXPECT(unshare(CLONE_NEWTIME), EPERM);
}
static void a_setns(void) {
        int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        EXPECT(setns(fd, 0), EPERM);
        close(fd);
}

/* clone(CLONE_NEWUSER) by the raw syscall: glibc's wrapper needs a stack. */
static void a_clone_newuser(void) {
        long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
        if (r == 0)
                _exit(0);
        if (r > 0)
                waitpid((pid_t)r, NULL, 0);
        errno = r == -1 ? errno : 0;
        expect_errno("clone_newuser", r == -1 ? -1 : r, EPERM);
}
/* The high half of clone's flags is ignored by the kernel (int): junk there must not hide
 * CLONE_NEWUSER from the filter. */
static void a_clone_newuser_highbits(void) {
        long r = syscall(SYS_clone, (1UL << 40) | CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
        if (r == 0)
                _exit(0);
        if (r > 0)
                waitpid((pid_t)r, NULL, 0);
        expect_errno("clone_newuser_highbits", r == -1 ? -1 : r, EPERM);
}
static void a_clone3_newuser(void) {
        struct {
                unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack,
                        stack_size, tls;
        } ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
        long r = syscall(__NR_clone3, &ca, sizeof ca);
        if (r == 0)
                _exit(0);
        if (r > 0)
                waitpid((pid_t)r, NULL, 0);
        expect_errno("clone3_newuser", r == -1 ? -1 : r, ENOSYS);
}

static void a_bpf(void) {
        union bpf_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.map_type = BPF_MAP_TYPE_ARRAY;
        attr.key_size = 4;
        attr.value_size = 4;
        attr.max_entries = 1;
        EXPECT(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr), EPERM);
}
static void a_io_uring(void) {
        struct io_uring_params p;
        memset(&p, 0, sizeof p);
        EXPECT(syscall(SYS_io_uring_setup, 4, &p), EPERM);
}
static void a_userfaultfd(void) {
        EXPECT(syscall(SYS_userfaultfd, O_CLOEXEC), EPERM);
}
static void a_keyctl(void) {
        EXPECT(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), EPERM);
}
static void a_add_key(void) {
        EXPECT(syscall(SYS_add_key, "user", "rtn", "x", 1, KEY_SPEC_SESSION_KEYRING), EPERM);
}
static void a_perf_event_open(void) {
        struct perf_event_attr pe;
        memset(&pe, 0, sizeof pe);
        pe.type = PERF_TYPE_SOFTWARE;
        pe.size = sizeof pe;
        pe.config = PERF_COUNT_SW_CPU_CLOCK;
        EXPECT(syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0), EPERM);
}
static void a_open_by_handle_at(void) {
        struct {
                struct file_handle h;
                unsigned char buf[128];
        } fh = {.h = {.handle_bytes = 8, .handle_type = 1}};
        EXPECT(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh.h, O_RDONLY), EPERM);
}
static void a_name_to_handle_at(void) {
        struct {
                struct file_handle h;
                unsigned char buf[128];
        } fh = {.h = {.handle_bytes = 128}};
        int mnt;
        EXPECT(syscall(SYS_name_to_handle_at, AT_FDCWD, "/etc/passwd", &fh.h, &mnt, 0), EPERM);
}
static void a_ptrace_init(void) {
        EXPECT(ptrace(PTRACE_ATTACH, 1, NULL, NULL), EPERM);
}
static void a_ptrace_traceme(void) {
        EXPECT(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
}
static void a_process_vm_readv(void) {
        char buf[8];
        struct iovec l = {buf, sizeof buf}, r = {(void *)0x400000, sizeof buf};
        EXPECT(process_vm_readv(1, &l, 1, &r, 1, 0), EPERM);
}
static void a_kexec_load(void) {
        EXPECT(syscall(SYS_kexec_load, 0, 0, NULL, 0), EPERM);
}
static void a_init_module(void) {
        EXPECT(syscall(SYS_init_module, NULL, 0, ""), EPERM);
}
static void a_reboot(void) {
        EXPECT(reboot(RB_POWER_OFF), EPERM);
}
static void a_swapon(void) {
        EXPECT(syscall(SYS_swapon, "/tmp/swap", 0), EPERM);
}
static void a_acct(void) {
        EXPECT(syscall(SYS_acct, "/tmp/acct"), EPERM);
}
static void a_settimeofday(void) {
        struct timeval tv = {.tv_sec = 0};
        EXPECT(settimeofday(&tv, NULL), EPERM);
}
static void a_clock_settime(void) {
        struct timespec ts = {.tv_sec = 0};
        EXPECT(clock_settime(CLOCK_REALTIME, &ts), EPERM);
}
static void a_syslog(void) {
        EXPECT(syscall(SYS_syslog, 3 /* READ_ALL */, NULL, 0), EPERM);
}
static void a_personality(void) {
        EXPECT(personality(ADDR_NO_RANDOMIZE), EPERM);
}
static void a_af_packet(void) {
        EXPECT(socket(AF_PACKET, SOCK_RAW, 0), EAFNOSUPPORT);
}
static void a_af_vsock(void) {
        EXPECT(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0), EAFNOSUPPORT);
}
static void a_unknown_syscall(void) {
        EXPECT(syscall(1000), ENOSYS);
}
static void a_sethostname(void) {
        EXPECT(sethostname("pwned", 5), EPERM);
}

/* TIOCSTI pushes bytes into a terminal's input queue (CVE-2017-5226). Try it on our own
 * stdio, a fresh pty of ours and /dev/tty; with junk in the high 32 bits of cmd too. */
static void a_tiocsti(void) {
        char c = 'x';
        int pty = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        int fd = pty >= 0 ? pty : 0;
        EXPECT(syscall(SYS_ioctl, fd, TIOCSTI, &c), EPERM);
        if (pty >= 0)
                close(pty);
}
static void a_tiocsti_highbits(void) {
        char c = 'x';
        int pty = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        int fd = pty >= 0 ? pty : 0;
        EXPECT(syscall(SYS_ioctl, fd, (1UL << 32) | TIOCSTI, &c), EPERM);
        EXPECT(syscall(SYS_ioctl, fd, (0xdeadUL << 48) | TIOCSTI, &c), EPERM);
        if (pty >= 0)
                close(pty);
}
static void a_tioclinux(void) {
        char c = 2;
        EXPECT(syscall(SYS_ioctl, 0, TIOCLINUX, &c), EPERM);
}

/* A syscall through a foreign ABI: the filter kills the process with SIGSYS. */
static void expect_sigsys(const char *name, void (*fn)(void)) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                fn();
                _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
                report(name, 1, "killed by SIGSYS");
        else if (WIFSIGNALED(st))
                report(name, 0, "killed by signal %d, expected SIGSYS", WTERMSIG(st));
        else
                report(name, 0, "exited %d, expected SIGSYS", WEXITSTATUS(st));
}
static void int80_getpid(void) {
        long r;
        /* ia32 getpid is 20; without the filter this returns our pid */
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
        (void)r;
}
static void int80_unshare(void) {
        long r;
        /* ia32 unshare is 310: the CLONE_NEWUSER check knows only native numbers */
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(310L), "b"((long)CLONE_NEWUSER) : "memory");
        (void)r;
}
static void x32_getpid(void) {
        syscall(0x40000000L | 39);
}
static void x32_unshare(void) {
        syscall(0x40000000L | 272, CLONE_NEWUSER);
}
static void a_int80(void) {
        expect_sigsys("int80", int80_getpid);
}
static void a_int80_unshare(void) {
        expect_sigsys("int80_unshare", int80_unshare);
}
static void a_x32(void) {
        expect_sigsys("x32", x32_getpid);
}
static void a_x32_unshare(void) {
        expect_sigsys("x32_unshare", x32_unshare);
}

/* mknod of a device in a writable dir: Landlock never grants MAKE_CHAR/MAKE_BLOCK (EACCES,
 * checked before the kernel's CAP_MKNOD test, which would say EPERM). */
static void a_mknod_char(void) {
        EXPECT(mknod("/tmp/rtn-mem", S_IFCHR | 0666, makedev(1, 1)), EACCES);
}
static void a_mknod_block(void) {
        EXPECT(mknod("/tmp/rtn-sda", S_IFBLK | 0666, makedev(8, 0)), EACCES);
}

/* rtn-init is non-dumpable: its exe link, memory and environment are closed to us, and a
 * write through /proc/1/exe cannot reach the sealed memfd. */
static void a_proc1_exe_write(void) {
        EXPECT(open("/proc/1/exe", O_WRONLY | O_CLOEXEC), EACCES);
}
static void a_proc1_exe_readlink(void) {
        char buf[256];
        EXPECT(readlink("/proc/1/exe", buf, sizeof buf), EACCES);
}
static void a_proc1_mem(void) {
        EXPECT(open("/proc/1/mem", O_RDWR | O_CLOEXEC), EACCES);
}
static void a_proc1_environ(void) {
        EXPECT(open("/proc/1/environ", O_RDONLY | O_CLOEXEC), EACCES);
}
/* rtn-init runs its loop on a second thread with the agent's uid and policy (init/main.c):
 * the same walls hold for every thread of PID 1, whatever uid each has. */
static int init_tids(pid_t *tids, int max) {
        DIR *d = opendir("/proc/1/task");
        int n = 0;
        for (struct dirent *e; d && n < max && (e = readdir(d));)
                if (e->d_name[0] != '.')
                        tids[n++] = atoi(e->d_name);
        if (d)
                closedir(d);
        return n;
}

static void a_proc1_threads(void) {
        pid_t tids[16];
        int n = init_tids(tids, 16);
        if (n < 1) {
                report("proc1_threads", 0, "no task of PID 1 visible");
                return;
        }
        for (int i = 0; i < n; i++) {
                char path[64], name[64], buf[256];
                snprintf(name, sizeof name, "proc1_threads mem of %d", (int)tids[i]);
                snprintf(path, sizeof path, "/proc/1/task/%d/mem", (int)tids[i]);
                expect_errno(name, (long)(errno = 0, open(path, O_RDWR | O_CLOEXEC)), EACCES);
                snprintf(name, sizeof name, "proc1_threads environ of %d", (int)tids[i]);
                snprintf(path, sizeof path, "/proc/1/task/%d/environ", (int)tids[i]);
                expect_errno(name, (long)(errno = 0, open(path, O_RDONLY | O_CLOEXEC)), EACCES);
                snprintf(name, sizeof name, "proc1_threads exe of %d", (int)tids[i]);
                snprintf(path, sizeof path, "/proc/1/task/%d/exe", (int)tids[i]);
                expect_errno(name, (long)(errno = 0, readlink(path, buf, sizeof buf)), EACCES);
                snprintf(name, sizeof name, "proc1_threads fds of %d", (int)tids[i]);
                snprintf(path, sizeof path, "/proc/1/task/%d/fd/3", (int)tids[i]);
                expect_errno(name, (long)(errno = 0, open(path, O_RDWR | O_CLOEXEC)), EACCES);
        }
}

/* The state letter of /proc/1/task/TID/stat, or 0 when the task is gone. */
static char init_task_state(pid_t tid) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/1/task/%d/stat", (int)tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0)
                close(fd);
        if (len <= 0)
                return 0;
        buf[len] = '\0';
        char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

/* SIGSTOP and SIGKILL to each thread of PID 1, by pid and by tgkill. The thread that runs
 * as our uid lets the call through (or not), but PID 1 of a pid namespace drops signals it
 * has no handler for when they come from inside (SIGNAL_UNKILLABLE): every thread must
 * still be there and not stopped. */
static void a_signal_init(void) {
        pid_t tids[16];
        int n = init_tids(tids, 16);
        int sigs[] = {SIGSTOP, SIGKILL, SIGTERM, SIGSEGV};
        for (int i = 0; i < n; i++)
                for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
                        (void)kill(tids[i], sigs[k]);
                        (void)syscall(SYS_tgkill, 1, tids[i], sigs[k]);
                }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        for (int i = 0; i < n; i++) {
                char st = init_task_state(tids[i]);
                if (st == 0 || st == 'T' || st == 't' || st == 'Z' || st == 'X') {
                        report("signal_init", 0, "task %d of PID 1 is in state '%c'", (int)tids[i],
                               st ? st : '-');
                        return;
                }
        }
        report("signal_init", n > 0, "%d task(s) of PID 1 still running", n);
}

/* Lowering the limits of PID 1, whose loop thread runs as our uid, would cripple the
 * sandbox's supervisor (no fds to receive, SIGXCPU): the filter allows prlimit on the
 * caller only. */
static void a_prlimit_init(void) {
        pid_t tids[16];
        int n = init_tids(tids, 16);
        struct rlimit one = {.rlim_cur = 3, .rlim_max = 3};
        for (int i = 0; i < n; i++) {
                char name[64];
                snprintf(name, sizeof name, "prlimit_init task %d", (int)tids[i]);
                expect_errno(name, (long)(errno = 0, prlimit(tids[i], RLIMIT_NOFILE, &one, NULL)),
                             EPERM);
        }
        if (n < 1)
                report("prlimit_init", 0, "no task of PID 1 visible");
}

/* /proc is read+exec for Landlock (EACCES), and /proc/sys is a read-only bind beneath. */
static void a_proc_sys_write(void) {
        EXPECT(open("/proc/sys/kernel/hostname", O_WRONLY | O_CLOEXEC), EACCES);
}
static void a_proc_drop_caches(void) {
        EXPECT(open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC), EACCES);
}
static void a_proc_self_oom(void) {
        /* lowering our OOM score to hide from the OOM killer */
        EXPECT(open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC), EACCES);
}
/* /sys is an empty directory (no sysfs is mounted); creating in it is a Landlock denial. */
static void a_sys_write(void) {
        EXPECT(open("/sys/uevent_helper", O_WRONLY | O_CREAT | O_CLOEXEC, 0644), EACCES);
}
static void a_sys_mount(void) {
        EXPECT(mount("sysfs", "/sys", "sysfs", 0, NULL), EPERM);
}

/* Only 0, 1 and 2 may be open when the program starts (besides the dir fd we read with). */
static void a_inherited_fds(void) {
        char path[64], target[256];
        int bad = 0;
        for (int fd = 3; fd < 1024; fd++) {
                if (fcntl(fd, F_GETFD) < 0)
                        continue;
                snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(path, target, sizeof target - 1);
                target[n > 0 ? n : 0] = '\0';
                printf("# inherited fd %d -> %s\n", fd, target);
                bad++;
        }
        report("inherited_fds", bad == 0, "%d fds beyond stdio", bad);
}

static const struct {
        const char *name;
        void (*fn)(void);
} attacks[] = {
#define A(n)                                                                                       \
        { #n, a_##n }
        A(mount),
        A(umount),
        A(remount_ro),
        A(pivot_root),
        A(chroot),
        A(fsopen),
        A(open_tree),
        A(unshare_user),
        A(unshare_mount),
        A(unshare_net),
        A(unshare_time),
        A(setns),
        A(clone_newuser),
        A(clone_newuser_highbits),
        A(clone3_newuser),
        A(bpf),
        A(io_uring),
        A(userfaultfd),
        A(keyctl),
        A(add_key),
        A(perf_event_open),
        A(open_by_handle_at),
        A(name_to_handle_at),
        A(ptrace_init),
        A(ptrace_traceme),
        A(process_vm_readv),
        A(kexec_load),
        A(init_module),
        A(reboot),
        A(swapon),
        A(acct),
        A(settimeofday),
        A(clock_settime),
        A(syslog),
        A(personality),
        A(af_packet),
        A(af_vsock),
        A(unknown_syscall),
        A(sethostname),
        A(tiocsti),
        A(tiocsti_highbits),
        A(tioclinux),
        A(int80),
        A(int80_unshare),
        A(x32),
        A(x32_unshare),
        A(mknod_char),
        A(mknod_block),
        A(proc1_exe_write),
        A(proc1_exe_readlink),
        A(proc1_mem),
        A(proc1_environ),
        A(proc1_threads),
        A(signal_init),
        A(prlimit_init),
        A(proc_sys_write),
        A(proc_drop_caches),
        A(proc_self_oom),
        A(sys_write),
        A(sys_mount),
        A(inherited_fds),
#undef A
};

int main(int argc, char **argv) {
        if (argc < 2) {
                for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++)
                        printf("%s\n", attacks[i].name);
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                size_t k = 0;
                while (k < sizeof attacks / sizeof attacks[0] && strcmp(attacks[k].name, argv[i]))
                        k++;
                if (k == sizeof attacks / sizeof attacks[0]) {
                        printf("ESCAPED %s: no such attack\n", argv[i]);
                        failures++;
                        continue;
                }
                attacks[k].fn();
        }
        return failures ? 1 : 0;
}
