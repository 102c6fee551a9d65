/* The provisioning gate's proxy, trusted side (docs/architecture.md, "Network gate").
 * rtn-init hands rtn a listener inside the sandbox (init/gate.c); this file serves it: the
 * listener sits on rtn's event loop, and each accepted connection gets a detached thread
 * that reads one request head, decides, and then relays bytes with poll(2). Blocking
 * getaddrinfo and connect stay off the loop that way, and a stalled mirror cannot stall ping
 * or cancellation. The decision: the request is `CONNECT host:port` or an absolute-form
 * `GET http://host[:port]/...`; host must be on the allowlist, port 80 or 443; the name is
 * resolved here (netns_resolve: public unicast only) and the proxy connects to exactly the
 * address it checked. After the first request the connection is a byte pipe to that address:
 * later keep-alive requests can name any Host they like, but they can only ever reach the
 * checked, allowlisted server. */
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

struct netns_gate {
        atomic_int refs;
        atomic_int nconn;
        char **hosts;
        size_t nhosts;
        struct rtn_loop *loop;
        int listen_fd;
        pthread_mutex_t mu;
        unsigned refused;
        char last[256];
};

struct conn {
        struct netns_gate *g;
        int fd;
};

static void gate_unref(struct netns_gate *g) {
        if (atomic_fetch_sub(&g->refs, 1) != 1)
                return;
        for (size_t i = 0; i < g->nhosts; i++)
                free(g->hosts[i]);
        free(g->hosts);
        pthread_mutex_destroy(&g->mu);
        free(g);
}

int netns_gate_new(const char *const *hosts, size_t nhosts, struct netns_gate **ret,
                   struct rtn_error *err) {
        struct netns_gate *g = calloc(1, sizeof *g);
        if (!g || !(g->hosts = calloc(nhosts + 1, sizeof *g->hosts))) {
                free(g);
                return rtn_err(err, ENOMEM, "gate");
        }
        atomic_init(&g->refs, 1);
        atomic_init(&g->nconn, 0);
        pthread_mutex_init(&g->mu, NULL);
        g->listen_fd = -1;
        for (; g->nhosts < nhosts; g->nhosts++)
                if (!(g->hosts[g->nhosts] = strdup(hosts[g->nhosts]))) {
                        gate_unref(g);
                        return rtn_err(err, ENOMEM, "gate");
                }
        *ret = g;
        return 0;
}

static void refuse_note(struct netns_gate *g, const char *msg) {
        pthread_mutex_lock(&g->mu);
        g->refused++;
        snprintf(g->last, sizeof g->last, "%s", msg);
        pthread_mutex_unlock(&g->mu);
}

unsigned netns_gate_refusals(struct netns_gate *g, char *buf, size_t len) {
        pthread_mutex_lock(&g->mu);
        unsigned n = g->refused;
        if (len)
                snprintf(buf, len, "%s", g->last);
        pthread_mutex_unlock(&g->mu);
        return n;
}

static bool host_allowed(const struct netns_gate *g, const char *host) {
        size_t hl = strlen(host);
        for (size_t i = 0; i < g->nhosts; i++) {
                const char *a = g->hosts[i];
                size_t al = strlen(a);
                if (!strcasecmp(a, host))
                        return true;
                if (a[0] == '.' && hl > al && !strcasecmp(host + hl - al, a))
                        return true;
        }
        return false;
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

static void reply(int fd, int code, const char *status, const char *body) {
        char buf[768];
        int n = snprintf(buf, sizeof buf,
                         "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                         "Content-Length: %zu\r\n\r\n%s\n",
                         code, status, strlen(body) + 1, body);
        if (n > 0)
                (void)send_all(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Reads until the end of the head; returns bytes read (head and maybe more) or -errno. */
static ssize_t read_head(int fd, char *buf, size_t cap, size_t *ret_head_len) {
        size_t len = 0;
        while (len < cap - 1) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, HEAD_TIMEOUT_MS) <= 0)
                        return -ETIMEDOUT;
                ssize_t n = read(fd, buf + len, cap - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -ECONNRESET;
                len += (size_t)n;
                buf[len] = '\0';
                char *end = strstr(buf, "\r\n\r\n");
                if (end) {
                        *ret_head_len = (size_t)(end + 4 - buf);
                        return (ssize_t)len;
                }
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
                port = strtoul(colon + 1, &end, 10);
                if (*end || colon[1] == '\0')
                        return -EINVAL;
        }
        if (port != 80 && port != 443)
                return -EPERM;
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

/* Copies both ways until both sides are done or nothing moves for IDLE_TIMEOUT_MS. */
static void relay(int a, int b) {
        struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
        char buf[65536];
        int open_dirs = 2;
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
                        ssize_t k = read(p[i].fd, buf, sizeof buf);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k > 0 && send_all(to, buf, (size_t)k) < 0)
                                return; /* the other side is gone: drop both */
                        if (k < 0)
                                return;
                        if (k == 0) { /* EOF one way: pass it on, keep the other way */
                                (void)shutdown(to, SHUT_WR);
                                p[i].fd = -1;
                                open_dirs--;
                        }
                }
        }
}

static int decide(struct netns_gate *g, char *head, bool *ret_connect,
                  struct sockaddr_storage *ret_addr, socklen_t *ret_len, char *why, size_t wl) {
        _cleanup_free_ char *host = NULL;
        uint16_t port = 0;
        struct rtn_error err = {0};
        int r = netns_gate_parse_target(head, ret_connect, &host, &port);
        if (r == -EPERM)
                snprintf(why, wl, "only ports 80 and 443 are allowed");
        else if (r == -EPROTONOSUPPORT)
                snprintf(why, wl, "only http:// requests and CONNECT are proxied");
        else if (r < 0)
                snprintf(why, wl, "malformed request");
        else if (!netns_host_valid(host) || !host_allowed(g, host))
                r = -EACCES, snprintf(why, wl, "%.200s is not on the allowlist", host);
        else if ((r = netns_resolve(host, port, ret_addr, ret_len, &err)) < 0)
                snprintf(why, wl, "%s", err.msg);
        return r;
}

static void *conn_main(void *arg) {
        struct conn *c = arg;
        struct netns_gate *g = c->g;
        int fd = c->fd;
        free(c);
        _cleanup_free_ char *buf = malloc(HEAD_MAX);
        size_t head_len = 0;
        ssize_t n = buf ? read_head(fd, buf, HEAD_MAX, &head_len) : -ENOMEM;
        if (n > 0) {
                bool is_connect = false;
                struct sockaddr_storage a;
                socklen_t al = 0;
                char why[512], msg[600];
                _cleanup_free_ char *head = strndup(buf, head_len);
                int r = head ? decide(g, head, &is_connect, &a, &al, why, sizeof why) : -ENOMEM;
                int up = r < 0 ? r : connect_to(&a, al);
                if (r < 0) {
                        snprintf(msg, sizeof msg, "rtn gate refused: %s", why);
                        refuse_note(g, msg);
                        reply(fd, 403, "Forbidden", msg);
                } else if (up < 0) {
                        snprintf(msg, sizeof msg, "rtn gate: connect: %s", strerror(-up));
                        reply(fd, 502, "Bad Gateway", msg);
                } else {
                        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
                        int w = is_connect ? send_all(fd, ok, sizeof ok - 1)
                                           : send_all(up, buf, (size_t)n);
                        if (w == 0 && is_connect && (size_t)n > head_len)
                                w = send_all(up, buf + head_len, (size_t)n - head_len);
                        if (w == 0)
                                relay(fd, up);
                        close(up);
                }
        }
        close(fd);
        atomic_fetch_sub(&g->nconn, 1);
        gate_unref(g);
        return NULL;
}

static void on_accept(struct rtn_loop *l, int lfd, uint32_t ev, void *ud) {
        struct netns_gate *g = ud;
        for (int i = 0; i < 16; i++) {
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
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

int netns_gate_attach(struct netns_gate *g, struct rtn_loop *loop, int listen_fd) {
        netns_gate_detach(g);
        (void)rtn_fd_nonblock(listen_fd, 1);
        int r = rtn_loop_add_fd(loop, listen_fd, EPOLLIN, on_accept, g);
        if (r < 0) {
                close(listen_fd);
                return r;
        }
        g->loop = loop;
        g->listen_fd = listen_fd;
        return 0;
}

void netns_gate_detach(struct netns_gate *g) {
        if (g->listen_fd < 0)
                return;
        rtn_loop_del_fd(g->loop, g->listen_fd);
        g->listen_fd = rtn_safe_close(g->listen_fd);
}

void netns_gate_free(struct netns_gate *g) {
        if (!g)
                return;
        netns_gate_detach(g);
        gate_unref(g);
}
