/* The sessions of `rtn serve --http`: each is a child `rtn serve` on stdio, run from our own
 * binary with the options the front end passed on, on the front end's store: its sandboxes
 * are its own (one session's tools reach no other's sandbox), its commits go to the
 * environments every later session starts on. A message is written to the child's stdin as one
 * line; the child's responses are matched to the HTTP requests waiting for them by id, its
 * progress notifications by progressToken and a call's log messages by the request id the
 * child names in them (relayed on the request's event stream when its client takes one:
 * stream.c). Log messages of no request have no stream to go on and are dropped.
 *
 * The 2026-07-28 requests (no session: each stands alone) all go to one more child, the
 * token's state (h->modern): its sandboxes, their handles, jobs and files last from one request
 * to the next until closed, or until unused for --idle-timeout, each on its own clock (the
 * child closes them: --sandbox-idle-timeout); the child says when none is left and no call
 * came for as long, and is ended then. It counts as one of
 * the --max-sessions and holds at most --max-sandboxes handles (the child's own limit). Its
 * requests come from independent clients whose ids and progress tokens may collide, so each
 * is forwarded with an id (and progress token) of the front end's own and answered under the
 * client's again. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/exitcode.h"
#include "common/term.h"
#include "common/io.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/syscall.h"
#include "serve/httpd/httpd.h"
#include "mcp/mcp.h"
#include "mcp/wire.h"
#include "store/store.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define CHILD_LINE_MAX (16u << 20) /* above the child's own 8 MiB message limit */

struct pend {
        char *id; /* as sent to the child */
        size_t id_len;
        char *client_id; /* the client's, when the front end renamed it (the modern state) */
        size_t client_id_len;
        char *ptok; /* _meta.progressToken as sent to the child, or NULL */
        size_t ptok_len;
        char *client_ptok; /* the client's, when renamed */
        size_t client_ptok_len;
        struct httpd_req *q;
        struct pend *next;
};

struct httpd_session {
        struct httpd *h;
        struct httpd_session *next;
        char sid[HTTPD_SID_LEN + 1];
        pid_t pid;
        int pidfd, in_fd, out_fd;
        char *wbuf; /* queued for the child's stdin */
        size_t wlen, woff;
        struct mcp_framer fr;
        struct pend *pend;
        uint64_t last_usec;
        uint64_t next_id; /* the modern state's own request ids */
        bool modern, ending;
        struct httpd_req *end_waiter; /* the DELETE answered once the child is gone */
        struct rtn_loop_source *kill_timer;
};

const char *httpd_session_id(const struct httpd_session *s) {
        return s->sid;
}

struct httpd_session *httpd_session_find(struct httpd *h, const char *sid, size_t len) {
        if (len != HTTPD_SID_LEN)
                return NULL;
        for (struct httpd_session *s = h->sessions; s; s = s->next)
                if (!s->ending && !s->modern && httpd_token_equal(sid, len, s->sid, len))
                        return s;
        return NULL;
}

static void pend_free(struct pend *p) {
        free(p->id);
        free(p->client_id);
        free(p->ptok);
        free(p->client_ptok);
        free(p);
}

/* Every request still waiting is answered with a JSON-RPC error naming why. */
static void fail_pending(struct httpd_session *s, const char *why) {
        while (s->pend) {
                struct pend *p = s->pend;
                s->pend = p->next;
                struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
                if (p->client_id)
                        mcp_write_error(&b, p->client_id, p->client_id_len, MCP_INTERNAL_ERROR,
                                        why);
                else
                        mcp_write_error(&b, p->id, p->id_len, MCP_INTERNAL_ERROR, why);
                httpd_req_done(p->q, 200, b.err ? NULL : rtn_json_buf_steal(&b), b.len);
                rtn_json_buf_free(&b);
                pend_free(p);
        }
}

static void session_free(struct httpd_session *s) {
        struct httpd *h = s->h;
        for (struct httpd_session **pp = &h->sessions; *pp; pp = &(*pp)->next)
                if (*pp == s) {
                        *pp = s->next;
                        break;
                }
        h->nsessions--;
        if (h->modern == s)
                h->modern = NULL;
        fail_pending(s, s->modern ? "the sandboxes of 2026-07-28 requests ended"
                                  : "the session ended");
        if (s->kill_timer)
                rtn_loop_timer_cancel(h->loop, s->kill_timer);
        if (s->in_fd >= 0) {
                rtn_loop_del_fd(h->loop, s->in_fd);
                close(s->in_fd);
        }
        if (s->out_fd >= 0) {
                rtn_loop_del_fd(h->loop, s->out_fd);
                close(s->out_fd);
        }
        if (s->pidfd >= 0) {
                rtn_loop_del_fd(h->loop, s->pidfd);
                close(s->pidfd);
        }
        if (s->end_waiter)
                httpd_req_done(s->end_waiter, 204, NULL, 0);
        mcp_framer_free(&s->fr);
        free(s->wbuf);
        free(s);
}

static void on_child_exit(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        (void)l;
        (void)fd;
        (void)ev;
        struct httpd_session *s = ud;
        siginfo_t si = {0};
        if (waitid((idtype_t)P_PIDFD, (id_t)s->pidfd, &si, WEXITED | WNOHANG) < 0 || !si.si_pid)
                return;
        if (!s->ending && !(si.si_code == CLD_EXITED && si.si_status == 0))
                rtn_term_printf(stderr, "rtn serve: %s %.8s…: its server ended (%s %d)\n",
                                s->modern ? "the 2026-07-28 requests' state" : "session", s->sid,
                                si.si_code == CLD_EXITED ? "exit" : "signal", si.si_status);
        struct httpd *h = s->h;
        session_free(s);
        httpd_mhd_run(h);
}

static void on_kill_timer(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        (void)l;
        (void)t;
        struct httpd_session *s = ud;
        s->kill_timer = NULL;
        rtn_term_printf(stderr, "rtn serve: session %.8s… did not end in time: killed\n", s->sid);
        (void)sys_pidfd_send_signal(s->pidfd, SIGKILL, NULL, 0);
}

void httpd_session_end(struct httpd_session *s, struct httpd_req *q) {
        if (q && !s->end_waiter)
                s->end_waiter = q;
        else if (q)
                httpd_req_done(q, 204, NULL, 0);
        if (s->ending)
                return;
        s->ending = true;
        if (s->h->modern == s)
                s->h->modern = NULL; /* the next modern request starts a new state */
        /* EOF on its stdin ends rtn serve cleanly: its sandbox stops and its session
         * directory is removed. One that does not end in time is killed. */
        if (s->in_fd >= 0) {
                rtn_loop_del_fd(s->h->loop, s->in_fd);
                close(s->in_fd);
                s->in_fd = -1;
        }
        (void)rtn_loop_add_timer(s->h->loop, HTTPD_STOP_GRACE_USEC, 0, on_kill_timer, s,
                                 &s->kill_timer);
}

/* ---- the child's output ---------------------------------------------------------------- */

/* line with the span [at, at + n) replaced by with[0..wl): a new string, NULL on ENOMEM. */
static char *with_value(const char *line, size_t len, const char *at, size_t n, const char *with,
                        size_t wl, size_t *ret_len) {
        size_t head = (size_t)(at - line), tail = len - head - n;
        char *b = malloc(head + wl + tail + 1);
        if (!b)
                return NULL;
        memcpy(b, line, head);
        memcpy(b + head, with, wl);
        memcpy(b + head + wl, at + n, tail);
        b[head + wl + tail] = '\0';
        *ret_len = head + wl + tail;
        return b;
}

/* A progress notification goes to the request whose token it carries, under the client's. */
static void relay_progress(struct httpd_session *s, const char *line, size_t len, const char *tok,
                           size_t tl) {
        for (struct pend *p = s->pend; p; p = p->next) {
                if (!p->ptok || p->ptok_len != tl || memcmp(p->ptok, tok, tl))
                        continue;
                size_t n = len;
                char *msg = p->client_ptok ? with_value(line, len, tok, tl, p->client_ptok,
                                                        p->client_ptok_len, &n)
                                           : strndup(line, len);
                if (msg)
                        httpd_req_notify(p->q, msg, n);
                free(msg);
                return;
        }
}

/* A call's log message goes to its request, without the _meta that named it (the child's name
 * for the request, which a client of the modern state never sent). */
static void relay_log(struct httpd_session *s, const char *line, size_t len, const char *id,
                      size_t il, size_t cut, size_t cut_len) {
        for (struct pend *p = s->pend; p; p = p->next) {
                if (p->id_len != il || memcmp(p->id, id, il))
                        continue;
                size_t n = 0;
                char *msg = with_value(line, len, line + cut, cut_len, "", 0, &n);
                if (msg)
                        httpd_req_notify(p->q, msg, n);
                free(msg);
                return;
        }
}

static void on_line(void *ud, const char *line, size_t len) {
        struct httpd_session *s = ud;
        const char *id;
        size_t il;
        if (!line) {
                rtn_term_printf(stderr,
                                "rtn serve: session %.8s…: a message of %zu bytes is too long\n",
                                s->sid, len);
                return;
        }
        if (mcp_progress_token(line, len, &id, &il) == 0) {
                relay_progress(s, line, len, id, il);
                return;
        }
        static const char empty[] = "{\"jsonrpc\":\"2.0\",\"method\":\"" MCP_NOTE_STATE_EMPTY "\"}";
        if (s->modern && len == sizeof empty - 1 && !memcmp(line, empty, len)) {
                /* No sandbox left and no call for --idle-timeout: ended, unless a request is
                 * on its way to it (then the child tells again when it is idle). */
                if (!s->pend && !s->ending) {
                        rtn_term_printf(stderr,
                                        "rtn serve: the 2026-07-28 requests' state %.8s… has no "
                                        "sandbox left: ended\n",
                                        s->sid);
                        httpd_session_end(s, NULL);
                }
                return;
        }
        size_t cut, cut_len;
        if (mcp_related_request(line, len, &id, &il, &cut, &cut_len) == 0) {
                relay_log(s, line, len, id, il, cut, cut_len);
                return;
        }
        if (mcp_response_id(line, len, &id, &il) < 0)
                return; /* another notification: no request's stream to send it on */
        for (struct pend **pp = &s->pend; *pp; pp = &(*pp)->next) {
                struct pend *p = *pp;
                if (p->id_len != il || memcmp(p->id, id, il))
                        continue;
                *pp = p->next;
                /* The answer under the client's id again, when the front end renamed it. */
                size_t blen = len;
                char *body = p->client_id ? with_value(line, len, id, il, p->client_id,
                                                       p->client_id_len, &blen)
                                          : strndup(line, len);
                /* A capability the request did not declare is 400 (basic/transports). */
                httpd_req_done(p->q,
                               mcp_response_error_code(line, len) == MCP_MISSING_CAPABILITY ? 400
                                                                                            : 200,
                               body, blen);
                pend_free(p);
                s->last_usec = rtn_now_usec();
                return;
        }
}

static void on_child_out(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        struct httpd_session *s = ud;
        (void)ev;
        char buf[65536];
        for (int i = 0; i < 64; i++) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n <= 0) {
                        mcp_framer_eof(&s->fr, on_line, s);
                        rtn_loop_del_fd(l, fd);
                        close(fd);
                        s->out_fd = -1;
                        break;
                }
                if (mcp_framer_feed(&s->fr, buf, (size_t)n, on_line, s) < 0)
                        break;
        }
        httpd_mhd_run(s->h);
}

/* ---- the child's input ----------------------------------------------------------------- */

static void flush_in(struct httpd_session *s);

static void on_child_in(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        (void)l;
        (void)fd;
        (void)ev;
        flush_in(ud);
}

static void flush_in(struct httpd_session *s) {
        while (s->in_fd >= 0 && s->woff < s->wlen) {
                ssize_t n = write(s->in_fd, s->wbuf + s->woff, s->wlen - s->woff);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        (void)rtn_loop_add_fd(s->h->loop, s->in_fd, EPOLLOUT, on_child_in, s);
                        return;
                }
                if (n < 0) {
                        rtn_term_printf(stderr, "rtn serve: session %.8s…: write: %s\n", s->sid,
                                        strerror(errno));
                        httpd_session_end(s, NULL);
                        return;
                }
                s->woff += (size_t)n;
        }
        if (s->in_fd >= 0)
                (void)rtn_loop_del_fd(s->h->loop, s->in_fd);
        s->wlen = s->woff = 0;
}

/* The request to wait for: under the client's id, or, in the modern state, under one of the
 * front end's own ("rtn-N", a string no client id of ours collides with) with the client's
 * kept to answer under. NULL on ENOMEM. */
static struct pend *pend_new(struct httpd_session *s, const char *id, size_t id_len,
                             const char *ptok, size_t ptok_len, struct httpd_req *q) {
        struct pend *p = calloc(1, sizeof *p);
        if (!p)
                return NULL;
        p->q = q;
        bool ok;
        if (s->modern) {
                int n = asprintf(&p->id, "\"rtn-%llu\"", (unsigned long long)++s->next_id);
                if (n < 0)
                        p->id = NULL;
                p->id_len = n < 0 ? 0 : (size_t)n;
                ok = n >= 0 && (p->client_id = strndup(id, id_len));
                p->client_id_len = id_len;
                if (ok && ptok) { /* the same fresh name: unique in the state too */
                        ok = (p->ptok = strndup(p->id, p->id_len)) &&
                             (p->client_ptok = strndup(ptok, ptok_len));
                        p->ptok_len = p->id_len;
                        p->client_ptok_len = ptok_len;
                }
        } else {
                ok = (p->id = strndup(id, id_len)) &&
                     (!ptok || (p->ptok = strndup(ptok, ptok_len)));
                p->id_len = id_len;
                p->ptok_len = ptok_len;
        }
        if (!ok) {
                pend_free(p);
                return NULL;
        }
        return p;
}

/* msg with the client's id and progress token (spans of msg, either order) replaced by the
 * names p gives them in the child, into out. */
static size_t renamed(const struct pend *p, const char *msg, size_t len, const char *id,
                      size_t id_len, const char *ptok, size_t ptok_len, char *out) {
        struct {
                const char *at;
                size_t n;
                const char *with;
                size_t wl;
        } r[2] = {{id, id_len, p->id, p->id_len}, {ptok, ptok_len, p->ptok, p->ptok_len}};
        size_t nr = ptok && p->client_ptok ? 2 : 1;
        if (nr == 2 && r[1].at < r[0].at) {
                __typeof__(r[0]) t = r[0];
                r[0] = r[1];
                r[1] = t;
        }
        size_t o = 0;
        const char *from = msg;
        for (size_t i = 0; i < nr; i++) {
                size_t head = (size_t)(r[i].at - from);
                if (out) {
                        memcpy(out + o, from, head);
                        memcpy(out + o + head, r[i].with, r[i].wl);
                }
                o += head + r[i].wl;
                from = r[i].at + r[i].n;
        }
        if (out)
                memcpy(out + o, from, (size_t)(msg + len - from));
        return o + (size_t)(msg + len - from);
}

int httpd_session_send(struct httpd_session *s, const char *msg, size_t len, const char *id,
                       size_t id_len, const char *ptok, size_t ptok_len, struct httpd_req *q) {
        if (s->ending || s->in_fd < 0)
                return -EPIPE;
        struct pend *p = NULL;
        if (q) {
                for (struct pend *o = s->pend; !s->modern && o; o = o->next)
                        if (o->id_len == id_len && !memcmp(o->id, id, id_len))
                                return -EEXIST;
                if (!(p = pend_new(s, id, id_len, ptok, ptok_len, q)))
                        return -ENOMEM;
        }
        /* msg with the names the child sees in place of the client's (spans of msg). */
        bool rename = p && p->client_id;
        size_t add = rename ? renamed(p, msg, len, id, id_len, ptok, ptok_len, NULL) : len;
        if (s->woff) { /* compact what is left */
                memmove(s->wbuf, s->wbuf + s->woff, s->wlen - s->woff);
                s->wlen -= s->woff;
                s->woff = 0;
        }
        char *nb = realloc(s->wbuf, s->wlen + add + 1);
        if (!nb) {
                if (p)
                        pend_free(p);
                return -ENOMEM;
        }
        s->wbuf = nb;
        if (rename)
                renamed(p, msg, len, id, id_len, ptok, ptok_len, s->wbuf + s->wlen);
        else
                memcpy(s->wbuf + s->wlen, msg, len);
        s->wbuf[s->wlen + add] = '\n';
        s->wlen += add + 1;
        if (p) {
                p->next = s->pend;
                s->pend = p;
        }
        s->last_usec = rtn_now_usec();
        flush_in(s);
        return 0;
}

void httpd_session_forget(struct httpd_session *s, struct httpd_req *q) {
        if (s->end_waiter == q)
                s->end_waiter = NULL;
        for (struct pend **pp = &s->pend; *pp; pp = &(*pp)->next)
                if ((*pp)->q == q) {
                        struct pend *p = *pp;
                        *pp = p->next;
                        pend_free(p);
                        return;
                }
}

void httpd_session_cancel(struct httpd_session *s, struct httpd_req *q) {
        struct pend *p = NULL;
        for (struct pend **pp = &s->pend; *pp; pp = &(*pp)->next)
                if ((*pp)->q == q) {
                        p = *pp;
                        *pp = p->next;
                        break;
                }
        if (!p)
                return;
        {
                char *msg = NULL;
                int n = asprintf(&msg,
                                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                                 "\"params\":{\"requestId\":%.*s,\"reason\":\"the HTTP client "
                                 "closed the response stream\"}}",
                                 (int)p->id_len, p->id);
                if (n > 0)
                        (void)httpd_session_send(s, msg, (size_t)n, NULL, 0, NULL, 0, NULL);
                free(msg);
        }
        pend_free(p);
}

/* ---- starting a session ---------------------------------------------------------------- */

static void child_exec(struct httpd *h, char **argv, int in, int out, pid_t parent) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL); /* the loop blocked signals for its signalfd */
        signal(SIGPIPE, SIG_DFL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(RTN_EXIT_FAILURE);
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            (h->nofile.rlim_max && setrlimit(RLIMIT_NOFILE, &h->nofile) < 0))
                _exit(RTN_EXIT_FAILURE);
        extern char **environ;
        syscall(__NR_execveat, h->exe_fd, "", argv, environ, AT_EMPTY_PATH);
        rtn_term_printf(stderr, "rtn serve: exec rtn serve: %s\n", strerror(errno));
        _exit(RTN_EXIT_FAILURE);
}

static int spawn(struct httpd_session *s, struct rtn_error *err) {
        struct httpd *h = s->h;
        const struct httpd_opts *o = h->o;
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ char *ws = NULL;
        _cleanup_free_ char **argv = calloc(o->child_argc + 8, sizeof *argv);
        char idle[32];
        if (!argv || !(dir = strdup(h->base)) ||
            (o->workspace_root && asprintf(&ws, "%s/%s", o->workspace_root, s->sid) < 0))
                return rtn_err(err, ENOMEM, "session");
        /* The session's own workspace: made here, mode 0700, never one that exists. */
        if (ws && mkdirat(h->wsroot_fd, s->sid, 0700) < 0)
                return rtn_err(err, errno, "mkdir %s", ws);
        size_t n = 0;
        argv[n++] = "rtn";
        argv[n++] = "serve";
        argv[n++] = "--data-dir";
        argv[n++] = dir;
        if (ws) {
                argv[n++] = "--workspace";
                argv[n++] = ws;
        }
        if (s->modern) { /* its sandboxes idle each on its own clock (sandboxes_reap) */
                snprintf(idle, sizeof idle, "%llu.%06llu",
                         (unsigned long long)(o->idle_usec / RTN_USEC_PER_SEC),
                         (unsigned long long)(o->idle_usec % RTN_USEC_PER_SEC));
                argv[n++] = "--sandbox-idle-timeout";
                argv[n++] = idle;
        }
        for (size_t i = 1; i < o->child_argc; i++)
                argv[n++] = o->child_argv[i];
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) < 0)
                return rtn_err(err, errno, "pipe");
        if (pipe2(out, O_CLOEXEC) < 0) {
                close(in[0]);
                close(in[1]);
                return rtn_err(err, errno, "pipe");
        }
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid == 0)
                child_exec(h, argv, in[0], out[1], parent);
        int e = errno;
        close(in[0]);
        close(out[1]);
        s->in_fd = in[1];
        s->out_fd = out[0];
        if (pid < 0)
                return rtn_err(err, e, "fork");
        s->pid = pid;
        if ((s->pidfd = sys_pidfd_open(pid, 0)) < 0) {
                e = errno;
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return rtn_err(err, e, "pidfd_open");
        }
        int r;
        if (rtn_fd_nonblock(s->in_fd, 1) < 0 || rtn_fd_nonblock(s->out_fd, 1) < 0 ||
            (r = rtn_loop_add_fd(h->loop, s->out_fd, EPOLLIN, on_child_out, s)) < 0 ||
            (r = rtn_loop_add_fd(h->loop, s->pidfd, EPOLLIN, on_child_exit, s)) < 0) {
                (void)sys_pidfd_send_signal(s->pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                (void)waitid((idtype_t)P_PIDFD, (id_t)s->pidfd, &si, WEXITED);
                return rtn_errx(err, EIO, "watch the session's server");
        }
        return 0;
}

int httpd_session_new(struct httpd *h, bool modern, struct httpd_session **ret,
                      struct rtn_error *err) {
        if (modern && h->modern) {
                *ret = h->modern;
                return 0;
        }
        if (h->stopping)
                return rtn_errx(err, ESHUTDOWN, "the server is shutting down");
        if (h->nsessions >= h->o->max_sessions)
                return rtn_errx(err, EBUSY,
                                "too many sessions: %u are open (--max-sessions); end one with "
                                "DELETE, or wait until an idle one is ended after %llu s",
                                h->nsessions,
                                (unsigned long long)(h->o->idle_usec / RTN_USEC_PER_SEC));
        struct httpd_session *s = calloc(1, sizeof *s);
        if (!s)
                return rtn_err(err, ENOMEM, "session");
        s->h = h;
        s->pidfd = s->in_fd = s->out_fd = -1;
        s->modern = modern;
        s->last_usec = rtn_now_usec();
        mcp_framer_init(&s->fr, CHILD_LINE_MAX);
        rtn_random_hex(s->sid, HTTPD_SID_LEN / 2);
        s->next = h->sessions;
        h->sessions = s;
        h->nsessions++;
        int r = spawn(s, err);
        if (r < 0) {
                session_free(s);
                return r;
        }
        if (modern)
                h->modern = s;
        *ret = s;
        return 0;
}

void httpd_sessions_tick(struct httpd *h) {
        uint64_t now = rtn_now_usec();
        for (struct httpd_session *s = h->sessions; s; s = s->next)
                /* The token's state ends itself: its sandboxes idle each on its own clock. */
                if (!s->ending && !s->modern && !s->pend && now - s->last_usec >= h->o->idle_usec) {
                        rtn_term_printf(stderr, "rtn serve: session %.8s… idle for %llu s: ended\n",
                                        s->sid,
                                        (unsigned long long)(h->o->idle_usec / RTN_USEC_PER_SEC));
                        httpd_session_end(s, NULL);
                }
}

void httpd_sessions_stop(struct httpd *h) {
        h->stopping = true;
        for (struct httpd_session *s = h->sessions; s; s = s->next)
                httpd_session_end(s, NULL);
        /* The kill timers bound the wait. */
        while (h->sessions && rtn_loop_run_once(h->loop, 1000) >= 0)
                ;
}
