/* The tasks extension (io.modelcontextprotocol/tasks, its 2026-07-28 text; docs/tools.md,
 * "Tasks"): a tools/call whose request declared the extension in its per-request capabilities
 * and that still runs cfg.task_after_usec after it began is answered with a CreateTaskResult
 * (resultType "task": an id, status working) instead of its result, and goes on running as
 * the same call; the client polls tasks/get until the task is completed (its CallToolResult
 * inlined, exactly what the call would have answered), failed (a JSON-RPC error) or cancelled
 * (tasks/cancel: the backend is told as for notifications/cancelled, which kills the command).
 * A call that ends sooner is answered as usual: the spec leaves the choice to the server.
 *
 * The decisions the extension leaves to us:
 * - Tasks exist only for 2026-07-28 requests: the extension rides on that revision's
 *   per-request capabilities and resultType; a legacy session has neither (tasks/get, tasks/cancel
 * and tasks/update are -32601 there) and its calls are answered as they end.
 * - A task is the server's that made it: over stdio the process, over HTTP the session or the
 *   token's state whose child made it. Its id is 128 random bits; an id this server did not
 *   make, or no longer keeps, is -32602, the same answer either way.
 * - Bounds: at most MCP_TASKS_MAX tasks are kept (running or finished); past it a call is
 *   answered when it ends, as without the extension, and nothing kept is dropped early. A
 *   finished task is kept MCP_TASK_KEEP_USEC after it finished; ttlMs says so (from creation,
 *   so it grows while the task runs). Running tasks are calls in flight (limits.max_calls).
 * - No task ever needs input (rtn asks the client for nothing): tasks/update is acknowledged
 *   and its responses ignored, as the spec says for keys that are not outstanding. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/io.h"
#include "common/log.h"
#include "common/loop.h"
#include "mcp/internal.h"

enum task_status { TASK_WORKING, TASK_COMPLETED, TASK_FAILED, TASK_CANCELLED };
static const char *const status_names[] = {"working", "completed", "failed", "cancelled"};

struct mcp_task {
        struct mcp_task *next;
        struct mcp_server *server;
        char id[2 * MCP_TASK_ID_BYTES + 1];
        char tool[64];
        enum task_status status;
        struct mcp_call *call; /* while working */
        bool cancel_asked;
        char *result; /* completed: the CallToolResult object */
        char *error; /* failed: the JSON-RPC error object */
        char created_at[32], updated_at[32]; /* ISO 8601, UTC */
        uint64_t created_usec, done_usec; /* monotonic */
        struct rtn_loop_source *expiry;
};

static void iso_now(char *buf, size_t n) {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + k, n - k, ".%03ldZ", ts.tv_nsec / 1000000);
}

static void task_free(struct mcp_server *s, struct mcp_task *t) {
        for (struct mcp_task **p = &s->tasks; *p; p = &(*p)->next)
                if (*p == t) {
                        *p = t->next;
                        s->ntasks--;
                        break;
                }
        if (t->call)
                t->call->task = NULL;
        rtn_loop_timer_cancel(s->loop, t->expiry);
        free(t->result);
        free(t->error);
        free(t);
}

void mcp_tasks_free(struct mcp_server *s) {
        while (s->tasks)
                task_free(s, s->tasks);
}

/* The fields of a Task (ttlMs from creation: while it runs, the keep time from now). */
static void write_task(struct rtn_json_buf *b, const struct mcp_task *t) {
        uint64_t now = rtn_now_usec();
        uint64_t end = t->status == TASK_WORKING ? now : t->done_usec;
        rtn_json_kv_str(b, "taskId", t->id);
        rtn_json_kv_str(b, "status", status_names[t->status]);
        if (t->status == TASK_WORKING) {
                char msg[128];
                snprintf(msg, sizeof msg, "%s running for %llu s", t->tool,
                         (unsigned long long)((now - t->created_usec) / RTN_USEC_PER_SEC));
                rtn_json_kv_str(b, "statusMessage", msg);
        } else if (t->status == TASK_CANCELLED)
                rtn_json_kv_str(b, "statusMessage", "cancelled by tasks/cancel");
        rtn_json_kv_str(b, "createdAt", t->created_at);
        rtn_json_kv_str(b, "lastUpdatedAt", t->updated_at);
        rtn_json_kv_int(b, "ttlMs", (int64_t)((end - t->created_usec + MCP_TASK_KEEP_USEC) / 1000));
        rtn_json_kv_int(b, "pollIntervalMs", MCP_TASK_POLL_MS);
}

/* The call has run task_after_usec: it becomes a task, and its request is answered with the
 * CreateTaskResult, unless MCP_TASKS_MAX are kept (then it is answered when it ends). */
static void on_task_timer(struct rtn_loop *l, struct rtn_loop_source *src, void *ud) {
        struct mcp_call *c = ud;
        struct mcp_server *s = c->server;
        c->task_timer = NULL;
        if (c->finished || c->cancelled || s->shutting_down)
                return;
        if (s->ntasks >= MCP_TASKS_MAX) {
                log_debug("mcp: %u tasks kept: call %s is answered when it ends", s->ntasks, c->id);
                return;
        }
        struct mcp_task *t = calloc(1, sizeof *t);
        if (!t)
                return;
        t->server = s;
        rtn_random_hex(t->id, MCP_TASK_ID_BYTES);
        snprintf(t->tool, sizeof t->tool, "%s", c->tool->name);
        t->created_usec = rtn_now_usec();
        iso_now(t->created_at, sizeof t->created_at);
        memcpy(t->updated_at, t->created_at, sizeof t->updated_at);
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        mcp_write_result_open(&b, c->id, strlen(c->id));
        rtn_json_obj_begin(&b);
        write_task(&b, t);
        mcp_result_end_as(s, &b, c->version, "task");
        rtn_json_obj_end(&b);
        if (b.err) {
                rtn_json_buf_free(&b);
                free(t);
                return;
        }
        /* Kept before the answer leaves, so a tasks/get right after it finds the task. */
        t->next = s->tasks;
        s->tasks = t;
        s->ntasks++;
        t->call = c;
        c->task = t;
        rtn_loop_timer_cancel(s->loop, c->heartbeat); /* no progress for a task */
        c->heartbeat = NULL;
        log_debug("mcp: call %s of %s is task %.8s…", c->id, t->tool, t->id);
        mcp_reply(s, NULL, &b);
}

int mcp_task_arm(struct mcp_call *c) {
        return rtn_loop_add_timer(c->server->loop, c->server->cfg.task_after_usec, 0, on_task_timer,
                                  c, &c->task_timer);
}

static void on_expiry(struct rtn_loop *l, struct rtn_loop_source *src, void *ud) {
        struct mcp_task *t = ud;
        t->expiry = NULL;
        task_free(t->server, t);
}

void mcp_task_done(struct mcp_call *c, const char *structured, const char *text, const char *note,
                   bool is_error) {
        struct mcp_task *t = c->task;
        struct mcp_server *s = c->server;
        c->task = NULL;
        t->call = NULL;
        t->done_usec = rtn_now_usec();
        iso_now(t->updated_at, sizeof t->updated_at);
        if (t->cancel_asked)
                t->status = TASK_CANCELLED;
        else {
                /* Room for the task's own fields around the result in tasks/get's answer. */
                struct rtn_json_buf b = RTN_JSON_BUF_INIT(s->cfg.limits.max_message - 4096);
                char why[160];
                int code =
                        mcp_call_result(c, structured, text, note, is_error, &b, why, sizeof why);
                if (!code && b.err) {
                        code = MCP_INTERNAL_ERROR;
                        snprintf(why, sizeof why, "Internal error: the result could not be kept");
                }
                if (code) {
                        struct rtn_json_buf e = RTN_JSON_BUF_INIT(0);
                        rtn_json_obj_begin(&e);
                        rtn_json_kv_int(&e, "code", code);
                        rtn_json_kv_str(&e, "message", why);
                        rtn_json_obj_end(&e);
                        t->error = e.err ? NULL : rtn_json_buf_steal(&e);
                        rtn_json_buf_free(&e);
                        t->status = TASK_FAILED;
                } else {
                        t->result = rtn_json_buf_steal(&b);
                        t->status = t->result ? TASK_COMPLETED : TASK_FAILED;
                }
                rtn_json_buf_free(&b);
        }
        if (rtn_loop_add_timer(s->loop, MCP_TASK_KEEP_USEC, 0, on_expiry, t, &t->expiry) < 0)
                log_warn("mcp: no expiry timer for task %.8s…: kept until the server ends", t->id);
}

/* The task a tasks/get, tasks/cancel or tasks/update request names: 0, or a JSON-RPC error code
 * with why set. A request that did not declare the extension is refused before its id is looked at.
 */
static int find_task(struct mcp_server *s, const struct mcp_msg *m, struct mcp_task **ret,
                     char *why, size_t wl) {
        if (!mcp_era_declares(m->doc, m->params, MCP_EXT_TASKS)) {
                snprintf(why, wl,
                         "Missing required client capability: %s needs the extension "
                         "%s in _meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions",
                         m->method, MCP_EXT_TASKS);
                return MCP_MISSING_CAPABILITY;
        }
        int p = m->params,
            t = rtn_json_kind(m->doc, p) == 'o' ? rtn_json_obj_get(m->doc, p, "taskId") : -1;
        char id[2 * MCP_TASK_ID_BYTES + 2];
        if (rtn_json_kind(m->doc, t) != 's') {
                snprintf(why, wl, "Invalid params: %s takes a taskId string", m->method);
                return MCP_INVALID_PARAMS;
        }
        int n = rtn_json_unescape(m->doc, t, id, sizeof id);
        for (struct mcp_task *k = s->tasks; n > 0 && k; k = k->next)
                if ((size_t)n == strlen(k->id) && !memcmp(k->id, id, (size_t)n)) {
                        *ret = k;
                        return 0;
                }
        snprintf(why, wl,
                 "Invalid params: Failed to retrieve task: no such task (unknown, or finished "
                 "more than %llu s ago)",
                 (unsigned long long)(MCP_TASK_KEEP_USEC / RTN_USEC_PER_SEC));
        return MCP_INVALID_PARAMS;
}

int mcp_h_tasks_get(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                    struct rtn_json_buf *b, char *why, size_t wl) {
        struct mcp_task *t;
        int r = find_task(s, m, &t, why, wl);
        if (r)
                return r;
        rtn_json_obj_begin(b);
        write_task(b, t);
        if (t->status == TASK_COMPLETED)
                rtn_json_kv_raw(b, "result", t->result, strlen(t->result));
        else if (t->status == TASK_FAILED && t->error)
                rtn_json_kv_raw(b, "error", t->error, strlen(t->error));
        mcp_result_end(s, b, m->version);
        return 0;
}

/* Cancelling asks the backend to stop the call, as notifications/cancelled would; the task is
 * cancelled once the call has ended (the command is gone then). A finished task is left as
 * it is, and the answer is the same empty acknowledgement. */
int mcp_h_tasks_cancel(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                       struct rtn_json_buf *b, char *why, size_t wl) {
        struct mcp_task *t;
        int r = find_task(s, m, &t, why, wl);
        if (r)
                return r;
        if (t->call && !t->cancel_asked) {
                t->cancel_asked = true;
                t->call->cancelled = true;
                if (s->ops->cancel)
                        s->ops->cancel(s->ctx, t->call);
        }
        rtn_json_obj_begin(b);
        mcp_result_end(s, b, m->version);
        return 0;
}

int mcp_h_tasks_update(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                       struct rtn_json_buf *b, char *why, size_t wl) {
        struct mcp_task *t;
        int r = find_task(s, m, &t, why, wl);
        if (r)
                return r;
        int ir = rtn_json_obj_get(m->doc, m->params, "inputResponses");
        if (rtn_json_kind(m->doc, ir) != 'o') {
                snprintf(why, wl, "Invalid params: tasks/update takes an inputResponses object");
                return MCP_INVALID_PARAMS;
        }
        rtn_json_obj_begin(b);
        mcp_result_end(s, b, m->version);
        return 0;
}
