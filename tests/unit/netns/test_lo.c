/* netns_lo_up against the real kernel: each criterion test runs in its own forked process,
 * so a test may unshare a user + network namespace, check that `lo` starts DOWN and that
 * 127.0.0.1 is unreachable, bring it up, and prove the result with SIOCGIFFLAGS and a real
 * TCP connection. The failure case runs in a user namespace that does not own the current
 * network namespace, where the kernel refuses RTM_NEWLINK with EPERM.
 * unshare(CLONE_NEWUSER) needs a single-threaded caller (unshare(2): EINVAL otherwise) and
 * criterion's worker has threads, so each scenario runs in a forked child that records what
 * it observed in shared memory; the test process then asserts on those observations. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/io.h"
#include "netns/netns.h"

/* What a scenario saw, written by the child, asserted by the test. */
struct obs {
        int setup_errno; /* unshare / id map failure; 0 when set up */
        char setup_step[64];
        int flags_before, flags_after;
        int connect_before, connect_after; /* 0 or errno */
        int rc1, rc2; /* netns_lo_up results */
        struct rtn_error err;
        int fd_before, fd_after; /* lowest free fd around the calls */
};

static int setup_fail(struct obs *o, const char *step) {
        o->setup_errno = errno ? errno : EINVAL;
        snprintf(o->setup_step, sizeof o->setup_step, "%s", step);
        return -1;
}

/* Enters new namespaces as the sandbox child does, mapping the caller to uid 0 inside. */
static int enter_namespaces(struct obs *o, int flags) {
        char map[64];
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(flags) < 0)
                return setup_fail(o, "unshare");
        /* Unprivileged writers must deny setgroups before gid_map (user_namespaces(7)). */
        if (rtn_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny") < 0)
                return setup_fail(o, "write setgroups");
        snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
        if (rtn_write_file_at(AT_FDCWD, "/proc/self/uid_map", map) < 0)
                return setup_fail(o, "write uid_map");
        snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
        if (rtn_write_file_at(AT_FDCWD, "/proc/self/gid_map", map) < 0)
                return setup_fail(o, "write gid_map");
        return 0;
}

/* SIOCGIFFLAGS on lo; -errno on failure. */
static int lo_flags(void) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        struct ifreq ifr = {0};
        strcpy(ifr.ifr_name, "lo");
        int r = ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ? -errno : (unsigned short)ifr.ifr_flags;
        close(fd);
        return r;
}

/* Listens on 127.0.0.1:0, connects, and passes one byte; returns 0 or the failing errno. */
static int tcp_loopback_roundtrip(void) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof sa;
        int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int conn = -1, r = 0;
        char c = 0;
        if (srv < 0 || cli < 0 || bind(srv, (struct sockaddr *)&sa, sizeof sa) < 0 ||
            listen(srv, 1) < 0 || getsockname(srv, (struct sockaddr *)&sa, &len) < 0 ||
            connect(cli, (struct sockaddr *)&sa, sizeof sa) < 0 ||
            (conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC)) < 0 || write(cli, "x", 1) != 1 ||
            read(conn, &c, 1) != 1)
                r = errno ? errno : EIO;
        else if (c != 'x')
                r = EBADMSG;
        close(conn);
        close(cli);
        close(srv);
        return r;
}

static int lowest_free_fd(void) {
        int fd = dup(0);
        if (fd >= 0)
                close(fd);
        return fd;
}

/* Runs fn in a forked, single-threaded child and returns its observations (shared
 * mapping, never unmapped: the test process is short-lived). Skips, naming the missing
 * feature, when the host forbids unprivileged user namespaces. */
static struct obs *run_child(void (*fn)(struct obs *)) {
        struct obs *o =
                mmap(NULL, sizeof *o, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        cr_assert_neq(o, MAP_FAILED);
        memset(o, 0, sizeof *o);
        pid_t pid = fork();
        cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                errno = 0;
                fn(o);
                _exit(0);
        }
        int status = 0;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
        if (o->setup_errno == EPERM || o->setup_errno == ENOSPC || o->setup_errno == EUSERS)
                cr_skip_test("user namespaces unavailable: %s: %s", o->setup_step,
                             strerror(o->setup_errno));
        cr_assert_eq(o->setup_errno, 0, "%s: %s", o->setup_step, strerror(o->setup_errno));
        return o;
}

static void scenario_up(struct obs *o) {
        if (enter_namespaces(o, CLONE_NEWUSER | CLONE_NEWNET) < 0)
                return;
        o->flags_before = lo_flags();
        o->connect_before = tcp_loopback_roundtrip();
        o->fd_before = lowest_free_fd();
        o->rc1 = netns_lo_up(&o->err);
        o->flags_after = lo_flags();
        o->connect_after = tcp_loopback_roundtrip();
        o->rc2 = netns_lo_up(NULL);
        o->fd_after = lowest_free_fd();
}

Test(netns_lo_up, brings_lo_up_in_new_netns) {
        struct obs *o = run_child(scenario_up);
        cr_assert_geq(o->flags_before, 0, "SIOCGIFFLAGS: %s", strerror(-o->flags_before));
        cr_assert_eq(o->flags_before & IFF_UP, 0, "lo must start DOWN in a new netns");
        cr_assert_eq(o->connect_before, ENETUNREACH, "before: %s", strerror(o->connect_before));
        cr_assert_eq(o->rc1, 0, "%s", o->err.msg);
        cr_assert_eq(o->err.code, 0);
        cr_assert_eq(o->flags_after & (IFF_UP | IFF_RUNNING), IFF_UP | IFF_RUNNING, "flags %#x",
                     o->flags_after);
        cr_assert_eq(o->connect_after, 0, "after: %s", strerror(o->connect_after));
}

Test(netns_lo_up, idempotent_with_null_err) {
        struct obs *o = run_child(scenario_up);
        cr_assert_eq(o->rc2, 0);
}

Test(netns_lo_up, closes_its_socket) {
        struct obs *o = run_child(scenario_up);
        cr_assert_geq(o->fd_before, 0);
        cr_assert_eq(o->fd_after, o->fd_before, "an fd leaked: lowest free %d then %d",
                     o->fd_before, o->fd_after);
}

/* A new user namespace alone: we hold every capability in it, but the current network
 * namespace belongs to the parent user namespace, so rtnetlink's
 * netlink_net_capable(CAP_NET_ADMIN) check refuses (net/core/rtnetlink.c). */
static void scenario_eperm(struct obs *o) {
        if (enter_namespaces(o, CLONE_NEWUSER) < 0)
                return;
        o->fd_before = lowest_free_fd();
        o->rc1 = netns_lo_up(&o->err);
        o->rc2 = netns_lo_up(NULL);
        o->fd_after = lowest_free_fd();
}

Test(netns_lo_up, eperm_without_netns_privilege) {
        struct obs *o = run_child(scenario_eperm);
        cr_assert_eq(o->rc1, -EPERM, "rc %d: %s", o->rc1, o->err.msg);
        cr_assert_eq(o->err.code, EPERM);
        cr_assert_not_null(strstr(o->err.msg, "bring up loopback: RTM_NEWLINK lo"), "msg: %s",
                           o->err.msg);
        cr_assert_not_null(strstr(o->err.msg, strerror(EPERM)), "msg: %s", o->err.msg);
}

Test(netns_lo_up, eperm_with_null_err_and_no_fd_leak) {
        struct obs *o = run_child(scenario_eperm);
        cr_assert_eq(o->rc2, -EPERM);
        cr_assert_eq(o->fd_after, o->fd_before);
}
