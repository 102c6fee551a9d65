/* `rtn serve`: the MCP backend that gives an agent persistent sandbox sessions (sb-1, and
 * more by handle). Shared by serve/serve.c (setup, the dispatch), the tool table (serve/tools.c)
 * and the tools of serve/tools/, one file per family. */
#pragma once

#include <stdbool.h>

#include "mcp/mcp.h"
#include "runtime/session/session.h"
#include "runtime/sandbox/specopt.h"
#include "store/store.h"

#define SERVE_MAX_JOBS 64
#define SERVE_MAX_WAITERS 8
/* Sandboxes one server keeps open at once: --max-sandboxes, its default and its ceiling. */
#define SERVE_SANDBOXES_DEFAULT 16
#define SERVE_SANDBOXES_MAX 1024
/* Checkpoints kept per sandbox (--undo-depth): its default and its ceiling, those of
 * `rtn exec --keep` too (runtime/session/session.h). A checkpoint copies only what the call
 * before it changed (docs/benchmarks.md, "Checkpoints"); 0 turns them off. */
#define SERVE_UNDO_DEPTH_DEFAULT RT_UNDO_DEPTH_DEFAULT
#define SERVE_UNDO_DEPTH_MAX RT_UNDO_DEPTH_MAX
/* The paths env_history names per step (with their count). */
#define SERVE_UNDO_PATHS 64
/* The handle of the first sandbox, the one a call without a sandbox argument acts on. */
#define SERVE_DEFAULT_SANDBOX "sb-1"

struct serve;
struct serve_hub;
struct rt_files;
struct rt_offload;
struct serve_undo;

struct serve_job {
        struct serve *sv;
        unsigned num; /* job_id is its decimal string */
        struct rt_cmd *cmd;
        struct mcp_call *waiters[SERVE_MAX_WAITERS];
        struct rtn_loop_source *wait_timers[SERVE_MAX_WAITERS];
};

/* One sandbox of `rtn serve` (handle "sb-N"), with the server's settings copied in from the
 * hub's template: what the tools act on. */
struct serve {
        struct serve_hub *hub;
        char handle[16]; /* "sb-N"; "" for the hub's template */
        unsigned num; /* N of the handle, never reused: the tag of its calls */
        char *own_env; /* env when the sandbox chose its own (sandbox_new from) */
        struct mcp_server *srv;
        struct rtn_loop *loop;
        struct store *store;
        const char *env;
        const char *rootfs;
        struct rt_session_config scfg;
        struct rt_spec_opts spec_opts; /* --setenv, --pids-max... (runtime/sandbox/specopt.h) */
        struct rt_session *sess;
        char *session_dir;
        int session_lock;
        struct serve_job jobs[SERVE_MAX_JOBS];
        unsigned next_job;
        const char *rootfs_path; /* resolved base dir, NULL for the host base */
        const char *allow_hosts[32]; /* --allow-host */
        size_t nallow;
        struct netns_gate *gate; /* provisioning proxy (rootfs bases only) */
        struct rt_http *http; /* http_get/http_post (serve/tools/http.c), lazily */
        struct rt_files *files; /* the sandbox's file server, made on first use */
        struct rt_offload *offload; /* threads for walks of the upper, made on first use */
        char **bind_strs; /* strings of binds added by bind_host_dir */
        size_t nbind_strs;
        struct rt_idmap idmap; /* the session's, kept to remove its dir at exit */
        bool have_idmap;
        struct store_stack stack; /* the layers the session runs on, held; stack.tip is the
                                   * commit env_commit builds on */
        struct store_base base; /* the base's identity (docs/store.md, "Bases") */
        unsigned undo_depth; /* --undo-depth */
        uint64_t undo_bytes; /* --undo-bytes; 0: the upper's size */
        struct serve_undo *undo; /* the checkpoints (tools/undo.c), made on first use */
        uint64_t used_usec; /* a call named it, or a command of it ran (--sandbox-idle-timeout) */
};

struct netns_gate;
struct netns_denial;
struct rt_http;

/* The server: its settings (a template no tool runs a sandbox in: the store, the env, the
 * base, the gate, http_*'s client) and its open sandboxes. */
struct serve_hub {
        struct serve tmpl;
        struct serve **sbs; /* open, oldest first: sbs[0] is sb-1 while it is open */
        size_t n;
        unsigned max; /* --max-sandboxes */
        unsigned next; /* the next handle's number; handles are never reused */
        pid_t gate_pid; /* sandbox whose gate listener is being served */
        struct serve *installing; /* the sandbox whose pkg_install runs (one gate), or NULL */
        struct netns_publish *publish; /* --publish's listeners (to sb-1), or NULL */
        bool attach_failed; /* op_attach said why on stderr: nothing to add */
        /* --sandbox-idle-timeout (the token's state of rtn serve --http): a sandbox no call
         * named and none of whose commands ran for this long is closed; 0: never. */
        uint64_t idle_usec;
        uint64_t used_usec; /* the last call of any tool */
        bool told_empty; /* MCP_NOTE_STATE_EMPTY sent since the last call */
        struct rtn_loop_source *idle_timer;
        struct rt_enter *enter; /* `rtn enter PID/sb-N`'s listener (serve/serve.c), or NULL */
};

/* Closes the sandboxes idle for h->idle_usec, and says so when none is left (tools/sandbox.c;
 * every tick of h->idle_timer). */
void serve_sandboxes_reap(struct serve_hub *h);

/* Opens a sandbox on the server's environment (from NULL), an environment's tip or a commit
 * (sandbox_new), or as a copy of src (sandbox_fork; from ignored) into *ret (tools/sandbox.c). */
int serve_sandbox_open(struct serve_hub *h, const char *from, struct serve *src, struct serve **ret,
                       struct rtn_error *err);
/* Ends a sandbox: its calls are answered, its processes killed, its upper and session dir
 * dropped; keep_ws first keeps an overlay workspace's unapplied changes as the environment's
 * pending ones (rtn serve's exit). */
void serve_sandbox_end(struct serve *sv, bool keep_ws);
/* The sandbox a call names (its sandbox argument, else SERVE_DEFAULT_SANDBOX); NULL after
 * answering the call with an error that names the handle. */
struct serve *serve_sandbox_pick(struct serve_hub *h, struct mcp_call *call,
                                 const struct mcp_args *a);

/* The proxy's refusals while c ran (c done, an agent command), merged, into out[0..max);
 * *ret_more: those that did not fit (tools/shell.c). */
size_t serve_net_denied(const struct rt_cmd *c, struct netns_denial *out, size_t max,
                        uint64_t *ret_more);
/* key: [{host, port, reason, count}...] and key_more when more > 0. */
void serve_json_denials(struct rtn_json_buf *b, const char *key, const struct netns_denial *d,
                        size_t n, uint64_t more);
/* network_denied (and network_denied_more) of a command's result, when it has any. */
void serve_json_net(struct rtn_json_buf *b, const struct rt_cmd *c);

/* rtn serve's tool table (serve/tools.c): schema and handler in one row per tool. A row's
 * handler finishes the call (now or later) and returns 0, or < 0 to have the server answer
 * with a tool error; its backend flags say whom it acts on. */
extern const struct mcp_tool_table serve_tool_table;
#define SERVE_TOOL_ON_HUB 1u /* acts on no sandbox: called with the hub's template */
#define SERVE_TOOL_CHANGES 2u /* can change the sandbox's files: a checkpoint first */
/* The row of the tool named name, whatever the flags; NULL if there is none. */
const struct mcp_tool *serve_tool_find(const char *name);

/* `rtn serve` (serve/serve.c): its options, the sandbox session behind the tools, then
 * mcp_serve_main on stdio. argv[0] is the verb; returns the exit code. */
int mcp_cmd_serve(int argc, char **argv);

/* The tools, one file per family under serve/tools/; each is the handler of a row of the
 * table (serve/tools.c): it finishes the call, now or later. */
#define SERVE_TOOL_FN(name)                                                                        \
        int name(struct serve *sv, struct mcp_call *call, const char *tool,                        \
                 const struct mcp_args *args)
/* shell_run, shell_list, python_exec (tools/shell.c). */
SERVE_TOOL_FN(serve_shell_run);
SERVE_TOOL_FN(serve_shell_list);
SERVE_TOOL_FN(serve_python_exec);
/* shell_job_start, _status/_wait/_kill (one handler, told the name), _output, _list
 * (tools/jobs.c). */
SERVE_TOOL_FN(serve_job_start);
SERVE_TOOL_FN(serve_job_query);
SERVE_TOOL_FN(serve_job_output);
SERVE_TOOL_FN(serve_job_list);
/* pkg_install, pkg_query (tools/pkg.c). */
SERVE_TOOL_FN(serve_pkg_install);
SERVE_TOOL_FN(serve_pkg_query);
/* http_get, http_post (tools/http.c). */
SERVE_TOOL_FN(serve_http_call);
/* The environment tools, env_* and workspace_apply (tools/env.c). */
SERVE_TOOL_FN(serve_env_status);
SERVE_TOOL_FN(serve_env_diff);
SERVE_TOOL_FN(serve_env_commit);
SERVE_TOOL_FN(serve_env_snapshot_list);
SERVE_TOOL_FN(serve_env_rollback);
SERVE_TOOL_FN(serve_env_reset);
SERVE_TOOL_FN(serve_env_discard);
SERVE_TOOL_FN(serve_env_gc);
SERVE_TOOL_FN(serve_workspace_apply);
/* The file tools, file_* (tools/files.c), and bind_host_dir (tools/bind.c). */
SERVE_TOOL_FN(serve_file_read);
SERVE_TOOL_FN(serve_file_write);
SERVE_TOOL_FN(serve_file_edit);
SERVE_TOOL_FN(serve_file_list);
SERVE_TOOL_FN(serve_file_search);
SERVE_TOOL_FN(serve_bind_call);
/* env_history, env_undo, env_redo (tools/undo.c). */
SERVE_TOOL_FN(serve_env_history);
SERVE_TOOL_FN(serve_env_undo);
SERVE_TOOL_FN(serve_env_redo);
/* Before a call of tool that can change sv's files: keeps the state it starts from as a
 * step of env_undo, and forgets what env_undo had undone (no more redo). A state that
 * cannot be kept (no room) drops the oldest steps first, then runs the call without one and
 * env_history says so. */
void serve_undo_checkpoint(struct serve *sv, const void *call, const char *tool,
                           const struct mcp_args *a);
/* The exit status of call's command, for env_history (tools/shell.c). */
void serve_undo_exit(struct serve *sv, const void *call, int exit_code);
/* Forgets every step (env_commit, env_reset, env_discard, the sandbox's end); drop: remove
 * their copies too (the tmpfs stays). */
void serve_undo_forget(struct serve *sv, bool drop);
/* sandbox_new, sandbox_list (called with the template), sandbox_fork, sandbox_close
 * (tools/sandbox.c). */
SERVE_TOOL_FN(serve_sandbox_new);
SERVE_TOOL_FN(serve_sandbox_list);
SERVE_TOOL_FN(serve_sandbox_fork);
SERVE_TOOL_FN(serve_sandbox_close);

/* Starts o in the session for call under its policy and answers the call with the result
 * when the command ends (tools/shell.c; pkg_query runs its query through it). */
struct rt_cmd_opts;
int serve_shell_start(struct serve *sv, struct mcp_call *call, struct rt_cmd_opts *o);
/* Reads the arguments shell_run and shell_job_start share (cwd, timeout, env, stdin) into o;
 * the strings are the caller's to free. */
int serve_read_run_args(const struct mcp_args *a, struct rt_cmd_opts *o, char **cwd, char ***env,
                        char **in);
/* The fields of a finished command's result, shell_run's and pkg_install's alike: exit_code,
 * signal, stdout, stderr (with stderr_extra appended, NULL for none), the truncation flags,
 * timed_out, duration_ms and what the seccomp filter blocked (tools/shell.c). */
struct rtn_json_buf;
void serve_json_run(struct rtn_json_buf *b, const struct rt_cmd *c, const char *stderr_extra);
/* The result of file_list (search false) or file_search from the file server's records
 * (common/initproto.h; untrusted, every length checked) into b: entries or matches sorted by
 * path, each path joined to shown (the listed path as the agent named it). count is the
 * records the server said it wrote, truncated its TRUNCATED flag. -ENOMEM, else 0. */
int serve_files_walk_json(struct rtn_json_buf *b, const char *shown, bool search, const char *buf,
                          size_t len, uint64_t count, bool truncated);
void serve_bind_free(struct serve *sv);
/* env_status's "host_dirs": the host directories bound in, their mode and protections, and
 * an overlay workspace's ws_pending changes, counted off the loop (tools/hostdirs.c). */
void serve_json_host_dirs(struct rtn_json_buf *b, struct serve *sv, int64_t ws_pending);
/* The pending changes of an overlay workspace (0 in any other mode; tools/env.c). */
int64_t serve_ws_pending(struct serve *sv);
/* Points the session at the env's current layer stack, held (store_stack_get). */
int serve_load_layers(struct serve *sv, struct rtn_error *err);
/* Jobs still running (tools/jobs.c). */
unsigned serve_running_jobs(const struct serve *sv);
/* Kills and forgets every job; returns how many were running. */
unsigned serve_drop_jobs(struct serve *sv);
/* Wakes call if it waits on a job (shell_job_wait cancelled): true if it did. */
bool serve_job_cancel(struct serve *sv, struct mcp_call *call);
