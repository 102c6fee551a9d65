/* Attacks on the Landlock rulesets of init/landlock.c, applied to a forked child in temp
 * dirs: writes outside the writable paths, TCP outside the proxy port, abstract unix sockets
 * and signals across the domain boundary. Skips, naming the feature, when the kernel's
 * Landlock ABI is too old for a check. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init/policy.h"
#include "tests/unit/init/child.h"

struct ll_case {
        enum init_policy policy;
        const char *writable[2];
        size_t n;
        const char *except[2]; /* read-only beneath, for init_landlock_prepare_except */
        size_t nexcept;
        uint16_t proxy_port;
        unsigned flags; /* INIT_LANDLOCK_* */
        char yes[64], no[64]; /* a writable and a non-writable temp dir */
        uint16_t other_port; /* a listener that is not the proxy */
        int abi;
};

static void require_abi(int min, const char *what) {
        int abi = init_landlock_abi();
        if (abi < min)
                cr_skip_test("needs Landlock ABI %d (%s); kernel has %d", min, what, abi);
}

static void make_dirs(struct ll_case *c) {
        strcpy(c->yes, "/tmp/rtn-ll-yes-XXXXXX");
        strcpy(c->no, "/tmp/rtn-ll-no-XXXXXX");
        cr_assert_not_null(mkdtemp(c->yes));
        cr_assert_not_null(mkdtemp(c->no));
        c->writable[0] = c->yes;
        c->n = 1;
        c->abi = init_landlock_abi();
}

static void remove_dirs(struct ll_case *c) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s' '%s'", c->yes, c->no);
        cr_assert_eq(system(cmd), 0);
}

static int confine(int fd, const struct ll_case *c) {
        struct rtn_error err = {0};
        int ruleset = -1;
        int r = init_landlock_prepare_except(c->policy, c->writable, c->n, c->except, c->nexcept,
                                             c->proxy_port, c->flags, &ruleset, &err);
        CHILD_CHECK(fd, r == 0 && ruleset >= 0, "prepare: %d %s", r, err.msg);
        CHILD_CHECK(fd, (fcntl(ruleset, F_GETFD) & FD_CLOEXEC) != 0, "ruleset fd not CLOEXEC");
        CHILD_CHECK(fd, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
        r = init_landlock_enforce(ruleset, &err);
        CHILD_CHECK(fd, r == 0, "enforce: %d %s", r, err.msg);
        close(ruleset);
        return 0;
}

static int write_file(const char *dir, const char *name) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (f < 0)
                return -1;
        int ok = write(f, "x", 1) == 1;
        close(f);
        return ok ? 0 : -1;
}

static int check_agent_fs(int fd, void *arg) {
        struct ll_case *c = arg;
        if (confine(fd, c))
                return 1;
        CHILD_CHECK(fd, write_file(c->yes, "ok") == 0, "write inside %s", c->yes);
        CHILD_EXPECT_ERRNO(fd, write_file(c->no, "bad"), EACCES);
        CHILD_EXPECT_ERRNO(fd, open("/etc/rtn-landlock-test", O_WRONLY | O_CREAT, 0644), EACCES);
        CHILD_EXPECT_ERRNO(fd, mkdir("/usr/rtn-landlock-test", 0755), EACCES);
        char from[128], to[128];
        snprintf(from, sizeof from, "%s/ok", c->yes);
        snprintf(to, sizeof to, "%s/moved", c->no);
        /* moving a file out of the writable tree: EXDEV at ABI >= 2 (REFER), else EACCES */
        errno = 0;
        CHILD_CHECK(fd, rename(from, to) == -1 && (errno == EXDEV || errno == EACCES),
                    "rename out of writable dir");
        CHILD_EXPECT_ERRNO(fd, truncate("/etc/hostname", 0), EACCES);
        CHILD_EXPECT_ERRNO(
                fd, mknod(strcat(strcpy(to, c->yes), "/null"), S_IFCHR | 0666, makedev(1, 3)),
                EACCES);
        /* reading and executing the system is fine; so are the /dev nodes */
        int f = open("/usr/bin/env", O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0, "read /usr/bin/env");
        close(f);
        f = open("/dev/null", O_WRONLY | O_TRUNC | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0, "open /dev/null for writing");
        close(f);
        CHILD_CHECK(fd, system("/bin/true") == 0, "exec /bin/true");
        return 0;
}

Test(init_landlock_prepare, agent_writes_only_writable_paths) {
        require_abi(1, "filesystem");
        struct ll_case c = {.policy = INIT_POLICY_AGENT};
        make_dirs(&c);
        struct child_result r = run_child(check_agent_fs, &c);
        struct stat st;
        char path[128];
        snprintf(path, sizeof path, "%s/bad", c.no);
        cr_expect_neq(stat(path, &st), 0, "the denied write reached the disk");
        remove_dirs(&c);
        assert_child_ok(r);
}

static int check_provision_fs(int fd, void *arg) {
        struct ll_case *c = arg;
        if (confine(fd, c))
                return 1;
        CHILD_CHECK(fd, write_file(c->no, "ok") == 0, "provision writes anywhere");
        CHILD_CHECK(fd, write_file(c->yes, "ok") == 0, "provision writes anywhere");
        return 0;
}

Test(init_landlock_prepare, provision_writes_anywhere) {
        require_abi(1, "filesystem");
        struct ll_case c = {.policy = INIT_POLICY_PROVISION};
        make_dirs(&c);
        struct child_result r = run_child(check_provision_fs, &c);
        remove_dirs(&c);
        assert_child_ok(r);
}

/* The host directories (here c->no) are read-only to provisioning, and so are the entries
 * of the directories on the way to them: it cannot rename them away or create a new one
 * beside them; everything else it may write. */
static int check_provision_host_dirs(int fd, void *arg) {
        struct ll_case *c = arg;
        if (confine(fd, c))
                return 1;
        CHILD_CHECK(fd, write_file(c->yes, "ok") == 0, "provision writes beside the host dir");
        CHILD_EXPECT_ERRNO(fd, write_file(c->no, "bad"), EACCES);
        char sub[128], moved[128];
        snprintf(sub, sizeof sub, "%s/sub", c->no);
        CHILD_EXPECT_ERRNO(fd, mkdir(sub, 0755), EACCES);
        snprintf(moved, sizeof moved, "%s.moved", c->no);
        errno = 0;
        CHILD_CHECK(fd, rename(c->no, moved) == -1 && (errno == EACCES || errno == EXDEV),
                    "rename the host dir away");
        CHILD_EXPECT_ERRNO(fd, mkdir("/tmp/rtn-ll-new-entry", 0755), EACCES);
        CHILD_CHECK(fd, system("/bin/true") == 0, "exec /bin/true");
        return 0;
}

Test(init_landlock_prepare, provision_host_dirs_read_only) {
        require_abi(1, "filesystem");
        struct ll_case c = {.policy = INIT_POLICY_PROVISION};
        make_dirs(&c);
        c.except[0] = c.no;
        c.nexcept = 1;
        struct child_result r = run_child(check_provision_host_dirs, &c);
        struct stat st;
        char path[128];
        snprintf(path, sizeof path, "%s/bad", c.no);
        cr_expect_neq(stat(path, &st), 0, "the denied write reached the disk");
        rmdir("/tmp/rtn-ll-new-entry");
        remove_dirs(&c);
        assert_child_ok(r);
}

/* --isolation landlock's workspace: a protected dir and file below a writable path stay
 * read-only, and the directory holding them keeps its entries; a sibling tree stays
 * writable. */
static int check_agent_except(int fd, void *arg) {
        struct ll_case *c = arg;
        if (confine(fd, c))
                return 1;
        char p[160], q[160];
        snprintf(p, sizeof p, "%s/src", c->yes);
        CHILD_CHECK(fd, write_file(p, "ok") == 0, "write in a sibling tree");
        CHILD_EXPECT_ERRNO(fd, write_file(c->except[0], "hooks"), EACCES);
        CHILD_EXPECT_ERRNO(fd, open(c->except[1], O_WRONLY | O_CLOEXEC), EACCES);
        snprintf(q, sizeof q, "%s/.git-old", c->yes);
        errno = 0;
        CHILD_CHECK(fd, rename(c->except[0], q) == -1 && (errno == EACCES || errno == EXDEV),
                    "rename the protected dir");
        CHILD_EXPECT_ERRNO(fd, unlink(c->except[1]), EACCES);
        CHILD_EXPECT_ERRNO(fd, write_file(c->yes, "new-at-top"), EACCES);
        int f = open(c->except[1], O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0, "read the protected file");
        close(f);
        return 0;
}

Test(init_landlock_prepare, agent_except_read_only) {
        require_abi(1, "filesystem");
        struct ll_case c = {.policy = INIT_POLICY_AGENT};
        make_dirs(&c);
        char git[128], rc[128], src[128];
        snprintf(git, sizeof git, "%s/.git", c.yes);
        snprintf(rc, sizeof rc, "%s/.envrc", c.yes);
        snprintf(src, sizeof src, "%s/src", c.yes);
        cr_assert_eq(mkdir(git, 0755), 0);
        cr_assert_eq(mkdir(src, 0755), 0);
        cr_assert_eq(write_file(c.yes, ".envrc"), 0);
        c.except[0] = git;
        c.except[1] = rc;
        c.nexcept = 2;
        struct child_result r = run_child(check_agent_except, &c);
        remove_dirs(&c);
        assert_child_ok(r);
}

static int tcp_listener(uint16_t *ret_port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(s, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
        cr_assert_eq(listen(s, 4), 0);
        cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
        *ret_port = ntohs(a.sin_port);
        return s;
}

static int tcp_connect(uint16_t port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -1;
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int r = connect(s, (struct sockaddr *)&a, sizeof a);
        int e = errno;
        close(s);
        errno = e;
        return r;
}

static int tcp_bind_any(void) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(0),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int r = bind(s, (struct sockaddr *)&a, sizeof a);
        int e = errno;
        close(s);
        errno = e;
        return r;
}

static int check_provision_tcp(int fd, void *arg) {
        struct ll_case *c = arg;
        if (confine(fd, c))
                return 1;
        CHILD_CHECK(fd, tcp_connect(c->proxy_port) == 0, "connect to the proxy port");
        CHILD_EXPECT_ERRNO(fd, tcp_connect(c->other_port), EACCES);
        CHILD_EXPECT_ERRNO(fd, tcp_bind_any(), EACCES);
        return 0;
}

Test(init_landlock_prepare, provision_connects_only_to_proxy) {
        require_abi(4, "TCP rules");
        struct ll_case c = {.policy = INIT_POLICY_PROVISION};
        make_dirs(&c);
        int l1 = tcp_listener(&c.proxy_port), l2 = tcp_listener(&c.other_port);
        struct child_result r = run_child(check_provision_tcp, &c);
        close(l1);
        close(l2);
        remove_dirs(&c);
        assert_child_ok(r);
}

static int check_agent_tcp(int fd, void *arg) {
        struct ll_case *c = arg;
        if (confine(fd, c))
                return 1;
        CHILD_CHECK(fd, tcp_connect(c->other_port) == 0, "agent connects to 127.0.0.1");
        CHILD_CHECK(fd, tcp_bind_any() == 0, "agent binds 127.0.0.1");
        return 0;
}

Test(init_landlock_prepare, agent_tcp_unrestricted) {
        require_abi(1, "filesystem");
        struct ll_case c = {.policy = INIT_POLICY_AGENT};
        make_dirs(&c);
        int l = tcp_listener(&c.other_port);
        struct child_result r = run_child(check_agent_tcp, &c);
        close(l);
        remove_dirs(&c);
        assert_child_ok(r);
}

static int abstract_addr(struct sockaddr_un *a, const char *name) {
        memset(a, 0, sizeof *a);
        a->sun_family = AF_UNIX;
        size_t n = strlen(name);
        memcpy(a->sun_path + 1, name, n); /* sun_path[0] == 0: abstract namespace */
        return (int)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static char abstract_name[64];

static int check_scopes(int fd, void *arg) {
        struct ll_case *c = arg;
        pid_t parent = getppid();
        if (confine(fd, c))
                return 1;
        struct sockaddr_un a;
        int len = abstract_addr(&a, abstract_name);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHILD_EXPECT_ERRNO(fd, connect(s, (struct sockaddr *)&a, (socklen_t)len), EPERM);
        CHILD_EXPECT_ERRNO(fd, kill(parent, 0), EPERM);
        /* inside the domain both still work: a child of ours, our own socket */
        pid_t kid = fork();
        if (kid == 0) {
                pause();
                _exit(0);
        }
        CHILD_CHECK(fd, kill(kid, SIGKILL) == 0, "kill own child");
        waitpid(kid, NULL, 0);
        return 0;
}

Test(init_landlock_prepare, scopes_signals_and_abstract_sockets) {
        require_abi(6, "scoped signals and abstract unix sockets");
        struct ll_case c = {.policy = INIT_POLICY_AGENT, .flags = INIT_LANDLOCK_SCOPED};
        make_dirs(&c);
        snprintf(abstract_name, sizeof abstract_name, "rtn-ll-test-%d", getpid());
        struct sockaddr_un a;
        int len = abstract_addr(&a, abstract_name);
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_eq(bind(l, (struct sockaddr *)&a, (socklen_t)len), 0);
        cr_assert_eq(listen(l, 4), 0);
        struct child_result r = run_child(check_scopes, &c);
        close(l);
        remove_dirs(&c);
        assert_child_ok(r);
}

Test(init_landlock_prepare, provision_scoped_too) {
        require_abi(6, "scoped signals and abstract unix sockets");
        struct ll_case c = {.policy = INIT_POLICY_PROVISION, .flags = INIT_LANDLOCK_SCOPED};
        make_dirs(&c);
        snprintf(abstract_name, sizeof abstract_name, "rtn-ll-test-p-%d", getpid());
        struct sockaddr_un a;
        int len = abstract_addr(&a, abstract_name);
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_eq(bind(l, (struct sockaddr *)&a, (socklen_t)len), 0);
        cr_assert_eq(listen(l, 4), 0);
        struct child_result r = run_child(check_scopes, &c);
        close(l);
        remove_dirs(&c);
        assert_child_ok(r);
}

/* Without INIT_LANDLOCK_SCOPED (a full sandbox, where the namespaces isolate), one command
 * may signal and connect to another command's processes: the domain boundary is no wall. */
static int check_unscoped(int fd, void *arg) {
        struct ll_case *c = arg;
        pid_t parent = getppid();
        if (confine(fd, c))
                return 1;
        struct sockaddr_un a;
        int len = abstract_addr(&a, abstract_name);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHILD_CHECK(fd, connect(s, (struct sockaddr *)&a, (socklen_t)len) == 0,
                    "connect to an abstract socket outside the domain");
        close(s);
        CHILD_CHECK(fd, kill(parent, 0) == 0, "signal a process outside the domain");
        return 0;
}

Test(init_landlock_prepare, unscoped_without_flag) {
        require_abi(6, "scoped signals and abstract unix sockets");
        struct ll_case c = {.policy = INIT_POLICY_AGENT};
        make_dirs(&c);
        snprintf(abstract_name, sizeof abstract_name, "rtn-ll-test-u-%d", getpid());
        struct sockaddr_un a;
        int len = abstract_addr(&a, abstract_name);
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_eq(bind(l, (struct sockaddr *)&a, (socklen_t)len), 0);
        cr_assert_eq(listen(l, 4), 0);
        struct child_result r = run_child(check_unscoped, &c);
        close(l);
        remove_dirs(&c);
        assert_child_ok(r);
}

/* INIT_LANDLOCK_HOST: no mount namespace, so "/" is the host's. Only the system dirs are
 * readable; the writable dir still is; TCP is closed. */
static int check_host_mode(int fd, void *arg) {
        struct ll_case *c = arg;
        if (confine(fd, c))
                return 1;
        CHILD_CHECK(fd, write_file(c->yes, "ok") == 0, "write inside %s", c->yes);
        CHILD_EXPECT_ERRNO(fd, write_file(c->no, "bad"), EACCES);
        CHILD_EXPECT_ERRNO(fd, open(c->no, O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
        CHILD_EXPECT_ERRNO(fd, open("/root", O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
        CHILD_EXPECT_ERRNO(fd, open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
        int f = open("/usr/bin/env", O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0, "read /usr/bin/env");
        close(f);
        f = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0, "read /proc/self/status");
        close(f);
        if (c->abi >= 4) {
                CHILD_EXPECT_ERRNO(fd, tcp_connect(c->other_port), EACCES);
                CHILD_EXPECT_ERRNO(fd, tcp_bind_any(), EACCES);
        }
        /* The host's terminals and shared memory are every user's: not granted. /dev/tty
         * (this process's own terminal, if any) and /dev/null are. */
        if (access("/dev/ptmx", F_OK) == 0)
                CHILD_EXPECT_ERRNO(fd, open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC), EACCES);
        if (access("/dev/pts", F_OK) == 0)
                CHILD_EXPECT_ERRNO(fd, open("/dev/pts", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                                   EACCES);
        if (access("/dev/shm", F_OK) == 0)
                CHILD_EXPECT_ERRNO(fd,
                                   open("/dev/shm/rtn-ll-test", O_RDWR | O_CREAT | O_CLOEXEC, 0600),
                                   EACCES);
        f = open("/dev/null", O_RDWR | O_CLOEXEC);
        CHILD_CHECK(fd, f >= 0, "open /dev/null");
        close(f);
        return 0;
}

Test(init_landlock_prepare, host_mode_reads_system_dirs_only) {
        require_abi(1, "filesystem");
        struct ll_case c = {.policy = INIT_POLICY_AGENT,
                            .flags = INIT_LANDLOCK_HOST | INIT_LANDLOCK_SCOPED};
        make_dirs(&c);
        int l = tcp_listener(&c.other_port);
        struct child_result r = run_child(check_host_mode, &c);
        close(l);
        remove_dirs(&c);
        assert_child_ok(r);
}

Test(init_landlock_prepare, rejects_bad_input) {
        require_abi(1, "filesystem");
        struct rtn_error err = {0};
        int fd = -7;
        const char *rel[] = {"workspace"};
        cr_assert_eq(init_landlock_prepare(INIT_POLICY_AGENT, rel, 1, 0, 0, &fd, &err), -EINVAL);
        cr_assert_eq(err.code, EINVAL);
        cr_assert_eq(fd, -7, "ret fd written on failure");
        const char *missing[] = {"/nonexistent-rtn-dir"};
        cr_assert_eq(init_landlock_prepare(INIT_POLICY_AGENT, missing, 1, 0, 0, &fd, &err),
                     -ENOENT);
        cr_assert(strstr(err.msg, "/nonexistent-rtn-dir") != NULL, "%s", err.msg);
        cr_assert_eq(init_landlock_prepare((enum init_policy)9, NULL, 0, 0, 0, &fd, &err), -EINVAL);
        cr_assert_eq(init_landlock_prepare(INIT_POLICY_AGENT, NULL, 0, 0, 1u << 7, &fd, &err),
                     -EINVAL);
        cr_assert_eq(init_landlock_prepare(INIT_POLICY_PROVISION, NULL, 0, 0, INIT_LANDLOCK_HOST,
                                           &fd, &err),
                     -EINVAL);
        cr_assert_eq(init_landlock_enforce(-1, &err), -EBADF);
}

Test(init_landlock_abi, reports_kernel_abi) {
        int abi = init_landlock_abi();
        if (abi == -EOPNOTSUPP || abi == -ENOSYS)
                cr_skip_test("Landlock not available: %d", abi);
        cr_assert_gt(abi, 0);
}
