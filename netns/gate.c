/* The gate's proxy, trusted side (docs/network.md; docs/architecture.md, "Network gate").
 * It serves two listeners inside sandboxes: the provisioning gate rtn-init makes for
 * pkg_install (init/gate.c), and the agent's proxy the network helper makes in the sandbox's
 * own netns when --allow-net is given (runtime/sandbox/sandbox.c). The listener sits on
 * rtn's event loop (or rtn exec's poll), and each accepted connection gets a detached thread
 * that reads a request head, decides, and then relays bytes with poll(2), read(2) and
 * send(2), 256 KiB at a time, reading on without a poll after a full read (RELAY_BURST;
 * relay_move says why not splice(2)). Blocking
 * getaddrinfo and connect stay off the loop that way, and a stalled server cannot stall
 * ping or cancellation.
 *
 * The decision (decide, one per request): the head is parsed once, strictly
 * (netns_http_parse, netns/http.c: what any server could read another way is refused with
 * 400); the request is `CONNECT host:port` or an absolute-form `GET http://host[:port]/...`;
 * the policy (netns/policy.c) must admit host and port, an address only when a rule is that
 * address; the name is resolved here (netns_resolve: public unicast only, and none of this
 * machine's own addresses unless a rule ADDR:PORT names it) and the proxy connects to
 * exactly the address it checked. What follows is held to that host: a plain
 * HTTP request's Host header must name it, and what goes upstream is the head rtn writes
 * from the parse (netns_http_upstream_head, `Connection: close`) and no more client bytes
 * than its Content-Length; a request pipelined behind it is read once the answer is done,
 * decided as the first was and, refused or not, never sent on. A CONNECT tunnel carries only TLS
 * whose ClientHello names the CONNECT host (netns/tls.c), so no other name is reached at a shared
 * address and no raw TCP leaves. A host with a secret (--secret, netns/secret.c) is intercepted:
 * its plain requests get the secret's header (netns/http.c), and its tunnels are answered with TLS
 * under the gate's own CA, the request inside held as a plain one is and sent on over
 * verified TLS (netns/intercept.c). NETNS_HOST_NAME:PORT, for a port --allow-host-port
 * opened, goes to that port of the host's loopback and nowhere else, and its tunnel carries
 * any protocol: no rule, no DNS answer and no other port reaches the loopback. Behind
 * --upstream-proxy (netns/upstream.c) the decision is the same, and the connection is a
 * CONNECT of the operator's proxy to the name instead of one to the address. Every refusal is
 * kept (host, port, reason) for the reports of the command that made it (netns/denials.c). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/loop.h"
#include "netns/internal.h"
#include "netns/netns.h"

#define HEAD_MAX 16384
#define HEAD_TIMEOUT_MS 30000
#define CONNECT_TIMEOUT_MS 20000
#define IDLE_TIMEOUT_MS 120000
#define RELAY_BUF (256 << 10) /* what a relay reads at once: a loopback segment's most */
#define RELAY_BUF_MIN 16384 /* its buffer where the heap has none */

struct conn {
        struct netns_gate *g;
        int fd;
};

static void gate_unref(struct netns_gate *g) {
        if (atomic_fetch_sub(&g->refs, 1) != 1)
                return;
        netns_policy_free(&g->policy);
        netns_secrets_free(&g->secrets);
        netns_intercept_free(g->icpt);
        pthread_mutex_destroy(&g->mu);
        free(g);
}

int netns_gate_new_policy(const struct netns_policy *p, struct netns_gate **ret,
                          struct rtn_error *err) {
        struct netns_gate *g = calloc(1, sizeof *g);
        if (!g || netns_policy_copy(p, &g->policy) < 0) {
                free(g);
                return rtn_err(err, ENOMEM, "gate");
        }
        atomic_init(&g->refs, 1);
        atomic_init(&g->nconn, 0);
        pthread_mutex_init(&g->mu, NULL);
        g->listen_fd = -1;
        *ret = g;
        return 0;
}

int netns_gate_new(const char *const *hosts, size_t nhosts, struct netns_gate **ret,
                   struct rtn_error *err) {
        struct netns_policy p = {0};
        int r = 0;
        for (size_t i = 0; r == 0 && i < nhosts; i++)
                r = netns_policy_add(&p, hosts[i], err);
        if (r == 0)
                r = netns_gate_new_policy(&p, ret, err);
        netns_policy_free(&p);
        return r;
}

int netns_gate_set_secrets(struct netns_gate *g, const struct netns_secrets *ss,
                           struct rtn_error *err) {
        if (!ss->n)
                return 0;
        int r = netns_intercept_new(ss, &g->icpt, err);
        if (r < 0)
                return r;
        if (netns_secrets_copy(ss, &g->secrets) < 0)
                return rtn_errx(err, ENOMEM, "gate: out of memory");
        return 0;
}

void netns_gate_set_upstream(struct netns_gate *g, const struct netns_upstream *u) {
        g->upstream = *u;
}

const char *netns_gate_ca_pem(const struct netns_gate *g) {
        return netns_intercept_ca_pem(g->icpt);
}

/* send(2) with MSG_NOSIGNAL: a client or server that hung up must not raise SIGPIPE. */
int netns_send_all(int fd, const void *buf, size_t len) {
        const char *p = buf;
        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

static size_t format_reply(char *buf, size_t len, int code, const char *status, const char *body) {
        int n = snprintf(buf, len,
                         "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                         "Content-Length: %zu\r\n\r\n%s\n",
                         code, status, strlen(body) + 1, body);
        return n <= 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

static void reply(int fd, int code, const char *status, const char *body) {
        char buf[768];
        (void)netns_send_all(fd, buf, format_reply(buf, sizeof buf, code, status, body));
}

static const char *status_text(int code) {
        switch (code) {
        case 400:
                return "Bad Request";
        case 411:
                return "Length Required";
        case 431:
                return "Request Header Fields Too Large";
        case 502:
                return "Bad Gateway";
        default:
                return "Forbidden";
        }
}

/* Reads more of a connection into buf[*len..cap) within HEAD_TIMEOUT_MS: bytes read, or
 * -errno (-ECONNRESET at EOF). */
static ssize_t read_more(int fd, char *buf, size_t cap, size_t len) {
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, HEAD_TIMEOUT_MS) <= 0)
                        return -ETIMEDOUT;
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -ECONNRESET;
                return n;
        }
}

/* Whether buf's len bytes hold a whole head by any server's reading (netns_http_head_end):
 * sets *ret_head_len to its length. */
static bool head_complete(const char *buf, size_t len, size_t *ret_head_len) {
        return (*ret_head_len = netns_http_head_end(buf, len)) > 0;
}

/* Reads until the end of the head, buf holding len bytes already; returns the bytes in buf
 * (the head and maybe more) or -errno (-E2BIG past HEAD_MAX). */
static ssize_t read_head(int fd, char *buf, size_t len, size_t *ret_head_len) {
        while (!head_complete(buf, len, ret_head_len)) {
                if (len >= HEAD_MAX)
                        return -E2BIG;
                ssize_t n = read_more(fd, buf, HEAD_MAX, len);
                if (n < 0)
                        return n;
                len += (size_t)n;
        }
        return (ssize_t)len;
}

/* The per-host decision every request gets before a byte goes upstream. REFUSE with why
 * filled in; TUNNEL, relay to the checked address; INTERCEPT, a host with a secret: its
 * header is added (plain HTTP), or its TLS is terminated to add it (CONNECT). */
static enum netns_verdict gate_verdict(const struct netns_gate *g, const char *host, uint16_t port,
                                       char *why, size_t wl) {
        char canon[256];
        union netns_ip ip;
        int family = 0;
        if (netns_host_canon(host, canon, sizeof canon, &ip, &family) < 0) {
                snprintf(why, wl, "%.100s is not a valid host name", host);
                return NETNS_VERDICT_REFUSE;
        }
        /* The host's name answers to --allow-host-port alone, whatever a rule (.internal) or
         * a DNS server says of it. */
        if (!family && !strcmp(canon, NETNS_HOST_NAME)) {
                if (netns_policy_host_port(&g->policy, port))
                        return NETNS_VERDICT_HOST;
                snprintf(why, wl,
                         "port %u of " NETNS_HOST_NAME " is not open (only rtn "
                         "--allow-host-port %u opens it)",
                         port, port);
                return NETNS_VERDICT_REFUSE;
        }
        if (netns_policy_allows(&g->policy, canon, port))
                return netns_secrets_for(&g->secrets, canon) ? NETNS_VERDICT_INTERCEPT
                                                             : NETNS_VERDICT_TUNNEL;
        bool any_port = false, defaults_only = true;
        for (size_t i = 0; i < g->policy.n; i++) {
                uint16_t rp = g->policy.rules[i].port;
                any_port |= rp ? rp == port : netns_port_default(port);
                defaults_only &= rp == 0;
        }
        if (!any_port && defaults_only)
                snprintf(why, wl, "only ports " NETNS_PORTS_DEFAULT " are allowed");
        else if (!any_port)
                snprintf(why, wl, "port %u is not on the allowlist", port);
        else if (family)
                snprintf(why, wl,
                         "%s is not on the allowlist (an address is admitted only by a "
                         "rule that names it)",
                         canon);
        else
                snprintf(why, wl, "%s is not on the allowlist", canon);
        return NETNS_VERDICT_REFUSE;
}

int netns_connect(const struct sockaddr_storage *a, socklen_t len) {
        _cleanup_close_ int s = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return negative_errno();
        if (connect(s, (const struct sockaddr *)a, len) < 0) {
                if (errno != EINPROGRESS)
                        return negative_errno();
                struct pollfd p = {.fd = s, .events = POLLOUT};
                if (poll(&p, 1, CONNECT_TIMEOUT_MS) <= 0)
                        return -ETIMEDOUT;
                int e = 0;
                socklen_t el = sizeof e;
                if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e)
                        return e ? -e : negative_errno();
        }
        (void)rtn_fd_nonblock(s, 0);
        return TAKE_FD(s);
}

/* Moves what `from` has (at most want bytes, read once) to `to` through buf: the count, 0 at
 * its end, < 0 when either side failed, -EAGAIN when `from` had nothing (only with
 * MSG_DONTWAIT in flags, for a read that poll(2) did not announce). The bytes are copied
 * through rtn's memory rather than spliced through a pipe: a spliced segment carries the
 * source's 4 KiB pages, 17 at most, where a copied one carries the socket's own 32 KiB
 * chunks, so the sandbox's side of the hop gets segments up to the loopback's 256 KiB
 * (netns/lo.c) and its reader pays less per byte than the copy costs here
 * (docs/benchmarks.md, "What the agent's proxy costs a download"). */
static ssize_t relay_move(int from, int to, size_t want, char *buf, size_t cap, int flags) {
        size_t n = want < cap ? want : cap;
        ssize_t k = flags ? recv(from, buf, n, flags) : read(from, buf, n);
        if (k < 0 && flags && errno == ENOTSOCK)
                return -EAGAIN; /* not a socket: wait for poll */
        if (k > 0 && netns_send_all(to, buf, (size_t)k) < 0)
                return -EPIPE;
        return k < 0 ? -errno : k;
}

/* Reads that may follow a full one on the same side before the relay polls again: a
 * download's queue usually holds more than one buffer, and its poll per buffer was a third
 * of the relay's system calls. Bounded, so that the other side is heard at least every
 * RELAY_BURST buffers. */
#define RELAY_BURST 16

/* Copies both ways until both sides are done or nothing moves for IDLE_TIMEOUT_MS. At most
 * a_limit bytes go from a to b (UINT64_MAX: no limit); a is not read past it. With keep_a,
 * it returns as soon as b has ended and leaves a open (a request's answer is complete).
 * Returns what is left of a_limit. */
static uint64_t relay_loop(int a, int b, uint64_t a_limit, bool keep_a, char *buf, size_t cap) {
        struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
        int open_dirs = 2;
        if (a_limit == 0) {
                p[0].fd = -1;
                open_dirs--;
        }
        while (open_dirs > 0) {
                int n = poll(p, 2, IDLE_TIMEOUT_MS);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return a_limit;
                for (int i = 0; i < 2; i++) {
                        if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        int to = i == 0 ? b : a;
                        for (int burst = 0; burst < RELAY_BURST; burst++) {
                                size_t want = SIZE_MAX;
                                if (i == 0 && a_limit < want)
                                        want = (size_t)a_limit;
                                ssize_t k = relay_move(p[i].fd, to, want, buf, cap,
                                                       burst ? MSG_DONTWAIT : 0);
                                if (k == -EINTR || k == -EAGAIN)
                                        break;
                                if (k < 0)
                                        return a_limit; /* a side failed or is gone: drop both */
                                if (i == 0 && k > 0 && a_limit != UINT64_MAX)
                                        a_limit -= (uint64_t)k;
                                if (k == 0 && i == 1 && keep_a)
                                        return a_limit;
                                if (k == 0 || (i == 0 && a_limit == 0)) {
                                        if (k == 0)
                                                (void)shutdown(to, SHUT_WR);
                                        p[i].fd = -1;
                                        open_dirs--;
                                        break;
                                }
                                if ((size_t)k < (want < cap ? want : cap))
                                        break; /* a short read: the queue is empty */
                        }
                }
        }
        return a_limit;
}

/* The relay's buffer is the heap's (a connection's thread has a small stack to spare); where
 * it cannot be had, a small one on the stack does the same, slower. */
static uint64_t relay(int a, int b, uint64_t a_limit, bool keep_a) {
        char small[RELAY_BUF_MIN];
        char *big = malloc(RELAY_BUF);
        uint64_t left = big ? relay_loop(a, b, a_limit, keep_a, big, RELAY_BUF)
                            : relay_loop(a, b, a_limit, keep_a, small, sizeof small);
        free(big);
        return left;
}

void netns_relay(int a, int b, uint64_t a_limit) {
        (void)relay(a, b, a_limit, false);
}

/* After `200 Connection established`: the client's ClientHello must name the CONNECT host
 * (an address allowed as such: no name at all). Reads it into buf after the len bytes the
 * head left there; *ret_len is what to forward. */
static int check_sni(int fd, char *buf, size_t cap, size_t *ret_len, const char *host, char *why,
                     size_t wl) {
        size_t len = *ret_len;
        char sni[256], a[256], b[256];
        union netns_ip ip;
        int fa = 0, fb = 0;
        for (;;) {
                int r = netns_tls_sni((const uint8_t *)buf, len, sni, sizeof sni);
                if (r == 0)
                        break;
                if (r != -EAGAIN || len == cap)
                        return snprintf(why, wl, "a CONNECT tunnel to %.100s carries TLS only",
                                        host),
                               -EACCES;
                ssize_t n = read_more(fd, buf, cap, len);
                if (n < 0)
                        return (int)n;
                len += (size_t)n;
        }
        *ret_len = len;
        if (netns_host_canon(host, b, sizeof b, &ip, &fb) < 0)
                return snprintf(why, wl, "not a valid host name"), -EACCES;
        if (!sni[0])
                return fb ? 0
                          : (snprintf(why, wl, "no TLS server name (SNI) for %.100s", host),
                             -EACCES);
        if (fb || netns_host_canon(sni, a, sizeof a, &ip, &fa) < 0 || fa || strcmp(a, b))
                return snprintf(why, wl,
                                "TLS server name %.100s differs from the CONNECT host %.100s", sni,
                                host),
                       -EACCES;
        return 0;
}

/* A plain http:// request for a host with a secret: no server proves there that it is the
 * host, so the secret goes only where every secret of the host says NAME@http://HOST. */
static int cleartext_ok(const struct netns_gate *g, const char *host, char *why, size_t wl) {
        char canon[256];
        union netns_ip ip;
        int family = 0;
        if (netns_host_canon(host, canon, sizeof canon, &ip, &family) == 0 &&
            netns_secrets_cleartext(&g->secrets, canon))
                return 0;
        snprintf(why, wl,
                 "plain http:// to %.100s, which has a secret: use https:// (--secret "
                 "NAME@http://HOST sends it unverified)",
                 host);
        return -EACCES;
}

struct request {
        bool is_connect;
        char host[256];
        uint16_t port;
        uint64_t body;
        bool intercept; /* a host with a secret */
        bool host_port; /* NETNS_HOST_NAME: addr is 127.0.0.1:port, then [::1]:port */
        bool via_upstream; /* through --upstream-proxy's CONNECT to host:port */
        struct sockaddr_storage addr;
        socklen_t addr_len;
        struct netns_http_req h; /* the parse; it points into the connection's buffer */
};

/* What the parse h says of the request's body and its Host, held to host:port (def: the
 * port a Host without one means): 0, or the status to refuse it with and why. Shared by the
 * requests of the sandbox's connection and those inside an intercepted tunnel. */
static int check_held(const struct netns_http_req *h, const char *host, uint16_t port, uint16_t def,
                      uint64_t *ret_body, char *why, size_t wl) {
        if (h->chunked)
                return snprintf(why, wl, "a chunked request body (send Content-Length)"), 411;
        if (h->hostv && !netns_http_host_is(h, host, port, def))
                return snprintf(why, wl, "the Host header names %.*s, not %.100s",
                                (int)(h->hostl > 100 ? 100 : h->hostl), h->hostv, host),
                       400;
        *ret_body = h->has_cl ? h->content_length : 0;
        return 0;
}

/* NETNS_HOST_NAME:port, a port --allow-host-port opened: the host's 127.0.0.1 on it (and
 * [::1] when nothing listens there, connect_request), never another address, and never a
 * listener of rtn's own (netns_port_rtns): 0, or 403 and why. */
static int host_port_addr(struct request *q, char *why, size_t wl) {
        struct sockaddr_in *a = (struct sockaddr_in *)&q->addr;
        *a = (struct sockaddr_in){.sin_family = AF_INET,
                                  .sin_port = htons(q->port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        q->addr_len = sizeof *a;
        q->host_port = true;
        int own = netns_port_rtns(q->port);
        if (own > 0)
                return snprintf(why, wl,
                                "port %u of " NETNS_HOST_NAME " is one of rtn's own listeners "
                                "(rtn serve --http, --publish), never opened to a sandbox",
                                q->port),
                       403;
        if (own < 0)
                return snprintf(why, wl,
                                "port %u of " NETNS_HOST_NAME ": whose listener it is could "
                                "not be read (%s)",
                                q->port, strerror(-own)),
                       403;
        return 0;
}

/* Everything decided from the head buf[0..head_len) alone: 0, or the status to refuse it
 * with (*why says why; q->host names the target when one was read). */
static int decide(struct netns_gate *g, const char *buf, size_t head_len, struct request *q,
                  char *why, size_t wl) {
        struct rtn_error err = {0};
        int r = netns_http_parse(buf, head_len, &q->h, why, wl);
        snprintf(q->host, sizeof q->host, "%s", q->h.host[0] ? q->h.host : "?");
        q->port = q->h.port;
        if (r < 0)
                return 400;
        if (q->h.form == NETNS_HTTP_ORIGIN)
                return snprintf(why, wl, "only http:// requests and CONNECT are proxied"), 400;
        q->is_connect = q->h.form == NETNS_HTTP_AUTHORITY;
        if (q->is_connect && (q->h.has_cl || q->h.chunked))
                return snprintf(why, wl, "a CONNECT with a body"), 400;
        if ((r = check_held(&q->h, q->host, q->port, q->is_connect ? q->port : 80, &q->body, why,
                            wl)))
                return r;
        switch (gate_verdict(g, q->host, q->port, why, wl)) {
        case NETNS_VERDICT_REFUSE:
                return 403;
        case NETNS_VERDICT_INTERCEPT:
                q->intercept = true;
                if (!q->is_connect && cleartext_ok(g, q->host, why, wl) < 0)
                        return 403;
                break;
        case NETNS_VERDICT_HOST:
                return host_port_addr(q, why, wl);
        case NETNS_VERDICT_TUNNEL:
                break;
        }
        /* Behind --upstream-proxy the filter still holds for every address the name has
         * here; a name that does not resolve here is the proxy's to resolve. */
        bool up = netns_upstream_for(&g->upstream, q->host);
        int rr = netns_resolve(q->host, q->port, &g->policy, &q->addr, &q->addr_len, &err);
        if (rr < 0 && !(up && (rr == -ENOENT || rr == -EHOSTUNREACH)))
                return snprintf(why, wl, "%s", err.msg), 403;
        q->via_upstream = up;
        return 0;
}

/* The upstream of an admitted request: its checked address, or a tunnel of the upstream
 * proxy to its name; for a port of the host, the same port on [::1] when nothing listens on
 * 127.0.0.1 (a server bound to ::1 alone). The socket, or -errno with why. */
static int connect_request(const struct netns_gate *g, const struct request *q, char *why,
                           size_t wl) {
        char canon[256];
        union netns_ip ip;
        int family = 0;
        if (q->via_upstream && netns_host_canon(q->host, canon, sizeof canon, &ip, &family) == 0)
                return netns_upstream_connect(&g->upstream, canon, q->port, why, wl);
        int fd = netns_connect(&q->addr, q->addr_len);
        if (fd < 0)
                snprintf(why, wl, "connect to %s:%u: %s", q->host, q->port, strerror(-fd));
        if (fd != -ECONNREFUSED || !q->host_port)
                return fd;
        struct sockaddr_storage a6 = {0};
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&a6;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(q->port);
        a->sin6_addr = in6addr_loopback;
        return netns_connect(&a6, sizeof *a);
}

/* A refusal: recorded, and answered (over the client's TLS when c is set). */
static void refuse(struct netns_gate *g, int fd, struct netns_tls_conn *c, const char *host,
                   uint16_t port, int code, const char *why) {
        char msg[600], buf[768];
        netns_gate_refuse(g, host, port, why);
        snprintf(msg, sizeof msg, "rtn gate refused: %s", why);
        size_t n = format_reply(buf, sizeof buf, code, status_text(code), msg);
        if (c)
                (void)netns_tls_write(c, buf, n);
        else
                (void)netns_send_all(fd, buf, n);
}

/* Reads the head of a request inside an intercepted tunnel into buf (HEAD_MAX at most),
 * after the len bytes there. */
static ssize_t tls_read_head(struct netns_tls_conn *c, char *buf, size_t len,
                             size_t *ret_head_len) {
        while (!head_complete(buf, len, ret_head_len)) {
                if (len >= HEAD_MAX)
                        return -E2BIG;
                ssize_t n = netns_tls_read(c, buf + len, HEAD_MAX - len);
                if (n <= 0)
                        return n < 0 ? n : -ECONNRESET;
                len += (size_t)n;
        }
        return (ssize_t)len;
}

/* The bytes after a request in buf[0..n): its body's first part, then the start of the next
 * request, moved to buf's start; their count. */
static size_t keep_rest(char *buf, size_t n, size_t head_len, uint64_t body) {
        size_t extra = n - head_len, b = extra < body ? extra : (size_t)body;
        memmove(buf, buf + head_len + b, extra - b);
        return extra - b;
}

/* One request inside an intercepted tunnel, read after the len bytes of buf and held as a
 * plain one is: origin-form, its one Host naming the CONNECT host, a body only as
 * Content-Length; with forward, sent over a new verified TLS connection upstream with the
 * secret's header (a request pipelined behind the first is only checked: see serve_conn).
 * The bytes left in buf after it, or -1 when the tunnel is done. */
static ssize_t intercept_request(struct netns_gate *g, struct netns_tls_conn *cl,
                                 const struct request *q, char *buf, size_t len, bool forward) {
        char why[400];
        size_t head_len = 0;
        uint64_t body = 0;
        struct netns_http_req h;
        ssize_t n = tls_read_head(cl, buf, len, &head_len);
        int code = 0;
        if (n == -E2BIG)
                code = 431, snprintf(why, sizeof why, "a request head over %d bytes", HEAD_MAX);
        else if (n < 0)
                return -1;
        else if (netns_http_parse(buf, head_len, &h, why, sizeof why) < 0)
                code = 400;
        else if (h.form != NETNS_HTTP_ORIGIN)
                code = 400, snprintf(why, sizeof why,
                                     "a request inside the tunnel to %.100s that is not in "
                                     "origin-form (GET /path)",
                                     q->host);
        else if (!h.hostv)
                code = 400,
                snprintf(why, sizeof why, "a request to %.100s without a Host header", q->host);
        else
                code = check_held(&h, q->host, q->port, 443, &body, why, sizeof why);
        if (code) {
                refuse(g, -1, cl, q->host, q->port, code, why);
                return -1;
        }
        if (!forward)
                return -1;
        _cleanup_close_ int up = connect_request(g, q, why, sizeof why);
        if (up < 0) {
                refuse(g, -1, cl, q->host, q->port, 502, why);
                return -1;
        }
        struct netns_tls_conn *up_tls = NULL;
        if (netns_tls_connect(g->icpt, up, q->host, &up_tls, why, sizeof why) < 0) {
                refuse(g, -1, cl, q->host, q->port, 502, why);
                return -1;
        }
        char *out = NULL;
        ssize_t ol = netns_http_upstream_head(&g->secrets, &h, q->host, q->port, 443, true, &out);
        uint64_t extra = (uint64_t)n - head_len, left = 1;
        if (extra > body)
                extra = body;
        if (ol > 0 && netns_tls_write(up_tls, out, (size_t)ol) == 0 &&
            (!extra || netns_tls_write(up_tls, buf + head_len, (size_t)extra) == 0))
                left = netns_tls_relay(cl, up_tls, body - extra);
        netns_http_head_free(out, ol > 0 ? (size_t)ol : 0);
        netns_tls_close(up_tls);
        if (left) /* the body did not come whole, or the answer did not */
                return -1;
        return (ssize_t)keep_rest(buf, (size_t)n, head_len, body);
}

/* CONNECT to a host with a secret: TLS with the sandbox's client under the gate's leaf for
 * the host (its SNI checked), then its request, and one pipelined behind it checked once the
 * first is answered, as serve_conn does. */
static void serve_intercept(struct netns_gate *g, int fd, const struct request *q, char *buf) {
        char why[400];
        struct netns_tls_conn *cl = NULL;
        int r = netns_tls_accept(g->icpt, fd, q->host, &cl, why, sizeof why);
        if (r < 0) {
                if (r == -EACCES)
                        netns_gate_refuse(g, q->host, q->port, why);
                return;
        }
        ssize_t len = intercept_request(g, cl, q, buf, 0, true);
        if (len > 0 || (len == 0 && netns_tls_pending(cl)))
                (void)intercept_request(g, cl, q, buf, (size_t)len, false);
        netns_tls_close(cl);
}

/* A CONNECT the gate admitted: the ClientHello is checked before anything reaches upstream
 * (or, for a host with a secret, the TLS is the gate's). buf holds len bytes after the head. */
static void serve_tunnel(struct netns_gate *g, int fd, char *buf, size_t cap, size_t len,
                         const struct request *q) {
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        char why[400];
        if (q->intercept && len > 0) { /* bytes OpenSSL would not see */
                netns_gate_refuse(g, q->host, q->port, "TLS sent before the tunnel was open");
                return;
        }
        if (netns_send_all(fd, ok, sizeof ok - 1) < 0)
                return;
        if (q->intercept) {
                serve_intercept(g, fd, q, buf);
                return;
        }
        /* A port of the host is opened whole (--allow-host-port): any protocol rides it. */
        int r = q->host_port ? 0 : check_sni(fd, buf, cap, &len, q->host, why, sizeof why);
        if (r < 0) {
                if (r == -EACCES)
                        netns_gate_refuse(g, q->host, q->port, why);
                return; /* the tunnel is open: all the client learns is its end */
        }
        _cleanup_close_ int up = connect_request(g, q, why, sizeof why);
        if (up >= 0 && netns_send_all(up, buf, len) == 0)
                netns_relay(fd, up, UINT64_MAX);
}

/* A plain HTTP request the gate admitted: the head rtn writes from the parse, then exactly
 * the body its Content-Length says, then the answer until the server ends it. The bytes of
 * buf[0..n) after the request stay in buf; their count, or -1 when the connection is done. */
static ssize_t serve_plain(struct netns_gate *g, int fd, char *buf, size_t n, size_t head_len,
                           const struct request *q) {
        char msg[600], why[400];
        _cleanup_close_ int up = connect_request(g, q, why, sizeof why);
        if (up < 0) {
                snprintf(msg, sizeof msg, "rtn gate: %s", why);
                reply(fd, 502, "Bad Gateway", msg);
                return -1;
        }
        char *h = NULL;
        ssize_t hl = netns_http_upstream_head(&g->secrets, &q->h, q->host, q->port, 80,
                                              q->intercept, &h);
        int r = hl < 0 ? (int)hl : netns_send_all(up, h, (size_t)hl);
        netns_http_head_free(h, hl > 0 ? (size_t)hl : 0);
        uint64_t extra = (uint64_t)n - head_len;
        if (extra > q->body)
                extra = q->body;
        if (r == 0 && extra > 0)
                r = netns_send_all(up, buf + head_len, (size_t)extra);
        if (r < 0 || relay(fd, up, q->body - extra, true) > 0)
                return -1;
        return (ssize_t)keep_rest(buf, n, head_len, q->body);
}

/* Whether the client has sent more than the request just answered: len bytes of it kept, or
 * more to read now. A client that waits for an answer's end gets it as the connection's. */
static bool more_from(int fd, size_t len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char c;
        return len > 0 || (poll(&p, 1, 0) == 1 && recv(fd, &c, 1, MSG_PEEK) == 1);
}

/* The request of one connection, parsed, decided and answered; then a request the client
 * pipelined behind it is read, parsed and decided as the first was: refused and reported
 * when the first would have been, and otherwise not sent on, as the connection ends there
 * (an answer may run to the connection's end, and nothing may follow it; the client sends
 * the request again on a connection of its own, as it does when any server closes). */
static void serve_conn(struct netns_gate *g, int fd, char *buf, size_t cap) {
        char why[400];
        ssize_t len = 0;
        for (bool first = true; len >= 0 && (first || more_from(fd, (size_t)len)); first = false) {
                size_t head_len = 0;
                ssize_t n = read_head(fd, buf, (size_t)len, &head_len);
                if (n == -E2BIG) {
                        snprintf(why, sizeof why, "a request head over %d bytes", HEAD_MAX);
                        refuse(g, fd, NULL, "?", 0, 431, why);
                }
                if (n <= 0)
                        return;
                struct request q = {0};
                int code = decide(g, buf, head_len, &q, why, sizeof why);
                if (code) {
                        refuse(g, fd, NULL, q.host, q.port, code, why);
                        return;
                }
                if (!first)
                        return;
                if (q.is_connect) {
                        memmove(buf, buf + head_len, (size_t)n - head_len);
                        serve_tunnel(g, fd, buf, cap, (size_t)n - head_len, &q);
                        return;
                }
                len = serve_plain(g, fd, buf, (size_t)n, head_len, &q);
        }
}

static void *conn_main(void *arg) {
        struct conn *c = arg;
        struct netns_gate *g = c->g;
        int fd = c->fd;
        free(c);
        size_t cap = NETNS_TLS_HELLO_MAX + 2048; /* records' headers around the hello */
        _cleanup_free_ char *buf = malloc(cap);
        if (buf)
                serve_conn(g, fd, buf, cap);
        close(fd);
        atomic_fetch_sub(&g->nconn, 1);
        gate_unref(g);
        return NULL;
}

void netns_gate_accept(struct netns_gate *g) {
        for (int i = 0; g->listen_fd >= 0 && i < 16; i++) {
                int fd = accept4(g->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                if (atomic_fetch_add(&g->nconn, 1) >= NETNS_GATE_MAX_CONN) {
                        atomic_fetch_sub(&g->nconn, 1);
                        reply(fd, 503, "Service Unavailable", "rtn gate: too many connections");
                        close(fd);
                        continue;
                }
                struct conn *c = malloc(sizeof *c);
                pthread_attr_t at;
                pthread_t t;
                atomic_fetch_add(&g->refs, 1);
                if (c) {
                        c->g = g;
                        c->fd = fd;
                }
                pthread_attr_init(&at);
                pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
                if (!c || pthread_create(&t, &at, conn_main, c) != 0) {
                        free(c);
                        close(fd);
                        atomic_fetch_sub(&g->nconn, 1);
                        gate_unref(g);
                }
                pthread_attr_destroy(&at);
        }
}

static void on_accept(struct rtn_loop *l, int lfd, uint32_t ev, void *ud) {
        netns_gate_accept(ud);
}

int netns_gate_listen(struct netns_gate *g, int listen_fd) {
        netns_gate_detach(g);
        int r = rtn_fd_nonblock(listen_fd, 1);
        if (r < 0) {
                close(listen_fd);
                return r;
        }
        g->listen_fd = listen_fd;
        return listen_fd;
}

int netns_gate_attach(struct netns_gate *g, struct rtn_loop *loop, int listen_fd) {
        int r = netns_gate_listen(g, listen_fd);
        if (r < 0)
                return r;
        if ((r = rtn_loop_add_fd(loop, listen_fd, EPOLLIN, on_accept, g)) < 0) {
                g->listen_fd = rtn_safe_close(g->listen_fd);
                return r;
        }
        g->loop = loop;
        return 0;
}

void netns_gate_detach(struct netns_gate *g) {
        if (g->listen_fd < 0)
                return;
        if (g->loop)
                rtn_loop_del_fd(g->loop, g->listen_fd);
        g->loop = NULL;
        g->listen_fd = rtn_safe_close(g->listen_fd);
}

void netns_gate_free(struct netns_gate *g) {
        if (!g)
                return;
        netns_gate_detach(g);
        gate_unref(g);
}
