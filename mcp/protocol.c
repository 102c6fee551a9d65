/* MCP method dispatch: one line → JSON → one message or a batch → its era (era.c) → a
 * handler → a response. Decisions the spec leaves to us, recorded here and in docs/tools.md:
 * - A legacy request before initialize may only be initialize, ping or server/discover (the
 *   spec allows pings before initialization); anything else is -32600 "server not
 *   initialized". A modern request (2026-07-28 in its _meta) needs no initialize, and may be
 *   server/discover, tools/list or tools/call: initialize, ping and logging/setLevel are gone
 *   from that revision and are -32601 there, like any unknown method.
 * - server/discover is answered in the 2026-07-28 shape whether or not the request claims a
 *   version, listing every version we speak, so the stdio probe of a dual-era client finds a
 *   modern server.
 * - Batches: JSON-RPC 2.0 has them, MCP 2025-03-26 required receiving them and 2025-06-18
 *   removed them. They are served for 2024-11-05 and 2025-03-26 sessions (up to max_batch
 *   entries, answered with one array once every call in it finished) and refused with -32600
 *   before initialize, for 2025-06-18 and later, and for any modern request in one.
 * - Argument validation errors are -32602 up to 2025-06-18; 2025-11-25 (SEP-1303) and
 *   2026-07-28 ask for them as tool results with isError, so the model can read and fix them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "mcp/internal.h"

#define DEFAULT_INSTRUCTIONS                                                                       \
        "rtn gives you one persistent Linux sandbox: shell_run and the file tools share its "      \
        "filesystem, background jobs (shell_job_*) share its loopback network. Nothing you "       \
        "change "                                                                                  \
        "survives unless you env_commit it; env_reset goes back to the last commit. The sandbox "  \
        "has "                                                                                     \
        "no network except loopback; pkg_install installs packages through a gate."

/* A handler writes a result value into b and returns 0, returns ASYNC when the response
 * comes later, or returns a JSON-RPC error code with the message in why. */
#define ASYNC 1
typedef int (*handler_fn)(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                          struct rtn_json_buf *b, char *why, size_t wl);

struct mcp_batch {
        unsigned refs;
        unsigned size; /* messages in it */
        bool any;
        struct rtn_json_buf arr;
};

struct mcp_batch *mcp_batch_ref(struct mcp_batch *batch) {
        batch->refs++;
        return batch;
}

void mcp_batch_unref(struct mcp_server *s, struct mcp_batch *batch) {
        if (--batch->refs > 0)
                return;
        if (batch->any) { /* only notifications: nothing is returned (JSON-RPC 2.0 section 6) */
                rtn_json_arr_end(&batch->arr);
                if (batch->arr.err) {
                        struct rtn_json_buf e = RTN_JSON_BUF_INIT(0);
                        mcp_write_error(&e, NULL, 0, MCP_INTERNAL_ERROR,
                                        "batch response exceeds the size limit");
                        mcp_out_push(s, e.data, e.len, false);
                        rtn_json_buf_free(&e);
                } else
                        mcp_out_push(s, batch->arr.data, batch->arr.len, false);
        }
        rtn_json_buf_free(&batch->arr);
        free(batch);
}

void mcp_reply(struct mcp_server *s, struct mcp_batch *batch, struct rtn_json_buf *text) {
        if (!text->err) {
                if (batch) {
                        rtn_json_raw(&batch->arr, text->data, text->len);
                        batch->any = true;
                } else
                        mcp_out_push(s, text->data, text->len, false);
        } else
                log_error("mcp: dropping a response that could not be built (%s)",
                          strerror(-text->err));
        rtn_json_buf_free(text);
}

static void reply_error(struct mcp_server *s, struct mcp_batch *batch, const char *id,
                        size_t id_len, int code, const char *msg) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        mcp_write_error(&b, id, id_len, code, msg);
        mcp_reply(s, batch, &b);
}

static int params_object(const struct mcp_msg *m, bool required, char *why, size_t wl) {
        if (m->params < 0 && !required)
                return 0;
        if (m->params < 0 || rtn_json_kind(m->doc, m->params) != 'o') {
                snprintf(why, wl, "Invalid params: %s takes a params object", m->method);
                return MCP_INVALID_PARAMS;
        }
        return 0;
}

/* The value of params.<key>, or -ENOENT. */
static int param(const struct mcp_msg *m, const char *key) {
        return m->params < 0 ? -ENOENT : rtn_json_obj_get(m->doc, m->params, key);
}

/* No logging capability from 2026-07-28 on (logging/setLevel is gone): a request asks for the
 * log messages of its own call with _meta's logLevel (mcp_call_log); mcp_log's messages belong
 * to no request, so they are only sent to a legacy session. */
static void write_capabilities(struct rtn_json_buf *b, int version) {
        rtn_json_key(b, "capabilities");
        static const char legacy[] = "{\"logging\":{},\"tools\":{\"listChanged\":false}}";
        static const char modern[] = "{\"tools\":{\"listChanged\":false},\"extensions\":{"
                                     "\"" MCP_EXT_TASKS "\":{}}}";
        if (version >= MCP_V_FIRST_MODERN)
                rtn_json_raw(b, modern, sizeof modern - 1);
        else
                rtn_json_raw(b, legacy, sizeof legacy - 1);
}

static void write_instructions(struct mcp_server *s, struct rtn_json_buf *b) {
        rtn_json_kv_str(b, "instructions",
                        s->cfg.instructions ? s->cfg.instructions : DEFAULT_INSTRUCTIONS);
}

static void write_server_info(struct mcp_server *s, struct rtn_json_buf *b, int version) {
        rtn_json_key(b, "serverInfo");
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "name", s->cfg.server_name);
        if (version >= MCP_V2025_06_18)
                rtn_json_kv_str(b, "title", "rtn sandbox");
        rtn_json_kv_str(b, "version", s->cfg.server_version);
        rtn_json_obj_end(b);
        write_instructions(s, b);
}

static int h_initialize(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                        struct rtn_json_buf *b, char *why, size_t wl) {
        if (s->version >= 0) {
                snprintf(why, wl, "Invalid Request: already initialized");
                return MCP_INVALID_REQUEST;
        }
        int r = params_object(m, true, why, wl);
        if (r)
                return r;
        char want[32];
        int t = param(m, "protocolVersion");
        if (t < 0 || rtn_json_kind(m->doc, t) != 's') {
                snprintf(why, wl, "Invalid params: protocolVersion must be a string");
                return MCP_INVALID_PARAMS;
        }
        /* Negotiation (lifecycle spec): the client's version if we speak it, else our latest,
         * and the client decides whether it can live with that. Only legacy versions have a
         * handshake: asked for a modern one, it gets the latest legacy one. */
        int v = MCP_V_FIRST_MODERN - 1;
        if (rtn_json_unescape(m->doc, t, want, sizeof want) >= 0) {
                int found = mcp_version_find(want);
                if (found >= 0 && found < MCP_V_FIRST_MODERN)
                        v = found;
        }
        int ci = param(m, "clientInfo");
        int cn = ci >= 0 ? rtn_json_obj_get(m->doc, ci, "name") : -1;
        if (cn < 0 || rtn_json_unescape(m->doc, cn, s->client_name, sizeof s->client_name) < 0)
                snprintf(s->client_name, sizeof s->client_name, "unknown");
        s->version = v;
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "protocolVersion", mcp_versions[v]);
        write_capabilities(b, v);
        write_server_info(s, b, v);
        rtn_json_obj_end(b);
        log_info("mcp: client %s, protocol %s", s->client_name, mcp_versions[v]);
        return 0;
}

/* The 2026-07-28 DiscoverResult (server/discover): identity in _meta, no serverInfo field. */
static int h_discover(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                      struct rtn_json_buf *b, char *why, size_t wl) {
        rtn_json_obj_begin(b);
        rtn_json_key(b, "supportedVersions");
        mcp_write_versions(b);
        write_capabilities(b, MCP_V_FIRST_MODERN);
        write_instructions(s, b);
        mcp_write_cache_hints(b, MCP_V_FIRST_MODERN);
        mcp_result_end(s, b, MCP_V_FIRST_MODERN);
        return 0;
}

static int h_ping(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                  struct rtn_json_buf *b, char *why, size_t wl) {
        rtn_json_raw(b, "{}", 2);
        return 0;
}

static int h_set_level(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                       struct rtn_json_buf *b, char *why, size_t wl) {
        int r = params_object(m, true, why, wl);
        if (r)
                return r;
        char name[16];
        int t = param(m, "level");
        int lvl = t >= 0 && rtn_json_unescape(m->doc, t, name, sizeof name) >= 0
                          ? mcp_log_level_parse(name)
                          : -EINVAL;
        if (lvl < 0) {
                snprintf(why, wl,
                         "Invalid params: level must be one of debug, info, notice, warning, "
                         "error, critical, alert, emergency");
                return MCP_INVALID_PARAMS;
        }
        s->log_level = (enum mcp_log_level)lvl;
        rtn_json_raw(b, "{}", 2);
        return 0;
}

/* Cursors are "rtn:<offset>": opaque to clients, checked strictly here. */
static int parse_cursor(const struct mcp_msg *m, size_t count, size_t *ret) {
        int t = param(m, "cursor");
        if (t < 0 || rtn_json_is_null(m->doc, t)) {
                *ret = 0;
                return 0;
        }
        char c[32], *end;
        if (rtn_json_unescape(m->doc, t, c, sizeof c) < 0 || strncmp(c, "rtn:", 4) || c[4] < '1' ||
            c[4] > '9')
                return -EINVAL;
        errno = 0;
        unsigned long long off = strtoull(c + 4, &end, 10);
        if (errno || *end || off >= count)
                return -EINVAL;
        *ret = (size_t)off;
        return 0;
}

static int h_tools_list(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                        struct rtn_json_buf *b, char *why, size_t wl) {
        int r = params_object(m, false, why, wl);
        if (r)
                return r;
        size_t count = mcp_tool_count(s->cfg.tools, s->cfg.tool_flags), off;
        if (parse_cursor(m, count, &off) < 0) {
                snprintf(why, wl, "Invalid params: invalid cursor");
                return MCP_INVALID_PARAMS;
        }
        size_t page = s->cfg.page_size ? s->cfg.page_size : count;
        size_t end = off + page < count ? off + page : count;
        rtn_json_obj_begin(b);
        rtn_json_key(b, "tools");
        rtn_json_arr_begin(b);
        for (size_t i = off; i < end; i++)
                mcp_tool_write(b, mcp_tool_at(s->cfg.tools, s->cfg.tool_flags, i),
                               (enum mcp_version)m->version);
        rtn_json_arr_end(b);
        if (end < count) {
                char c[32];
                snprintf(c, sizeof c, "rtn:%zu", end);
                rtn_json_kv_str(b, "nextCursor", c);
        }
        mcp_write_cache_hints(b, m->version);
        mcp_result_end(s, b, m->version);
        return 0;
}

/* A tool-level failure: a result with isError, so the model reads it (not a protocol error). */
static void write_tool_error(struct mcp_server *s, struct rtn_json_buf *b, const char *text,
                             int version) {
        rtn_json_obj_begin(b);
        rtn_json_key(b, "content");
        rtn_json_arr_begin(b);
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "type", "text");
        rtn_json_kv_str(b, "text", text);
        rtn_json_obj_end(b);
        rtn_json_arr_end(b);
        rtn_json_kv_bool(b, "isError", true);
        mcp_result_end(s, b, version);
}

static int progress_token(const struct mcp_msg *m, char **ret, char *why, size_t wl) {
        int meta = param(m, "_meta");
        if (meta < 0)
                return 0;
        int t = rtn_json_obj_get(m->doc, meta, "progressToken");
        if (t == -EINVAL) {
                snprintf(why, wl, "Invalid params: _meta must be an object");
                return MCP_INVALID_PARAMS;
        }
        if (t < 0)
                return 0;
        char k = rtn_json_kind(m->doc, t);
        const char *raw;
        size_t n;
        rtn_json_span(m->doc, t, &raw, &n);
        if ((k != 's' && k != 'd') || n > MCP_ID_MAX) {
                snprintf(why, wl,
                         "Invalid params: _meta.progressToken must be a string or a number");
                return MCP_INVALID_PARAMS;
        }
        *ret = strndup(raw, n);
        return *ret ? 0 : MCP_INTERNAL_ERROR;
}

/* Checks the call's name and arguments: 0, a JSON-RPC error code (< 0), or 1 for bad
 * arguments to be reported as a tool error; the message is in why. */
static int call_check(struct mcp_server *s, const struct mcp_msg *m, const struct mcp_tool **ret,
                      int *ret_args, char *why, size_t wl) {
        int r = params_object(m, true, why, wl);
        if (r)
                return r;
        char name[64];
        int t = param(m, "name");
        if (t < 0 || rtn_json_kind(m->doc, t) != 's') {
                snprintf(why, wl, "Invalid params: name must be a string");
                return MCP_INVALID_PARAMS;
        }
        const struct mcp_tool *tool = NULL;
        if (rtn_json_unescape(m->doc, t, name, sizeof name) >= 0)
                tool = mcp_tool_find(s->cfg.tools, s->cfg.tool_flags, name);
        if (!tool) {
                const char *off = mcp_tool_off_why(s->cfg.tools, s->cfg.tool_flags, name);
                if (off)
                        snprintf(why, wl, "Invalid params: tool %s is not offered: %s", name, off);
                else
                        snprintf(why, wl, "Invalid params: unknown tool");
                return MCP_INVALID_PARAMS;
        }
        int args = param(m, "arguments");
        char msg[512];
        if (args >= 0 && rtn_json_is_null(m->doc, args))
                args = -1;
        if (mcp_args_validate(tool, m->doc, args, msg, sizeof msg) < 0) {
                bool as_result = m->version >= MCP_V2025_11_25;
                snprintf(why, wl, "%sinvalid arguments for %s: %s",
                         as_result ? "" : "Invalid params: ", tool->name, msg);
                return as_result ? 1 : MCP_INVALID_PARAMS;
        }
        *ret = tool;
        *ret_args = args;
        return 0;
}

static int start_call(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                      const struct mcp_tool *tool, int args, char *why, size_t wl) {
        struct mcp_call *c = calloc(1, sizeof *c);
        if (!c)
                return MCP_INTERNAL_ERROR;
        *c = (struct mcp_call){.server = s,
                               .tool = tool,
                               .version = m->version,
                               .log_level = m->version >= MCP_V_FIRST_MODERN
                                                    ? mcp_era_log_level(m->doc, m->params)
                                                    : -1,
                               .tasks_ok = m->version >= MCP_V_FIRST_MODERN &&
                                           mcp_era_declares(m->doc, m->params, MCP_EXT_TASKS)};
        memcpy(c->id, m->id, m->id_len);
        int r = progress_token(m, &c->progress_token, why, wl);
        if (r == 0 && mcp_args_new(m->doc, args, &c->args) < 0)
                r = MCP_INTERNAL_ERROR;
        if (r) {
                free(c->progress_token);
                free(c);
                if (r == MCP_INTERNAL_ERROR)
                        snprintf(why, wl, "Internal error: out of memory");
                return r;
        }
        c->batch = batch ? mcp_batch_ref(batch) : NULL;
        c->next = s->calls;
        s->calls = c;
        s->ncalls++;
        if (mcp_call_heartbeat_start(c) < 0)
                log_warn("mcp: no progress timer for call %s", c->id);
        c->in_backend = true;
        r = s->ops->call(s->ctx, c, tool->name, c->args);
        c->in_backend = false;
        if (r < 0 && !c->finished)
                mcp_call_finish_error(c, "%s failed: %s", tool->name, strerror(-r));
        else if (c->finished)
                mcp_call_release(c);
        else if (c->tasks_ok && mcp_task_arm(c) < 0)
                log_warn("mcp: no task timer for call %s: it is answered when it ends", c->id);
        return ASYNC;
}

static int h_tools_call(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                        struct rtn_json_buf *b, char *why, size_t wl) {
        const struct mcp_tool *tool = NULL;
        int args = -1;
        int r = call_check(s, m, &tool, &args, why, wl);
        if (r < 0)
                return r;
        if (r > 0) {
                write_tool_error(s, b, why, m->version);
                return 0;
        }
        if (mcp_call_lookup(s, m->id, m->id_len)) {
                snprintf(why, wl, "Invalid Request: request id %.*s is already in use",
                         (int)m->id_len, m->id);
                return MCP_INVALID_REQUEST;
        }
        if (s->ncalls >= s->cfg.limits.max_calls) {
                snprintf(why, wl,
                         "too many tool calls in flight (limit %u); wait for one to finish",
                         s->cfg.limits.max_calls);
                write_tool_error(s, b, why, m->version);
                return 0;
        }
        return start_call(s, m, batch, tool, args, why, wl);
}

/* The call's result, in its JSON-RPC response (envelope) or alone (a task keeps it). */
static void write_reply(struct mcp_call *c, struct rtn_json_buf *b, bool envelope,
                        const char *structured, const char *text, const char *note, bool is_error) {
        if (envelope)
                mcp_write_result_open(b, c->id, strlen(c->id));
        rtn_json_obj_begin(b);
        rtn_json_key(b, "content");
        rtn_json_arr_begin(b);
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "type", "text");
        rtn_json_kv_str(b, "text", text);
        rtn_json_obj_end(b);
        if (note) {
                rtn_json_obj_begin(b);
                rtn_json_kv_str(b, "type", "text");
                rtn_json_kv_str(b, "text", note);
                rtn_json_obj_end(b);
        }
        rtn_json_arr_end(b);
        if (structured) /* structuredContent: 2025-06-18 */
                rtn_json_kv_raw(b, "structuredContent", structured, strlen(structured));
        rtn_json_kv_bool(b, "isError", is_error);
        mcp_result_end(c->server, b, c->version);
        if (envelope)
                rtn_json_obj_end(b);
}

/* Bytes a call's result may take: the message limit less the envelope, shared evenly by the
 * calls of a batch, whose responses go out as one message. */
static size_t result_budget(const struct mcp_server *s, const struct mcp_call *c) {
        size_t max = s->cfg.limits.max_result, msg = s->cfg.limits.max_message;
        size_t share = (msg - msg / 8) / (c->batch ? c->batch->size : 1);
        return share < max ? share : max;
}

/* The result as sent: structured cut to budget, and its text copy, which is the same JSON
 * unless structuredContent is sent too and the result is large: then the text is a copy cut
 * to max_text_copy that says so (docs/tools.md, "Sizes of results"). */
static int fit_result(const struct mcp_server *s, const struct rtn_json_doc *d, size_t budget,
                      bool with_structured, char **ret_structured, char **ret_text) {
        size_t len;
        int r = 0;
        if (d->len > budget && (r = mcp_result_cut(d, budget, NULL, ret_structured, &len)) < 0)
                return r;
        size_t copy = s->cfg.limits.max_text_copy;
        if (!with_structured || d->len <= copy || (*ret_structured && len <= copy))
                return 0;
        char note[160];
        snprintf(note, sizeof note,
                 "this text is cut to %zu bytes; structuredContent holds the whole result", copy);
        return mcp_result_cut(d, copy, note, ret_text, &len);
}

/* The result into b (limited to the message size), as a response or alone: 0, or
 * MCP_INTERNAL_ERROR when the tool's result is no JSON object. */
static int build_reply(struct mcp_call *c, struct rtn_json_buf *b, bool envelope,
                       const char *structured, const char *text, const char *note, bool is_error) {
        struct mcp_server *s = c->server;
        struct rtn_json_doc d = {0};
        bool with_structured = structured && c->version >= MCP_V2025_06_18;
        if (structured) {
                if (rtn_json_parse(structured, strlen(structured), 1u << 22, 128, &d, NULL) < 0 ||
                    rtn_json_kind(&d, 0) != 'o') {
                        log_error("mcp: %s returned a result that is not a JSON object",
                                  c->tool->name);
                        rtn_json_doc_free(&d);
                        return MCP_INTERNAL_ERROR;
                }
        }
        /* Escaping the text copy can make the message larger than the result: cut harder
         * until it fits. */
        size_t budget = result_budget(s, c);
        for (int round = 0; round < 4; round++) {
                _cleanup_free_ char *fit = NULL, *copy = NULL;
                int r = structured ? fit_result(s, &d, budget, with_structured, &fit, &copy) : 0;
                if (r < 0)
                        break;
                const char *st = fit ? fit : structured, *tx = copy ? copy : st;
                rtn_json_buf_reset(b);
                write_reply(c, b, envelope, with_structured ? st : NULL, tx ? tx : text, note,
                            is_error);
                if (!b->err || !structured)
                        break;
                budget = budget / 2;
        }
        rtn_json_doc_free(&d);
        if (b->err == -ENOBUFS) {
                char msg[160];
                snprintf(msg, sizeof msg, "the result of %s exceeds the %zu-byte message limit",
                         c->tool->name, s->cfg.limits.max_message);
                rtn_json_buf_reset(b);
                if (envelope)
                        mcp_write_result_open(b, c->id, strlen(c->id));
                write_tool_error(s, b, msg, c->version);
                if (envelope)
                        rtn_json_obj_end(b);
        }
        return 0;
}

void mcp_call_reply(struct mcp_call *c, const char *structured, const char *text, const char *note,
                    bool is_error) {
        struct mcp_server *s = c->server;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(s->cfg.limits.max_message);
        if (build_reply(c, &b, true, structured, text, note, is_error) < 0) {
                rtn_json_buf_free(&b);
                reply_error(s, c->batch, c->id, strlen(c->id), MCP_INTERNAL_ERROR,
                            "Internal error: the tool produced an invalid result");
                return;
        }
        mcp_reply(s, c->batch, &b);
}

int mcp_call_result(struct mcp_call *c, const char *structured, const char *text, const char *note,
                    bool is_error, struct rtn_json_buf *b, char *why, size_t wl) {
        int r = build_reply(c, b, false, structured, text, note, is_error);
        if (r)
                snprintf(why, wl, "Internal error: the tool produced an invalid result");
        return r;
}

/* Where a method exists: before initialize, in a legacy session, in a modern request. */
enum { ERA_PRE_INIT = 1u << 0, ERA_LEGACY = 1u << 1, ERA_MODERN = 1u << 2 };

static const struct {
        const char *name;
        handler_fn fn;
        unsigned eras;
} methods[] = {
        {"initialize", h_initialize, ERA_PRE_INIT | ERA_LEGACY}, /* the 2nd: -32600 */
        {"ping", h_ping, ERA_PRE_INIT | ERA_LEGACY},
        {"server/discover", h_discover, ERA_PRE_INIT | ERA_LEGACY | ERA_MODERN},
        {"tools/list", h_tools_list, ERA_LEGACY | ERA_MODERN},
        {"tools/call", h_tools_call, ERA_LEGACY | ERA_MODERN},
        {"logging/setLevel", h_set_level, ERA_LEGACY},
        /* The tasks extension: only where a request can declare it (tasks.c). */
        {"tasks/get", mcp_h_tasks_get, ERA_MODERN},
        {"tasks/cancel", mcp_h_tasks_cancel, ERA_MODERN},
        {"tasks/update", mcp_h_tasks_update, ERA_MODERN},
};

bool mcp_method_modern(const char *method) {
        for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
                if (!strcmp(method, methods[i].name))
                        return methods[i].eras & ERA_MODERN;
        return false;
}

/* Runs the handler of m's method in m's era: its code (0, ASYNC, or a JSON-RPC error). */
static int dispatch(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                    struct rtn_json_buf *b, char *why, size_t wl) {
        bool modern = m->version >= MCP_V_FIRST_MODERN;
        unsigned era = modern ? ERA_MODERN : s->version < 0 ? ERA_PRE_INIT : ERA_LEGACY;
        if (modern && batch) {
                snprintf(why, wl, "Invalid Request: protocol %s has no batches",
                         mcp_versions[m->version]);
                return MCP_INVALID_REQUEST;
        }
        for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
                if (strcmp(m->method, methods[i].name))
                        continue;
                if (methods[i].eras & era)
                        return methods[i].fn(s, m, batch, b, why, wl);
                if (era == ERA_PRE_INIT) {
                        snprintf(why, wl,
                                 "Invalid Request: server not initialized (send initialize "
                                 "first, or name protocol %s in _meta)",
                                 mcp_versions[MCP_V_FIRST_MODERN]);
                        return MCP_INVALID_REQUEST;
                }
                snprintf(why, wl, "Method not found: %s is not part of protocol %s", m->method,
                         mcp_versions[m->version]);
                return MCP_METHOD_NOT_FOUND;
        }
        snprintf(why, wl, "Method not found: %s", m->method);
        return MCP_METHOD_NOT_FOUND;
}

static void handle_request(struct mcp_server *s, struct mcp_msg *m, struct mcp_batch *batch) {
        char why[768] = "", requested[64] = "";
        int code = mcp_era_classify(s, m, requested, sizeof requested, why, sizeof why);
        if (code == MCP_UNSUPPORTED_VERSION) {
                struct rtn_json_buf e = RTN_JSON_BUF_INIT(0);
                mcp_write_unsupported_version(&e, m->id, m->id_len, requested);
                mcp_reply(s, batch, &e);
                return;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(s->cfg.limits.max_message);
        mcp_write_result_open(&b, m->id, m->id_len);
        if (code == 0)
                code = dispatch(s, m, batch, &b, why, sizeof why);
        if (code == 0) {
                rtn_json_obj_end(&b);
                if (b.err) {
                        code = MCP_INTERNAL_ERROR;
                        snprintf(why, sizeof why, "Internal error: response too large");
                }
        }
        if (code == 0)
                mcp_reply(s, batch, &b);
        else {
                rtn_json_buf_free(&b);
                if (code != ASYNC)
                        reply_error(s, batch, m->id, m->id_len, code, why);
        }
}

static void handle_notification(struct mcp_server *s, const struct mcp_msg *m) {
        if (!strcmp(m->method, "notifications/initialized")) {
                s->initialized_notified = true;
                return;
        }
        if (strcmp(m->method, "notifications/cancelled"))
                return; /* unknown notifications are ignored, as JSON-RPC asks */
        int t = param(m, "requestId");
        char k = rtn_json_kind(m->doc, t);
        if (t < 0 || (k != 's' && k != 'd'))
                return;
        const char *raw;
        size_t n;
        rtn_json_span(m->doc, t, &raw, &n);
        struct mcp_call *c = mcp_call_lookup(s, raw, n);
        if (!c || c->cancelled || c->finished)
                return; /* unknown or already answered: the spec says ignore */
        c->cancelled = true;
        if (s->ops->cancel)
                s->ops->cancel(s->ctx, c);
}

static void handle_message(struct mcp_server *s, const struct rtn_json_doc *d, int tok,
                           struct mcp_batch *batch) {
        struct mcp_msg m;
        const char *why = NULL;
        int code = mcp_msg_parse(d, tok, &m, &why);
        if (code) {
                char msg[256];
                snprintf(msg, sizeof msg, "Invalid Request: %s", why);
                reply_error(s, batch, m.id, m.id_len, code, msg);
                return;
        }
        switch (m.kind) {
        case MCP_MSG_RESPONSE:
                log_debug("mcp: ignoring a response to a request we never sent");
                break;
        case MCP_MSG_NOTIFICATION:
                handle_notification(s, &m);
                break;
        case MCP_MSG_REQUEST:
                if (batch && !strcmp(m.method, "initialize"))
                        reply_error(s, batch, m.id, m.id_len, MCP_INVALID_REQUEST,
                                    "Invalid Request: initialize must not be part of a batch");
                else
                        handle_request(s, &m, batch);
                break;
        }
}

static void handle_batch(struct mcp_server *s, const struct rtn_json_doc *d) {
        const char *refuse = NULL;
        char msg[160];
        if (s->version < 0 || s->version >= MCP_V2025_06_18) {
                snprintf(msg, sizeof msg, "Invalid Request: batches are not supported %s%s",
                         s->version < 0 ? "before initialize" : "in protocol ",
                         s->version < 0 ? "" : mcp_versions[s->version]);
                refuse = msg;
        } else if (d->toks[0].size == 0)
                refuse = "Invalid Request: empty batch";
        else if ((unsigned)d->toks[0].size > s->cfg.limits.max_batch) {
                snprintf(msg, sizeof msg, "Invalid Request: batch of more than %u messages",
                         s->cfg.limits.max_batch);
                refuse = msg;
        }
        if (refuse) {
                reply_error(s, NULL, NULL, 0, MCP_INVALID_REQUEST, refuse);
                return;
        }
        struct mcp_batch *batch = calloc(1, sizeof *batch);
        if (!batch) {
                reply_error(s, NULL, NULL, 0, MCP_INTERNAL_ERROR, "Internal error: out of memory");
                return;
        }
        batch->refs = 1;
        batch->size = (unsigned)d->toks[0].size;
        batch->arr = (struct rtn_json_buf)RTN_JSON_BUF_INIT(s->cfg.limits.max_message);
        rtn_json_arr_begin(&batch->arr);
        for (int k = 0, j = 1; k < d->toks[0].size; k++, j = rtn_json_next(d, j))
                handle_message(s, d, j, batch);
        mcp_batch_unref(s, batch);
}

void mcp_dispatch_line(struct mcp_server *s, const char *line, size_t len) {
        struct rtn_json_doc d;
        const char *why = NULL;
        int r = rtn_json_parse(line, len, s->cfg.limits.max_tokens, s->cfg.limits.max_depth, &d,
                               &why);
        if (r < 0) {
                char msg[160];
                int code = MCP_PARSE_ERROR;
                if (r == -E2BIG || r == -ELOOP) {
                        code = MCP_INVALID_REQUEST;
                        snprintf(msg, sizeof msg, "Invalid Request: message has more than %u %s",
                                 r == -E2BIG ? s->cfg.limits.max_tokens : s->cfg.limits.max_depth,
                                 r == -E2BIG ? "JSON tokens" : "levels of nesting");
                } else
                        snprintf(msg, sizeof msg, "Parse error: %s", why ? why : strerror(-r));
                reply_error(s, NULL, NULL, 0, code, msg);
                return;
        }
        if (rtn_json_kind(&d, 0) == 'a')
                handle_batch(s, &d);
        else
                handle_message(s, &d, 0, NULL);
        rtn_json_doc_free(&d);
}
