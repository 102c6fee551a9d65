/* Brings the loopback device up in a fresh network namespace over rtnetlink. A new netns
 * (CLONE_NEWNET) holds exactly one device, `lo`, and it starts DOWN, so 127.0.0.1 is
 * unreachable until someone sets IFF_UP (net/core/net_namespace.c creates it via
 * loopback_net_init; nothing opens it). We do what `ip link set lo up` does, with two
 * netlink round trips: RTM_GETLINK by name for the index, RTM_NEWLINK with IFF_UP in
 * ifi_flags/ifi_change, each with NLM_F_ACK so the kernel's verdict is read back rather
 * than assumed (rtnetlink(7), netlink(7)). It runs in rtn's network helper, which shares
 * rtn's memory (CLONE_VM) while rtn's other threads go on, so it uses a raw socket plus
 * libmnl's message builders and parser, which touch only the stack buffers given to them:
 * no mnl_socket (calloc), no stdio. */
#include "netns/netns.h"

#include <errno.h>
#include <stdbool.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"

#define LO_NAME "lo"
/* A link message for lo with all its attributes is a few KiB; a datagram longer than the
 * receive buffer is truncated (MSG_TRUNC), so size it like libmnl's own default. */
#define NL_BUF_SIZE 8192
/* include/uapi/linux/if_link.h of Linux 6.3, newer than the headers rtn may be built with */
#define LO_IFLA_GSO_IPV4_MAX_SIZE 63
#define LO_IFLA_GRO_IPV4_MAX_SIZE 64

struct nl_conn {
        int fd;
        unsigned portid;
        unsigned seq;
};

static int nl_open(struct nl_conn *c, struct rtn_error *err) {
        c->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (c->fd < 0)
                return rtn_err(err, errno, "socket(AF_NETLINK, NETLINK_ROUTE)");
        /* nl_pid 0: the kernel picks our port id; read it back so replies can be matched. */
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
        if (bind(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0)
                return rtn_err(err, errno, "bind netlink socket");
        socklen_t len = sizeof sa;
        if (getsockname(c->fd, (struct sockaddr *)&sa, &len) < 0)
                return rtn_err(err, errno, "getsockname netlink socket");
        c->portid = sa.nl_pid;
        c->seq = 1;
        return 0;
}

/* Sends one request with NLM_F_ACK and feeds replies to cb until the ack (or an error
 * report) arrives. mnl_cb_run checks sequence number and port id, and turns an
 * NLMSG_ERROR with a negative error into MNL_CB_ERROR with errno set. */
static int nl_transact(struct nl_conn *c, struct nlmsghdr *req, mnl_cb_t cb, void *data) {
        req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
        req->nlmsg_seq = ++c->seq;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        if (sendto(c->fd, req, req->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0)
                return negative_errno();
        char buf[NL_BUF_SIZE] __attribute__((aligned(NLMSG_ALIGNTO)));
        for (;;) {
                ssize_t n = recv(c->fd, buf, sizeof buf, 0);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                int r = mnl_cb_run(buf, (size_t)n, req->nlmsg_seq, c->portid, cb, data);
                if (r == MNL_CB_ERROR)
                        return negative_errno();
                if (r == MNL_CB_STOP)
                        return 0;
        }
}

static int link_cb(const struct nlmsghdr *nlh, void *data) {
        if (nlh->nlmsg_type != RTM_NEWLINK ||
            nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
                return MNL_CB_OK;
        const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
        *(int *)data = ifi->ifi_index;
        return MNL_CB_OK;
}

static int lo_index(struct nl_conn *c, int *ret_index, struct rtn_error *err) {
        char buf[NLMSG_SPACE(sizeof(struct ifinfomsg)) + 64]
                __attribute__((aligned(NLMSG_ALIGNTO)));
        memset(buf, 0, sizeof buf);
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = RTM_GETLINK;
        struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
        ifi->ifi_family = AF_UNSPEC;
        /* ifi_index 0 + IFLA_IFNAME: look up by name (rtnl_getlink in net/core/rtnetlink.c). */
        mnl_attr_put_strz(nlh, IFLA_IFNAME, LO_NAME);
        int index = 0;
        int r = nl_transact(c, nlh, link_cb, &index);
        if (r < 0)
                return rtn_err(err, r, "RTM_GETLINK " LO_NAME);
        if (index <= 0)
                return rtn_errx(err, ENODEV, "RTM_GETLINK " LO_NAME ": no link in the reply");
        *ret_index = index;
        return 0;
}

/* RTM_NEWLINK for lo with IFF_UP, and with big, the largest segments the kernel builds
 * and merges on it (below). */
static int link_up_msg(struct nl_conn *c, int index, bool big) {
        char buf[NLMSG_SPACE(sizeof(struct ifinfomsg)) + 4 * NLA_ALIGN(NLA_HDRLEN + 4)]
                __attribute__((aligned(NLMSG_ALIGNTO)));
        memset(buf, 0, sizeof buf);
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = RTM_NEWLINK;
        struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
        ifi->ifi_family = AF_UNSPEC;
        ifi->ifi_index = index;
        /* ifi_change masks which bits of ifi_flags apply (rtnetlink(7)): only IFF_UP. */
        ifi->ifi_flags = IFF_UP;
        ifi->ifi_change = IFF_UP;
        if (big) {
                mnl_attr_put_u32(nlh, IFLA_GSO_MAX_SIZE, NETNS_LO_SEGMENT_MAX);
                mnl_attr_put_u32(nlh, IFLA_GRO_MAX_SIZE, NETNS_LO_SEGMENT_MAX);
                mnl_attr_put_u32(nlh, LO_IFLA_GSO_IPV4_MAX_SIZE, NETNS_LO_SEGMENT_MAX);
                mnl_attr_put_u32(nlh, LO_IFLA_GRO_IPV4_MAX_SIZE, NETNS_LO_SEGMENT_MAX);
        }
        return nl_transact(c, nlh, NULL, NULL);
}

/* Up, with segments of up to NETNS_LO_SEGMENT_MAX ("BIG TCP", Linux 6.3 for IPv4): a
 * loopback segment is 64 KiB by default, and each costs both ends its fixed work, which
 * bounds what a relay inside the sandbox's lo (the gate's, netns/gate.c) can pass on. A
 * kernel that takes no such size (before 5.19: EINVAL) gets lo up alone, in a second
 * request; one older than 6.3 ignores the IPv4 attributes it does not know. */
static int link_set_up(struct nl_conn *c, int index, struct rtn_error *err) {
        int r = link_up_msg(c, index, true);
        if (r < 0)
                r = link_up_msg(c, index, false);
        if (r < 0)
                return rtn_err(err, r, "RTM_NEWLINK " LO_NAME " (index %d) IFF_UP", index);
        return 0;
}

static int lo_up(struct nl_conn *c, struct rtn_error *err) {
        int index = 0;
        int r = nl_open(c, err);
        if (r < 0)
                return r;
        r = lo_index(c, &index, err);
        if (r < 0)
                return r;
        return link_set_up(c, index, err);
}

int netns_lo_up(struct rtn_error *err) {
        struct nl_conn c = {.fd = -1};
        int r = lo_up(&c, err);
        rtn_safe_close(c.fd);
        if (r < 0 && err)
                rtn_err_wrap(err, "bring up loopback");
        return r < 0 ? r : 0;
}
