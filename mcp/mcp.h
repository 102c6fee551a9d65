/* The MCP server behind `rtn serve`: JSON-RPC 2.0 over a pair of fds (one message per line),
 * both protocol eras (a legacy session opened by initialize, and stateless 2026-07-28
 * requests), the utilities (ping, cancellation, progress, logging, tools/list pagination)
 * and the tools of a table the backend gives (struct mcp_tool_table) with argument validation.
 * It knows nothing about sandboxes: a backend does the work behind struct mcp_backend_ops.
 *
 * Calls are asynchronous. The server validates a tools/call against the tool's input schema,
 * then hands it to ops->call, which starts the work and returns; the backend answers later,
 * from a callback on the shared event loop (mcp_server_loop), with exactly one
 * mcp_call_finish*() per call. Meanwhile the server keeps answering ping, other calls and
 * notifications/cancelled, which it forwards to ops->cancel. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct rtn_loop;
struct mcp_server;
struct mcp_call; /* one in-flight tools/call */
struct mcp_args; /* its validated arguments */

/* RFC 5424 severities, as MCP's logging/setLevel names them. */
enum mcp_log_level {
        MCP_LOG_DEBUG,
        MCP_LOG_INFO,
        MCP_LOG_NOTICE,
        MCP_LOG_WARNING,
        MCP_LOG_ERROR,
        MCP_LOG_CRITICAL,
        MCP_LOG_ALERT,
        MCP_LOG_EMERGENCY,
};

/* Tool groups listed only when switched on (mcp_config.tool_flags). */
enum {
        MCP_TOOLS_HTTP = 1u << 0, /* http_get, http_post: `rtn serve --http-tools` */
        MCP_TOOLS_WS_OVERLAY = 1u << 1, /* workspace_apply: `--workspace-mode overlay` */
        /* A session of `rtn serve --http`: no bind_host_dir, every session would share the
         * host directory (the front end passes --http-session to each child). */
        MCP_TOOLS_HTTP_SESSION = 1u << 2,
};

struct mcp_limits {
        size_t max_line; /* bytes of one incoming message; longer ones are refused */
        size_t max_message; /* bytes of one outgoing message */
        size_t max_result; /* bytes of a tool result (structuredContent); larger ones are cut */
        size_t max_text_copy; /* bytes of a result's text copy beside its structuredContent */
        size_t max_queue; /* output bytes buffered before input is paused */
        unsigned max_tokens; /* JSON tokens in one message */
        unsigned max_depth; /* JSON nesting of one message */
        unsigned max_calls; /* tools/call in flight at once */
        unsigned max_batch; /* messages in one batch (protocol 2025-03-26 and older) */
};

/* ---- tools: what tools/list shows and tools/call validates ------------------------------ */

enum mcp_arg_type { MCP_ARG_STRING, MCP_ARG_INT, MCP_ARG_BOOL, MCP_ARG_STRV, MCP_ARG_MAP };

struct mcp_arg_spec {
        const char *name;
        enum mcp_arg_type type;
        bool required;
        int64_t min, max; /* INT: value range; STRING: bytes; STRV/MAP: items */
        const char *const *enumv; /* STRING: allowed values (NULL-terminated; min/max unused) */
        const char *description;
};

enum {
        MCP_HINT_READ_ONLY = 1u << 0,
        MCP_HINT_DESTRUCTIVE = 1u << 1,
        MCP_HINT_IDEMPOTENT = 1u << 2,
        MCP_HINT_OPEN_WORLD = 1u << 3,
};

/* A tool's handler: finishes the call (now or later) and returns 0, or < 0 to have the
 * server answer with a tool error. target is what the backend's ops->call chose. */
typedef int (*mcp_tool_fn)(void *target, struct mcp_call *call, const char *tool,
                           const struct mcp_args *args);

struct mcp_tool {
        const char *name, *title, *description;
        const struct mcp_arg_spec *args;
        size_t nargs;
        const char *output_schema; /* JSON object */
        unsigned hints; /* MCP_HINT_* */
        unsigned requires; /* MCP_TOOLS_* that must be on for it to exist */
        unsigned excludes; /* MCP_TOOLS_* that take it away */
        /* The backend's: the handler its ops->call runs for the tool, and its own flags for
         * it. The core never reads them. */
        mcp_tool_fn call;
        unsigned backend;
};

/* A backend's tools, schema and handler in one row each (rtn serve's: serve/tools.c). */
struct mcp_tool_table {
        const struct mcp_tool *rows;
        size_t n;
};

struct mcp_config {
        struct mcp_limits limits;
        const struct mcp_tool_table *tools; /* NULL: none */
        unsigned tool_flags; /* MCP_TOOLS_* */
        unsigned page_size; /* tools per tools/list page */
        const char *server_name; /* serverInfo.name */
        const char *server_version;
        const char *instructions; /* initialize's instructions; NULL for the default */
        /* A call whose request asked for progress and that has sent none for this long gets a
         * notifications/progress saying how long it has run, and again every time as long
         * again passes: a client that resets its timeout on progress then never gives up on a
         * call that is still running. 0: never. */
        uint64_t progress_usec;
        /* A call whose 2026-07-28 request declared the tasks extension and that still runs
         * this long after it began is answered with a task the client polls (tasks/get) instead
         * of its result (docs/tools.md, "Tasks"). */
        uint64_t task_after_usec;
        /* A call's notifications/message carries its request's id as params._meta
         * MCP_META_RELATED, first in params, for a front end that routes it to the request's
         * stream and strips it (a session of `rtn serve --http`: mcp_related_request). */
        bool related_meta;
};

/* Defaults: 4 MiB lines, 8 MiB messages, 6 MiB results with a 256 KiB text copy, 64 MiB
 * queue, 65536 tokens, depth 64, 64 calls, batches of 64, 50 tools a page, no optional
 * tools, progress every 5 s, a call a task after 1 s. */
void mcp_config_init(struct mcp_config *c);

struct mcp_backend_ops {
        /* Optional. Called once from mcp_server_new, before any input is read: the place to
         * register the backend's fds and timers on mcp_server_loop(s). < 0 fails the server. */
        int (*attach)(void *ctx, struct mcp_server *s);
        /* Starts a tools/call. tool is a name from the table and args passed its schema.
         * The backend calls mcp_call_finish*() exactly once, now or later. Returning < 0
         * without having finished makes the server finish the call as a tool error naming
         * the errno. */
        int (*call)(void *ctx, struct mcp_call *call, const char *tool,
                    const struct mcp_args *args);
        /* The client cancelled the call (notifications/cancelled): stop the work. The backend
         * still finishes the call once; the server then drops the response, as the spec asks
         * (a cancelled request gets no response). */
        void (*cancel)(void *ctx, struct mcp_call *call);
        /* stdin reached EOF or the server was told to stop: end everything and finish every
         * call before returning; the server exits after flushing its output. */
        void (*shutdown)(void *ctx);
};

/* ---- server ---------------------------------------------------------------------------- */

/* A server reading in_fd and writing out_fd: two distinct fds (pipes, sockets, ttys, or
 * regular files), set non-blocking, never closed by the server. loop is the caller's. */
int mcp_server_new(const struct mcp_config *cfg, struct rtn_loop *loop, int in_fd, int out_fd,
                   const struct mcp_backend_ops *ops, void *ctx, struct mcp_server **ret,
                   struct rtn_error *err);
/* Shuts the backend down if that has not happened, releases the calls left. */
void mcp_server_free(struct mcp_server *s);
struct rtn_loop *mcp_server_loop(struct mcp_server *s);
/* Asks the backend to shut down, flushes output (for at most 2 s) and stops the loop with
 * code. Called on stdin EOF with 0 and by mcp_serve_main on SIGTERM/SIGINT. */
void mcp_server_shutdown(struct mcp_server *s, int code);
/* The protocol version agreed in initialize, NULL before. Modern (2026-07-28) requests make
 * no session and leave it as it is. */
const char *mcp_server_protocol_version(const struct mcp_server *s);
/* A notification of method with no params, queued for the client (never dropped): what a
 * backend tells a front end it runs under (MCP_NOTE_STATE_EMPTY). */
void mcp_notify(struct mcp_server *s, const char *method);
/* The method by which the token's state of `rtn serve --http` (a child run with
 * --sandbox-idle-timeout) says it has no sandbox left and no call for that long: the front end
 * ends it unless a request is on its way (docs/architecture.md, "MCP over HTTP"). */
#define MCP_NOTE_STATE_EMPTY "rtn/stateEmpty"

/* notifications/message at level that belongs to no request: sent to a legacy session when
 * level >= the client's logging/setLevel (default info), never to modern requests (their log
 * messages must belong to the request that asked: mcp_call_log); dropped while output is
 * backed up. Also logged to stderr. */
void mcp_log(struct mcp_server *s, enum mcp_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* `rtn serve`: serves stdin/stdout on a new event loop until stdin EOF or SIGTERM/SIGINT
 * (SIGPIPE is blocked so a vanished client shows up as EPIPE). Returns 0 on a clean end,
 * -errno with err filled otherwise. */
int mcp_serve_main(const struct mcp_config *cfg, const struct mcp_backend_ops *ops, void *ctx,
                   struct rtn_error *err);

/* ---- calls ----------------------------------------------------------------------------- */

const char *mcp_call_tool(const struct mcp_call *call);
struct mcp_server *mcp_call_server(const struct mcp_call *call);
/* A number the backend tags the call with (rtn serve: the sandbox it acts on), for
 * mcp_server_owned; 0 until set. */
void mcp_call_set_owner(struct mcp_call *call, unsigned long owner);
/* The calls in flight (answered as a task but still running included) tagged owner. */
unsigned mcp_server_owned(const struct mcp_server *s, unsigned long owner);
/* A pointer the backend keeps with the call (its job, its timer ...). */
void mcp_call_set_data(struct mcp_call *call, void *data);
void *mcp_call_get_data(const struct mcp_call *call);
bool mcp_call_cancelled(const struct mcp_call *call);
/* The request's JSON-RPC id as JSON text ("7", "\"abc\""), for logs. */
const char *mcp_call_id(const struct mcp_call *call);

/* Finishes with structured_json (one JSON object, matching the tool's outputSchema): sent as
 * structuredContent and, serialised, as the text content. is_error marks a tool failure.
 * Invalid JSON becomes a -32603 error. The call is freed. */
void mcp_call_finish(struct mcp_call *call, const char *structured_json, bool is_error);
/* The same, with note (NULL: none) as a second text content after the serialised JSON: a
 * short line for a reader, the JSON text staying parseable on its own. */
void mcp_call_finish_note(struct mcp_call *call, const char *structured_json, const char *note,
                          bool is_error);
/* mcp_call_finish_note with the JSON built in b, or, when b could not hold it (b->err), an
 * error that says the result was too large. Frees b's data: the way every tool ends a call
 * whose result it built in a buffer. */
struct rtn_json_buf;
void mcp_call_finish_json(struct mcp_call *call, struct rtn_json_buf *b, const char *note,
                          bool is_error);
/* Finishes with isError true and a text content (printf format). The call is freed. */
void mcp_call_finish_error(struct mcp_call *call, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* notifications/progress when the request carried _meta.progressToken; otherwise nothing.
 * progress must grow from one notification to the next (the spec requires it; a smaller
 * value is dropped). total <= 0 means unknown; msg may be NULL. Backends that measure
 * progress in seconds since the call began agree with the server's own progress_usec
 * notifications, which count the same way. */
void mcp_call_progress(struct mcp_call *call, double progress, double total, const char *msg);
bool mcp_call_wants_progress(const struct mcp_call *call);
/* notifications/message at level that belongs to call, sent before its result when the level
 * its request asked for lets it through: a legacy session's logging/setLevel (default info),
 * a 2026-07-28 request's _meta "io.modelcontextprotocol/logLevel" (none asked: none sent).
 * Over HTTP it goes on the call's event stream (docs/architecture.md, "MCP over HTTP").
 * Also logged to stderr. */
void mcp_call_log(struct mcp_call *call, enum mcp_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* ---- arguments (already checked against the tool's schema) ---------------------------- */

/* Each returns -ENOENT when the argument is absent, -EINVAL when it has another type. */
int mcp_args_str(const struct mcp_args *a, const char *key, char **ret);
int mcp_args_int(const struct mcp_args *a, const char *key, int64_t *ret);
int mcp_args_bool(const struct mcp_args *a, const char *key, bool *ret);
/* An array of strings as a NULL-terminated vector; *ret_n its length (may be NULL). */
int mcp_args_strv(const struct mcp_args *a, const char *key, char ***ret, size_t *ret_n);
/* An object of strings as "KEY<sep>VALUE" entries (sep "=" for env, ": " for headers). */
int mcp_args_map(const struct mcp_args *a, const char *key, const char *sep, char ***ret);
/* The arguments object as JSON text. */
const char *mcp_args_json(const struct mcp_args *a, size_t *ret_len);
void mcp_strv_free(char **v);
