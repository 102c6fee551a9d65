/* Tests of init/caps.c and init/rlimits.c, and of the whole confinement sequence as rtn-init
 * runs it: the exec'd program must start with no capabilities, NoNewPrivs 1, Seccomp 2, the
 * limits set, and the Landlock domain in force. Each applies itself to a forked child and
 * reads /proc/self/status, getrlimit and capget back. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "init/policy.h"
#include "tests/unit/init/child.h"

/* Value of a "Name:\t..." line of /proc/self/status, or NULL. */
static const char *status_field(char *buf, size_t cap, const char *name) {
        int f = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (f < 0)
                return NULL;
        ssize_t n = read(f, buf, cap - 1);
        close(f);
        if (n <= 0)
                return NULL;
        buf[n] = '\0';
        char key[64];
        snprintf(key, sizeof key, "\n%s:\t", name);
        char *p = strstr(buf, key);
        if (!p)
                return NULL;
        p += strlen(key);
        p[strcspn(p, "\n")] = '\0';
        return p;
}

static int check_caps_gone(int fd) {
        static const char *const sets[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
        char buf[8192];
        for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
                const char *v = status_field(buf, sizeof buf, sets[i]);
                CHILD_CHECK(fd, v && strcmp(v, "0000000000000000") == 0, "%s is %s", sets[i],
                            v ? v : "missing");
        }
        return 0;
}

/* Unprivileged runs test the sandbox's case: uid 0 with every capability, inside a user
 * namespace mapped to the caller. */
static int become_userns_root(int fd) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        CHILD_CHECK(fd, unshare(CLONE_NEWUSER) == 0, "unshare(CLONE_NEWUSER)");
        char map[64];
        int n = snprintf(map, sizeof map, "0 %u 1\n", uid);
        int f = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0 && write(f, map, (size_t)n) == n, "uid_map");
        close(f);
        f = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0 && write(f, "deny", 4) == 4, "setgroups");
        close(f);
        n = snprintf(map, sizeof map, "0 %u 1\n", gid);
        f = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0 && write(f, map, (size_t)n) == n, "gid_map");
        close(f);
        return 0;
}

/* The CapEff line of a program this process execs (grep): what an execve grants. */
static int capeff_after_exec(char *out, size_t len) {
        int p[2];
        if (pipe(p) < 0)
                return -1;
        pid_t pid = fork();
        if (pid == 0) {
                dup2(p[1], 1);
                execl("/bin/grep", "grep", "^CapEff", "/proc/self/status", (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        if (pid < 0) {
                close(p[0]);
                return -1;
        }
        memset(out, 0, len);
        ssize_t n = read(p[0], out, len - 1);
        close(p[0]);
        waitpid(pid, NULL, 0);
        return n > 0 ? 0 : -1;
}

static int check_drop_root(int fd, void *arg) {
        struct rtn_error err = {0};
        if (getuid() != 0 && become_userns_root(fd))
                return 1;
        char buf[8192];
        const char *eff = status_field(buf, sizeof buf, "CapEff");
        CHILD_CHECK(fd, eff && strcmp(eff, "0000000000000000") != 0, "no caps to begin with");
        int r = init_caps_drop_all(0, &err);
        CHILD_CHECK(fd, r == 0, "drop: %d %s", r, err.msg);
        if (check_caps_gone(fd))
                return 1;
        int bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        int want = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                   SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        CHILD_CHECK(fd, (bits & want) == want && !(bits & SECBIT_KEEP_CAPS), "bits 0x%x", bits);
        /* still uid 0, but nothing a capability would allow */
        CHILD_CHECK(fd, getuid() == 0, "uid");
        CHILD_EXPECT_ERRNO(fd, mount("none", "/mnt", "tmpfs", 0, NULL), EPERM);
        /* nor can it take one back */
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {
                {.effective = 1u << CAP_CHOWN, .permitted = 1u << CAP_CHOWN}};
        CHILD_EXPECT_ERRNO(fd, sys_capset(&hdr, data), EPERM);
        CHILD_EXPECT_ERRNO(fd, prctl(PR_SET_SECUREBITS, 0, 0, 0, 0), EPERM);
        /* exec as root gets nothing back (SECBIT_NOROOT) */
        char out[128];
        CHILD_CHECK(fd, capeff_after_exec(out, sizeof out) == 0, "exec grep");
        CHILD_CHECK(fd, strcmp(out, "CapEff:\t0000000000000000\n") == 0, "after exec: %s", out);
        return 0;
}

Test(init_caps_drop_all, root_loses_everything) {
        struct child_result r = run_child(check_drop_root, NULL);
        assert_child_ok(r);
}

/* --user root: INIT_CAPS_ROOT and nothing else stays, in every set and after an execve by
 * uid 0; anything else asked for is dropped too. */
static int check_drop_root_keep(int fd, void *arg) {
        struct rtn_error err = {0};
        bool host_root = getuid() == 0;
        if (!host_root && become_userns_root(fd))
                return 1;
        int r = init_caps_drop_all(INIT_CAPS_ROOT | (1ull << CAP_CHOWN) | (1ull << CAP_SYS_ADMIN),
                                   &err);
        CHILD_CHECK(fd, r == 0, "drop: %d %s", r, err.msg);
        char buf[8192], want[32];
        snprintf(want, sizeof want, "%016llx", (unsigned long long)INIT_CAPS_ROOT);
        const char *f;
        CHILD_CHECK(fd, (f = status_field(buf, sizeof buf, "CapEff")) && !strcmp(f, want),
                    "CapEff %s", f ? f : "?");
        CHILD_CHECK(fd, (f = status_field(buf, sizeof buf, "CapBnd")) && !strcmp(f, want),
                    "CapBnd %s", f ? f : "?");
        CHILD_CHECK(fd,
                    (f = status_field(buf, sizeof buf, "CapInh")) && !strcmp(f, "0000000000000000"),
                    "CapInh %s", f ? f : "?");
        CHILD_EXPECT_ERRNO(fd, mount("none", "/mnt", "tmpfs", 0, NULL), EPERM);
        /* CAP_CHOWN gone: a chown to another id is refused. In the user namespace an
         * unprivileged caller makes, no other id is mapped (EINVAL whatever the caps), so
         * there CapEff above says it. */
        if (host_root)
                CHILD_EXPECT_ERRNO(fd, chown("/proc/self/comm", 1, 1), EPERM);
        char out[128], exp[64];
        snprintf(exp, sizeof exp, "CapEff:\t%s\n", want);
        CHILD_CHECK(fd, capeff_after_exec(out, sizeof out) == 0, "exec grep");
        CHILD_CHECK(fd, strcmp(out, exp) == 0, "after exec: %s", out);
        return 0;
}

Test(init_caps_drop_all, root_keeps_only_its_two) {
        struct child_result r = run_child(check_drop_root_keep, NULL);
        assert_child_ok(r);
}

/* rtn-init's path for a non-zero agent uid: empty the bounding set, setresuid, then drop. */
static int check_drop_after_setuid(int fd, void *arg) {
        for (int c = 0; c <= 63; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        CHILD_CHECK(fd, 0, "bounding drop %d", c);
        CHILD_CHECK(fd, setresgid(65534, 65534, 65534) == 0, "setresgid");
        CHILD_CHECK(fd, setresuid(65534, 65534, 65534) == 0, "setresuid");
        struct rtn_error err = {0};
        int r = init_caps_drop_all(0, &err);
        CHILD_CHECK(fd, r == 0, "drop as uid 65534: %d %s", r, err.msg);
        return check_caps_gone(fd);
}

Test(init_caps_drop_all, after_setuid_to_nobody) {
        if (getuid() != 0)
                cr_skip_test("needs root to switch to uid 65534");
        struct child_result r = run_child(check_drop_after_setuid, NULL);
        assert_child_ok(r);
}

/* Fail closed: with a capability left in the bounding set and no way to drop it. */
static int check_drop_fails_closed(int fd, void *arg) {
        CHILD_CHECK(fd, setresuid(65534, 65534, 65534) == 0, "setresuid");
        struct rtn_error err = {0};
        int r = init_caps_drop_all(0, &err);
        CHILD_CHECK(fd, r == -EPERM, "drop with a full bounding set returned %d", r);
        CHILD_CHECK(fd, strstr(err.msg, "bounding") != NULL, "message: %s", err.msg);
        return 0;
}

Test(init_caps_drop_all, fails_closed_without_setpcap) {
        if (getuid() != 0)
                cr_skip_test("needs root to switch to uid 65534");
        struct child_result r = run_child(check_drop_fails_closed, NULL);
        assert_child_ok(r);
}

/* rtn-init's own bounding set at configuration: exactly the provisioning set is left, its
 * effective set is untouched, a root exec gets no more than that set, and an agent spawn
 * afterwards still empties it (dropping only what is left). */
static int check_limit_bounding(int fd, void *arg) {
        struct rtn_error err = {0};
        if (getuid() != 0 && become_userns_root(fd))
                return 1;
        char buf[8192], eff[32];
        snprintf(eff, sizeof eff, "%s", status_field(buf, sizeof buf, "CapEff"));
        CHILD_CHECK(fd, init_caps_limit_bounding(&err) == 0, "limit: %s", err.msg);
        const char *bnd = status_field(buf, sizeof buf, "CapBnd");
        CHILD_CHECK(fd, bnd && strtoull(bnd, NULL, 16) == INIT_CAPS_PROVISION, "CapBnd %s", bnd);
        CHILD_CHECK(fd, strtoull(bnd, NULL, 16) == 0xa80425fbull, "not the runtimes' set: %s", bnd);
        const char *now = status_field(buf, sizeof buf, "CapEff");
        CHILD_CHECK(fd, now && strcmp(now, eff) == 0, "CapEff changed: %s -> %s", eff, now);
        /* a second call has nothing left to drop and succeeds */
        CHILD_CHECK(fd, init_caps_limit_bounding(&err) == 0, "again: %s", err.msg);
        char out[128];
        CHILD_CHECK(fd, capeff_after_exec(out, sizeof out) == 0, "exec grep");
        CHILD_CHECK(fd, strcmp(out, "CapEff:\t00000000a80425fb\n") == 0, "root exec got %s", out);
        CHILD_CHECK(fd, init_caps_drop_bounding(&err) == 0, "drop: %s", err.msg);
        bnd = status_field(buf, sizeof buf, "CapBnd");
        CHILD_CHECK(fd, bnd && strcmp(bnd, "0000000000000000") == 0, "CapBnd after drop %s", bnd);
        return 0;
}

Test(init_caps_limit_bounding, leaves_the_provisioning_set) {
        struct child_result r = run_child(check_limit_bounding, NULL);
        assert_child_ok(r);
}

Test(init_limits_default, documented_values) {
        struct init_limits l;
        memset(&l, 0xff, sizeof l);
        init_limits_default(&l);
        cr_assert_eq(l.nofile, 4096);
        cr_assert_eq(l.fsize_bytes, 1ULL << 30);
        cr_assert_eq(l.core_bytes, 0);
        cr_assert_eq(l.nproc, 0);
        cr_assert_eq(l.data_bytes, 0);
        cr_assert_eq(l.cpu_seconds, 0);
}

static int check_defaults_applied(int fd, void *arg) {
        struct rlimit data_before, rl;
        getrlimit(RLIMIT_DATA, &data_before);
        struct init_limits l;
        init_limits_default(&l);
        struct rtn_error err = {0};
        CHILD_CHECK(fd, init_rlimits_apply(&l, &err) == 0, "apply: %s", err.msg);
        CHILD_CHECK(fd, getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_cur == 0 && rl.rlim_max == 0,
                    "core %llu/%llu", (unsigned long long)rl.rlim_cur,
                    (unsigned long long)rl.rlim_max);
        CHILD_CHECK(fd,
                    getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == 1024 &&
                            rl.rlim_max == 4096,
                    "nofile %llu/%llu", (unsigned long long)rl.rlim_cur,
                    (unsigned long long)rl.rlim_max);
        CHILD_CHECK(fd, getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur == (1ULL << 30), "fsize");
        CHILD_CHECK(fd, getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_max == data_before.rlim_max,
                    "AS changed although unset");
        /* and a smaller file limit bites: EFBIG past it, once SIGXFSZ is ignored */
        l.fsize_bytes = 4096;
        CHILD_CHECK(fd, init_rlimits_apply(&l, &err) == 0, "apply fsize: %s", err.msg);
        signal(SIGXFSZ, SIG_IGN);
        char path[] = "/tmp/rtn-fsize-XXXXXX";
        int f = mkstemp(path);
        CHILD_CHECK(fd, f >= 0, "mkstemp");
        unlink(path);
        static char block[8192];
        CHILD_CHECK(fd, write(f, block, sizeof block) == 4096, "short write at the limit");
        CHILD_EXPECT_ERRNO(fd, write(f, block, 1), EFBIG);
        return 0;
}

Test(init_rlimits_apply, defaults_and_fsize) {
        struct child_result r = run_child(check_defaults_applied, NULL);
        assert_child_ok(r);
}

static int check_clamp(int fd, void *arg) {
        struct rlimit low = {64, 128};
        CHILD_CHECK(fd, setrlimit(RLIMIT_NOFILE, &low) == 0, "lower nofile");
        struct init_limits l = {.nofile = 1 << 20, .nproc = 100, .cpu_seconds = 30};
        struct rtn_error err = {0};
        /* never a raise, even for root with CAP_SYS_RESOURCE: the request is clamped to
         * what was inherited, as it must be inside the sandbox */
        CHILD_CHECK(fd, init_rlimits_apply(&l, &err) == 0, "apply: %s", err.msg);
        struct rlimit rl;
        getrlimit(RLIMIT_NOFILE, &rl);
        /* soft = min(1024, hard), hard clamped to the inherited 128 */
        CHILD_CHECK(fd, rl.rlim_cur == 128 && rl.rlim_max == 128, "clamped nofile %llu/%llu",
                    (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
        getrlimit(RLIMIT_NPROC, &rl);
        CHILD_CHECK(fd, rl.rlim_cur == 100 && rl.rlim_max == 100, "nproc");
        getrlimit(RLIMIT_CPU, &rl);
        CHILD_CHECK(fd, rl.rlim_cur == 30 && rl.rlim_max == 31, "cpu");
        CHILD_CHECK(fd, init_rlimits_apply(NULL, &err) == -EINVAL, "NULL limits");
        return 0;
}

Test(init_rlimits_apply, lowers_never_raises) {
        struct child_result r = run_child(check_clamp, NULL);
        assert_child_ok(r);
}

/* The whole sequence, as init/spawn.c runs it, then execve: the new program's first view of
 * itself must already be confined. */
static char seq_dir[64];

static int run_sequence(int fd, void *arg) {
        struct rtn_error err = {0};
        struct init_limits l;
        init_limits_default(&l);
        const char *w[] = {seq_dir};
        int ruleset = -1;
        CHILD_CHECK(fd, init_landlock_prepare(INIT_POLICY_AGENT, w, 1, 0, 0, &ruleset, &err) == 0,
                    "prepare: %s", err.msg);
        CHILD_CHECK(fd, init_rlimits_apply(&l, &err) == 0, "rlimits: %s", err.msg);
        CHILD_CHECK(fd, init_caps_drop_all(0, &err) == 0, "caps: %s", err.msg);
        CHILD_CHECK(fd, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
        CHILD_CHECK(fd, init_landlock_enforce(ruleset, &err) == 0, "landlock: %s", err.msg);
        CHILD_CHECK(fd, init_seccomp_install(INIT_POLICY_AGENT, &err) == 0, "seccomp: %s", err.msg);
        char script[512];
        snprintf(script, sizeof script,
                 "grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd):' /proc/self/status; "
                 "ulimit -c; echo x > %s/in && echo in-ok; "
                 "{ echo x > /tmp/rtn-seq-out-$$; } 2>/dev/null || echo out-denied",
                 seq_dir);
        dup2(fd, 1);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        return 127;
}

Test(init_policy, full_sequence_confines_first_instruction) {
        if (getuid() != 0)
                cr_skip_test("needs root (caps drop)");
        if (init_landlock_abi() < 1)
                cr_skip_test("needs Landlock");
        strcpy(seq_dir, "/tmp/rtn-seq-XXXXXX");
        cr_assert_not_null(mkdtemp(seq_dir));
        struct child_result r = run_child(run_sequence, NULL);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", seq_dir);
        cr_assert_eq(system(cmd), 0);
        cr_assert(WIFEXITED(r.status), "status 0x%x", r.status);
        cr_assert_str_eq(r.msg, "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
                                "NoNewPrivs:\t1\nSeccomp:\t2\n0\nin-ok\nout-denied\n");
}
