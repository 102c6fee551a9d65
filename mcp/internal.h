/* Internals shared by the files of mcp/: line framing and JSON-RPC validation (jsonrpc.c),
 * method dispatch (protocol.c), the protocol eras (era.c), the server state and output queue
 * (server.c), the tool table's lookups and argument validation (tools.c, args.c). Nothing here is
 * part of the public interface. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/json.h"
#include "mcp/mcp.h"

/* JSON-RPC 2.0 error codes (jsonrpc.org/specification section 5.1). */
#define MCP_PARSE_ERROR -32700
#define MCP_INVALID_REQUEST -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS -32602
#define MCP_INTERNAL_ERROR -32603
/* 2026-07-28 (basic/index, "Error Codes"): the requested version is not one we speak. */
#define MCP_UNSUPPORTED_VERSION -32022
/* 2026-07-28 over HTTP (basic/transports, "Server validation"): a standard header
 * (MCP-Protocol-Version, Mcp-Method, Mcp-Name) is missing or disagrees with the body. */
#define MCP_HEADER_MISMATCH -32020
/* 2026-07-28: the request needs a capability its client did not declare (over HTTP: 400). */
#define MCP_MISSING_CAPABILITY -32021

/* The _meta key by which a request claims the 2026-07-28 envelope (era.c). */
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
/* The tasks extension (its 2026-07-28 text; tasks.c): the key a client declares it under in
 * its per-request capabilities' extensions, and the server in server/discover's. */
#define MCP_EXT_TASKS "io.modelcontextprotocol/tasks"
/* The _meta key by which a call's notifications/message names its request's id for a front end
 * (mcp_config.related_meta; never sent to a client: the front end strips it). */
#define MCP_META_RELATED "rtn/relatedRequest"
#define MCP_ID_MAX 256 /* bytes of a request id as JSON */
#define MCP_METHOD_MAX 128 /* bytes of a method name */

/* ---- framing (jsonrpc.c) --------------------------------------------------------------- */

/* Called per complete line (CR stripped, no '\n'; blank lines are skipped), or with
 * line NULL and len = its size for a line longer than max_line, which was discarded. */
typedef void (*mcp_line_fn)(void *ud, const char *line, size_t len);

struct mcp_framer {
        char *buf;
        size_t len, cap;
        size_t max_line;
        bool discarding; /* inside an over-long line: drop bytes up to the next '\n' */
        size_t discarded; /* bytes of it dropped so far */
};

void mcp_framer_init(struct mcp_framer *f, size_t max_line);
void mcp_framer_free(struct mcp_framer *f);
/* Appends data and delivers every complete line. -ENOMEM only. */
int mcp_framer_feed(struct mcp_framer *f, const char *data, size_t n, mcp_line_fn fn, void *ud);
/* End of input: a final line without '\n' is delivered as a line too. */
void mcp_framer_eof(struct mcp_framer *f, mcp_line_fn fn, void *ud);

/* ---- messages (jsonrpc.c) -------------------------------------------------------------- */

enum mcp_msg_kind { MCP_MSG_REQUEST, MCP_MSG_NOTIFICATION, MCP_MSG_RESPONSE };

struct mcp_msg {
        enum mcp_msg_kind kind;
        const struct rtn_json_doc *doc;
        int tok; /* the message object */
        const char *id; /* raw JSON of the id; NULL for notifications and when unusable */
        size_t id_len;
        char method[MCP_METHOD_MAX];
        int params; /* token of params, -1 when absent */
        int version; /* enum mcp_version it is served under (mcp_era_classify); -1: none yet */
};

/* Validates token tok as a JSON-RPC 2.0 message. Returns 0, or a JSON-RPC error code with
 * *why set; m->id is filled whenever the id itself was valid, so the error can carry it. */
int mcp_msg_parse(const struct rtn_json_doc *d, int tok, struct mcp_msg *m, const char **why);

/* Complete messages into b: {"jsonrpc":"2.0","id":ID,"error":{...}} (id NULL → null) and
 * the opening of a result, {"jsonrpc":"2.0","id":ID,"result": (caller writes the value and
 * the closing brace with rtn_json_obj_end). */
void mcp_write_error(struct rtn_json_buf *b, const char *id, size_t id_len, int code,
                     const char *msg);
/* The same with error.data: data_json is one JSON value, or NULL for none. */
void mcp_write_error_data(struct rtn_json_buf *b, const char *id, size_t id_len, int code,
                          const char *msg, const char *data_json);
void mcp_write_result_open(struct rtn_json_buf *b, const char *id, size_t id_len);
/* The id of a response written by the two above (raw JSON, "null" included), for a front end
 * that relays them: 0, or -ENOMSG when line is no such response (a notification). */
int mcp_response_id(const char *line, size_t len, const char **ret_id, size_t *ret_len);
/* The error code of such a response written by mcp_write_error*, 0 for a result. */
int mcp_response_error_code(const char *line, size_t len);
/* The progressToken of a notifications/progress line written by mcp_call_progress (raw JSON),
 * for a front end that relays it to the request's stream: 0, or -ENOMSG for any other line. */
int mcp_progress_token(const char *line, size_t len, const char **ret_tok, size_t *ret_len);
/* The related request's id of a notifications/message line written by mcp_call_log with
 * related_meta (raw JSON), and the span [*ret_cut, *ret_cut + *ret_cut_len) of line that holds
 * that _meta (cut it, and the message is the one a client gets): 0, or -ENOMSG. */
int mcp_related_request(const char *line, size_t len, const char **ret_id, size_t *ret_len,
                        size_t *ret_cut, size_t *ret_cut_len);

/* ---- protocol versions and eras (era.c) ------------------------------------------------ */

/* Oldest first. initialize negotiates the legacy ones, below MCP_V_FIRST_MODERN; a modern
 * request names its version in _meta, and no session is made. */
enum mcp_version {
        MCP_V2024_11_05,
        MCP_V2025_03_26,
        MCP_V2025_06_18,
        MCP_V2025_11_25,
        MCP_V2026_07_28,
        MCP_V_COUNT
};
#define MCP_V_FIRST_MODERN MCP_V2026_07_28
extern const char *const mcp_versions[MCP_V_COUNT];

struct mcp_server;

/* The enum mcp_version of a version string, or -ENOENT. */
int mcp_version_find(const char *name);
/* The version params._meta claims, the one rule of what a claim is for stdio and HTTP alike:
 * 0 with *ret_version its enum mcp_version (-1: no claim), requested its name whenever the
 * claim is a string (empty otherwise); or a JSON-RPC error code with the message in why:
 * MCP_INVALID_PARAMS for a claim that is no version string or a 2026-07-28 claim without the
 * rest of its envelope, MCP_UNSUPPORTED_VERSION for a version we do not speak. */
int mcp_era_claim(const struct rtn_json_doc *d, int params, int *ret_version, char *requested,
                  size_t rl, char *why, size_t wl);
/* Sets m->version from the request's _meta claim, or to the session's version when it makes
 * none (or names a legacy version). Returns 0, or a JSON-RPC error code with the message in
 * why: MCP_INVALID_PARAMS for a malformed envelope, MCP_UNSUPPORTED_VERSION with the version
 * asked for in requested. */
int mcp_era_classify(const struct mcp_server *s, struct mcp_msg *m, char *requested, size_t rl,
                     char *why, size_t wl);
/* Whether a request of this method exists in the 2026-07-28 revision (protocol.c's method
 * table, the one home of what each era has). */
bool mcp_method_modern(const char *method);
/* Whether a 2026-07-28 request declares extension ext in its per-request clientCapabilities
 * (extensions[ext] an object; {} declares it). */
bool mcp_era_declares(const struct rtn_json_doc *d, int params, const char *ext);
/* The enum mcp_log_level a 2026-07-28 request's _meta logLevel names, or -1 (none asked). */
int mcp_era_log_level(const struct rtn_json_doc *d, int params);
/* The -32022 error response, listing every version we speak. */
void mcp_write_unsupported_version(struct rtn_json_buf *b, const char *id, size_t id_len,
                                   const char *requested);
/* Every version we speak as a JSON array, newest first. */
void mcp_write_versions(struct rtn_json_buf *b);
/* ttlMs and cacheScope for a cacheable result of version (nothing before 2026-07-28). */
void mcp_write_cache_hints(struct rtn_json_buf *b, int version);
/* Closes a result object: modern results first get resultType and _meta's serverInfo. */
void mcp_result_end(const struct mcp_server *s, struct rtn_json_buf *b, int version);
/* The same with the resultType given ("task" for a CreateTaskResult). */
void mcp_result_end_as(const struct mcp_server *s, struct rtn_json_buf *b, int version,
                       const char *result_type);

/* ---- tools (tools.c, args.c) ----------------------------------------------------------- */

/* The tools of table that exist under flags, in table order. */
const struct mcp_tool *mcp_tool_at(const struct mcp_tool_table *table, unsigned flags,
                                   size_t index);
size_t mcp_tool_count(const struct mcp_tool_table *table, unsigned flags);
const struct mcp_tool *mcp_tool_find(const struct mcp_tool_table *table, unsigned flags,
                                     const char *name);
/* Why a tool of the table does not exist under flags (what to use instead), or NULL. */
const char *mcp_tool_off_why(const struct mcp_tool_table *table, unsigned flags, const char *name);
/* Writes the tool's entry of tools/list, shaped for protocol version v. */
void mcp_tool_write(struct rtn_json_buf *b, const struct mcp_tool *t, enum mcp_version v);

/* Checks the arguments object (token args of d, or -1 for none) against t's schema:
 * 0, or -EINVAL with a precise message in why ("timeout: must be an integer in 1..86400"). */
int mcp_args_validate(const struct mcp_tool *t, const struct rtn_json_doc *d, int args, char *why,
                      size_t whylen);

struct mcp_args {
        char *json; /* owned copy of the arguments object ("{}" when absent) */
        struct rtn_json_doc doc; /* tokens of json */
};

/* Copies the arguments object out of the request so it outlives the input buffer. */
int mcp_args_new(const struct rtn_json_doc *d, int args, struct mcp_args **ret);
void mcp_args_free(struct mcp_args *a);

/* ---- server internals (server.c, protocol.c) ------------------------------------------- */

struct mcp_batch;

struct mcp_call {
        struct mcp_server *server;
        struct mcp_call *next;
        const struct mcp_tool *tool;
        struct mcp_args *args;
        struct mcp_batch *batch; /* the batch the request came in, or NULL */
        char id[MCP_ID_MAX + 1];
        int version; /* enum mcp_version of the request (a modern one, or the session's) */
        char *progress_token; /* raw JSON, or NULL */
        double last_progress;
        bool has_progress;
        uint64_t start_usec, progress_at_usec; /* CLOCK_MONOTONIC: began, last progress sent */
        struct rtn_loop_source *heartbeat; /* cfg.progress_usec timer, with a progress token */
        bool cancelled;
        int log_level; /* enum mcp_log_level its 2026-07-28 request asked for; -1: none */
        unsigned long owner; /* mcp_call_set_owner */
        bool tasks_ok; /* its request declared the tasks extension: it may become a task */
        struct mcp_task *task; /* the task it became (tasks.c), answered already; or NULL */
        struct rtn_loop_source *task_timer; /* cfg.task_after_usec: when it becomes one */
        bool in_backend; /* inside ops->call: finish must not free yet */
        bool finished;
        void *data;
};

struct mcp_server {
        struct mcp_config cfg;
        struct rtn_loop *loop;
        int in_fd, out_fd;
        bool in_pollable, out_pollable, in_watched, in_paused, out_watched;
        int in_kick; /* eventfd standing in for an unpollable input (a regular file) */
        const struct mcp_backend_ops *ops;
        void *ctx;
        struct mcp_framer framer;
        char *out; /* queued output */
        size_t out_len, out_off, out_cap;
        int version; /* the legacy session's enum mcp_version, -1 before initialize */
        bool initialized_notified;
        enum mcp_log_level log_level;
        struct mcp_call *calls;
        unsigned ncalls;
        struct mcp_task *tasks; /* tasks.c: running and finished, newest first */
        unsigned ntasks;
        bool eof, shutting_down, backend_shut;
        struct rtn_loop_source *flush_timer, *lost_timer;
        int exit_code;
        char client_name[64];
};

/* ---- tasks (tasks.c) ------------------------------------------------------------------- */

/* Tasks kept at once, running or finished: past it a call is answered synchronously. */
#define MCP_TASKS_MAX 32
/* A finished task's result is kept this long after it finished, then dropped. */
#define MCP_TASK_KEEP_USEC (10ULL * 60 * 1000 * 1000)
#define MCP_TASK_POLL_MS 1000 /* pollIntervalMs */
#define MCP_TASK_ID_BYTES 16 /* random bytes of a task id (32 hex digits) */

/* A call of a request that declared the extension and is still running after
 * cfg.task_after_usec becomes a task: arms that timer. */
int mcp_task_arm(struct mcp_call *c);
/* The call of a task finished: its result (as mcp_call_reply would send it) is kept in the
 * task. structured NULL: text is a tool error's. */
void mcp_task_done(struct mcp_call *c, const char *structured, const char *text, const char *note,
                   bool is_error);
/* tasks/get, tasks/cancel, tasks/update (handler_fn of protocol.c's method table). */
struct mcp_msg;
struct mcp_batch;
int mcp_h_tasks_get(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                    struct rtn_json_buf *b, char *why, size_t wl);
int mcp_h_tasks_cancel(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                       struct rtn_json_buf *b, char *why, size_t wl);
int mcp_h_tasks_update(struct mcp_server *s, const struct mcp_msg *m, struct mcp_batch *batch,
                       struct rtn_json_buf *b, char *why, size_t wl);
/* Frees every task (the server ends). */
void mcp_tasks_free(struct mcp_server *s);
/* A call's result object (no JSON-RPC envelope) into b, cut to fit as mcp_call_reply cuts it
 * (protocol.c): 0, or MCP_INTERNAL_ERROR with why set when the tool's result is no object. */
int mcp_call_result(struct mcp_call *c, const char *structured, const char *text, const char *note,
                    bool is_error, struct rtn_json_buf *b, char *why, size_t wl);

/* Handles one incoming line (protocol.c). */
void mcp_dispatch_line(struct mcp_server *s, const char *line, size_t len);
/* Queues one complete message (a '\n' is added). droppable messages (notifications) are
 * dropped while the queue is over its limit. */
void mcp_out_push(struct mcp_server *s, const char *msg, size_t len, bool droppable);
/* A response to a request, routed to its batch or straight to the output. Takes text. */
void mcp_reply(struct mcp_server *s, struct mcp_batch *batch, struct rtn_json_buf *text);
void mcp_batch_unref(struct mcp_server *s, struct mcp_batch *batch);
struct mcp_batch *mcp_batch_ref(struct mcp_batch *batch);
/* A result cut to at most max bytes (result.c): the largest top-level strings and arrays
 * shortened, their flags set (NAME_truncated, PREFIX_truncated, else truncated, added when
 * absent), note (NULL: none) added as "text_copy". d must be an object. -E2BIG when cutting
 * everything is not enough. */
int mcp_result_cut(const struct rtn_json_doc *d, size_t max, const char *note, char **ret,
                   size_t *ret_len);
/* The response to a finished tools/call (protocol.c). */
void mcp_call_reply(struct mcp_call *c, const char *structured, const char *text, const char *note,
                    bool is_error);
struct mcp_call *mcp_call_lookup(struct mcp_server *s, const char *id, size_t id_len);
/* Starts the call's progress_usec timer when its request asked for progress (server.c). */
int mcp_call_heartbeat_start(struct mcp_call *c);
void mcp_call_release(struct mcp_call *c);
/* enum mcp_log_level of a logging/setLevel name, or -EINVAL. */
int mcp_log_level_parse(const char *name);
