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
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
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
        long long gso_v4, gro_v4, gso, gro; /* lo's segment sizes after; -1: not reported */
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

/* IFLA_GSO_IPV4_MAX_SIZE and IFLA_GRO_IPV4_MAX_SIZE (Linux 6.3; the headers may be older). */
#define GSO_IPV4_MAX_SIZE 63
#define GRO_IPV4_MAX_SIZE 64

struct lo_sizes {
        long long v[65];
};

static int attr_cb(const struct nlattr *a, void *data) {
        struct lo_sizes *s = data;
        unsigned t = mnl_attr_get_type(a);
        if (t < 65 && mnl_attr_get_payload_len(a) == 4)
                s->v[t] = mnl_attr_get_u32(a);
        return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data) {
        if (nlh->nlmsg_type == RTM_NEWLINK)
                mnl_attr_parse(nlh, sizeof(struct ifinfomsg), attr_cb, data);
        return MNL_CB_OK;
}

/* lo's attributes of 4 bytes as RTM_GETLINK reports them (-1: absent); 0 or an errno. */
static int lo_sizes_read(struct lo_sizes *s) {
        for (size_t i = 0; i < 65; i++)
                s->v[i] = -1;
        char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO))) = {0};
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = RTM_GETLINK;
        nlh->nlmsg_flags = NLM_F_REQUEST;
        nlh->nlmsg_seq = 1;
        struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
        ifi->ifi_index = (int)if_nametoindex("lo");
        struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
        int r = 0;
        if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
            mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
                r = errno ? errno : EIO;
        ssize_t n = r ? -1 : mnl_socket_recvfrom(nl, buf, sizeof buf);
        if (!r &&
            (n < 0 || mnl_cb_run(buf, (size_t)n, 1, mnl_socket_get_portid(nl), link_cb, s) < 0))
                r = errno ? errno : EIO;
        if (nl)
                mnl_socket_close(nl);
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
        struct lo_sizes sz;
        if (lo_sizes_read(&sz) == 0) {
                o->gso_v4 = sz.v[GSO_IPV4_MAX_SIZE];
                o->gro_v4 = sz.v[GRO_IPV4_MAX_SIZE];
                o->gso = sz.v[IFLA_GSO_MAX_SIZE];
                o->gro = sz.v[IFLA_GRO_MAX_SIZE];
        } else
                o->gso_v4 = o->gro_v4 = o->gso = o->gro = -2;
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

/* The gate's relay into the sandbox passes bulk data over lo: in segments of 64 KiB (the
 * default) each costs the reader its fixed work, and the proxied download of
 * docs/benchmarks.md was a third slower than the direct one. Kernels without the IPv4 sizes
 * (before 6.3) keep lo as it was. */
Test(netns_lo_up, segments_up_to_the_most) {
        struct obs *o = run_child(scenario_up);
        cr_assert_eq(o->rc1, 0, "%s", o->err.msg);
        cr_assert_neq(o->gso_v4, -2, "RTM_GETLINK lo failed");
        if (o->gso_v4 < 0)
                cr_skip_test("this kernel reports no IFLA_GSO_IPV4_MAX_SIZE (Linux 6.3)");
        cr_assert_eq(o->gso_v4, NETNS_LO_SEGMENT_MAX, "gso_ipv4_max_size %lld", o->gso_v4);
        cr_assert_eq(o->gro_v4, NETNS_LO_SEGMENT_MAX, "gro_ipv4_max_size %lld", o->gro_v4);
        cr_assert_eq(o->gso, NETNS_LO_SEGMENT_MAX, "gso_max_size %lld", o->gso);
        cr_assert_eq(o->gro, NETNS_LO_SEGMENT_MAX, "gro_max_size %lld", o->gro);
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
