/* The gate's proxy, trusted side (docs/network.md; docs/architecture.md, "Network gate").
 * It serves two listeners inside sandboxes: the provisioning gate rtn-init makes for
 * pkg_install (init/gate.c), and the agent's proxy the network helper makes in the sandbox's
 * own netns when --allow-net is given (runtime/sandbox/sandbox.c). The listener sits on
 * rtn's event loop (or rtn exec's poll), and each accepted connection gets a detached thread
 * that reads one request head, decides, and then relays bytes with poll(2). Blocking
 * getaddrinfo and connect stay off the loop that way, and a stalled server cannot stall
 * ping or cancellation.
 *
 * The decision (gate_verdict, one per request): the request is `CONNECT host:port` or an
 * absolute-form `GET http://host[:port]/...`; the policy (netns/policy.c) must admit host and
 * port, an address only when a rule is that address; the name is resolved here
 * (netns_resolve_policy: public unicast only, and none of this machine's own addresses
 * unless a rule ADDR:PORT names it) and the proxy connects to exactly the address it
 * checked. What follows is held to that host: a plain HTTP request's Host header must name
 * it, and the request goes upstream with `Connection: close` and no more client bytes than
 * its Content-Length, so no second request with another Host rides the same connection; a
 * CONNECT tunnel carries only TLS whose ClientHello names the CONNECT host (netns/tls.c), so
 * no other name is reached at a shared address and no raw TCP leaves. A host with a secret
 * (--secret, netns/secret.c) is intercepted: its plain requests get the secret's header
 * (netns/http.c), and its tunnels are answered with TLS under the gate's own CA, their one
 * request held as a plain one is and sent on over verified TLS (netns/intercept.c). Every
 * refusal is kept (host, port, reason) for the reports of the command that made it
 * (netns/denials.c). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
        if (!g || (p->n && !(g->policy.rules = calloc(p->n, sizeof *p->rules)))) {
                free(g);
                return rtn_err(err, ENOMEM, "gate");
        }
        if (p->n)
                memcpy(g->policy.rules, p->rules, p->n * sizeof *p->rules);
        g->policy.n = g->policy.cap = p->n;
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

const char *netns_gate_ca_pem(const struct netns_gate *g) {
        return netns_intercept_ca_pem(g->icpt);
}

/* send(2) with MSG_NOSIGNAL: a client or server that hung up must not raise SIGPIPE. */
static int send_all(int fd, const void *buf, size_t len) {
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
        (void)send_all(fd, buf, format_reply(buf, sizeof buf, code, status, body));
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

/* Whether buf's len bytes hold a whole head (it ends at an empty line): NUL-terminates them
 * and sets *ret_head_len to the head's length with its final CRLF CRLF. */
static bool head_complete(char *buf, size_t len, size_t *ret_head_len) {
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end)
                *ret_head_len = (size_t)(end + 4 - buf);
        return end != NULL;
}

/* Reads until the end of the head; returns bytes read (head and maybe more) or -errno. */
static ssize_t read_head(int fd, char *buf, size_t cap, size_t *ret_head_len) {
        size_t len = 0;
        while (len < cap - 1) {
                ssize_t n = read_more(fd, buf, cap - 1, len);
                if (n < 0)
                        return n;
                len += (size_t)n;
                if (head_complete(buf, len, ret_head_len))
                        return (ssize_t)len;
        }
        return -E2BIG;
}

/* Splits "host[:port]" (host may be a [v6] literal) in place. */
static int split_hostport(char *hp, uint16_t def, char **ret_host, uint16_t *ret_port) {
        char *colon = hp[0] == '[' ? strchr(hp, ']') : hp;
        if (!colon)
                return -EINVAL;
        colon = strchr(colon, ':');
        unsigned long port = def;
        if (colon) {
                char *end;
                *colon = '\0';
                if (colon[1] < '0' || colon[1] > '9')
                        return -EINVAL;
                port = strtoul(colon + 1, &end, 10);
                if (*end || port == 0 || port > 65535)
                        return -EINVAL;
        }
        if (hp[0] == '\0')
                return -EINVAL;
        *ret_host = hp;
        *ret_port = (uint16_t)port;
        return 0;
}

int netns_gate_parse_target(char *head, bool *ret_connect, char **ret_host, uint16_t *ret_port) {
        char *sp1 = strchr(head, ' '), *eol = strstr(head, "\r\n");
        if (!sp1 || !eol || sp1 > eol)
                return -EINVAL;
        char *sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
        if (!sp2)
                return -EINVAL;
        size_t tl = (size_t)(sp2 - sp1 - 1);
        char *t = strndup(sp1 + 1, tl);
        if (!t)
                return -ENOMEM;
        *ret_connect = (size_t)(sp1 - head) == 7 && !strncmp(head, "CONNECT", 7);
        char *hp = t;
        if (!*ret_connect) {
                if (strncasecmp(t, "http://", 7) != 0) {
                        free(t);
                        return -EPROTONOSUPPORT;
                }
                hp = t + 7;
                hp[strcspn(hp, "/?#")] = '\0';
                if (strchr(hp, '@')) { /* userinfo: never forwarded, never trusted */
                        free(t);
                        return -EINVAL;
                }
        }
        char *host;
        int r = split_hostport(hp, *ret_connect ? 443 : 80, &host, ret_port);
        if (r == 0 && !(*ret_host = strdup(host)))
                r = -ENOMEM;
        free(t);
        return r;
}

int netns_http_host(const char *head, char *buf, size_t len) {
        int found = 0;
        const char *line = strstr(head, "\r\n");
        while (line && line[2] != '\r' && line[2] != '\0') {
                line += 2;
                const char *eol = strstr(line, "\r\n");
                if (!eol)
                        break;
                if (!strncasecmp(line, "host:", 5)) {
                        if (found++)
                                return -EINVAL; /* two Host headers: which one counts? */
                        const char *v = line + 5, *e = eol;
                        while (v < e && (*v == ' ' || *v == '\t'))
                                v++;
                        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                                e--;
                        if ((size_t)(e - v) >= len || memchr(v, '\r', (size_t)(e - v)))
                                return -EINVAL; /* a bare CR: another line to some */
                        memcpy(buf, v, (size_t)(e - v));
                        buf[e - v] = '\0';
                }
                line = eol;
        }
        return found;
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
        if (netns_policy_allows(&g->policy, canon, port))
                return netns_secrets_for(&g->secrets, canon) ? NETNS_VERDICT_INTERCEPT
                                                             : NETNS_VERDICT_TUNNEL;
        bool any_port = false, defaults_only = true;
        for (size_t i = 0; i < g->policy.n; i++) {
                uint16_t rp = g->policy.rules[i].port;
                any_port |= rp ? rp == port : (port == 80 || port == 443);
                defaults_only &= rp == 0;
        }
        if (!any_port && defaults_only)
                snprintf(why, wl, "only ports 80 and 443 are allowed");
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

static int connect_to(const struct sockaddr_storage *a, socklen_t len) {
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

/* Copies both ways until both sides are done or nothing moves for IDLE_TIMEOUT_MS. At most
 * a_limit bytes go from a to b (UINT64_MAX: no limit); a is not read past it. */
void netns_relay(int a, int b, uint64_t a_limit) {
        struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
        char buf[65536];
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
                        return;
                for (int i = 0; i < 2; i++) {
                        if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        int to = i == 0 ? b : a;
                        size_t want = sizeof buf;
                        if (i == 0 && a_limit < want)
                                want = (size_t)a_limit;
                        ssize_t k = read(p[i].fd, buf, want);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k > 0 && send_all(to, buf, (size_t)k) < 0)
                                return; /* the other side is gone: drop both */
                        if (k < 0)
                                return;
                        if (i == 0 && k > 0 && a_limit != UINT64_MAX)
                                a_limit -= (uint64_t)k;
                        if (k == 0 || (i == 0 && a_limit == 0)) {
                                if (k == 0)
                                        (void)shutdown(to, SHUT_WR);
                                p[i].fd = -1;
                                open_dirs--;
                        }
                }
        }
}

/* "host[:port]" of a Host header against the request's target (def: the scheme's port). */
static bool same_host(const char *hv, const char *host, uint16_t port, uint16_t def) {
        char tmp[300], a[256], b[256];
        union netns_ip ip;
        int fa = 0, fb = 0;
        uint16_t hport = 0;
        char *hh = NULL;
        snprintf(tmp, sizeof tmp, "%s", hv);
        if (split_hostport(tmp, def, &hh, &hport) < 0 || hport != port)
                return false;
        if (netns_host_canon(hh, a, sizeof a, &ip, &fa) < 0 ||
            netns_host_canon(host, b, sizeof b, &ip, &fb) < 0)
                return false;
        return fa == fb && !strcmp(a, b);
}

/* A plain HTTP request's head, held to its target: one Host header naming the target (or
 * none, HTTP/1.0), a body only as Content-Length (its length in *ret_body), never chunked:
 * the gate must know where the request ends, since what follows it is not forwarded. */
static int check_http_head(const char *head, const char *host, uint16_t port, bool tls,
                           uint64_t *ret_body, char *why, size_t wl) {
        char hv[300];
        int r = netns_http_host(head, hv, sizeof hv);
        if (r < 0)
                return snprintf(why, wl, "two Host headers, or an overlong one"), -EACCES;
        if (r == 0 && tls) /* inside TLS only the Host header names the target */
                return snprintf(why, wl, "a request to %.100s without a Host header", host),
                       -EACCES;
        if (r == 1 && !same_host(hv, host, port, tls ? 443 : 80))
                return snprintf(why, wl, "the Host header names %.100s, not %.100s", hv, host),
                       -EACCES;
        uint64_t body = 0;
        int ncl = 0;
        for (const char *line = strstr(head, "\r\n"); line && line[2] != '\r';
             line = strstr(line + 2, "\r\n")) {
                const char *h = line + 2;
                size_t name = strcspn(h, ":\r\n");
                /* Folded lines, blanks before the colon and bare CRs (RFC 9112 2.2, 5.1,
                 * 5.2): a lenient server might read a second Host out of them. */
                if (h[0] == ' ' || h[0] == '\t' || h[name] != ':' || strcspn(h, " \t") < name ||
                    strcspn(h, "\r") < (size_t)(strstr(h, "\r\n") - h))
                        return snprintf(why, wl, "a malformed header line"), -EACCES;
                if (!strncasecmp(h, "transfer-encoding:", 18))
                        return snprintf(why, wl, "a chunked request body (send Content-Length)"),
                               -EACCES;
                if (!strncasecmp(h, "content-length:", 15)) {
                        char *end;
                        const char *v = h + 15 + strspn(h + 15, " \t");
                        errno = 0;
                        unsigned long long n = strtoull(v, &end, 10);
                        if (ncl++ || v[0] < '0' || v[0] > '9' || errno ||
                            (*end != '\r' && *end != ' ' && *end != '\t'))
                                return snprintf(why, wl, "a malformed Content-Length"), -EACCES;
                        body = n;
                }
        }
        *ret_body = body;
        return 0;
}

/* Sends the request upstream, then the part of its body already read; the rest of the body
 * is relayed. */
static int send_http_head(const struct netns_gate *g, int up, const char *buf, size_t n,
                          size_t head_len, uint64_t body, const char *host, uint16_t port,
                          bool inject) {
        char *h = NULL;
        ssize_t hl =
                netns_http_upstream_head(&g->secrets, buf, head_len, host, port, true, inject, &h);
        int r = hl < 0 ? (int)hl : send_all(up, h, (size_t)hl);
        netns_http_head_free(h, hl > 0 ? (size_t)hl : 0);
        size_t extra = n - head_len;
        if (r == 0 && extra > 0)
                r = send_all(up, buf + head_len, extra < body ? extra : (size_t)body);
        return r;
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
        char *host;
        uint16_t port;
        uint64_t body;
        bool intercept; /* a host with a secret */
        struct sockaddr_storage addr;
        socklen_t addr_len;
};

/* Everything decided from the head alone; *why says what was refused. */
static int decide(struct netns_gate *g, char *head, struct request *q, char *why, size_t wl) {
        struct rtn_error err = {0};
        int r = netns_gate_parse_target(head, &q->is_connect, &q->host, &q->port);
        if (r == -EPROTONOSUPPORT)
                return snprintf(why, wl, "only http:// requests and CONNECT are proxied"), r;
        if (r < 0)
                return snprintf(why, wl, "malformed request"), r;
        switch (gate_verdict(g, q->host, q->port, why, wl)) {
        case NETNS_VERDICT_REFUSE:
                return -EACCES;
        case NETNS_VERDICT_INTERCEPT:
                q->intercept = true;
                if (!q->is_connect && (r = cleartext_ok(g, q->host, why, wl)) < 0)
                        return r;
                break;
        case NETNS_VERDICT_TUNNEL:
                break;
        }
        if (!q->is_connect &&
            (r = check_http_head(head, q->host, q->port, false, &q->body, why, wl)) < 0)
                return r;
        if ((r = netns_resolve_policy(q->host, q->port, &g->policy, &q->addr, &q->addr_len, &err)) <
            0)
                snprintf(why, wl, "%s", err.msg);
        return r;
}

/* A refusal inside an intercepted tunnel: recorded, and answered over the client's TLS. */
static void refuse_tls(struct netns_gate *g, struct netns_tls_conn *c, const struct request *q,
                       int code, const char *status, const char *why) {
        char msg[600], buf[768];
        netns_gate_refuse(g, q->host, q->port, why);
        snprintf(msg, sizeof msg, "rtn gate refused: %s", why);
        (void)netns_tls_write(c, buf, format_reply(buf, sizeof buf, code, status, msg));
}

/* Reads the head of the request inside an intercepted tunnel into buf (HEAD_MAX at most). */
static ssize_t tls_read_head(struct netns_tls_conn *c, char *buf, size_t *ret_head_len) {
        size_t len = 0;
        while (len < HEAD_MAX - 1) {
                ssize_t n = netns_tls_read(c, buf + len, HEAD_MAX - 1 - len);
                if (n <= 0)
                        return n < 0 ? n : -ECONNRESET;
                len += (size_t)n;
                if (head_complete(buf, len, ret_head_len))
                        return (ssize_t)len;
        }
        return -E2BIG;
}

/* The request inside an intercepted tunnel, held as a plain one is: origin-form, its one
 * Host header naming the CONNECT host (a second request would have to come on a new
 * connection, and is checked again there), a body only as Content-Length. */
static int check_inner(char *head, const struct request *q, uint64_t *ret_body, char *why,
                       size_t wl) {
        const char *sp1 = strchr(head, ' '), *eol = strstr(head, "\r\n");
        if (!sp1 || sp1 > eol || sp1[1] != '/')
                return snprintf(why, wl,
                                "a request inside the tunnel to %.100s that is not in "
                                "origin-form (GET /path)",
                                q->host),
                       -EACCES;
        return check_http_head(head, q->host, q->port, true, ret_body, why, wl);
}

/* The one request of an intercepted tunnel: read and checked, then sent over a verified
 * TLS connection upstream with the secret's header. */
static void intercept_request(struct netns_gate *g, struct netns_tls_conn *cl,
                              const struct request *q, char *buf) {
        char why[400];
        size_t head_len = 0;
        uint64_t body = 0;
        ssize_t n = tls_read_head(cl, buf, &head_len);
        if (n < 0)
                return;
        _cleanup_free_ char *head = strndup(buf, head_len);
        if (!head)
                return;
        if (check_inner(head, q, &body, why, sizeof why) < 0) {
                refuse_tls(g, cl, q, 403, "Forbidden", why);
                return;
        }
        _cleanup_close_ int up = connect_to(&q->addr, q->addr_len);
        if (up < 0) {
                snprintf(why, sizeof why, "connect to %s:%u: %s", q->host, q->port, strerror(-up));
                refuse_tls(g, cl, q, 502, "Bad Gateway", why);
                return;
        }
        struct netns_tls_conn *up_tls = NULL;
        if (netns_tls_connect(g->icpt, up, q->host, &up_tls, why, sizeof why) < 0) {
                refuse_tls(g, cl, q, 502, "Bad Gateway", why);
                return;
        }
        char *out = NULL;
        ssize_t ol = netns_http_upstream_head(&g->secrets, buf, head_len, q->host, q->port, false,
                                              true, &out);
        uint64_t extra = (uint64_t)n - head_len;
        if (extra > body)
                extra = body;
        if (ol > 0 && netns_tls_write(up_tls, out, (size_t)ol) == 0 &&
            (!extra || netns_tls_write(up_tls, buf + head_len, (size_t)extra) == 0))
                netns_tls_relay(cl, up_tls, body - extra);
        netns_http_head_free(out, ol > 0 ? (size_t)ol : 0);
        netns_tls_close(up_tls);
}

/* CONNECT to a host with a secret: TLS with the sandbox's client under the gate's leaf for
 * the host (its SNI checked), then the request. */
static void serve_intercept(struct netns_gate *g, int fd, const struct request *q, char *buf) {
        char why[400];
        struct netns_tls_conn *cl = NULL;
        int r = netns_tls_accept(g->icpt, fd, q->host, &cl, why, sizeof why);
        if (r < 0) {
                if (r == -EACCES)
                        netns_gate_refuse(g, q->host, q->port, why);
                return;
        }
        intercept_request(g, cl, q, buf);
        netns_tls_close(cl);
}

static void serve_conn(struct netns_gate *g, int fd, char *buf, size_t cap) {
        size_t head_len = 0;
        ssize_t n = read_head(fd, buf, HEAD_MAX, &head_len);
        if (n <= 0)
                return;
        struct request q = {0};
        char why[400], msg[600];
        _cleanup_free_ char *head = strndup(buf, head_len);
        int r = head ? decide(g, head, &q, why, sizeof why) : -ENOMEM;
        _cleanup_free_ char *host = q.host;
        if (r < 0 && r != -ENOMEM) {
                netns_gate_refuse(g, host ? host : "?", q.port, why);
                snprintf(msg, sizeof msg, "rtn gate refused: %s", why);
                reply(fd, 403, "Forbidden", msg);
                return;
        }
        if (r < 0)
                return;
        if (q.is_connect) {
                /* The ClientHello is checked before anything reaches upstream. */
                static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
                size_t len = (size_t)n - head_len;
                memmove(buf, buf + head_len, len);
                if (q.intercept && len > 0) { /* bytes OpenSSL would not see */
                        netns_gate_refuse(g, host, q.port, "TLS sent before the tunnel was open");
                        return;
                }
                if (send_all(fd, ok, sizeof ok - 1) < 0)
                        return;
                if (q.intercept) {
                        serve_intercept(g, fd, &q, buf);
                        return;
                }
                if ((r = check_sni(fd, buf, cap, &len, host, why, sizeof why)) < 0) {
                        if (r == -EACCES)
                                netns_gate_refuse(g, host, q.port, why);
                        return; /* the tunnel is open: all the client learns is its end */
                }
                n = (ssize_t)len;
                head_len = 0;
        }
        _cleanup_close_ int up = connect_to(&q.addr, q.addr_len);
        if (up < 0 && !q.is_connect) {
                snprintf(msg, sizeof msg, "rtn gate: connect to %s:%u: %s", host, q.port,
                         strerror(-up));
                reply(fd, 502, "Bad Gateway", msg);
        }
        if (up < 0)
                return;
        if (!q.is_connect) {
                uint64_t extra = (uint64_t)n - head_len, rest = q.body > extra ? q.body - extra : 0;
                if (send_http_head(g, up, buf, (size_t)n, head_len, q.body, host, q.port,
                                   q.intercept) == 0)
                        netns_relay(fd, up, rest);
        } else if (send_all(up, buf, (size_t)n) == 0) {
                netns_relay(fd, up, UINT64_MAX);
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
