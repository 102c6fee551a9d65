/* The MCP server's plumbing: reading the input fd into the framer, the output queue, the
 * lifecycle (EOF → backend shutdown → flush → stop) and the in-flight calls that backends
 * finish. Output is queued and written without blocking, so a client that stops reading
 * cannot freeze the loop: past limits.max_queue bytes the server stops reading input (no new
 * work is accepted until the client drains its responses) and drops droppable notifications
 * (progress, log messages), never responses. Input that epoll cannot watch (a regular file or
 * /dev/null as stdin) is read whenever an always-readable eventfd says so. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/io.h"
#include "common/json.h"
#include "common/log.h"
#include "common/loop.h"
#include "mcp/internal.h"

#define READ_CHUNK (64 * 1024)
#define FLUSH_TIMEOUT_USEC (2 * 1000 * 1000)

void mcp_config_init(struct mcp_config *c) {
        *c = (struct mcp_config){
                .limits = {.max_line = 4u << 20,
                           .max_message = 8u << 20,
                           .max_result = 6u << 20,
                           .max_text_copy = 256u << 10,
                           .max_queue = 64u << 20,
                           .max_tokens = 65536,
                           .max_depth = 64,
                           .max_calls = 64,
                           .max_batch = 64},
                .page_size = 50,
                .server_name = "rtn",
                .server_version = "0.1.0",
                .progress_usec = 5 * 1000 * 1000,
                .task_after_usec = 1000 * 1000,
        };
}

static void input_watch(struct mcp_server *s, bool on);

static size_t out_pending(const struct mcp_server *s) {
        return s->out_len - s->out_off;
}

static void maybe_stop(struct mcp_server *s) {
        if (s->shutting_down && (out_pending(s) == 0 || s->out_fd < 0))
                rtn_loop_stop(s->loop, s->exit_code);
}

static void on_output_lost(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct mcp_server *s = ud;
        s->lost_timer = NULL;
        mcp_server_shutdown(s, -EPIPE);
}

/* The client is gone (EPIPE) or the fd broke: nothing more can be said. The shutdown runs
 * from the loop, not from here: we may be deep inside a backend's mcp_call_finish. */
static void output_lost(struct mcp_server *s, int r) {
        log_debug("mcp: output lost: %s", strerror(-r));
        if (s->out_watched)
                rtn_loop_del_fd(s->loop, s->out_fd);
        s->out_watched = false;
        s->out_fd = -1;
        s->out_len = s->out_off = 0;
        if (s->shutting_down)
                maybe_stop(s);
        else if (!s->lost_timer &&
                 rtn_loop_add_timer(s->loop, 0, 0, on_output_lost, s, &s->lost_timer) < 0)
                rtn_loop_stop(s->loop, r);
}

static void on_output(struct rtn_loop *l, int fd, uint32_t revents, void *ud);

static void flush_out(struct mcp_server *s) {
        while (s->out_fd >= 0 && out_pending(s) > 0) {
                ssize_t n = write(s->out_fd, s->out + s->out_off, out_pending(s));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n <= 0) {
                        output_lost(s, n < 0 ? negative_errno() : -EIO);
                        return;
                }
                s->out_off += (size_t)n;
        }
        if (out_pending(s) == 0)
                s->out_len = s->out_off = 0;
        /* Watch for EPOLLOUT only while output waits: epoll reports EPOLLERR on a pipe whose
         * reader left even with no events asked for, which would spin the loop. */
        bool want = out_pending(s) > 0 && s->out_pollable && s->out_fd >= 0;
        if (want && !s->out_watched)
                s->out_watched = rtn_loop_add_fd(s->loop, s->out_fd, EPOLLOUT, on_output, s) >= 0;
        else if (!want && s->out_watched) {
                rtn_loop_del_fd(s->loop, s->out_fd);
                s->out_watched = false;
        }
        /* below half the limit again: accept input */
        if (s->in_paused && out_pending(s) < s->cfg.limits.max_queue / 2) {
                s->in_paused = false;
                input_watch(s, true);
        }
        maybe_stop(s);
}

static void on_output(struct rtn_loop *l, int fd, uint32_t revents, void *ud) {
        flush_out(ud);
}

void mcp_out_push(struct mcp_server *s, const char *msg, size_t len, bool droppable) {
        if (s->out_fd < 0)
                return;
        if (droppable && out_pending(s) + len > s->cfg.limits.max_queue)
                return;
        if (s->out_off > 0 && s->out_off >= s->out_len / 2) { /* compact */
                memmove(s->out, s->out + s->out_off, out_pending(s));
                s->out_len -= s->out_off;
                s->out_off = 0;
        }
        if (s->out_len + len + 1 > s->out_cap) {
                size_t ncap = s->out_cap ? s->out_cap : 64 * 1024;
                while (ncap < s->out_len + len + 1)
                        ncap *= 2;
                char *p = realloc(s->out, ncap);
                if (!p) {
                        log_error("mcp: out of memory queueing %zu bytes of output", len);
                        return;
                }
                s->out = p;
                s->out_cap = ncap;
        }
        memcpy(s->out + s->out_len, msg, len);
        s->out[s->out_len + len] = '\n';
        s->out_len += len + 1;
        if (out_pending(s) > s->cfg.limits.max_queue && !s->in_paused) {
                s->in_paused = true; /* backpressure: read no more work until drained */
                input_watch(s, false);
        }
        flush_out(s);
}

static void on_line(void *ud, const char *line, size_t len) {
        struct mcp_server *s = ud;
        if (s->shutting_down)
                return;
        if (!line) {
                char msg[128];
                snprintf(msg, sizeof msg,
                         "Invalid Request: message of %zu bytes exceeds the limit of %zu", len,
                         s->cfg.limits.max_line);
                struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
                mcp_write_error(&b, NULL, 0, MCP_INVALID_REQUEST, msg);
                mcp_reply(s, NULL, &b);
                return;
        }
        mcp_dispatch_line(s, line, len);
}

static void input_eof(struct mcp_server *s) {
        mcp_framer_eof(&s->framer, on_line, s);
        s->eof = true;
        input_watch(s, false);
        mcp_server_shutdown(s, 0);
}

static void on_input(struct rtn_loop *l, int fd, uint32_t revents, void *ud) {
        struct mcp_server *s = ud;
        char buf[READ_CHUNK];
        ssize_t n = read(s->in_fd, buf, sizeof buf);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                if (n < 0)
                        log_warn("mcp: reading input: %m");
                input_eof(s);
                return;
        }
        if (mcp_framer_feed(&s->framer, buf, (size_t)n, on_line, s) < 0) {
                log_error("mcp: out of memory buffering input");
                input_eof(s);
        }
}

static void input_watch(struct mcp_server *s, bool on) {
        int fd = s->in_kick >= 0 ? s->in_kick : s->in_fd;
        on = on && !s->eof && !s->shutting_down && !s->in_paused;
        if (on == s->in_watched)
                return;
        if (on)
                s->in_watched = rtn_loop_add_fd(s->loop, fd, EPOLLIN, on_input, s) >= 0;
        else {
                rtn_loop_del_fd(s->loop, fd);
                s->in_watched = false;
        }
}

/* Watches the input, or an always-readable eventfd in its place when epoll refuses it. */
static int setup_input(struct mcp_server *s, struct rtn_error *err) {
        int r = rtn_loop_add_fd(s->loop, s->in_fd, EPOLLIN, on_input, s);
        if (r == -EPERM) {
                s->in_kick = eventfd(1, EFD_CLOEXEC);
                if (s->in_kick < 0)
                        return rtn_err(err, errno, "eventfd for unpollable input");
                r = rtn_loop_add_fd(s->loop, s->in_kick, EPOLLIN, on_input, s);
        } else if (r >= 0)
                r = rtn_fd_nonblock(s->in_fd, 1);
        if (r < 0)
                return rtn_err(err, r, "watching input fd %d", s->in_fd);
        s->in_watched = true;
        return 0;
}

static int setup_output(struct mcp_server *s, struct rtn_error *err) {
        /* Probe once whether epoll takes the fd; it is watched only while output waits. */
        int r = rtn_loop_add_fd(s->loop, s->out_fd, EPOLLOUT, on_output, s);
        if (r == -EPERM)
                return 0; /* a regular file: writes complete, no need to poll */
        if (r < 0)
                return rtn_err(err, r, "watching output fd %d", s->out_fd);
        rtn_loop_del_fd(s->loop, s->out_fd);
        s->out_pollable = true;
        r = rtn_fd_nonblock(s->out_fd, 1);
        return r < 0 ? rtn_err(err, r, "making output fd %d non-blocking", s->out_fd) : 0;
}

int mcp_server_new(const struct mcp_config *cfg, struct rtn_loop *loop, int in_fd, int out_fd,
                   const struct mcp_backend_ops *ops, void *ctx, struct mcp_server **ret,
                   struct rtn_error *err) {
        if (!cfg || !loop || in_fd < 0 || out_fd < 0 || !ops || !ops->call)
                return rtn_errx(err, EINVAL, "mcp_server_new: missing argument");
        struct mcp_server *s = calloc(1, sizeof *s);
        if (!s)
                return rtn_err(err, ENOMEM, "allocating the MCP server");
        *s = (struct mcp_server){.cfg = *cfg,
                                 .loop = loop,
                                 .in_fd = in_fd,
                                 .out_fd = out_fd,
                                 .in_kick = -1,
                                 .ops = ops,
                                 .ctx = ctx,
                                 .version = -1,
                                 .log_level = MCP_LOG_INFO};
        mcp_framer_init(&s->framer, cfg->limits.max_line);
        int r = setup_input(s, err);
        if (r >= 0)
                r = setup_output(s, err);
        if (r >= 0 && ops->attach) {
                r = ops->attach(ctx, s);
                if (r < 0)
                        rtn_err(err, r, "starting the MCP backend");
        }
        if (r < 0) {
                s->backend_shut = true; /* never attached: nothing to shut down */
                mcp_server_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

void mcp_server_free(struct mcp_server *s) {
        if (!s)
                return;
        if (!s->backend_shut && s->ops->shutdown) {
                s->backend_shut = true;
                s->ops->shutdown(s->ctx);
        }
        while (s->calls) {
                log_warn("mcp: backend left call %s unfinished at shutdown", s->calls->id);
                s->calls->in_backend = false;
                mcp_call_release(s->calls);
        }
        mcp_tasks_free(s);
        input_watch(s, false);
        if (s->out_watched)
                rtn_loop_del_fd(s->loop, s->out_fd);
        rtn_loop_timer_cancel(s->loop, s->flush_timer);
        rtn_loop_timer_cancel(s->loop, s->lost_timer);
        rtn_safe_close(s->in_kick);
        mcp_framer_free(&s->framer);
        free(s->out);
        free(s);
}

struct rtn_loop *mcp_server_loop(struct mcp_server *s) {
        return s->loop;
}

const char *mcp_server_protocol_version(const struct mcp_server *s) {
        return s->version >= 0 ? mcp_versions[s->version] : NULL;
}

static void on_flush_timeout(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct mcp_server *s = ud;
        s->flush_timer = NULL;
        log_warn("mcp: %zu bytes of output not taken by the client; exiting anyway",
                 out_pending(s));
        rtn_loop_stop(l, s->exit_code);
}

void mcp_server_shutdown(struct mcp_server *s, int code) {
        if (s->shutting_down)
                return;
        s->shutting_down = true;
        s->exit_code = code;
        input_watch(s, false);
        /* The backend finishes what is in flight (typically as errors saying so); those
         * responses are still flushed, a client that sent SIGTERM may be listening. */
        if (!s->backend_shut && s->ops->shutdown) {
                s->backend_shut = true;
                s->ops->shutdown(s->ctx);
        }
        if (out_pending(s) > 0 && s->out_fd >= 0 &&
            rtn_loop_add_timer(s->loop, FLUSH_TIMEOUT_USEC, 0, on_flush_timeout, s,
                               &s->flush_timer) < 0)
                rtn_loop_stop(s->loop, code);
        maybe_stop(s);
}

static const char *const level_names[] = {"debug", "info",     "notice", "warning",
                                          "error", "critical", "alert",  "emergency"};

/* Logs text to stderr and, when level passes min, queues its notifications/message; related
 * (a call's request id, or NULL) goes first in params as _meta MCP_META_RELATED. */
static void log_push(struct mcp_server *s, enum mcp_log_level level, int min, const char *text,
                     const char *related) {
        rtn_log(level >= MCP_LOG_ERROR     ? RTN_LOG_ERROR
                : level >= MCP_LOG_WARNING ? RTN_LOG_WARN
                : level >= MCP_LOG_NOTICE  ? RTN_LOG_INFO
                                           : RTN_LOG_DEBUG,
                "%s", text);
        if (min < 0 || (int)level < min || (unsigned)level >= ARRAY_SIZE(level_names))
                return;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(s->cfg.limits.max_message);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "jsonrpc", "2.0");
        rtn_json_kv_str(&b, "method", "notifications/message");
        rtn_json_key(&b, "params");
        rtn_json_obj_begin(&b);
        if (related) { /* mcp_related_request reads exactly this head */
                rtn_json_key(&b, "_meta");
                rtn_json_obj_begin(&b);
                rtn_json_kv_raw(&b, MCP_META_RELATED, related, strlen(related));
                rtn_json_obj_end(&b);
        }
        rtn_json_kv_str(&b, "level", level_names[level]);
        rtn_json_kv_str(&b, "logger", s->cfg.server_name);
        rtn_json_kv_str(&b, "data", text);
        rtn_json_obj_end(&b);
        rtn_json_obj_end(&b);
        if (!b.err)
                mcp_out_push(s, b.data, b.len, true);
        rtn_json_buf_free(&b);
}

void mcp_notify(struct mcp_server *s, const char *method) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(s->cfg.limits.max_message);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "jsonrpc", "2.0");
        rtn_json_kv_str(&b, "method", method);
        rtn_json_obj_end(&b);
        if (!b.err)
                mcp_out_push(s, b.data, b.len, false);
        rtn_json_buf_free(&b);
}

static void log_vpush(struct mcp_server *s, enum mcp_log_level level, int min, const char *related,
                      const char *fmt, va_list ap) {
        _cleanup_free_ char *text = NULL;
        if (vasprintf(&text, fmt, ap) >= 0)
                log_push(s, level, min, text, related);
}

void mcp_log(struct mcp_server *s, enum mcp_log_level level, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        log_vpush(s, level, s->version < 0 ? -1 : (int)s->log_level, NULL, fmt, ap);
        va_end(ap);
}

void mcp_call_log(struct mcp_call *call, enum mcp_log_level level, const char *fmt, ...) {
        struct mcp_server *s = call->server;
        /* A cancelled call sends nothing more; one answered as a task has no stream left. */
        int min = call->cancelled || call->task         ? -1
                  : call->version >= MCP_V_FIRST_MODERN ? call->log_level
                  : call->version < 0                   ? -1
                                                        : (int)s->log_level;
        va_list ap;
        va_start(ap, fmt);
        log_vpush(s, level, min, s->cfg.related_meta ? call->id : NULL, fmt, ap);
        va_end(ap);
}

int mcp_log_level_parse(const char *name) {
        for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
                if (!strcmp(name, level_names[i]))
                        return (int)i;
        return -EINVAL;
}

/* ---- calls ----------------------------------------------------------------------------- */

void mcp_call_set_owner(struct mcp_call *call, unsigned long owner) {
        call->owner = owner;
}

unsigned mcp_server_owned(const struct mcp_server *s, unsigned long owner) {
        unsigned n = 0;
        for (const struct mcp_call *c = s->calls; c; c = c->next)
                n += c->owner == owner && !c->finished;
        return n;
}

const char *mcp_call_tool(const struct mcp_call *call) {
        return call->tool->name;
}

struct mcp_server *mcp_call_server(const struct mcp_call *call) {
        return call->server;
}

void mcp_call_set_data(struct mcp_call *call, void *data) {
        call->data = data;
}

void *mcp_call_get_data(const struct mcp_call *call) {
        return call->data;
}

bool mcp_call_cancelled(const struct mcp_call *call) {
        return call->cancelled;
}

const char *mcp_call_id(const struct mcp_call *call) {
        return call->id;
}

/* A task's request is answered: no progress belongs to it any more (the extension sends
 * none for tasks). */
bool mcp_call_wants_progress(const struct mcp_call *call) {
        return call->progress_token && !call->cancelled && !call->finished && !call->task;
}

/* The call of a request still waiting for its answer: a task's request was answered, its id
 * free again, and notifications/cancelled does not reach it (tasks/cancel does). */
struct mcp_call *mcp_call_lookup(struct mcp_server *s, const char *id, size_t id_len) {
        for (struct mcp_call *c = s->calls; c; c = c->next)
                if (!c->task && strlen(c->id) == id_len && !memcmp(c->id, id, id_len))
                        return c;
        return NULL;
}

void mcp_call_release(struct mcp_call *c) {
        if (c->in_backend)
                return; /* mcp_dispatch releases it when ops->call returns */
        struct mcp_server *s = c->server;
        for (struct mcp_call **p = &s->calls; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        s->ncalls--;
                        break;
                }
        if (c->batch)
                mcp_batch_unref(s, c->batch);
        rtn_loop_timer_cancel(s->loop, c->heartbeat);
        rtn_loop_timer_cancel(s->loop, c->task_timer);
        if (c->task) /* finished without a result (the server ends): the task forgets it */
                mcp_task_done(c, NULL, "the server ended before the call finished", NULL, true);
        mcp_args_free(c->args);
        free(c->progress_token);
        free(c);
}

void mcp_call_finish_note(struct mcp_call *call, const char *structured_json, const char *note,
                          bool is_error) {
        if (call->finished) {
                log_error("mcp: call %s finished twice (backend bug)", call->id);
                return;
        }
        call->finished = true;
        if (call->task)
                mcp_task_done(call, structured_json, structured_json, note, is_error);
        else if (!call->cancelled)
                mcp_call_reply(call, structured_json, structured_json, note, is_error);
        mcp_call_release(call);
}

void mcp_call_finish(struct mcp_call *call, const char *structured_json, bool is_error) {
        mcp_call_finish_note(call, structured_json, NULL, is_error);
}

void mcp_call_finish_json(struct mcp_call *call, struct rtn_json_buf *b, const char *note,
                          bool is_error) {
        if (b->err)
                mcp_call_finish_error(call, "result too large (%s)", strerror(-b->err));
        else
                mcp_call_finish_note(call, b->data, note, is_error);
        rtn_json_buf_free(b);
}

void mcp_call_finish_error(struct mcp_call *call, const char *fmt, ...) {
        if (call->finished) {
                log_error("mcp: call %s finished twice (backend bug)", call->id);
                return;
        }
        call->finished = true;
        if (!call->cancelled || call->task) {
                _cleanup_free_ char *text = NULL;
                va_list ap;
                va_start(ap, fmt);
                int n = vasprintf(&text, fmt, ap);
                va_end(ap);
                if (call->task)
                        mcp_task_done(call, NULL, n < 0 ? "out of memory" : text, NULL, true);
                else
                        mcp_call_reply(call, NULL, n < 0 ? "out of memory" : text, NULL, true);
        }
        mcp_call_release(call);
}

void mcp_call_progress(struct mcp_call *call, double progress, double total, const char *msg) {
        if (!mcp_call_wants_progress(call))
                return;
        if (call->has_progress && !(progress > call->last_progress))
                return; /* the spec requires progress to increase */
        call->has_progress = true;
        call->last_progress = progress;
        call->progress_at_usec = rtn_now_usec();
        struct mcp_server *s = call->server;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(s->cfg.limits.max_message);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "jsonrpc", "2.0");
        rtn_json_kv_str(&b, "method", "notifications/progress");
        rtn_json_key(&b, "params");
        rtn_json_obj_begin(&b);
        rtn_json_kv_raw(&b, "progressToken", call->progress_token, strlen(call->progress_token));
        rtn_json_key(&b, "progress");
        rtn_json_double(&b, progress);
        if (total > 0) {
                rtn_json_key(&b, "total");
                rtn_json_double(&b, total);
        }
        if (msg && call->version >= MCP_V2025_03_26) /* message arrived in 2025-03-26 */
                rtn_json_kv_str(&b, "message", msg);
        rtn_json_obj_end(&b);
        rtn_json_obj_end(&b);
        if (!b.err)
                mcp_out_push(s, b.data, b.len, true);
        rtn_json_buf_free(&b);
}

/* The elapsed time, in seconds as the backends count, unless a backend's own progress already
 * went past it (progress must grow). The timer ticks every progress_usec; a tick within
 * progress_usec of the last notification, the backend's or ours, sends nothing. */
static void on_heartbeat(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct mcp_call *c = ud;
        /* A call that may still become a task sends no progress before it has: its task timer
         * is armed when the backend's call returns, which rtn serve's start of a session's
         * sandbox makes seconds after the heartbeat's on a loaded machine, so this tick may
         * come first. A task never has progress; a call that does not become one ticks on. */
        if (c->task_timer)
                return;
        uint64_t now = rtn_now_usec(), every = c->server->cfg.progress_usec;
        if (c->has_progress && now - c->progress_at_usec + every / 10 < every)
                return;
        double secs = (double)(now - c->start_usec) / (double)RTN_USEC_PER_SEC;
        if (c->has_progress && secs <= c->last_progress)
                secs = c->last_progress + 1;
        char msg[96];
        snprintf(msg, sizeof msg, "%s still running after %.0f s", c->tool->name,
                 (double)(now - c->start_usec) / (double)RTN_USEC_PER_SEC);
        mcp_call_progress(c, secs, 0, msg);
}

int mcp_call_heartbeat_start(struct mcp_call *c) {
        c->start_usec = rtn_now_usec();
        uint64_t every = c->server->cfg.progress_usec;
        if (!c->progress_token || !every)
                return 0;
        return rtn_loop_add_timer(c->server->loop, every, every, on_heartbeat, c, &c->heartbeat);
}

/* ---- rtn serve ------------------------------------------------------------------------- */

static void on_term(struct rtn_loop *l, const struct signalfd_siginfo *si, void *ud) {
        log_info("mcp: signal %u, shutting down", si->ssi_signo);
        mcp_server_shutdown(ud, 0);
}

int mcp_serve_main(const struct mcp_config *cfg, const struct mcp_backend_ops *ops, void *ctx,
                   struct rtn_error *err) {
        struct rtn_loop *loop = NULL;
        struct mcp_server *s = NULL;
        int r = rtn_loop_new(&loop);
        if (r < 0)
                return rtn_err(err, r, "creating the event loop");
        r = mcp_server_new(cfg, loop, STDIN_FILENO, STDOUT_FILENO, ops, ctx, &s, err);
        if (r >= 0) {
                if ((r = rtn_loop_add_signal(loop, SIGTERM, on_term, s)) < 0 ||
                    (r = rtn_loop_add_signal(loop, SIGINT, on_term, s)) < 0 ||
                    (r = rtn_loop_add_signal(loop, SIGPIPE, NULL, NULL)) < 0)
                        rtn_err(err, r, "setting up signal handling");
        }
        if (r >= 0) {
                r = rtn_loop_run(loop);
                if (r < 0 && r != -EPIPE)
                        rtn_err(err, r, "MCP server loop");
                else
                        r = 0; /* a client that went away is a normal end */
        }
        mcp_server_free(s);
        rtn_loop_free(loop);
        return r;
}
