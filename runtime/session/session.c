/* Persistent sandbox sessions: see session.h. Commands are matched to control-socket events
 * by id. A command is done when it has exited and both output pipes reached EOF, or 100 ms
 * after it exited if a background process it left behind still holds a pipe: that pipe is
 * then drained and discarded (bounded) so the process does not die of SIGPIPE. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/io.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/sandbox_dirs.h"
#include "common/syscall.h"
#include "common/initproto.h"
#include "runtime/internal.h"
#include "netns/netns.h"
#include "runtime/session/session.h"
#include "runtime/session/enter.h"
#include "store/store.h"
#include "runtime/sandbox/specopt.h"
#include "runtime/session/upper.h"
#include "runtime/session/wsover.h"
#include "runtime/sandbox/wsstate.h"

#define GRACE_USEC (100ULL * 1000)
#define MAX_LINGER 64
#define DEFAULT_TIMEOUT_USEC (10 * 60 * RTN_USEC_PER_SEC)
#define DEFAULT_MAX_OUTPUT (1u << 20)

struct rt_session {
        struct rtn_loop *loop;
        struct rt_session_config cfg;
        char *dir; /* on the data dir's filesystem: a commit copies the upper there */
        int upper_fs; /* the kept tmpfs upper (runtime/session/upper.h), -1 before the first start
                       */
        char upper[40]; /* "/proc/self/fd/N/upper" */
        char **layers;
        size_t nlayers;
        struct rt_sandbox sb;
        struct rt_idmap idmap; /* of the last sandbox, for cleaning its upper */
        bool started, alive;
        bool crashed; /* rtn-init died, and no sandbox has been started since */
        bool restarted; /* the last rt_session_ensure started a sandbox after such a death */
        const char *lost_why; /* why it last ended; NULL: rtn-init died */
        uint64_t next_id;
        struct rt_cmd *cmds;
        int linger[MAX_LINGER]; /* pipes still held by background processes, -1 free */
        int devnull; /* a command's stdin when it is given none, opened once per sandbox */
        const struct rt_session_listener *listener;
        void *listener_ud;
        struct netns_gate *gate; /* the agent's proxy (--allow-net), or NULL */
        struct rt_enter *enter; /* rtn enter's listener (rt_session_set_enter), or NULL */
        unsigned enter_sb; /* this sandbox's N there (sb-N) */
};

static void session_lost(struct rt_session *s, bool unexpected);

/* Drops the upper: the next sandbox makes a fresh, empty one. */
static void reset_upper(struct rt_session *s) {
        s->upper_fs = rtn_safe_close(s->upper_fs);
}

/* Committed: the next sandbox starts on the new layer with an empty upper/. The rest of the
 * tmpfs is not part of a commit and stays: an overlay workspace's changes (rt_ws_apply writes
 * them) and /tmp (runtime/sandbox/kept.h); upper/ itself, the agent's, stays for the next
 * sandbox and for the walks that read it. What cannot be removed stays: the same content
 * the layer now holds. */
static void drop_committed(struct rt_session *s) {
        char root[32], upper[48];
        if (!rt_ws_root(root, s->upper_fs))
                return;
        snprintf(upper, sizeof upper, "%s/upper", root);
        DIR *d = opendir(upper);
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        (void)rt_remove_tree(&s->idmap, upper, de->d_name, NULL);
        if (d)
                closedir(d);
}

static int ensure_dir(const char *path, struct rtn_error *err) {
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", path);
        return 0;
}

int rt_session_new(struct rtn_loop *loop, const struct rt_session_config *cfg,
                   struct rt_session **ret, struct rtn_error *err) {
        struct rt_session *s = calloc(1, sizeof *s);
        if (!s)
                return rtn_err(err, ENOMEM, "session");
        s->loop = loop;
        s->cfg = *cfg;
        s->sb.pidfd = s->sb.ctl = s->sb.gate_fd = s->sb.net_fd = -1;
        s->next_id = 1;
        if (!s->cfg.default_timeout_usec)
                s->cfg.default_timeout_usec = DEFAULT_TIMEOUT_USEC;
        if (!s->cfg.max_output)
                s->cfg.max_output = DEFAULT_MAX_OUTPUT;
        s->upper_fs = s->devnull = -1;
        for (int i = 0; i < MAX_LINGER; i++)
                s->linger[i] = -1;
        int r = -ENOMEM;
        if (!(s->dir = strdup(cfg->session_dir))) {
                rtn_err(err, ENOMEM, "session");
                goto fail;
        }
        s->cfg.session_dir = s->dir;
        if ((r = ensure_dir(s->dir, err)) < 0)
                goto fail;
        /* The gate's CA is the session's: each sandbox_new gets one of its own. */
        if ((r = rt_spec_opts_gate(cfg->opts, &s->cfg.spec, &s->gate, err)) < 0)
                goto fail;
        *ret = s;
        return 0;
fail:
        netns_gate_free(s->gate);
        free(s->dir);
        free(s);
        return r;
}

const char *rt_session_upper(struct rt_session *s) {
        if (s->upper_fs < 0)
                return NULL;
        snprintf(s->upper, sizeof s->upper, "/proc/self/fd/%d/upper", s->upper_fs);
        return s->upper;
}

const char *rt_session_dir(const struct rt_session *s) {
        return s->dir;
}

int rt_session_upper_fs(const struct rt_session *s) {
        return s->upper_fs;
}

int rt_session_commit(struct rt_session *s, struct store *st, const char *env,
                      const struct store_commit_opts *o, char ret_id[STORE_ID_SIZE],
                      struct rtn_error *err) {
        /* Nothing to take a layer from, and stopping would drop the private temp dir: the
         * sandbox is left as it is (docs/security-invariants.md, "Weaker named modes"). */
        if (s->cfg.spec.isolation == INIT_ISOLATION_LANDLOCK)
                return rtn_errx(err, EOPNOTSUPP,
                                "--isolation landlock has no overlay, so nothing was committed: "
                                "the workspace's files are written to the host as they change, "
                                "and what commands write elsewhere (their private temp dir, "
                                "$HOME) is no layer and ends with the sandbox, which runs on as "
                                "it was");
        rt_session_stop(s);
        if (s->upper_fs < 0) { /* no sandbox ran: nothing changed */
                ret_id[0] = '\0';
                (void)store_tip(st, env, ret_id, NULL);
                return 1;
        }
        log_debug("session: commit its changes to environment %s", env);
        int r = rt_upper_commit(&s->idmap, st, env, s->upper_fs, s->dir, o, ret_id, err);
        if (r >= 0)
                drop_committed(s);
        return r;
}

/* A fork's tmpfs is made with the copy of the source's changes by one helper in a user
 * namespace mapped like the source's sandbox (rt_upper_fork): no sandbox starts until the
 * fork's first command, and nothing has the new tmpfs mounted while it fills. Nothing is
 * shared afterwards: each has its own tmpfs, session dir and workspace record. */
int rt_session_fork(struct rt_session *src, const struct rt_session_config *cfg,
                    struct rt_session **ret, struct rtn_error *err) {
        struct rt_session *s;
        int r = rt_session_new(src->loop, cfg, &s, err);
        if (r < 0)
                return r;
        if ((r = rt_session_set_layers(s, src->layers, src->nlayers)) < 0) {
                rtn_err(err, r, "layer stack");
                goto fail;
        }
        if (src->upper_fs >= 0 && s->cfg.spec.isolation != INIT_ISOLATION_LANDLOCK) {
                if ((r = rt_upper_fork(&src->idmap, &s->cfg.spec, src->upper_fs, &s->upper_fs,
                                       err)) < 0)
                        goto fail;
                /* the mapping the copy was made with, for cleaning and committing it */
                s->idmap = src->idmap;
                s->started = true;
        }
        struct rt_ws_state st;
        if (s->cfg.spec.workspace_mode == RT_WS_OVERLAY && rt_ws_state_read(src->dir, &st) == 0) {
                /* The source's record: what counts as a conflict dates from its start. */
                char ws[4200];
                snprintf(ws, sizeof ws, "%s/" RT_WS_DIR, s->dir);
                r = mkdir(ws, 0700) < 0 && errno != EEXIST ? rtn_err(err, errno, "create %s", ws)
                                                           : rt_ws_state_write(s->dir, &st, err);
                rt_ws_state_free(&st);
                if (r < 0)
                        goto fail;
        }
        *ret = s;
        return 0;
fail:
        rt_session_free(s);
        return r;
}

const struct rt_sandbox *rt_session_sandbox(const struct rt_session *s) {
        return &s->sb;
}

bool rt_session_alive(const struct rt_session *s) {
        return s->alive;
}

unsigned rt_session_running(const struct rt_session *s) {
        unsigned n = 0;
        for (const struct rt_cmd *c = s->cmds; c; c = c->next)
                n += !c->done;
        return n;
}

int rt_session_set_layers(struct rt_session *s, char *const *layers, size_t n) {
        char **v = calloc(n + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(v[i] = strdup(layers[i]))) {
                        for (size_t k = 0; k < i; k++)
                                free(v[k]);
                        free(v);
                        return -ENOMEM;
                }
        for (size_t i = 0; i < s->nlayers; i++)
                free(s->layers[i]);
        free(s->layers);
        s->layers = v;
        s->nlayers = n;
        return 0;
}

/* ---- output ------------------------------------------------------------------------- */

static void outbuf_add(struct rt_outbuf *b, const char *p, size_t n) {
        b->total += n;
        if (!b->data && b->max && !(b->data = malloc(b->max)))
                return;
        if (!b->keep_tail) {
                size_t room = b->max - b->len;
                size_t k = n < room ? n : room;
                memcpy(b->data + b->len, p, k);
                b->len += k;
                return;
        }
        if (n >= b->max) {
                memcpy(b->data, p + n - b->max, b->max);
                b->len = b->max;
                return;
        }
        if (b->len + n > b->max) {
                size_t drop = b->len + n - b->max;
                memmove(b->data, b->data + drop, b->len - drop);
                b->len -= drop;
        }
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

static void cmd_check_done(struct rt_cmd *c);

static void close_stream(struct rt_session *s, struct rt_stream *st) {
        if (st->fd >= 0) {
                rtn_loop_del_fd(s->loop, st->fd);
                st->fd = rtn_safe_close(st->fd);
        }
        st->eof = true;
}

static void drop_linger(struct rt_session *s, int i) {
        rtn_loop_del_fd(s->loop, s->linger[i]);
        s->linger[i] = rtn_safe_close(s->linger[i]);
}

static void on_linger(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        struct rt_session *s = ud;
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
                return;
        for (int i = 0; i < MAX_LINGER; i++)
                if (s->linger[i] == fd)
                        drop_linger(s, i);
}

/* A background process still holds the pipe: keep draining it, up to MAX_LINGER pipes (the
 * session owns them, so freeing the session closes them). */
static void linger_stream(struct rt_session *s, struct rt_stream *st) {
        if (st->fd < 0)
                return;
        rtn_loop_del_fd(s->loop, st->fd);
        for (int i = 0; i < MAX_LINGER; i++) {
                if (s->linger[i] >= 0)
                        continue;
                if (rtn_loop_add_fd(s->loop, st->fd, EPOLLIN, on_linger, s) == 0) {
                        s->linger[i] = st->fd;
                        st->fd = -1;
                }
                break;
        }
        st->fd = rtn_safe_close(st->fd);
        st->eof = true;
}

static void on_stream(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        struct rt_stream *st = ud;
        char buf[65536];
        for (int i = 0; i < 16; i++) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n > 0) {
                        struct rt_cmd *c = st->cmd;
                        if (c->output_fn)
                                c->output_fn(c, st->buf == &c->err, buf, (size_t)n, c->output_ud);
                        outbuf_add(st->buf, buf, (size_t)n);
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                close_stream(st->cmd->s, st);
                cmd_check_done(st->cmd);
                return;
        }
}

static void on_stdin(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        struct rt_cmd *c = ud;
        while (c->in_off < c->in_len) {
                ssize_t n = write(fd, c->in_data + c->in_off, c->in_len - c->in_off);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return;
                        break; /* the command closed its stdin: drop the rest */
                }
                c->in_off += (size_t)n;
        }
        rtn_loop_del_fd(l, fd);
        c->in_fd = rtn_safe_close(c->in_fd);
}

static void finish(struct rt_cmd *c) {
        if (c->done)
                return;
        c->done = true;
        c->end_usec = rtn_now_usec();
        c->net_end_seq = c->s->gate ? netns_gate_seq(c->s->gate) : 0;
        if (c->timer) {
                rtn_loop_timer_cancel(c->s->loop, c->timer);
                c->timer = NULL;
        }
        if (c->grace) {
                rtn_loop_timer_cancel(c->s->loop, c->grace);
                c->grace = NULL;
        }
        linger_stream(c->s, &c->sout);
        linger_stream(c->s, &c->serr);
        if (c->in_fd >= 0) {
                rtn_loop_del_fd(c->s->loop, c->in_fd);
                c->in_fd = rtn_safe_close(c->in_fd);
        }
        if (c->done_fn)
                c->done_fn(c, c->done_ud);
}

static void on_grace(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct rt_cmd *c = ud;
        c->grace = NULL;
        finish(c);
}

static void cmd_check_done(struct rt_cmd *c) {
        if (c->done || !c->exited)
                return;
        if (c->sout.eof && c->serr.eof) {
                finish(c);
                return;
        }
        if (!c->grace && rtn_loop_add_timer(c->s->loop, GRACE_USEC, 0, on_grace, c, &c->grace) < 0)
                finish(c);
}

/* ---- control socket ------------------------------------------------------------------ */

static struct rt_cmd *find_cmd(struct rt_session *s, uint64_t id) {
        for (struct rt_cmd *c = s->cmds; c; c = c->next)
                if (c->id == id)
                        return c;
        return NULL;
}

static void on_ctl(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        struct rt_session *s = ud;
        union {
                struct init_status st;
                struct init_exited ex;
                struct init_spawned sp;
                struct init_blocked bl;
                char raw[sizeof(struct init_blocked) + sizeof(struct init_status)];
        } u;
        int fds[1] = {-1};
        size_t nfds = 1;
        ssize_t n = rt_sandbox_recv(&s->sb, u.raw, sizeof u, fds, &nfds);
        if (n >= (ssize_t)sizeof u.st.hdr && u.st.hdr.type == INIT_MSG_FILES_STARTED &&
            s->listener) {
                s->listener->on_msg(s->listener_ud, u.raw, (size_t)n, nfds ? fds[0] : -1);
                return;
        }
        if (n > 0 && rt_enter_event(s->enter, u.raw, (size_t)n, fds, nfds))
                return; /* an entered command's: relayed to its caller */
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]); /* pty masters are for `rtn exec -t` only */
        if (n == -EAGAIN || n == -EINTR)
                return;
        if (n <= 0) {
                session_lost(s, true);
                return;
        }
        /* Shorter than a header: its id and type would be what the last message left. */
        if ((size_t)n < sizeof u.st.hdr)
                return;
        struct rt_cmd *c = find_cmd(s, u.st.hdr.id);
        if (!c || c->done)
                return;
        if (init_check_msg(u.raw, (size_t)n, INIT_MSG_SPAWNED, sizeof u.sp) == 0) {
                c->spawned = true;
                c->pid = u.sp.pid;
        } else if (init_check_msg(u.raw, (size_t)n, INIT_MSG_SPAWN_FAILED, sizeof u.st) == 0) {
                c->spawn_errno = u.st.error;
                c->spawn_step = u.st.step;
                c->exited = true;
                cmd_check_done(c);
        } else if (init_check_msg(u.raw, (size_t)n, INIT_MSG_EXITED, sizeof u.ex) == 0) {
                c->exited = true;
                c->wait_status = u.ex.wait_status;
                cmd_check_done(c);
        } else if (u.st.hdr.type == INIT_MSG_BLOCKED) {
                (void)rt_blocked_decode(u.raw, (size_t)n, &c->blocked); /* bad: no report */
        }
}

/* rtn-init is gone (it died, or was killed): every command ends; the next starts afresh. */
static void session_lost(struct rt_session *s, bool unexpected) {
        if (unexpected && s->alive)
                s->crashed = true;
        if (unexpected)
                s->lost_why = NULL;
        if (s->sb.ctl >= 0)
                rtn_loop_del_fd(s->loop, s->sb.ctl);
        rt_sandbox_destroy(&s->sb);
        s->alive = false;
        s->devnull = rtn_safe_close(s->devnull);
        rt_enter_drop(s->enter, s->enter_sb); /* entered commands died with it */
        if (s->listener)
                s->listener->on_lost(s->listener_ud);
        /* cmd_check_done may finish c, and its callback free it: keep next first. */
        for (struct rt_cmd *c = s->cmds, *next; c; c = next) {
                next = c->next;
                if (c->done)
                        continue;
                if (!c->exited) {
                        c->lost = true;
                        c->lost_why = s->lost_why;
                        c->exited = true;
                        c->wait_status = SIGKILL; /* as waitpid reports a SIGKILL death */
                }
                cmd_check_done(c);
        }
}

int rt_session_ensure(struct rt_session *s, struct rtn_error *err) {
        s->restarted = false;
        if (s->alive)
                return 0;
        struct rt_spec spec = s->cfg.spec;
        spec.layers = (const char *const *)s->layers;
        spec.nlayers = s->nlayers;
        spec.ws_dir = s->dir;
        /* --isolation landlock runs on the host itself: no layers, no upper. */
        spec.upper_keep = spec.isolation != INIT_ISOLATION_LANDLOCK;
        spec.upper_fs = s->upper_fs;
        if (!spec.upper_keep)
                spec.nlayers = 0;
        struct rt_sandbox sb;
        int r = rt_sandbox_start(&spec, &sb, err);
        if (r < 0)
                return r;
        if (sb.upper_fs >= 0)
                s->upper_fs = TAKE_FD(sb.upper_fs);
        return rt_session_attach(s, &sb, err);
}

int rt_session_attach(struct rt_session *s, const struct rt_sandbox *sb, struct rtn_error *err) {
        s->sb = *sb;
        s->sb.upper_fs = -1; /* the session keeps it (s->upper_fs) */
        s->idmap = s->sb.idmap;
        s->started = true;
        (void)rtn_fd_nonblock(s->sb.ctl, 1);
        int r = rtn_loop_add_fd(s->loop, s->sb.ctl, EPOLLIN, on_ctl, s);
        if (r < 0) {
                rt_sandbox_destroy(&s->sb);
                return rtn_err(err, r, "watch sandbox control socket");
        }
        /* Each sandbox has a listener of its own: the proxy serves the newest. */
        if (s->gate && s->sb.net_fd >= 0 &&
            (r = netns_gate_attach(s->gate, s->loop, TAKE_FD(s->sb.net_fd))) < 0) {
                rtn_loop_del_fd(s->loop, s->sb.ctl);
                rt_sandbox_destroy(&s->sb);
                return rtn_err(err, r, "serve the network proxy");
        }
        s->alive = true;
        /* The restart belongs to this call: a later one that finds the sandbox alive (a
         * file tool restarted it, say) did not start it. */
        s->restarted = s->crashed;
        s->crashed = false;
        return 0;
}

void rt_session_set_listener(struct rt_session *s, const struct rt_session_listener *l, void *ud) {
        s->listener = l;
        s->listener_ud = ud;
}

int rt_session_send(struct rt_session *s, const void *msg, size_t len, struct rtn_error *err) {
        int r = rt_session_ensure(s, err);
        if (r < 0)
                return r;
        ssize_t n = rtn_send_msg(s->sb.ctl, msg, len, NULL, 0);
        if (n < 0) {
                if (n == -EPIPE || n == -ECONNRESET)
                        session_lost(s, true);
                return rtn_err(err, (int)n, "send to rtn-init");
        }
        return 0;
}

void rt_session_set_enter(struct rt_session *s, struct rt_enter *e, unsigned sb) {
        s->enter = e;
        s->enter_sb = sb;
}

int rt_session_enter_spawn(struct rt_session *s, uint64_t id, uint32_t flags, const char *cwd,
                           char *const argv[], const int fds[3], uint16_t rows, uint16_t cols,
                           struct rtn_error *err) {
        struct rt_env env;
        int r;
        if (!s->alive)
                return rtn_errx(err, ESRCH,
                                "no sandbox running in sb-%u: the agent has not run a command in "
                                "it yet, or it was stopped (rtn enter enters a running one only)",
                                s->enter_sb);
        if ((r = rt_spec_opts_env(s->cfg.opts, &env, &s->sb, INIT_POLICY_AGENT,
                                  flags & INIT_SPAWN_PTY, NULL, err)) < 0)
                return r;
        r = rt_sandbox_spawn(&s->sb, id, flags, INIT_POLICY_AGENT, cwd ? cwd : s->sb.workspace,
                             argv, env.vars, fds, rows, cols, err);
        if (r == -EPIPE || r == -ECONNRESET)
                session_lost(s, true);
        return r;
}

void rt_session_enter_signal(struct rt_session *s, uint64_t id, int signo) {
        if (s->alive)
                (void)rt_sandbox_signal(&s->sb, id, signo);
}

struct rt_spec *rt_session_spec(struct rt_session *s) {
        return &s->cfg.spec;
}

void rt_session_stop_for(struct rt_session *s, const char *why) {
        s->lost_why = why ? why : "the sandbox was stopped";
        if (s->alive)
                session_lost(s, false);
}

void rt_session_stop(struct rt_session *s) {
        rt_session_stop_for(s, NULL);
}

const char *rt_session_lost_why(const struct rt_session *s) {
        return s->lost_why;
}

bool rt_session_take_crash(struct rt_session *s) {
        bool c = s->restarted;
        s->restarted = false;
        return c;
}

int rt_session_discard(struct rt_session *s, struct rtn_error *err) {
        rt_session_stop(s);
        reset_upper(s);
        return 0;
}

/* ---- commands ------------------------------------------------------------------------ */

static void on_timeout(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct rt_cmd *c = ud;
        c->timer = NULL;
        c->timed_out = true;
        rt_cmd_kill(c);
}

void rt_cmd_kill(struct rt_cmd *c) {
        if (c->done || c->exited)
                return;
        c->killed = true;
        /* The whole process group: a shell's children die with it. */
        if (c->s->alive && rt_sandbox_signal(&c->s->sb, c->id, SIGKILL) < 0)
                session_lost(c->s, true);
}

static int open_stream(struct rt_cmd *c, struct rt_stream *st, struct rt_outbuf *buf,
                       int *ret_child_end, struct rtn_error *err) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return rtn_err(err, errno, "pipe");
        /* The command's end blocks like any ordinary stdout; rtn's never blocks. Its flags
         * are known, so one F_SETFL (no F_GETFL) per pipe: docs/benchmarks.md, "The warm
         * call". */
        if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                return rtn_err(err, e, "pipe");
        }
        st->cmd = c;
        st->fd = p[0];
        st->buf = buf;
        int r = rtn_loop_add_fd(c->s->loop, p[0], EPOLLIN, on_stream, st);
        if (r < 0) {
                close(p[0]);
                close(p[1]);
                st->fd = -1;
                return rtn_err(err, r, "watch output pipe");
        }
        *ret_child_end = p[1];
        return 0;
}

/* The command's stdin: a pipe rtn fills, or with no data the session's /dev/null, which
 * *ret_child_end then borrows (the caller must not close it). */
static int open_stdin(struct rt_cmd *c, const struct rt_cmd_opts *o, int *ret_child_end,
                      struct rtn_error *err) {
        if (!o->stdin_data || o->stdin_len == 0) {
                struct rt_session *s = c->s;
                if (s->devnull < 0 && (s->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
                        return rtn_err(err, errno, "open /dev/null");
                *ret_child_end = s->devnull;
                return 0;
        }
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return rtn_err(err, errno, "pipe");
        if (!(c->in_data = malloc(o->stdin_len))) {
                close(p[0]);
                close(p[1]);
                return rtn_err(err, ENOMEM, "stdin");
        }
        memcpy(c->in_data, o->stdin_data, o->stdin_len);
        c->in_len = o->stdin_len;
        c->in_fd = p[1];
        (void)fcntl(p[1], F_SETFL, O_NONBLOCK); /* rtn's end, flags known: as open_stream */
        int r = rtn_loop_add_fd(c->s->loop, p[1], EPOLLOUT, on_stdin, c);
        if (r < 0) {
                close(p[0]);
                c->in_fd = rtn_safe_close(c->in_fd);
                return rtn_err(err, r, "watch stdin pipe");
        }
        *ret_child_end = p[0];
        return 0;
}

static struct rt_cmd *cmd_new(struct rt_session *s, const struct rt_cmd_opts *o) {
        struct rt_cmd *c = calloc(1, sizeof *c);
        if (!c || !(c->command = strdup(o->command)) ||
            !(c->cwd = strdup(o->cwd ? o->cwd : s->sb.workspace))) {
                if (c)
                        free(c->command);
                free(c);
                return NULL;
        }
        c->s = s;
        c->id = s->next_id++;
        c->is_job = o->job;
        c->policy = o->policy;
        c->output_fn = o->output_fn;
        c->output_ud = o->output_ud;
        c->in_fd = c->sout.fd = c->serr.fd = -1;
        size_t max = o->max_output ? o->max_output : s->cfg.max_output;
        c->out.max = c->err.max = max;
        c->out.keep_tail = c->err.keep_tail = o->job;
        c->start_usec = rtn_now_usec();
        c->next = s->cmds;
        s->cmds = c;
        return c;
}

static int cmd_spawn(struct rt_cmd *c, const struct rt_cmd_opts *o, struct rtn_error *err) {
        struct rt_session *s = c->s;
        int fds[3] = {-1, -1, -1}, r;
        if ((r = open_stdin(c, o, &fds[0], err)) < 0 ||
            (r = open_stream(c, &c->sout, &c->out, &fds[1], err)) < 0)
                goto out;
        if (o->job) {
                /* One log for jobs: stderr shares stdout's pipe. */
                c->serr.eof = true;
                if ((fds[2] = fcntl(fds[1], F_DUPFD_CLOEXEC, 3)) < 0) {
                        r = rtn_err(err, errno, "dup");
                        goto out;
                }
        } else if ((r = open_stream(c, &c->serr, &c->err, &fds[2], err)) < 0) {
                goto out;
        }
        struct rt_env env;
        if (o->policy == INIT_POLICY_AGENT_ROOT &&
            (r = rt_idmap_user_check(&s->sb.idmap, &s->cfg.spec, 0, 0, err)) < 0)
                goto out;
        if ((r = rt_spec_opts_env(s->cfg.opts, &env, &s->sb, o->policy, false, o->env, err)) < 0)
                goto out;
        char *argv[] = {"/bin/sh", "-c", c->command, NULL};
        r = rt_sandbox_spawn(&s->sb, c->id, 0, o->policy, o->cwd ? o->cwd : s->sb.workspace, argv,
                             env.vars, fds, 0, 0, err);
        if (r < 0)
                goto out;
        uint64_t t = o->timeout_usec ? o->timeout_usec : s->cfg.default_timeout_usec;
        if ((r = rtn_loop_add_timer(s->loop, t, 0, on_timeout, c, &c->timer)) < 0)
                rtn_err(err, r, "timer");
out:
        for (int i = 0; i < 3; i++)
                if (fds[i] != s->devnull)
                        rtn_safe_close(fds[i]);
        return r;
}

int rt_session_run(struct rt_session *s, const struct rt_cmd_opts *o, rt_cmd_done_fn done_fn,
                   void *ud, struct rt_cmd **ret, struct rtn_error *err) {
        for (int attempt = 0;; attempt++) {
                int r = rt_session_ensure(s, err);
                if (r < 0)
                        return r;
                struct rt_cmd *c = cmd_new(s, o);
                if (!c)
                        return rtn_err(err, ENOMEM, "command");
                c->net_seq = s->gate ? netns_gate_seq(s->gate) : 0;
                if ((r = cmd_spawn(c, o, err)) == 0) {
                        c->done_fn = done_fn;
                        c->done_ud = ud;
                        *ret = c;
                        return 0;
                }
                rt_cmd_free(c);
                if (r != -EPIPE && r != -ECONNRESET)
                        return r;
                /* rtn-init died before its hang-up reached the loop: the request went
                 * nowhere and nothing ran. Mark the crash (rt_session_take_crash reports it)
                 * and run the command once in a fresh sandbox on the same upper. */
                session_lost(s, true);
                if (attempt > 0)
                        return r;
                *err = (struct rtn_error){0};
        }
}

void rt_cmd_free(struct rt_cmd *c) {
        if (!c)
                return;
        struct rt_session *s = c->s;
        if (!c->done) {
                rt_cmd_kill(c);
                c->done_fn = NULL;
                finish(c);
        }
        for (struct rt_cmd **p = &s->cmds; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        free(c->out.data);
        free(c->err.data);
        free(c->in_data);
        free(c->command);
        free(c->cwd);
        free(c);
}

int rt_cmd_exit_code(const struct rt_cmd *c) {
        if (!c->exited)
                return -1;
        if (c->spawn_errno)
                return init_spawn_exit_code(c->spawn_step, c->spawn_errno);
        return rt_exit_code(c->wait_status);
}

int rt_cmd_signal(const struct rt_cmd *c) {
        if (!c->exited || c->spawn_errno || !WIFSIGNALED(c->wait_status))
                return 0;
        return WTERMSIG(c->wait_status);
}

void rt_session_free(struct rt_session *s) {
        if (!s)
                return;
        rt_session_stop(s);
        while (s->cmds) {
                struct rt_cmd *c = s->cmds;
                if (!c->done)
                        finish(c); /* callbacks run: calls get their answers */
                if (s->cmds == c) /* the callback did not free it */
                        rt_cmd_free(c);
        }
        for (int i = 0; i < MAX_LINGER; i++)
                if (s->linger[i] >= 0)
                        drop_linger(s, i);
        for (size_t i = 0; i < s->nlayers; i++)
                free(s->layers[i]);
        free(s->layers);
        reset_upper(s);
        rtn_safe_close(s->devnull);
        netns_gate_free(s->gate);
        free(s->dir);
        free(s);
}

struct netns_gate *rt_session_gate(const struct rt_session *s) {
        return s->gate;
}

const struct rt_idmap *rt_session_idmap(const struct rt_session *s) {
        return s->started ? &s->idmap : NULL;
}

/* The sandbox's own skeleton (mountpoints, /workspace, HOME) shows up in the upper as empty
 * directories; they are not changes the agent made. */
static const char *const skeleton[] = {
        RTN_HOST_BASE_DIRS(RTN_DIR_BARE) RTN_SKELETON_DIRS(RTN_DIR_BARE) RTN_SANDBOX_HOME + 1};
#define NSKELETON (sizeof skeleton / sizeof skeleton[0])

bool rt_upper_is_skeleton(const char *path) {
        for (size_t i = 0; i < NSKELETON; i++)
                if (!strcmp(path, skeleton[i]))
                        return true;
        return false;
}

/* Before a commit: drop skeleton dirs left empty, deepest first, unless made opaque. The
 * upper is the agent's: a skeleton dir's parent may have become a symlink (`var -> /x`, made
 * by a provisioning command or where the agent owns /), which a path walk would follow out
 * of the upper to rmdir a host directory. So the parent is opened with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, the dir itself with O_NOFOLLOW, and its xattr read through the fd. */
void rt_upper_prune(const char *upper) {
        _cleanup_close_ int d = open(upper, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0)
                return;
        for (size_t i = NSKELETON; i-- > 0;) { /* deepest first: children follow parents */
                char parent[64], v[8];
                snprintf(parent, sizeof parent, "%s", skeleton[i]);
                char *slash = strrchr(parent, '/');
                const char *name = slash ? slash + 1 : parent;
                if (slash)
                        *slash = '\0';
                struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
                _cleanup_close_ int p = slash ? sys_openat2(d, parent, &how, sizeof how)
                                              : fcntl(d, F_DUPFD_CLOEXEC, 3);
                _cleanup_close_ int fd = p < 0 ? -1
                                               : openat(p, name,
                                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                                                O_CLOEXEC | O_NONBLOCK);
                if (fd < 0 || fgetxattr(fd, "user.overlay.opaque", v, sizeof v) >= 0)
                        continue;
                (void)unlinkat(p, name, AT_REMOVEDIR); /* ENOTEMPTY: real changes */
        }
}
