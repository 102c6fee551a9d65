/* The client of the sandbox's file server: see runtime/session/file_client.h. At most MAX_INFLIGHT
 * requests are on the socket at once (each is at most INIT_FILES_REQ_MAX bytes, so they fit
 * in the socket buffer and a send never blocks); the rest wait in the queue. The server
 * answers in order, so the oldest request sent is the one a response belongs to; a response
 * for anything else is a protocol error and ends that server. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/loop.h"
#include "runtime/internal.h"
#include "runtime/session/file_client.h"
#include "runtime/session/session.h"

#define MAX_INFLIGHT 8

struct pending {
        struct pending *next;
        uint64_t id;
        bool sent;
        char *msg;
        size_t len;
        int fd;
        rt_files_fn fn;
        void *ud;
};

struct rt_files {
        struct rtn_loop *loop;
        struct rt_session *s;
        int sock; /* -1: no server */
        bool starting;
        uint64_t next_id, start_id;
        struct pending *head; /* oldest first */
        unsigned inflight;
        struct rtn_loop_source *kick;
        char why[256]; /* the server's last words (a start failure) */
};

static void pump(struct rt_files *f);

static void pending_free(struct pending *p) {
        rtn_safe_close(p->fd);
        free(p->msg);
        free(p);
}

static void answer_error(struct pending *p, int error, const char *msg) {
        struct rt_files_reply r = {.error = error, .message = msg};
        p->fn(p->ud, &r);
        pending_free(p);
}

/* Fails every request (only_sent: those already on the socket), oldest first. */
static void fail_all(struct rt_files *f, bool only_sent, int error, const char *msg) {
        struct pending **pp = &f->head, *failed = NULL, **ftail = &failed;
        while (*pp) {
                struct pending *p = *pp;
                if (only_sent && !p->sent) {
                        pp = &p->next;
                        continue;
                }
                *pp = p->next;
                p->next = NULL;
                *ftail = p;
                ftail = &p->next;
        }
        f->inflight = 0;
        while (failed) {
                struct pending *p = failed;
                failed = p->next;
                answer_error(p, error, msg);
        }
}

static void server_down(struct rt_files *f) {
        if (f->sock >= 0) {
                rtn_loop_del_fd(f->loop, f->sock);
                f->sock = rtn_safe_close(f->sock);
        }
        f->starting = false;
}

static void on_kick(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct rt_files *f = ud;
        f->kick = NULL;
        pump(f);
}

/* Runs pump from the loop, not from inside a callback chain (session_lost, say). */
static void kick(struct rt_files *f) {
        if (!f->kick && f->head)
                (void)rtn_loop_add_timer(f->loop, 1, 0, on_kick, f, &f->kick);
}

static void server_died(struct rt_files *f, const char *what) {
        char msg[512];
        snprintf(msg, sizeof msg,
                 "the sandbox's file server %s%s%s; the next file call starts "
                 "a new one",
                 what, f->why[0] ? ": " : "", f->why);
        server_down(f);
        fail_all(f, true, EPIPE, msg);
        f->why[0] = '\0';
        kick(f);
}

static void on_reply(struct rt_files *f, const struct init_files_resp *m) {
        struct pending *p = f->head;
        if (!p || !p->sent || m->hdr.id != p->id ||
            m->hdr.type != ((struct init_msg_hdr *)p->msg)->type) {
                server_died(f, "answered out of turn");
                return;
        }
        f->head = p->next;
        f->inflight--;
        char msg[sizeof m->message + 1];
        memcpy(msg, m->message, sizeof m->message);
        msg[sizeof m->message] = '\0';
        struct rt_files_reply r = {.error = m->error,
                                   .message = msg,
                                   .flags = m->flags,
                                   .size = m->size,
                                   .count = m->count,
                                   .dev = m->dev,
                                   .ino = m->ino,
                                   .mode = m->mode};
        if (r.error < 0)
                r.error = EBADMSG;
        p->fn(p->ud, &r);
        pending_free(p);
}

static void on_sock(struct rtn_loop *l, int sock, uint32_t ev, void *ud) {
        struct rt_files *f = ud;
        union {
                struct init_files_resp m;
                char raw[sizeof(struct init_files_resp) + 1];
        } u;
        for (int i = 0; i < 16 && f->sock == sock; i++) {
                int fds[1] = {-1};
                size_t nfds = 1;
                ssize_t n = rtn_recv_msg(sock, u.raw, sizeof u, fds, &nfds);
                if (n == -EAGAIN || n == -EINTR)
                        break;
                /* Replies carry no fds: whatever came along is closed unread. */
                if (nfds)
                        rtn_safe_close(fds[0]);
                if (n != (ssize_t)sizeof u.m || u.m.hdr.len != sizeof u.m) {
                        server_died(f, n == 0 || n == -ECONNRESET ? "ended" : "sent garbage");
                        return;
                }
                if (u.m.hdr.id == 0) { /* it could not start: its reason, then EOF */
                        memcpy(f->why, u.m.message, sizeof f->why - 1);
                        f->why[sizeof f->why - 1] = '\0';
                        continue;
                }
                on_reply(f, &u.m);
        }
        pump(f);
}

static void on_started(void *ud, const void *msg, size_t len, int fd) {
        struct rt_files *f = ud;
        const struct init_status *st = msg;
        if (init_check_msg(msg, len, INIT_MSG_FILES_STARTED, sizeof *st) < 0 || !f->starting ||
            st->hdr.id != f->start_id) {
                rtn_safe_close(fd);
                return; /* a stale answer to an earlier start */
        }
        f->starting = false;
        int r = st->error > 0 ? -st->error : st->error || fd < 0 ? -EBADMSG : 0;
        if (r == 0 && (r = rtn_fd_nonblock(fd, 1)) == 0)
                r = rtn_loop_add_fd(f->loop, fd, EPOLLIN, on_sock, f);
        if (r < 0) {
                char m[sizeof st->message + 64];
                snprintf(m, sizeof m, "cannot start the sandbox's file server: %.*s%s",
                         (int)sizeof st->message, st->message, st->error ? "" : strerror(-r));
                rtn_safe_close(fd);
                fail_all(f, false, -r, m);
                return;
        }
        f->sock = fd;
        pump(f);
}

static void on_lost(void *ud) {
        struct rt_files *f = ud;
        const char *why = rt_session_lost_why(f->s);
        char msg[256];
        if (why)
                snprintf(msg, sizeof msg, "the file call was cut off: %s while it ran; try again",
                         why);
        else
                snprintf(msg, sizeof msg,
                         "the sandbox ended while the file call ran (its init died); try again");
        server_down(f);
        fail_all(f, false, ECONNRESET, msg);
}

static const struct rt_session_listener listener = {.on_msg = on_started, .on_lost = on_lost};

static void start_server(struct rt_files *f) {
        struct rtn_error err = {0};
        struct init_msg_hdr m = {.type = INIT_MSG_FILES_START, .len = sizeof m, .id = ++f->next_id};
        f->start_id = m.id;
        f->starting = true;
        if (rt_session_send(f->s, &m, sizeof m, &err) < 0) {
                f->starting = false;
                char msg[RTN_ERROR_MAX + 64];
                snprintf(msg, sizeof msg, "cannot start the sandbox: %s", err.msg);
                fail_all(f, false, err.code ? err.code : EIO, msg);
        }
}

static void pump(struct rt_files *f) {
        if (!f->head)
                return;
        if (f->sock < 0) {
                if (!f->starting)
                        start_server(f);
                return;
        }
        for (struct pending *p = f->head; p && f->inflight < MAX_INFLIGHT; p = p->next) {
                if (p->sent)
                        continue;
                ssize_t n = rtn_send_msg(f->sock, p->msg, p->len, &p->fd, p->fd >= 0);
                if (n == -EAGAIN)
                        return; /* the next reply makes room */
                if (n < 0) {
                        server_died(f, "went away");
                        return;
                }
                p->sent = true;
                p->fd = rtn_safe_close(p->fd);
                f->inflight++;
        }
}

int rt_files_new(struct rtn_loop *loop, struct rt_session *s, struct rt_files **ret) {
        struct rt_files *f = calloc(1, sizeof *f);
        if (!f)
                return -ENOMEM;
        f->loop = loop;
        f->s = s;
        f->sock = -1;
        rt_session_set_listener(s, &listener, f);
        *ret = f;
        return 0;
}

void rt_files_free(struct rt_files *f) {
        if (!f)
                return;
        rt_session_set_listener(f->s, NULL, NULL);
        server_down(f);
        if (f->kick)
                rtn_loop_timer_cancel(f->loop, f->kick);
        fail_all(f, false, ECANCELED, "the server is shutting down");
        free(f);
}

int rt_files_call(struct rt_files *f, const struct rt_files_op *op, rt_files_fn fn, void *ud,
                  struct rtn_error *err) {
        struct pending *p = calloc(1, sizeof *p);
        if (!p || !(p->msg = malloc(INIT_FILES_REQ_MAX))) {
                free(p);
                return rtn_err(err, ENOMEM, "file request");
        }
        p->fd = -1;
        char host[INIT_FILES_PATH_MAX];
        const char *path =
                rt_landlock_path(rt_session_sandbox(f->s), op->path, true, host, sizeof host);
        struct init_files_req fixed = {
                .hdr = {.type = op->op, .id = ++f->next_id},
                .flags = op->flags,
                .mode = op->mode,
                .depth = op->depth,
                .max = op->max,
                .expect_dev = op->expect_dev,
                .expect_ino = op->expect_ino,
        };
        ssize_t len = path ? init_encode_files_req(p->msg, INIT_FILES_REQ_MAX, &fixed, path,
                                                   op->pattern, op->glob)
                           : -ENAMETOOLONG;
        if (len < 0 || (op->fd >= 0 && (p->fd = fcntl(op->fd, F_DUPFD_CLOEXEC, 3)) < 0)) {
                int e = len < 0 ? (int)len : negative_errno();
                pending_free(p);
                return rtn_err(err, e, "file request");
        }
        p->id = fixed.hdr.id;
        p->len = (size_t)len;
        p->fn = fn;
        p->ud = ud;
        struct pending **pp = &f->head;
        while (*pp)
                pp = &(*pp)->next;
        *pp = p;
        kick(f);
        return 0;
}
