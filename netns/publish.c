/* Published ports (docs/network.md, "Published ports"): `--publish [ADDR:]HOSTPORT:SANDBOXPORT`
 * forwards connections made to ADDR:HOSTPORT on the host to 127.0.0.1:SANDBOXPORT (or
 * [::1]:SANDBOXPORT) on the sandbox's loopback, so a server an agent starts can be opened
 * from the host. The listeners are made on the host before the sandbox starts (so a port in
 * use or a privileged port is an error of the command line, not of a connection later). For
 * each accepted connection a detached thread makes a socket *inside* the sandbox's network
 * namespace: a short-lived helper (clone(CLONE_VM|CLONE_VFORK|CLONE_FILES), as make_netns in
 * runtime/sandbox/sandbox.c) joins the sandbox's user and network namespaces through the pidfd
 * of its rtn-init (setns(2) with a pidfd, Linux >= 5.8), creates the socket there and returns;
 * a socket keeps the namespace it was made in, so the thread then connects it to the sandbox's
 * loopback and relays. Nothing the sandbox holds reaches the host's side: the listener lives
 * in rtn's namespace, which the sandbox has no route to, and the destination is the fixed
 * loopback port the operator named, never one the sandbox or the connecting client picks.
 * When the sandbox has ended, netns_publish_free lets what its servers sent before the end
 * reach their clients before rtn exits (the connections' threads die with it). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/io.h"
#include "common/log.h"
#include "common/loop.h"
#include "netns/internal.h"
#include "netns/netns.h"

#define CONNECT_TIMEOUT_MS 5000
#define HELPER_STACK_SIZE (64 * 1024)
/* How long netns_publish_free waits for the answers on their way to clients that read them
 * (docs/network.md, "Published ports"): a client that stops reading costs this, no more. */
#define DRAIN_USEC (5 * RTN_USEC_PER_SEC)

struct netns_publish {
        atomic_int refs;
        /* the connections relaying: the host's side of each (-1: a free slot), so the drain
         * can end what the client sends; a slot's fd is closed under lock */
        pthread_mutex_t lock;
        pthread_cond_t idle; /* signalled as a connection ends */
        int nconn;
        int conn_fd[NETNS_PUBLISH_MAX_CONN];
        struct netns_port ports[NETNS_PUBLISH_MAX];
        int lfd[NETNS_PUBLISH_MAX];
        size_t n;
        /* rtn serve: listeners on its loop, the sandbox named by target() at each accept */
        struct rtn_loop *loop;
        netns_publish_target_fn target;
        void *target_ud;
        struct pub_slot {
                struct netns_publish *p;
                size_t i;
        } slot[NETNS_PUBLISH_MAX];
        /* rtn exec: one thread accepts, for the one sandbox of pidfd */
        pthread_t thread;
        bool running;
        int stop[2];
        int pidfd;
};

struct conn {
        struct netns_publish *p;
        int fd; /* the host's side, p->conn_fd[slot] */
        size_t slot;
        int pidfd; /* the sandbox's rtn-init, our own dup */
        uint16_t port; /* on the sandbox's loopback */
};

static void publish_unref(struct netns_publish *p) {
        if (atomic_fetch_sub(&p->refs, 1) != 1)
                return;
        for (size_t i = 0; i < p->n; i++)
                rtn_safe_close(p->lfd[i]);
        rtn_safe_close(p->stop[0]);
        rtn_safe_close(p->stop[1]);
        rtn_safe_close(p->pidfd);
        pthread_cond_destroy(&p->idle);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

static int parse_port(const char *s, size_t len, uint16_t *ret) {
        unsigned long v = 0;
        if (len == 0 || len > 5)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long)(s[i] - '0');
        }
        if (v == 0 || v > 65535)
                return -ERANGE;
        *ret = (uint16_t)v;
        return 0;
}

/* ADDR as given ("127.0.0.1", "[::1]") into a socket address with port; -EAFNOSUPPORT for an
 * IPv4-mapped IPv6 address, which an IPv6-only listener cannot bind. */
static int port_sockaddr(const struct netns_port *pt, struct sockaddr_storage *ret,
                         socklen_t *ret_len) {
        memset(ret, 0, sizeof *ret);
        if (pt->addr[0] == '[') {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)ret;
                char ip[INET6_ADDRSTRLEN];
                size_t l = strlen(pt->addr);
                if (l < 3 || l - 2 >= sizeof ip || pt->addr[l - 1] != ']')
                        return -EINVAL;
                memcpy(ip, pt->addr + 1, l - 2);
                ip[l - 2] = '\0';
                if (inet_pton(AF_INET6, ip, &a->sin6_addr) != 1)
                        return -EINVAL;
                if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr))
                        return -EAFNOSUPPORT;
                a->sin6_family = AF_INET6;
                a->sin6_port = htons(pt->host_port);
                *ret_len = sizeof *a;
                return 0;
        }
        struct sockaddr_in *a = (struct sockaddr_in *)ret;
        if (inet_pton(AF_INET, pt->addr, &a->sin_addr) != 1)
                return -EINVAL;
        a->sin_family = AF_INET;
        a->sin_port = htons(pt->host_port);
        *ret_len = sizeof *a;
        return 0;
}

int netns_port_parse(const char *arg, struct netns_port *ret, struct rtn_error *err) {
        static const char form[] = "expected [ADDR:]HOSTPORT:SANDBOXPORT, ADDR an IPv4 or "
                                   "[IPv6] address, ports 1-65535";
        struct netns_port pt = {0};
        const char *last = strrchr(arg, ':');
        if (!last)
                return rtn_errx(err, EINVAL, "%.80s: %s", arg, form);
        const char *hp = arg;
        const char *mid = NULL; /* the ':' between ADDR and HOSTPORT */
        if (arg[0] == '[') {
                const char *rb = strchr(arg, ']');
                if (!rb || rb[1] != ':')
                        return rtn_errx(err, EINVAL, "%.80s: %s", arg, form);
                mid = rb + 1;
        } else {
                for (const char *c = arg; c < last; c++)
                        if (*c == ':')
                                mid = c;
        }
        if (mid) {
                if (mid == arg || (size_t)(mid - arg) >= sizeof pt.addr)
                        return rtn_errx(err, EINVAL, "%.80s: %s", arg, form);
                memcpy(pt.addr, arg, (size_t)(mid - arg));
                hp = mid + 1;
        } else {
                snprintf(pt.addr, sizeof pt.addr, "127.0.0.1");
        }
        struct sockaddr_storage sa;
        socklen_t sl;
        int r1 = parse_port(hp, (size_t)(last - hp), &pt.host_port);
        int r2 = parse_port(last + 1, strlen(last + 1), &pt.sandbox_port);
        int r3 = port_sockaddr(&pt, &sa, &sl);
        if (r3 == -EAFNOSUPPORT)
                return rtn_errx(err, EINVAL, "%.80s: %s; an IPv4-mapped ADDR is written as IPv4",
                                arg, form);
        if (r1 < 0 || r2 < 0 || r3 < 0)
                return rtn_errx(err, EINVAL, "%.80s: %s", arg, form);
        *ret = pt;
        return 0;
}

/* The lowest port an unprivileged process may bind (ip_unprivileged_port_start, 1024 unless
 * the host changed it), for the message. */
static unsigned unprivileged_start(void) {
        char buf[16] = {0};
        _cleanup_close_ int fd =
                open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, buf, sizeof buf - 1) <= 0)
                return 1024;
        return (unsigned)strtoul(buf, NULL, 10);
}

static int listen_one(const struct netns_port *pt, struct rtn_error *err) {
        struct sockaddr_storage sa;
        socklen_t sl = 0;
        if (port_sockaddr(pt, &sa, &sl) < 0)
                return rtn_errx(err, EINVAL, "--publish %s: not an address", pt->addr);
        _cleanup_close_ int s = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return rtn_err(err, errno, "--publish %s:%u: socket", pt->addr, pt->host_port);
        int one = 1;
        /* A server restarted at once may bind again over TIME_WAIT; a port someone
         * listens on stays refused (EADDRINUSE) whatever this says. */
        (void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (sa.ss_family == AF_INET6)
                (void)setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (bind(s, (struct sockaddr *)&sa, sl) < 0) {
                int e = errno;
                if (e == EADDRINUSE)
                        return rtn_errx(err, e,
                                        "--publish %s:%u: host port %u is in use on %s (pick "
                                        "another HOSTPORT)",
                                        pt->addr, pt->host_port, pt->host_port, pt->addr);
                if (e == EACCES)
                        return rtn_errx(err, e,
                                        "--publish %s:%u: port %u is privileged: only root may "
                                        "listen below %u (net.ipv4.ip_unprivileged_port_start); "
                                        "pick a HOSTPORT of %u or above",
                                        pt->addr, pt->host_port, pt->host_port,
                                        unprivileged_start(), unprivileged_start());
                if (e == EADDRNOTAVAIL)
                        return rtn_errx(err, e,
                                        "--publish %s:%u: %s is not an address of this host",
                                        pt->addr, pt->host_port, pt->addr);
                return rtn_err(err, e, "--publish %s:%u: bind", pt->addr, pt->host_port);
        }
        if (listen(s, 64) < 0)
                return rtn_err(err, errno, "--publish %s:%u: listen", pt->addr, pt->host_port);
        return TAKE_FD(s);
}

int netns_publish_new(const struct netns_port *ports, size_t n, struct netns_publish **ret,
                      struct rtn_error *err) {
        if (n > NETNS_PUBLISH_MAX)
                return rtn_errx(err, E2BIG, "%zu --publish, at most %d", n, NETNS_PUBLISH_MAX);
        struct netns_publish *p = calloc(1, sizeof *p);
        if (!p)
                return rtn_err(err, ENOMEM, "--publish");
        atomic_init(&p->refs, 1);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* netns_publish_free's deadline */
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->idle, &ca);
        pthread_condattr_destroy(&ca);
        for (size_t i = 0; i < NETNS_PUBLISH_MAX_CONN; i++)
                p->conn_fd[i] = -1;
        p->stop[0] = p->stop[1] = p->pidfd = -1;
        for (; p->n < n; p->n++) {
                int fd = listen_one(&ports[p->n], err);
                if (fd < 0) {
                        publish_unref(p);
                        return fd;
                }
                p->ports[p->n] = ports[p->n];
                p->lfd[p->n] = fd;
        }
        *ret = p;
        return 0;
}

struct sock_job {
        int pidfd;
        int family;
        int fd; /* out: the socket, made in the sandbox's netns */
        int error; /* out: errno of the failed step */
};

/* Runs as its own task (no CLONE_THREAD: setns(CLONE_NEWUSER) refuses a multithreaded
 * caller) sharing our memory and fd table; it allocates nothing. */
static int sock_helper(void *arg) {
        struct sock_job *j = arg;
        if (setns(j->pidfd, CLONE_NEWUSER | CLONE_NEWNET) < 0)
                j->error = errno;
        else if ((j->fd = socket(j->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
                j->error = errno;
        return 0; /* returned, not _exit()ed: see netns_helper in runtime/sandbox/sandbox.c */
}

static int sandbox_socket(int pidfd, int family) {
        char *top = rtn_stack_new(HELPER_STACK_SIZE);
        if (!top)
                return negative_errno();
        struct sock_job j = {.pidfd = pidfd, .family = family, .fd = -1};
        /* exit_signal 0: no SIGCHLD for anyone's loop; reaped here with __WALL. */
        pid_t pid = clone(sock_helper, top, CLONE_VM | CLONE_VFORK | CLONE_FILES, &j);
        int r = pid < 0 ? negative_errno() : 0;
        int st;
        while (pid > 0 && waitpid(pid, &st, __WALL) < 0)
                if (errno != EINTR) {
                        r = negative_errno();
                        break;
                }
        munmap(top - HELPER_STACK_SIZE, HELPER_STACK_SIZE);
        if (r < 0) {
                rtn_safe_close(j.fd);
                return r;
        }
        return j.fd >= 0 ? j.fd : -(j.error ? j.error : EIO);
}

/* A socket in the sandbox's netns connected to its loopback: 127.0.0.1 first, then ::1
 * (servers that listen on "localhost" may have taken either). */
static int connect_sandbox(int pidfd, uint16_t port) {
        int r = -ECONNREFUSED;
        for (int v6 = 0; v6 < 2; v6++) {
                struct sockaddr_storage sa = {0};
                socklen_t sl;
                if (v6) {
                        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;
                        a->sin6_family = AF_INET6;
                        a->sin6_addr = in6addr_loopback;
                        a->sin6_port = htons(port);
                        sl = sizeof *a;
                } else {
                        struct sockaddr_in *a = (struct sockaddr_in *)&sa;
                        a->sin_family = AF_INET;
                        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                        a->sin_port = htons(port);
                        sl = sizeof *a;
                }
                _cleanup_close_ int s = sandbox_socket(pidfd, sa.ss_family);
                if (s < 0)
                        return s; /* the sandbox is gone, or no namespace could be joined */
                if (connect(s, (struct sockaddr *)&sa, sl) < 0) {
                        if (errno != EINPROGRESS) {
                                r = negative_errno();
                                continue;
                        }
                        struct pollfd pf = {.fd = s, .events = POLLOUT};
                        int e = 0;
                        socklen_t el = sizeof e;
                        if (poll(&pf, 1, CONNECT_TIMEOUT_MS) <= 0) {
                                r = -ETIMEDOUT;
                                continue;
                        }
                        if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
                                r = e ? -e : negative_errno();
                                continue;
                        }
                }
                (void)rtn_fd_nonblock(s, 0);
                return TAKE_FD(s);
        }
        return r;
}

/* The connection in slot is done: its host side is closed under lock (the drain may be
 * shutting it down) and a drain waiting is told. */
static void conn_release(struct netns_publish *p, size_t slot) {
        pthread_mutex_lock(&p->lock);
        p->conn_fd[slot] = rtn_safe_close(p->conn_fd[slot]);
        p->nconn--;
        pthread_cond_broadcast(&p->idle);
        pthread_mutex_unlock(&p->lock);
}

static void *conn_main(void *arg) {
        struct conn *c = arg;
        int up = connect_sandbox(c->pidfd, c->port);
        /* Nothing listens there (yet): the host's client sees the connection closed, as it
         * would from a server that is down. */
        if (up >= 0) {
                netns_relay(c->fd, up, UINT64_MAX);
                close(up);
        }
        conn_release(c->p, c->slot);
        close(c->pidfd);
        publish_unref(c->p);
        free(c);
        return NULL;
}

/* Takes fd; pidfd is borrowed (dup'ed for the connection's thread). */
static void conn_start(struct netns_publish *p, int fd, int pidfd, uint16_t port) {
        int own = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : -1;
        size_t slot = NETNS_PUBLISH_MAX_CONN;
        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; own >= 0 && i < NETNS_PUBLISH_MAX_CONN; i++)
                if (p->conn_fd[i] < 0) {
                        p->conn_fd[slot = i] = fd;
                        p->nconn++;
                        break;
                }
        pthread_mutex_unlock(&p->lock);
        if (slot == NETNS_PUBLISH_MAX_CONN) { /* no sandbox, or too many connections */
                rtn_safe_close(own);
                close(fd);
                return;
        }
        struct conn *c = malloc(sizeof *c);
        if (!c) {
                conn_release(p, slot);
                close(own);
                return;
        }
        *c = (struct conn){.p = p, .fd = fd, .slot = slot, .pidfd = own, .port = port};
        atomic_fetch_add(&p->refs, 1);
        pthread_attr_t at;
        pthread_t t;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, conn_main, c) != 0) {
                conn_release(p, slot);
                close(own);
                free(c);
                publish_unref(p);
        }
        pthread_attr_destroy(&at);
}

static void accept_some(struct netns_publish *p, size_t i, int pidfd) {
        for (int k = 0; k < 16; k++) {
                int fd = accept4(p->lfd[i], NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                conn_start(p, fd, pidfd, p->ports[i].sandbox_port);
        }
}

static void on_accept(struct rtn_loop *l, int lfd, uint32_t ev, void *ud) {
        const struct pub_slot *s = ud;
        accept_some(s->p, s->i, s->p->target(s->p->target_ud));
}

int netns_publish_attach(struct netns_publish *p, struct rtn_loop *loop,
                         netns_publish_target_fn target, void *ud, struct rtn_error *err) {
        p->loop = loop;
        p->target = target;
        p->target_ud = ud;
        for (size_t i = 0; i < p->n; i++) {
                p->slot[i].p = p;
                p->slot[i].i = i;
                int r = rtn_loop_add_fd(loop, p->lfd[i], EPOLLIN, on_accept, &p->slot[i]);
                if (r < 0) {
                        while (i-- > 0)
                                rtn_loop_del_fd(loop, p->lfd[i]);
                        p->loop = NULL;
                        return rtn_err(err, r, "--publish: watch the listener");
                }
        }
        return 0;
}

static void *accept_main(void *arg) {
        struct netns_publish *p = arg;
        struct pollfd pf[NETNS_PUBLISH_MAX + 1];
        for (size_t i = 0; i < p->n; i++)
                pf[i] = (struct pollfd){.fd = p->lfd[i], .events = POLLIN};
        pf[p->n] = (struct pollfd){.fd = p->stop[0], .events = POLLIN};
        for (;;) {
                if (poll(pf, p->n + 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return NULL;
                }
                if (pf[p->n].revents)
                        return NULL;
                for (size_t i = 0; i < p->n; i++)
                        if (pf[i].revents)
                                accept_some(p, i, p->pidfd);
        }
}

int netns_publish_run(struct netns_publish *p, int pidfd, struct rtn_error *err) {
        if ((p->pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3)) < 0)
                return rtn_err(err, errno, "--publish: dup the sandbox's pidfd");
        if (pipe2(p->stop, O_CLOEXEC) < 0)
                return rtn_err(err, errno, "--publish: pipe");
        int e = pthread_create(&p->thread, NULL, accept_main, p);
        if (e != 0)
                return rtn_err(err, e, "--publish: start the accepting thread");
        p->running = true;
        return 0;
}

void netns_publish_stop(struct netns_publish *p) {
        if (!p)
                return;
        if (p->running) {
                char b = 0;
                (void)!write(p->stop[1], &b, 1);
                pthread_join(p->thread, NULL);
                p->running = false;
        }
        if (p->loop)
                for (size_t i = 0; i < p->n; i++)
                        rtn_loop_del_fd(p->loop, p->lfd[i]);
        p->loop = NULL;
        for (size_t i = 0; i < p->n; i++)
                p->lfd[i] = rtn_safe_close(p->lfd[i]);
}

/* The sandbox has ended, so every connection has only what its servers sent before to
 * deliver: what the clients send is ended (shutdown SHUT_RD: the relay passes the end on and
 * keeps copying the other way), and each relay returns once the sandbox's side is all
 * written to its client. A client that does not read is waited for until DRAIN_USEC. */
static void drain(struct netns_publish *p) {
        struct timespec end;
        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += (time_t)(DRAIN_USEC / RTN_USEC_PER_SEC);
        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < NETNS_PUBLISH_MAX_CONN; i++)
                if (p->conn_fd[i] >= 0)
                        (void)shutdown(p->conn_fd[i], SHUT_RD);
        while (p->nconn > 0 && pthread_cond_timedwait(&p->idle, &p->lock, &end) != ETIMEDOUT)
                ;
        if (p->nconn > 0)
                log_debug("--publish: %d connections still relaying after %llu s, cut", p->nconn,
                          (unsigned long long)(DRAIN_USEC / RTN_USEC_PER_SEC));
        pthread_mutex_unlock(&p->lock);
}

void netns_publish_free(struct netns_publish *p) {
        if (!p)
                return;
        netns_publish_stop(p);
        drain(p);
        publish_unref(p);
}
