/* The fake backend (see fake_backend.h). Pending calls keep a one-shot loop timer; cancel and
 * shutdown stop the timer and finish the call, as a real backend must. */
#include "tests/unit/mcp/fake_backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "common/loop.h"

struct fake_pending {
        struct fake_backend *fb;
        struct mcp_call *call;
        struct rtn_loop_source *timer;
        struct fake_pending *next;
        int ms;
        bool bad; /* "sleepbad MS": finishes with invalid JSON */
};

static void run_result(struct mcp_call *call, const char *out, int ms) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_int(&b, "exit_code", 0);
        rtn_json_key(&b, "signal");
        rtn_json_null(&b);
        rtn_json_kv_str(&b, "stdout", out);
        rtn_json_kv_str(&b, "stderr", "");
        rtn_json_kv_bool(&b, "stdout_truncated", false);
        rtn_json_kv_bool(&b, "stderr_truncated", false);
        rtn_json_kv_bool(&b, "timed_out", false);
        rtn_json_kv_int(&b, "duration_ms", ms);
        rtn_json_obj_end(&b);
        mcp_call_finish(call, b.data, false);
        rtn_json_buf_free(&b);
}

static void unlink_pending(struct fake_pending *p) {
        for (struct fake_pending **pp = &p->fb->pending; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        break;
                }
}

static void on_timer(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct fake_pending *p = ud;
        unlink_pending(p);
        if (p->bad)
                mcp_call_finish(p->call, "{not json", false);
        else
                run_result(p->call, "slept", p->ms);
        free(p);
}

static int fake_attach(void *ctx, struct mcp_server *s) {
        struct fake_backend *fb = ctx;
        fb->server = s;
        fb->attached++;
        return 0;
}

static int start_sleep(struct fake_backend *fb, struct mcp_call *call, int ms) {
        struct fake_pending *p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        *p = (struct fake_pending){.fb = fb, .call = call, .ms = ms};
        int r = rtn_loop_add_timer(mcp_server_loop(fb->server), (uint64_t)ms * 1000, 0, on_timer, p,
                                   &p->timer);
        if (r < 0) {
                free(p);
                return r;
        }
        p->next = fb->pending;
        fb->pending = p;
        mcp_call_set_data(call, p);
        return 0;
}

static int shell_run(struct fake_backend *fb, struct mcp_call *call, const char *cmd) {
        int ms;
        if (sscanf(cmd, "sleep %d", &ms) == 1)
                return start_sleep(fb, call, ms);
        if (sscanf(cmd, "slowstart %d", &ms) == 1) {
                usleep((useconds_t)ms * 1000);
                return start_sleep(fb, call, ms);
        }
        if (sscanf(cmd, "sleepbad %d", &ms) == 1) {
                int r = start_sleep(fb, call, ms);
                if (r == 0)
                        fb->pending->bad = true;
                return r;
        }
        if (!strcmp(cmd, "fail")) {
                mcp_call_finish_error(call, "boom: %s", "the command failed");
                return 0;
        }
        if (!strcmp(cmd, "errno"))
                return -EIO;
        if (!strcmp(cmd, "badjson")) {
                mcp_call_finish(call, "{not json", false);
                return 0;
        }
        if (!strcmp(cmd, "progress")) {
                mcp_call_progress(call, 1, 3, "one");
                mcp_call_progress(call, 1, 3, "one again: dropped, not increasing");
                mcp_call_progress(call, 2, 3, NULL);
                mcp_call_progress(call, 3, 0, "done");
        }
        if (!strcmp(cmd, "log")) {
                mcp_call_log(call, MCP_LOG_DEBUG, "low");
                mcp_call_log(call, MCP_LOG_WARNING, "high %d", 2);
        }
        if (!strcmp(cmd, "big")) {
                _cleanup_free_ char *huge = malloc(1 << 20);
                if (!huge)
                        return -ENOMEM;
                memset(huge, 'x', (1 << 20) - 1);
                huge[(1 << 20) - 1] = '\0';
                run_result(call, huge, 0);
                return 0;
        }
        run_result(call, cmd, 0);
        return 0;
}

static int fake_call(void *ctx, struct mcp_call *call, const char *tool,
                     const struct mcp_args *args) {
        struct fake_backend *fb = ctx;
        fb->calls++;
        snprintf(fb->last_tool, sizeof fb->last_tool, "%s", tool);
        if (strcmp(tool, "shell_run")) {
                mcp_call_finish(call, "{\"ok\":true}", false);
                return 0;
        }
        _cleanup_free_ char *cmd = NULL;
        int r = mcp_args_str(args, "command", &cmd);
        if (r < 0)
                return r;
        return shell_run(fb, call, cmd);
}

static void stop_pending(struct fake_pending *p, const char *why) {
        rtn_loop_timer_cancel(mcp_server_loop(p->fb->server), p->timer);
        unlink_pending(p);
        mcp_call_finish_error(p->call, "%s", why);
        free(p);
}

static void fake_cancel(void *ctx, struct mcp_call *call) {
        struct fake_backend *fb = ctx;
        fb->cancels++;
        snprintf(fb->last_cancelled, sizeof fb->last_cancelled, "%s", mcp_call_id(call));
        struct fake_pending *p = mcp_call_get_data(call);
        if (p)
                stop_pending(p, "cancelled");
}

static void fake_shutdown(void *ctx) {
        struct fake_backend *fb = ctx;
        fb->shutdowns++;
        while (fb->pending)
                stop_pending(fb->pending, "server shutting down");
}

const struct mcp_backend_ops fake_backend_ops = {
        .attach = fake_attach,
        .call = fake_call,
        .cancel = fake_cancel,
        .shutdown = fake_shutdown,
};
