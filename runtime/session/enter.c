/* `rtn enter`'s two sides (runtime/session/enter.h): the owner's listener, which checks who
 * connects, takes one spawn request per connection and relays what rtn-init says of the
 * command; and the caller's connect, which checks whom it reached.
 *
 * Who may connect: the owner's uid (SO_PEERCRED), from the owner's user namespace, and no
 * more confined than the owner: a peer with no_new_privs the owner lacks, or with more seccomp
 * filters than the owner has, may be a command of a sandbox (every one runs under rtn-init's
 * no_new_privs and filter) and is refused. A full sandbox cannot even reach the socket (its
 * mount namespace shows no runtime dir); the Landlock-only mode can, since Landlock does not
 * govern connect(2) to a path socket before ABI 9. Counting cannot stop that mode's commands
 * when the owner runs under no_new_privs and filters of its own (a hardened service), so a
 * request must also pass the registry's directory opened to be read, which Landlock refuses
 * such a command (holds_registry). The peer's /proc is read through a pidfd, checked again
 * afterwards: with SO_PEERPIDFD (Linux 6.5) a pid reused meanwhile is never the one judged;
 * before it the pidfd is opened from SO_PEERCRED's pid. Nothing a request says is trusted: it
 * is decoded by the protocol's own decoder, must ask for the agent's policy and no
 * environment, and must pass three fds that are not terminals (or none with a pty), then the
 * registry's directory. Every connection is non-blocking, and the table is
 * bounded: a flood evicts connections that have not sent their request yet, and a caller that
 * stops reading loses its connection (its command is killed), never the owner its loop. */
#include "runtime/session/enter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/initproto.h"
#include "common/io.h"
#include "common/log.h"
#include "common/syscall.h"
#include "runtime/session/registry.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define ACCEPT_BATCH 64

struct conn {
        int fd; /* -1: free, or the caller left while its command runs */
        uint64_t id; /* 0 until its request was sent to rtn-init */
        uint64_t seq; /* accept order: the oldest waiting one is evicted first */
        unsigned sb; /* the sandbox it entered (sb-N) */
};

struct rt_enter {
        int lfd, epfd, dfd;
        char name[96]; /* PID-START.sock in dfd */
        const struct rt_enter_ops *ops;
        void *ud;
        uint64_t next_id, seq;
        struct conn conns[RT_ENTER_MAX];
        struct init_spawn_view view;
        char buf[INIT_MSG_MAX];
};

/* A SPAWN_FAILED of step INIT_STEP_ENTER saying why; never blocks. */
static void __attribute__((format(printf, 3, 4))) refuse(int fd, int e, const char *fmt, ...) {
        struct init_status s = {.hdr = {.type = INIT_MSG_SPAWN_FAILED, .len = sizeof s, .id = 1},
                                .error = e,
                                .step = INIT_STEP_ENTER};
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s.message, sizeof s.message, fmt, ap);
        va_end(ap);
        log_debug("rtn enter refused: %s", s.message);
        (void)rtn_send_msg(fd, &s, sizeof s, NULL, 0);
}

/* "NoNewPrivs:" and "Seccomp_filters:" of /proc/PID/status (pid 0: our own). */
static int confinement(int pid, long *ret_nnp, long *ret_filters) {
        char path[64], buf[8192];
        if (pid)
                snprintf(path, sizeof path, "/proc/%d/status", pid);
        else
                snprintf(path, sizeof path, "/proc/self/status");
        ssize_t n = rtn_read_file_at(AT_FDCWD, path, buf, sizeof buf - 1);
        if (n <= 0)
                return n < 0 ? (int)n : -EIO;
        buf[n] = '\0';
        const char *nnp = strstr(buf, "\nNoNewPrivs:");
        const char *f = strstr(buf, "\nSeccomp_filters:");
        const char *mode = strstr(buf, "\nSeccomp:");
        if (!nnp || !mode)
                return -EIO;
        *ret_nnp = strtol(nnp + 12, NULL, 10);
        /* Kernels before 5.9 name no count: then a filter at all is more than none. */
        *ret_filters = f ? strtol(f + 17, NULL, 10) : strtol(mode + 9, NULL, 10) == 2;
        return 0;
}

static bool same_userns(int pid) {
        char path[64];
        struct stat a, b;
        snprintf(path, sizeof path, "/proc/%d/ns/user", pid);
        return stat(path, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 && a.st_ino == b.st_ino &&
               a.st_dev == b.st_dev;
}

/* Whether the peer of fd may enter; refuses it (and says why) when not. */
static bool peer_ok(int fd) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                refuse(fd, errno, "cannot tell who connected: %s", strerror(errno));
                return false;
        }
        if (cred.pid <= 0) { /* not in our pid namespace: nothing of its /proc to read */
                refuse(fd, EPERM, "the caller is in another pid namespace");
                return false;
        }
        if (cred.uid != geteuid()) {
                refuse(fd, EPERM, "uid %u may not enter a sandbox of uid %u", (unsigned)cred.uid,
                       (unsigned)geteuid());
                return false;
        }
        int pidfd = -1;
        len = sizeof pidfd;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
                pidfd = sys_pidfd_open(cred.pid, 0);
        _cleanup_close_ int pfd = pidfd;
        long nnp, filters, our_nnp, our_filters;
        const char *why = NULL;
        if (pfd < 0 || confinement(cred.pid, &nnp, &filters) < 0 ||
            confinement(0, &our_nnp, &our_filters) < 0)
                why = "cannot read the caller's /proc entry";
        else if (!same_userns(cred.pid))
                why = "the caller is in another user namespace (a sandbox's command cannot enter "
                      "a sandbox)";
        else if ((nnp && !our_nnp) || filters > our_filters)
                why = "the caller is more confined than the sandbox's owner (no_new_privs or a "
                      "seccomp filter of its own: a sandbox's command cannot enter a sandbox)";
        else if (sys_pidfd_send_signal(pfd, 0, NULL, 0) < 0)
                why = "the caller exited";
        if (why) {
                refuse(fd, EPERM, "pid %d: %s", (int)cred.pid, why);
                return false;
        }
        return true;
}

static void conn_close(struct rt_enter *e, struct conn *c) {
        if (c->fd >= 0) {
                epoll_ctl(e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
                c->fd = rtn_safe_close(c->fd);
        }
}

/* The caller is gone (or stopped reading): its command, if any, is killed, and the slot is
 * kept until rtn-init reports the exit. */
static void conn_gone(struct rt_enter *e, struct conn *c) {
        conn_close(e, c);
        if (c->id)
                e->ops->signal(e->ud, c->id, SIGKILL);
}

static struct conn *slot_for_new(struct rt_enter *e) {
        struct conn *oldest = NULL;
        for (size_t i = 0; i < RT_ENTER_MAX; i++) {
                struct conn *c = &e->conns[i];
                if (c->fd < 0 && !c->id)
                        return c;
                if (c->fd >= 0 && !c->id && (!oldest || c->seq < oldest->seq))
                        oldest = c;
        }
        if (oldest) {
                refuse(oldest->fd, EAGAIN, "no request sent while %d others waited", RT_ENTER_MAX);
                conn_close(e, oldest);
        }
        return oldest;
}

static void accept_all(struct rt_enter *e) {
        for (int i = 0; i < ACCEPT_BATCH; i++) {
                int fd = accept4(e->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0)
                        return; /* EAGAIN, or the caller left already */
                struct conn *c = NULL;
                if (peer_ok(fd) && !(c = slot_for_new(e)))
                        refuse(fd, EAGAIN, "%d commands entered at once already", RT_ENTER_MAX);
                if (!c) {
                        close(fd);
                        continue;
                }
                struct epoll_event ev = {.events = EPOLLIN,
                                         .data.u64 = (uint64_t)(c - e->conns) + 1};
                if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        close(fd);
                        continue;
                }
                *c = (struct conn){.fd = fd, .seq = ++e->seq};
        }
}

/* Whether fd is the registry's directory (the owner's dfd), opened to be read: what a command
 * of a Landlock-only sandbox cannot open (its ruleset grants no read of the runtime dir), and
 * what counting no_new_privs and filters cannot tell apart from an owner that runs under
 * filters of its own (a hardened service). An O_PATH fd, which Landlock does not check, is
 * no proof. */
static bool holds_registry(const struct rt_enter *e, int fd) {
        struct stat a, b;
        int fl = fcntl(fd, F_GETFL);
        return fl >= 0 && !(fl & O_PATH) && (fl & O_ACCMODE) != O_WRONLY && fstat(fd, &a) == 0 &&
               S_ISDIR(a.st_mode) && fstat(e->dfd, &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
}

static const char *request_check(struct rt_enter *e, size_t n, const int *fds, size_t nfds) {
        const struct init_spawn *m;
        if (init_decode_spawn(e->buf, n, &e->view) < 0)
                return "not a spawn request";
        m = e->view.msg;
        if (m->policy != INIT_POLICY_AGENT || (m->flags & ~(uint32_t)INIT_SPAWN_PTY) ||
            m->envc != 0)
                return "a request may only ask for the sandbox's own policy and environment";
        if (nfds != ((m->flags & INIT_SPAWN_PTY) ? 0 : 3) + 1)
                return "a request passes stdin, stdout and stderr (none with a pty), then the "
                       "registry's directory";
        if (!holds_registry(e, fds[--nfds]))
                return "the caller did not open the registry's directory (a sandbox's command "
                       "cannot enter a sandbox)";
        for (size_t i = 0; i < nfds; i++) {
                if (isatty(fds[i]))
                        return "a terminal is never passed into a sandbox (use -t)";
                /* The fds are the one channel from the host in: a host directory, O_PATH fd,
                 * socket (of the host's network namespace), device or file must not become
                 * the command's (common/io.h, rtn_fd_passable). */
                if (!rtn_fd_passable(fds[i]))
                        return i == 0   ? "stdin is not a pipe or /dev/null"
                               : i == 1 ? "stdout is not a pipe or /dev/null"
                                        : "stderr is not a pipe or /dev/null";
        }
        return NULL;
}

static void on_request(struct rt_enter *e, struct conn *c, size_t n, int *fds, size_t nfds) {
        struct rtn_error err = {0};
        const char *why = request_check(e, n, fds, nfds);
        if (why) {
                refuse(c->fd, EINVAL, "%s", why);
                conn_close(e, c);
                return;
        }
        const struct init_spawn *m = e->view.msg;
        if (m->hdr.id == 0 || m->hdr.id > UINT_MAX) {
                refuse(c->fd, ENOENT, "no sandbox sb-%llu", (unsigned long long)m->hdr.id);
                conn_close(e, c);
                return;
        }
        uint64_t id = RT_ENTER_ID_BASE + e->next_id++;
        const char *cwd = e->view.cwd[0] ? e->view.cwd : NULL;
        if (e->ops->spawn(e->ud, (unsigned)m->hdr.id, id, m->flags, cwd,
                          (char *const *)e->view.argv, nfds > 1 ? fds : NULL, m->rows, m->cols,
                          &err) < 0) {
                refuse(c->fd, err.code, "%s", err.msg);
                conn_close(e, c);
                return;
        }
        c->id = id;
        c->sb = (unsigned)m->hdr.id;
}

static void on_conn(struct rt_enter *e, struct conn *c) {
        int fds[RTN_MAX_PASS_FDS];
        size_t nfds = RTN_MAX_PASS_FDS;
        ssize_t n = rtn_recv_msg(c->fd, e->buf, sizeof e->buf, fds, &nfds);
        if (n == -EAGAIN)
                return;
        if (n <= 0 && n != -EMSGSIZE) {
                conn_gone(e, c);
        } else if (!c->id) {
                if (n < 0)
                        refuse(c->fd, EMSGSIZE, "a request of more than %d bytes", INIT_MSG_MAX);
                if (n < 0)
                        conn_close(e, c);
                else
                        on_request(e, c, (size_t)n, fds, nfds);
        } else if (n > 0 && init_check_msg(e->buf, (size_t)n, INIT_MSG_SIGNAL,
                                           sizeof(struct init_signal)) == 0) {
                const struct init_signal *s = (const void *)e->buf;
                if (s->signo > 0 && s->signo < NSIG)
                        e->ops->signal(e->ud, c->id, s->signo);
        }
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]);
}

int rt_enter_fd(const struct rt_enter *e) {
        return e->epfd;
}

void rt_enter_serve(struct rt_enter *e) {
        struct epoll_event ev[RT_ENTER_MAX + 1];
        int n = epoll_wait(e->epfd, ev, RT_ENTER_MAX + 1, 0);
        for (int i = 0; i < n; i++) {
                if (ev[i].data.u64 == 0) {
                        accept_all(e);
                        continue;
                }
                struct conn *c = &e->conns[ev[i].data.u64 - 1];
                if (c->fd >= 0)
                        on_conn(e, c);
        }
}

bool rt_enter_event(struct rt_enter *e, void *msg, size_t len, int *fds, size_t nfds) {
        struct init_msg_hdr *h = msg;
        if (!e || len < sizeof *h || h->id < RT_ENTER_ID_BASE)
                return false;
        struct conn *c = NULL;
        for (size_t i = 0; i < RT_ENTER_MAX && !c; i++)
                if (e->conns[i].id == h->id)
                        c = &e->conns[i];
        bool last = h->type == INIT_MSG_EXITED || h->type == INIT_MSG_SPAWN_FAILED;
        if (c && c->fd >= 0) {
                h->id = 1;
                if (rtn_send_msg(c->fd, msg, len, fds, nfds) < 0 && !last)
                        conn_gone(e, c);
        }
        if (c && last) {
                conn_close(e, c);
                c->id = 0;
        }
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]);
        return true;
}

void rt_enter_drop(struct rt_enter *e, unsigned sb) {
        for (size_t i = 0; e && i < RT_ENTER_MAX; i++)
                if (e->conns[i].id && e->conns[i].sb == sb) {
                        conn_close(e, &e->conns[i]);
                        e->conns[i].id = 0; /* rtn-init is gone: no exit will come */
                }
}

/* Binds PID-START.sock in the registry's directory (made if need be: the socket comes before
 * the entry, rt_registry_self), through /proc/self/fd so that a long runtime dir never meets
 * sun_path's 108 bytes. */
static int bind_sock(struct rt_enter *e, struct rtn_error *err) {
        char self[64];
        int r;
        if ((r = rt_registry_self(self, sizeof self)) < 0)
                return rtn_errx(err, -r, "no start time of our own in /proc/self/stat");
        if ((e->dfd = rt_registry_open(true, err)) < 0)
                return e->dfd;
        snprintf(e->name, sizeof e->name, "%s%s", self, RT_REGISTRY_SOCK);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", e->dfd, e->name);
        e->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (e->lfd < 0)
                return rtn_err(err, errno, "socket");
        (void)unlinkat(e->dfd, e->name, 0); /* ours: the name holds our pid and start */
        if (bind(e->lfd, (struct sockaddr *)&sa, sizeof sa) < 0)
                return rtn_err(err, errno, "bind %s", e->name);
        if (fchmodat(e->dfd, e->name, 0600, 0) < 0 || listen(e->lfd, RT_ENTER_MAX) < 0)
                return rtn_err(err, errno, "listen on %s", e->name);
        return 0;
}

int rt_enter_listen(const struct rt_enter_ops *ops, void *ud, struct rt_enter **ret,
                    struct rtn_error *err) {
        struct rt_enter *e = calloc(1, sizeof *e);
        if (!e)
                return rtn_errx(err, ENOMEM, "out of memory");
        e->lfd = e->dfd = e->epfd = -1; /* rt_enter_free closes what is not -1: never fd 0 */
        e->ops = ops;
        e->ud = ud;
        for (size_t i = 0; i < RT_ENTER_MAX; i++)
                e->conns[i].fd = -1;
        int r = bind_sock(e, err);
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
        if (r == 0 && ((e->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
                       epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->lfd, &ev) < 0))
                r = rtn_err(err, errno, "epoll");
        if (r < 0) {
                rt_enter_free(e);
                return r;
        }
        *ret = e;
        return 0;
}

void rt_enter_free(struct rt_enter *e) {
        if (!e)
                return;
        for (size_t i = 0; i < RT_ENTER_MAX; i++)
                conn_close(e, &e->conns[i]);
        if (e->dfd >= 0 && e->name[0] && e->lfd >= 0)
                (void)unlinkat(e->dfd, e->name, 0);
        rtn_safe_close(e->lfd);
        rtn_safe_close(e->epfd);
        rtn_safe_close(e->dfd);
        free(e);
}

static const char *no_sock_why(const struct rt_running *r) {
        return strcmp(r->kind, "serve") ? "its rtn made no socket for rtn enter"
                                        : "its rtn serve made no socket for rtn enter";
}

int rt_enter_connect(int pid, struct rtn_error *err) {
        struct rt_running r;
        int q;
        if ((q = rt_registry_find(pid, &r, err)) < 0)
                return q;
        _cleanup_close_ int dfd = rt_registry_open(false, err);
        if (dfd < 0)
                return dfd;
        char name[96];
        struct stat st;
        snprintf(name, sizeof name, "%d-%llu%s", pid, r.start, RT_REGISTRY_SOCK);
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno != ENOENT ? rtn_err(err, errno, "%s", name)
                                       : rtn_errx(err, ENOTSUP, "%s", no_sock_why(&r));
        if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
                return rtn_errx(err, EPERM, "%s is not a socket of uid %u: refused", name,
                                (unsigned)geteuid());
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", dfd, name);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return rtn_err(err, errno, "socket");
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
                return rtn_err(err, errno, "sandbox %d does not answer", pid);
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return rtn_err(err, errno, "SO_PEERCRED");
        if (cred.uid != geteuid() || cred.pid != pid)
                return rtn_errx(err, EPERM,
                                "the socket of sandbox %d is held by pid %d of uid %u: refused",
                                pid, (int)cred.pid, (unsigned)cred.uid);
        return TAKE_FD(fd);
}

int rt_enter_request(int fd, unsigned sb, uint32_t flags, const char *cwd, char *const argv[],
                     const int fds[3], uint16_t rows, uint16_t cols, struct rtn_error *err) {
        static char buf[INIT_MSG_MAX];
        char *const none[] = {NULL};
        ssize_t len = init_encode_spawn(buf, sizeof buf, sb, flags, INIT_POLICY_AGENT,
                                        cwd ? cwd : "", argv, none, rows, cols);
        if (len == -E2BIG)
                return rtn_errx(err, E2BIG, "the command line exceeds %d bytes", INIT_MSG_MAX);
        if (len < 0)
                return rtn_err(err, (int)-len, "encode the request");
        /* The registry's directory last: the owner takes it as proof that the caller may read
         * it, which no sandbox's command may (request_check). */
        _cleanup_close_ int dfd = rt_registry_open(false, err);
        if (dfd < 0)
                return dfd;
        int all[4] = {fds ? fds[0] : dfd, fds ? fds[1] : -1, fds ? fds[2] : -1, dfd};
        ssize_t n = fds ? rtn_send_msg(fd, buf, (size_t)len, all, 4)
                        : rtn_send_msg(fd, buf, (size_t)len, all, 1);
        if (n < 0)
                return rtn_err(err, (int)-n, "send the request");
        return 0;
}
