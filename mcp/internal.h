/* Internals shared by the files of mcp/: method dispatch (protocol.c), the protocol eras
 * (era.c), the server state and output queue (server.c), the tool table's lookups and argument
 * validation (tools.c, args.c), tasks (tasks.c). Nothing here is part of the public interface;
 * what a transport of its own needs (framing, messages, versions) is mcp/wire.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/json.h"
#include "mcp/mcp.h"
#include "mcp/wire.h"

/* The tasks extension (its 2026-07-28 text; tasks.c): the key a client declares it under in
 * its per-request capabilities' extensions, and the server in server/discover's. */
#define MCP_EXT_TASKS "io.modelcontextprotocol/tasks"

/* ---- protocol eras (era.c) ------------------------------------------------------------- */

struct mcp_server;

/* Sets m->version from the request's _meta claim, or to the session's version when it makes
 * none (or names a legacy version). Returns 0, or a JSON-RPC error code with the message in
 * why: MCP_INVALID_PARAMS for a malformed envelope, MCP_UNSUPPORTED_VERSION with the version
 * asked for in requested. */
int mcp_era_classify(const struct mcp_server *s, struct mcp_msg *m, char *requested, size_t rl,
                     char *why, size_t wl);
/* Whether a 2026-07-28 request declares extension ext in its per-request clientCapabilities
 * (extensions[ext] an object; {} declares it). */
bool mcp_era_declares(const struct rtn_json_doc *d, int params, const char *ext);
/* The enum mcp_log_level a 2026-07-28 request's _meta logLevel names, or -1 (none asked). */
int mcp_era_log_level(const struct rtn_json_doc *d, int params);
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
