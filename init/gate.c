/* The provisioning gate, rtn-init's half (docs/architecture.md, "Network gate"). On request
 * PID 1 creates a second network namespace with only `lo` up, opens a TCP listener on
 * 127.0.0.1 (ephemeral port) in it, and hands the listener to rtn over the control socket;
 * rtn runs the egress proxy on it. Provisioning commands are started in that namespace
 * (init/spawn.c) with a Landlock ruleset whose only TCP right is connect to the gate's port,
 * so their one way out is the proxy. Agent commands stay in the sandbox's main netns, which
 * has no route to the gate's: Landlock cannot deny one port while allowing the rest, a
 * separate namespace can. PID 1 holds every capability of the sandbox's user namespace,
 * which unshare(CLONE_NEWNET) and setns(2) need; nothing here runs under seccomp. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "init/internal.h"
#include "init/policy.h"

/* SIOCSIFFLAGS is enough for lo in a fresh netns (netdevice(7)); rtn-init links no libmnl. */
static int lo_up(struct rtn_error *err) {
        _cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return rtn_err(err, errno, "gate: socket");
        struct ifreq ifr = {0};
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
        if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                return rtn_err(err, errno, "gate: get flags of lo");
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                return rtn_err(err, errno, "gate: bring lo up");
        return 0;
}

static int listen_lo(uint16_t *ret_port, struct rtn_error *err) {
        _cleanup_close_ int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return rtn_err(err, errno, "gate: socket");
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 64) < 0 ||
            getsockname(s, (struct sockaddr *)&a, &len) < 0)
                return rtn_err(err, errno, "gate: listen on 127.0.0.1");
        *ret_port = ntohs(a.sin_port);
        return TAKE_FD(s);
}

/* Builds the gate's netns and listener, then returns to the main netns. A network namespace
 * belongs to a thread, and this runs on rtn-init's privileged thread (init/privileged.c):
 * /proc/thread-self, not /proc/self, which names the thread group leader's. */
static int open_netns(struct init_state *st, uint16_t *ret_port, struct rtn_error *err) {
        _cleanup_close_ int main_ns =
                openat(AT_FDCWD, "/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (main_ns < 0)
                return rtn_err(err, errno, "gate: open /proc/thread-self/ns/net");
        if (unshare(CLONE_NEWNET) < 0)
                return rtn_err(err, errno, "gate: unshare network namespace");
        _cleanup_close_ int gate_ns =
                openat(AT_FDCWD, "/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        int r = gate_ns < 0 ? rtn_err(err, errno, "gate: open its netns") : lo_up(err);
        int fd = r < 0 ? r : listen_lo(ret_port, err);
        /* The socket keeps the namespace it was made in; PID 1 itself goes back. */
        if (setns(main_ns, CLONE_NEWNET) < 0) {
                rtn_safe_close(fd);
                return rtn_err(err, errno, "gate: return to the main netns");
        }
        if (fd < 0)
                return fd;
        st->gate_netns = TAKE_FD(gate_ns);
        return fd;
}

static int rebuild_ruleset(struct init_state *st, struct rtn_error *err) {
        if (st->cfg.isolation == INIT_ISOLATION_NO_LANDLOCK)
                return 0;
        int fd = -1;
        int r = init_landlock_prepare_except(INIT_POLICY_PROVISION, NULL, 0, st->host, st->nhost,
                                             st->gate_port, 0, &fd, err);
        if (r < 0)
                return r;
        rtn_safe_close(st->ruleset_fd[1]);
        st->ruleset_fd[1] = fd;
        return 0;
}

void init_gate_open(struct init_state *st) {
        struct rtn_error err = {0};
        struct init_gate g = {.hdr = {.type = INIT_MSG_GATE, .len = sizeof g}};
        uint16_t port = 0;
        int fd = -1;
        if (st->gate_netns >= 0) {
                rtn_errx(&err, EALREADY, "gate: already open");
        } else if (st->cfg.isolation == INIT_ISOLATION_LANDLOCK) {
                rtn_errx(&err, EOPNOTSUPP, "gate: no network namespace in the Landlock-only mode");
        } else if (st->spawned) {
                /* The provisioning ruleset walks /: after a command it would be built on
                 * what that command made of it (its symlinks, its directories). */
                rtn_errx(&err, EBUSY, "gate: a command has run; it opens before the first");
        } else if ((fd = open_netns(st, &port, &err)) >= 0) {
                st->gate_port = port;
                if (rebuild_ruleset(st, &err) < 0)
                        fd = rtn_safe_close(fd);
                else
                        st->cfg.policies |= INIT_POLICY_BIT(INIT_POLICY_PROVISION);
        }
        if (fd < 0) {
                g.error = err.code > 0 ? err.code : EINVAL;
                snprintf(g.message, sizeof g.message, "%s", err.msg);
        }
        g.port = port;
        (void)init_ctl_send(&g, sizeof g, &fd, fd >= 0 ? 1 : 0);
        rtn_safe_close(fd);
}
