/* rtn serve's tool table, one row per tool: its name, title, description, input arguments,
 * output schema, annotations, the flags that add or take it away, and its handler (under
 * serve/tools/, one file per family). mcp/ lists, validates and dispatches from it
 * (serve/tools.c); serve.c's ops->call runs the row's handler on the sandbox it picks. Output
 * schemas are JSON text; a unit test parses every one. Names and arguments are the interface
 * (docs/tools.md): keep them stable. Tools whose `requires` flags are off (http_* without
 * --http-tools, workspace_apply without an overlay workspace) or one of whose `excludes` is
 * on (bind_host_dir in a session of rtn serve --http) do not exist at all: they are neither
 * listed nor callable. */
#include <string.h>

#include "mcp/mcp.h"
#include "serve/serve.h"

#define ARGS(a) a, (sizeof(a) / sizeof((a)[0]))
#define NOARGS NULL, 0
#define KIB 1024
#define MIB (1024 * 1024)

/* Hint sets. destructiveHint is about the sandbox the tool acts on: rtn keeps the host safe
 * either way, but a command can still delete the agent's own uncommitted work. */
#define H_READ (MCP_HINT_READ_ONLY | MCP_HINT_IDEMPOTENT)
#define H_RUN MCP_HINT_DESTRUCTIVE

static const char *const bind_modes[] = {"ro", "rw", NULL};
static const char *const encodings[] = {"text", "base64", NULL};

/* Shared argument rows. */
#define A_COMMAND                                                                                  \
        {                                                                                          \
                "command", MCP_ARG_STRING, true, 1, 128 * KIB, NULL,                               \
                        "Shell command, run as `/bin/sh -c COMMAND` inside the sandbox."           \
        }
#define A_CWD                                                                                      \
        {                                                                                          \
                "cwd", MCP_ARG_STRING, false, 1, 4096, NULL,                                       \
                        "Working directory inside the sandbox (default /workspace)."               \
        }
#define A_TIMEOUT                                                                                  \
        {                                                                                          \
                "timeout", MCP_ARG_INT, false, 1, 86400, NULL,                                     \
                        "Seconds before the command is killed (default: the server's --timeout)."  \
        }
#define A_ENV                                                                                      \
        { "env", MCP_ARG_MAP, false, 0, 256, NULL, "Extra environment variables, name to value." }
#define A_STDIN                                                                                    \
        {                                                                                          \
                "stdin", MCP_ARG_STRING, false, 0, 1 * MIB, NULL,                                  \
                        "Text fed to the command's standard input (default: empty)."               \
        }
#define A_JOB_ID                                                                                   \
        { "job_id", MCP_ARG_STRING, true, 1, 64, NULL, "Job id returned by shell_job_start." }
#define A_PATH(req, what)                                                                          \
        { "path", MCP_ARG_STRING, req, 1, 4096, NULL, what }

/* Every tool that acts on a sandbox takes it by handle; without one, the server's first. */
#define A_SANDBOX                                                                                  \
        {                                                                                          \
                "sandbox", MCP_ARG_STRING, false, 1, 64, NULL,                                     \
                        "Handle of the sandbox to act on (sandbox_list; default sb-1, the "        \
                        "server's first)."                                                         \
        }

static const struct mcp_arg_spec sandbox_args[] = {A_SANDBOX};
static const char *const user_values[] = {"root", NULL};
static const struct mcp_arg_spec shell_run_args[] = {
        A_COMMAND,
        A_CWD,
        A_TIMEOUT,
        A_ENV,
        A_STDIN,
        {"user", MCP_ARG_STRING, false, 0, 0, user_values,
         "Run this command as root of the sandbox (rtn serve --user root for every command): "
         "no capabilities but reading and writing files the sandbox's ids own, the rootfs "
         "writable (apt-get with --allow-net), the same filter; default: the server's user."},
        A_SANDBOX};
static const struct mcp_arg_spec undo_args[] = {
        {"steps", MCP_ARG_INT, false, 1, 1000, NULL, "How many calls to take back (default 1)."},
        A_SANDBOX,
};
static const struct mcp_arg_spec redo_args[] = {
        {"steps", MCP_ARG_INT, false, 1, 1000, NULL, "How many undone calls to redo (default 1)."},
        A_SANDBOX,
};
static const struct mcp_arg_spec job_start_args[] = {A_COMMAND, A_CWD, A_ENV, A_TIMEOUT, A_SANDBOX};
static const struct mcp_arg_spec job_id_args[] = {A_JOB_ID, A_SANDBOX};
static const struct mcp_arg_spec job_wait_args[] = {
        A_JOB_ID,
        {"timeout", MCP_ARG_INT, true, 0, 3600, NULL,
         "Seconds to wait for the job to end; 0 only looks."},
        A_SANDBOX,
};
static const struct mcp_arg_spec job_output_args[] = {
        A_JOB_ID,
        {"offset", MCP_ARG_INT, false, 0, INT64_MAX, NULL,
         "Byte offset in the job's output to read from (next_offset of the previous read)."},
        {"tail", MCP_ARG_INT, false, 1, 1 * MIB, NULL,
         "Return only the last TAIL bytes of the output kept."},
        A_SANDBOX,
};
static const struct mcp_arg_spec commit_args[] = {
        {"message", MCP_ARG_STRING, true, 1, 4096, NULL, "Commit message."},
        {"rebase", MCP_ARG_BOOL, false, 0, 0, NULL,
         "Commit on the environment's current tip even if it moved since the sandbox started "
         "(another server committed or rolled back); refused otherwise."},
        A_SANDBOX,
};
static const struct mcp_arg_spec rollback_args[] = {
        {"commit_id", MCP_ARG_STRING, true, 1, 128, NULL,
         "Commit to make the environment's tip (a full id or a unique prefix)."},
        A_SANDBOX,
};
static const struct mcp_arg_spec pkg_install_args[] = {
        {"packages", MCP_ARG_STRV, true, 1, 64, NULL,
         "Package names (no options: a name starting with '-' is refused)."},
        {"timeout", MCP_ARG_INT, false, 1, 86400, NULL, "Seconds before the install is stopped."},
        A_SANDBOX,
};
static const struct mcp_arg_spec pkg_query_args[] = {
        {"args", MCP_ARG_STRV, true, 1, 32, NULL,
         "A read-only query: apt-cache policy|show|search|depends ARGS or dpkg -l|-L|-S ARGS, "
         "e.g. [\"apt-cache\", \"policy\", \"jq\"]."},
        A_SANDBOX,
};
static const struct mcp_arg_spec bind_args[] = {
        {"host_path", MCP_ARG_STRING, true, 1, 4096, NULL,
         "Host directory to bind: a non-hidden directory under your home, or one the user named "
         "with --bind. No symlinks on the way. A regular file there may be bound \"ro\"."},
        {"mount_point", MCP_ARG_STRING, true, 1, 4096, NULL,
         "Where it appears inside: under /workspace or /mnt."},
        {"mode", MCP_ARG_STRING, true, 2, 2, bind_modes, "\"ro\" read-only or \"rw\" read-write."},
        A_SANDBOX,
};
static const struct mcp_arg_spec file_read_args[] = {
        A_PATH(true, "File to read, inside the sandbox."),
        {"offset", MCP_ARG_INT, false, 1, INT32_MAX, NULL, "First line to return, 1-based."},
        {"limit", MCP_ARG_INT, false, 1, 100000, NULL, "Number of lines to return (default 2000)."},
        {"encoding", MCP_ARG_STRING, false, 4, 6, encodings,
         "\"text\" (default; binary files are refused) or \"base64\" for the raw bytes."},
        A_SANDBOX,
};
static const struct mcp_arg_spec file_write_args[] = {
        A_PATH(true, "File to write, inside the sandbox."),
        {"content", MCP_ARG_STRING, true, 0, 4 * MIB, NULL, "The whole new content."},
        {"create_only", MCP_ARG_BOOL, false, 0, 0, NULL, "Fail if the file exists."},
        {"mode", MCP_ARG_STRING, false, 3, 4, NULL,
         "Octal permission bits for a new file, e.g. \"0644\" (an existing file keeps its mode)."},
        A_SANDBOX,
};
static const struct mcp_arg_spec file_edit_args[] = {
        A_PATH(true, "File to edit, inside the sandbox."),
        {"old_string", MCP_ARG_STRING, true, 1, 4 * MIB, NULL,
         "Exact text to replace; must occur exactly once unless replace_all."},
        {"new_string", MCP_ARG_STRING, true, 0, 4 * MIB, NULL, "Replacement text."},
        {"replace_all", MCP_ARG_BOOL, false, 0, 0, NULL, "Replace every occurrence."},
        A_SANDBOX,
};
static const struct mcp_arg_spec file_list_args[] = {
        A_PATH(true, "Directory to list, inside the sandbox."),
        {"depth", MCP_ARG_INT, false, 0, 32, NULL,
         "Levels to descend (default 1; 0 = the entry itself)."},
        {"glob", MCP_ARG_STRING, false, 1, 1024, NULL,
         "Only names matching this fnmatch(3) pattern."},
        A_SANDBOX,
};
static const struct mcp_arg_spec file_search_args[] = {
        {"pattern", MCP_ARG_STRING, true, 1, 4096, NULL, "POSIX extended regular expression."},
        A_PATH(false, "Directory or file to search (default /workspace)."),
        {"glob", MCP_ARG_STRING, false, 1, 1024, NULL,
         "Only files whose name matches this pattern."},
        {"max_matches", MCP_ARG_INT, false, 1, 10000, NULL,
         "Stop after this many matches (default 200)."},
        A_SANDBOX,
};
static const struct mcp_arg_spec apply_args[] = {
        {"dry_run", MCP_ARG_BOOL, false, 0, 0, NULL,
         "Only report what would be written and what refused; write nothing."},
        A_SANDBOX,
};
static const struct mcp_arg_spec python_args[] = {
        {"code", MCP_ARG_STRING, true, 1, 1 * MIB, NULL,
         "Python 3 source, run with the sandbox's python3."},
        A_TIMEOUT,
        A_STDIN,
        A_SANDBOX,
};
#define A_URL                                                                                      \
        {                                                                                          \
                "url", MCP_ARG_STRING, true, 1, 8192, NULL,                                        \
                        "http:// or https:// URL; private, loopback, link-local and this "         \
                        "machine's own addresses are refused."                                     \
        }
#define A_HEADERS                                                                                  \
        { "headers", MCP_ARG_MAP, false, 0, 64, NULL, "Request headers, name to value." }
#define A_MAXB                                                                                     \
        {                                                                                          \
                "max_bytes", MCP_ARG_INT, false, 1, 16 * MIB, NULL,                                \
                        "Response bytes kept (default 1 MiB); the rest is cut and reported."       \
        }
#define A_HTIMEOUT                                                                                 \
        {                                                                                          \
                "timeout", MCP_ARG_INT, false, 1, 300, NULL,                                       \
                        "Seconds for the whole request (default 30)."                              \
        }
static const struct mcp_arg_spec sandbox_new_args[] = {
        {"from", MCP_ARG_STRING, false, 1, 128, NULL,
         "An environment with commits (the sandbox commits to it) or a commit id or unique "
         "prefix (env_snapshot_list) to start from; default: the server's environment's tip."},
};
static const struct mcp_arg_spec sandbox_close_args[] = {
        {"sandbox", MCP_ARG_STRING, true, 1, 64, NULL, "Handle of the sandbox to close."},
};
static const struct mcp_arg_spec http_get_args[] = {A_URL, A_HEADERS, A_HTIMEOUT, A_MAXB};
static const struct mcp_arg_spec http_post_args[] = {
        A_URL,     {"body", MCP_ARG_STRING, true, 0, 4 * MIB, NULL, "Request body."},
        A_HEADERS, A_HTIMEOUT,
        A_MAXB,
};

/* clang-format off */
/* ---- output schemas -------------------------------------------------------------------- */

#define O(props, req) "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req "]}"
#define P_STR(n) "\"" n "\":{\"type\":\"string\"}"
#define P_STRN(n) "\"" n "\":{\"type\":[\"string\",\"null\"]}"
#define P_INT(n) "\"" n "\":{\"type\":\"integer\"}"
#define P_INTN(n) "\"" n "\":{\"type\":[\"integer\",\"null\"]}"
#define P_BOOL(n) "\"" n "\":{\"type\":\"boolean\"}"
#define P_STRS(n) "\"" n "\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"
#define P_OBJ(n) "\"" n "\":{\"type\":\"object\"}"
#define P_ARR(n, item) "\"" n "\":{\"type\":\"array\",\"items\":" item "}"

/* Spelled out rather than nested P_ARR(O(...)): the job list nests it once more. */
#define BLOCKED_PROPS "\"blocked\":{\"type\":\"array\",\"items\":{\"type\":\"object\"," \
        "\"properties\":{" P_STR("syscall") "," P_INT("pid") "," P_STR("comm") "," P_INT("count") "}," \
        "\"required\":[\"syscall\",\"pid\",\"comm\",\"count\"]}}," P_INT("blocked_more")
#define DENIED_ITEM "{\"type\":\"object\",\"properties\":{" P_STR("host") "," P_INT("port") "," \
        P_STR("reason") "," P_INT("count") "},\"required\":[\"host\",\"port\",\"reason\",\"count\"]}"
#define NET_PROPS P_ARR("network_denied", DENIED_ITEM) "," P_INT("network_denied_more")
#define RUN_PROPS NET_PROPS "," P_INTN("exit_code") "," P_INTN("signal") "," P_STR("stdout") "," P_STR("stderr") \
        "," P_BOOL("stdout_truncated") "," P_BOOL("stderr_truncated") "," P_BOOL("timed_out") \
        "," P_INT("duration_ms") "," BLOCKED_PROPS "," P_BOOL("sandbox_restarted") "," \
        P_BOOL("stdout_utf8_replaced") "," P_BOOL("stderr_utf8_replaced")
#define RUN_REQ "\"exit_code\",\"signal\",\"stdout\",\"stderr\",\"stdout_truncated\"," \
        "\"stderr_truncated\",\"timed_out\",\"duration_ms\""
#define JOB_PROPS P_STR("job_id") "," P_STR("command") "," \
        "\"state\":{\"type\":\"string\",\"enum\":[\"running\",\"exited\",\"killed\",\"timed_out\"]}," \
        P_INTN("exit_code") "," P_INTN("signal") "," P_INT("duration_ms") "," P_INT("output_bytes") \
        "," BLOCKED_PROPS "," NET_PROPS
#define JOB_REQ "\"job_id\",\"state\""

static const char out_run[] = O(RUN_PROPS, RUN_REQ);
static const char out_shell_list[] = O(P_STRS("executables") "," P_BOOL("truncated"), "\"executables\"");
static const char out_job_start[] = O(P_STR("job_id"), "\"job_id\"");
static const char out_job[] = O(JOB_PROPS, JOB_REQ);
static const char out_job_wait[] = O(JOB_PROPS "," P_BOOL("timed_out_waiting"), JOB_REQ);
static const char out_job_output[] =
        O(P_STR("job_id") "," P_STR("output") "," P_INT("offset") "," P_INT("next_offset") "," P_INT(
                  "dropped_bytes") "," P_BOOL("truncated") "," P_BOOL("output_utf8_replaced") "," P_STR("state"),
          "\"job_id\",\"output\",\"offset\",\"next_offset\"");
static const char out_job_list[] = O(P_ARR("jobs", O(JOB_PROPS, JOB_REQ)), "\"jobs\"");
#define HOST_DIR O(P_STR("mount_point") "," P_STR("host_path") ",\"mode\":{\"type\":\"string\",\"enum\":" \
        "[\"live\",\"overlay\"]},\"access\":{\"type\":\"string\",\"enum\":[\"ro\",\"rw\"]}," P_STR("git") "," \
        P_STRS("protected") "," P_INT("protected_count") "," P_INT("pinned_dirs") "," P_INT("pending_changes") "," \
        P_STR("note"), "\"mount_point\",\"host_path\",\"mode\",\"access\",\"note\"")
#define PUBLISHED O(P_STR("address") "," P_INT("host_port") "," P_INT("sandbox_port"), \
        "\"address\",\"host_port\",\"sandbox_port\"")
static const char out_env_status[] =
        O(P_STR("env") "," P_STR("base") "," P_STRN("tip") "," P_STRS("layers") "," P_INT(
                  "upper_bytes") "," P_STRS("dirty_files") "," P_BOOL("dirty_truncated") "," P_INT("running_jobs")
                  "," P_ARR("host_dirs", HOST_DIR) "," P_OBJ("isolation") "," P_STR("workspace_mode") ","
                  P_STRS("live_paths") "," P_OBJ("limits") "," P_OBJ("network") "," P_ARR("published", PUBLISHED),
          "\"env\",\"base\",\"tip\",\"layers\",\"running_jobs\",\"isolation\"");
#define WS_CHANGE P_STR("path") ",\"change\":{\"type\":\"string\",\"enum\":[\"added\",\"modified\",\"deleted\"]}"
static const char out_apply[] =
        O(P_STR("host_path") "," P_BOOL("dry_run") "," P_ARR("applied", O(WS_CHANGE, "\"path\",\"change\"")) ","
          P_ARR("refused", O(WS_CHANGE "," P_STR("reason"), "\"path\",\"change\",\"reason\"")) ","
          P_BOOL("truncated"),
          "\"host_path\",\"dry_run\",\"applied\",\"refused\"");
static const char out_drop[] = O(P_STRN("tip") "," P_INT("discarded_bytes") "," P_INT("killed_jobs"), "\"tip\"");
static const char out_commit[] =
        O(P_STR("commit_id") "," P_STR("layer_id") "," P_STRN("parent") "," P_STR("message") "," P_BOOL(
                  "unchanged") "," P_INT("workspace_pending"),
          "\"commit_id\",\"layer_id\",\"parent\"");
#define COMMIT_ITEM O(P_STR("commit_id") "," P_STRN("parent") "," P_STR("message") "," P_STR("time"), \
        "\"commit_id\",\"parent\",\"message\",\"time\"")
#define REFLOG_ITEM O(P_STR("commit_id") "," P_STR("time") "," P_STR("op"), "\"commit_id\",\"time\",\"op\"")
#define SNAPSHOT_PROPS P_STR("env") "," P_STRN("tip") "," P_ARR("commits", COMMIT_ITEM) "," P_ARR("reflog", REFLOG_ITEM)
static const char out_snapshots[] = O(SNAPSHOT_PROPS, "\"env\",\"tip\",\"commits\",\"reflog\"");
static const char out_rollback[] = O(P_STR("commit_id") "," P_STRN("previous"), "\"commit_id\",\"previous\"");
static const char out_gc[] = O(P_INT("removed_layers") "," P_INT("removed_commits") "," P_INT("freed_bytes"),
                               "\"removed_layers\",\"removed_commits\",\"freed_bytes\"");
static const char out_diff[] = O(P_STRS("added") "," P_STRS("modified") "," P_STRS("deleted") "," P_BOOL(
                                         "truncated"),
                                 "\"added\",\"modified\",\"deleted\"");
static const char out_pkg_install[] =
        O(P_STRS("packages") "," P_BOOL("already_installed") "," RUN_PROPS, "\"packages\",\"already_installed\"," RUN_REQ);
static const char out_bind[] = O(P_STR("host_path") "," P_STR("mount_point") "," P_STR("mode"),
                                 "\"host_path\",\"mount_point\",\"mode\"");
static const char out_file_read[] =
        O(P_STR("path") "," P_STR("content") "," P_STR("encoding") "," P_INT("start_line") "," P_INT(
                  "lines_returned") "," P_INT("total_lines") "," P_INT("size") "," P_BOOL("truncated"),
          "\"path\",\"content\",\"encoding\",\"truncated\"");
static const char out_file_write[] = O(P_STR("path") "," P_INT("bytes_written") "," P_BOOL("created"),
                                       "\"path\",\"bytes_written\",\"created\"");
static const char out_file_edit[] = O(P_STR("path") "," P_INT("replacements"), "\"path\",\"replacements\"");
#define ENTRY O(P_STR("path") ",\"type\":{\"type\":\"string\",\"enum\":[\"file\",\"dir\",\"symlink\"," \
        "\"other\"]}," P_INT("size"), "\"path\",\"type\"")
static const char out_file_list[] = O(P_STR("path") "," P_ARR("entries", ENTRY) "," P_BOOL("truncated"),
                                      "\"path\",\"entries\",\"truncated\"");
#define MATCH O(P_STR("path") "," P_INT("line") "," P_STR("text"), "\"path\",\"line\",\"text\"")
static const char out_file_search[] = O(P_ARR("matches", MATCH) "," P_BOOL("truncated"), "\"matches\",\"truncated\"");
static const char out_http[] =
        O(P_STR("url") "," P_INT("status") ",\"headers\":{\"type\":\"object\",\"additionalProperties\":"
                                           "{\"type\":\"string\"}}," P_STR("body") "," P_STR(
                                                   "body_encoding") "," P_BOOL("truncated") "," P_INT("duration_ms"),
          "\"url\",\"status\",\"headers\",\"body\",\"body_encoding\",\"truncated\"");

#define SANDBOX_PROPS P_STR("sandbox") "," P_STR("env") "," P_STRN("base_commit")
static const char out_sandbox[] =
        O(SANDBOX_PROPS "," P_STR("forked_from") "," P_STR("note"), "\"sandbox\",\"env\",\"base_commit\"");
static const char out_sandbox_list[] =
        O(P_ARR("sandboxes", O(SANDBOX_PROPS "," P_BOOL("default") "," P_BOOL("running") "," P_INT("running_jobs"),
                               "\"sandbox\",\"env\",\"base_commit\",\"default\",\"running\",\"running_jobs\""))
          "," P_INT("max_sandboxes"), "\"sandboxes\",\"max_sandboxes\"");
static const char out_sandbox_close[] = O(P_STR("sandbox") "," P_INT("killed_jobs"), "\"sandbox\",\"killed_jobs\"");

#define STEP_ITEM O(P_INT("step") "," P_STR("tool") "," P_STR("args") "," P_STR("time") "," P_INT("exit_code") "," \
                    P_BOOL("undone") "," P_BOOL("undoable") "," P_STR("note") "," P_ARR("paths", "{\"type\":\"string\"}") "," \
                    P_INT("paths_total") "," P_INT("bytes"), \
                    "\"step\",\"tool\",\"args\",\"time\",\"undone\",\"undoable\",\"paths\",\"paths_total\",\"bytes\"")
#define UNDO_COUNTS P_INT("undoable") "," P_INT("redoable")
static const char out_history[] = O(P_ARR("steps", STEP_ITEM) "," UNDO_COUNTS "," P_INT("dropped") "," P_INT("undo_depth"),
                                    "\"steps\",\"undoable\",\"redoable\",\"dropped\",\"undo_depth\"");
#define UNDO_KILLED P_INT("killed_jobs") "," P_STRS("killed_job_ids")
static const char out_undo[] = O(P_INT("undone") "," UNDO_COUNTS "," UNDO_KILLED,
                                 "\"undone\",\"undoable\",\"redoable\",\"killed_jobs\",\"killed_job_ids\"");
static const char out_redo[] = O(P_INT("redone") "," UNDO_COUNTS "," UNDO_KILLED,
                                 "\"redone\",\"undoable\",\"redoable\",\"killed_jobs\",\"killed_job_ids\"");

/* clang-format on */

/* ---- the table ------------------------------------------------------------------------- */

/* The handlers take the struct serve the call acts on; the table's type passes it as void *. */
#define THUNK(f)                                                                                   \
        static int f##_row(void *sv, struct mcp_call *call, const char *tool,                      \
                           const struct mcp_args *args) {                                          \
                return f(sv, call, tool, args);                                                    \
        }
THUNK(serve_bind_call)
THUNK(serve_env_commit)
THUNK(serve_env_diff)
THUNK(serve_env_discard)
THUNK(serve_env_gc)
THUNK(serve_env_history)
THUNK(serve_env_redo)
THUNK(serve_env_reset)
THUNK(serve_env_rollback)
THUNK(serve_env_snapshot_list)
THUNK(serve_env_status)
THUNK(serve_env_undo)
THUNK(serve_file_edit)
THUNK(serve_file_list)
THUNK(serve_file_read)
THUNK(serve_file_search)
THUNK(serve_file_write)
THUNK(serve_http_call)
THUNK(serve_job_list)
THUNK(serve_job_output)
THUNK(serve_job_query)
THUNK(serve_job_start)
THUNK(serve_pkg_install)
THUNK(serve_pkg_query)
THUNK(serve_python_exec)
THUNK(serve_sandbox_close)
THUNK(serve_sandbox_fork)
THUNK(serve_sandbox_list)
THUNK(serve_sandbox_new)
THUNK(serve_shell_list)
THUNK(serve_shell_run)
THUNK(serve_workspace_apply)
#undef THUNK
/* A tool's handler, and whether it acts on the sandbox its argument names (the hub picks it)
 * or on none (called with the hub's template: http_*, sandbox_new, sandbox_list). */
#define IN_SANDBOX(f) f##_row, 0
/* One that can change the sandbox's files: a checkpoint before it (env_undo). */
#define CHANGES(f) f##_row, SERVE_TOOL_CHANGES
#define ON_HUB(f) f##_row, SERVE_TOOL_ON_HUB

static const struct mcp_tool tools[] = {
        {"shell_run", "Run a shell command",
         "Run a command with /bin/sh -c inside the persistent sandbox and wait for it. stdout and "
         "stderr are returned separately, capped, and say when they were cut. Files changed are "
         "kept for later calls; env_reset drops them unless committed, except in live host "
         "directories (env_status live_paths), where a write changes the user's files at once.",
         ARGS(shell_run_args), out_run, H_RUN, 0, 0, CHANGES(serve_shell_run)},
        {"shell_list", "List commands", "List the executables on PATH inside the sandbox.",
         ARGS(sandbox_args), out_shell_list, H_READ, 0, 0, IN_SANDBOX(serve_shell_list)},
        {"env_status", "Environment status",
         "Show the sandbox environment: base, layer stack, tip commit, size of uncommitted changes "
         "and the dirty files, running jobs, which isolation layers are active, the resource "
         "limits (room for changes, memory, tasks) and --setenv names, and the host directories "
         "bound in (host_dirs: live or overlay, ro or rw; live_paths: where a write changes the "
         "host at once and env_reset cannot undo it), and the ports published to the host "
         "(published: a server on the sandbox's loopback at sandbox_port is reached from the "
         "host at address:host_port).",
         ARGS(sandbox_args), out_env_status, H_READ, 0, 0, IN_SANDBOX(serve_env_status)},
        {"env_reset", "Reset the sandbox",
         "Kill every process in the sandbox and drop all uncommitted changes, back to the tip "
         "commit, an overlay workspace's pending /workspace changes included. Writes to live "
         "host directories (env_status live_paths) are on the host already: a reset cannot undo "
         "them.",
         ARGS(sandbox_args), out_drop, MCP_HINT_DESTRUCTIVE | MCP_HINT_IDEMPOTENT, 0, 0,
         IN_SANDBOX(serve_env_reset)},
        {"env_discard", "Discard uncommitted changes",
         "Drop the uncommitted file changes (the overlay's upper layer, an overlay workspace's "
         "pending /workspace changes included); jobs are stopped first. Live host directories "
         "are not touched.",
         ARGS(sandbox_args), out_drop, MCP_HINT_DESTRUCTIVE | MCP_HINT_IDEMPOTENT, 0, 0,
         IN_SANDBOX(serve_env_discard)},
        {"env_commit", "Commit the sandbox",
         "Save the uncommitted changes as a new commit (a content-addressed layer) that survives "
         "server restarts. Refused while commands run, and when the environment's tip moved "
         "since the sandbox started unless rebase is true. Host directories are never committed: "
         "a live /workspace is on the host already, an overlay workspace's changes stay pending "
         "for workspace_apply. Over rtn serve --http the environments are the server's: every "
         "later session starts on the commit.",
         ARGS(commit_args), out_commit, 0, 0, 0, IN_SANDBOX(serve_env_commit)},
        {"env_snapshot_list", "List commits",
         "List the environment's commits, newest first, and its reflog: every tip it had in the "
         "last 30 days, which env_rollback accepts too.",
         ARGS(sandbox_args), out_snapshots, H_READ, 0, 0, IN_SANDBOX(serve_env_snapshot_list)},
        {"env_rollback", "Roll back to a commit",
         "Make an earlier commit, or a tip from the reflog (env_snapshot_list), the tip and "
         "restart the sandbox on it; uncommitted changes are dropped. An overlay workspace's "
         "pending /workspace changes are kept, and live host directories are not rolled back.",
         ARGS(rollback_args), out_rollback, MCP_HINT_DESTRUCTIVE | MCP_HINT_IDEMPOTENT, 0, 0,
         CHANGES(serve_env_rollback)},
        {"env_gc", "Collect garbage",
         "Delete layers and commits that no environment's tip or reflog reaches and no running "
         "sandbox uses.",
         ARGS(sandbox_args), out_gc, MCP_HINT_DESTRUCTIVE | MCP_HINT_IDEMPOTENT, 0, 0,
         IN_SANDBOX(serve_env_gc)},
        {"env_history", "List undoable calls",
         "List the calls since the last commit that could change the sandbox's files, newest "
         "first: step, tool, a short form of the arguments, time, and whether env_undo can take "
         "it back. A checkpoint is taken before each such call (at most --undo-depth, the "
         "oldest dropped first). Live host directories are not covered.",
         ARGS(sandbox_args), out_history, H_READ, 0, 0, IN_SANDBOX(serve_env_history)},
        {"env_undo", "Undo calls",
         "Put the sandbox's files back as they were before the last steps calls (default 1): "
         "the root filesystem's uncommitted changes, an overlay workspace's pending /workspace "
         "changes and /tmp. The sandbox restarts: running jobs are killed. env_redo goes "
         "forward again until the next changing call. Live host directories are not undone.",
         ARGS(undo_args), out_undo, MCP_HINT_DESTRUCTIVE, 0, 0, IN_SANDBOX(serve_env_undo)},
        {"env_redo", "Redo undone calls",
         "Bring back the files of calls env_undo took back (default 1), until the next call "
         "that changes files. The sandbox restarts: running jobs are killed.",
         ARGS(redo_args), out_redo, MCP_HINT_DESTRUCTIVE, 0, 0, IN_SANDBOX(serve_env_redo)},
        {"env_diff", "Show uncommitted changes",
         "List files added, modified and deleted since the tip commit, and an overlay "
         "workspace's pending /workspace changes against the user's directory. Writes to live "
         "host directories are not listed: they are on the host already.",
         ARGS(sandbox_args), out_diff, H_READ, 0, 0, IN_SANDBOX(serve_env_diff)},
        {"pkg_install", "Install packages",
         "Install distribution packages into the sandbox with its package manager, through rtn's "
         "network gate (package mirrors only). Kept only if committed.",
         ARGS(pkg_install_args), out_pkg_install, MCP_HINT_IDEMPOTENT | MCP_HINT_OPEN_WORLD, 0, 0,
         CHANGES(serve_pkg_install)},
        {"pkg_query", "Query packages",
         "Read-only package queries: apt-cache policy/show/search/depends, dpkg -l/-L/-S.",
         ARGS(pkg_query_args), out_run, H_READ, 0, 0, IN_SANDBOX(serve_pkg_query)},
        {"shell_job_start", "Start a background job",
         "Start a command in the background (a server, a long build) and return its job id at "
         "once. "
         "Its output is kept in a bounded log. The job id works in later calls, over HTTP "
         "from later requests too, while its sandbox is open.",
         ARGS(job_start_args), out_job_start, H_RUN, 0, 0, CHANGES(serve_job_start)},
        {"shell_job_status", "Job status", "State, exit code and output size of a job.",
         ARGS(job_id_args), out_job, H_READ, 0, 0, IN_SANDBOX(serve_job_query)},
        {"shell_job_wait", "Wait for a job", "Wait up to timeout seconds for a job to end.",
         ARGS(job_wait_args), out_job_wait, H_READ, 0, 0, IN_SANDBOX(serve_job_query)},
        {"shell_job_output", "Job output",
         "Read a job's combined output from offset (or its last tail bytes).",
         ARGS(job_output_args), out_job_output, H_READ, 0, 0, IN_SANDBOX(serve_job_output)},
        {"shell_job_kill", "Kill a job", "Kill a job and everything it started.", ARGS(job_id_args),
         out_job_wait, MCP_HINT_DESTRUCTIVE | MCP_HINT_IDEMPOTENT, 0, 0,
         IN_SANDBOX(serve_job_query)},
        {"shell_job_list", "List jobs", "List the session's jobs, running and finished.",
         ARGS(sandbox_args), out_job_list, H_READ, 0, 0, IN_SANDBOX(serve_job_list)},
        {"bind_host_dir", "Bind a host directory",
         "Make a host directory (a user data directory) appear inside the running sandbox, "
         "read-only or read-write. The bind is live: a write changes the user's files at once "
         "and env_reset cannot undo it. Hidden and system directories are refused. Not "
         "offered by rtn serve --http (its sessions get --workspace-root instead).",
         ARGS(bind_args), out_bind, 0, 0, MCP_TOOLS_HTTP_SESSION, IN_SANDBOX(serve_bind_call)},
        {"file_read", "Read a file",
         "Read a text file inside the sandbox as numbered lines, or its bytes as base64.",
         ARGS(file_read_args), out_file_read, H_READ, 0, 0, IN_SANDBOX(serve_file_read)},
        {"file_write", "Write a file", "Create or overwrite a file inside the sandbox.",
         ARGS(file_write_args), out_file_write, MCP_HINT_DESTRUCTIVE | MCP_HINT_IDEMPOTENT, 0, 0,
         CHANGES(serve_file_write)},
        {"file_edit", "Edit a file",
         "Replace an exact string in a file inside the sandbox; it must match once unless "
         "replace_all.",
         ARGS(file_edit_args), out_file_edit, MCP_HINT_DESTRUCTIVE, 0, 0, CHANGES(serve_file_edit)},
        {"file_list", "List a directory",
         "List a directory inside the sandbox, optionally recursively.", ARGS(file_list_args),
         out_file_list, H_READ, 0, 0, IN_SANDBOX(serve_file_list)},
        {"file_search", "Search files",
         "Search file contents inside the sandbox with a regular expression.",
         ARGS(file_search_args), out_file_search, H_READ, 0, 0, IN_SANDBOX(serve_file_search)},
        {"python_exec", "Run Python", "Run Python 3 code inside the sandbox; shell_run's result.",
         ARGS(python_args), out_run, H_RUN, 0, 0, CHANGES(serve_python_exec)},
        {"workspace_apply", "Apply the workspace's changes",
         "Write the pending /workspace changes of an overlay workspace to the user's directory "
         "on the host. Refused and left pending, each with its reason: setuid/setgid files, "
         "device nodes, FIFOs and sockets, symlinks that leave the workspace, files host "
         "programs run by themselves (.git, hook frameworks' configs, shell and language "
         "start-up files, .envrc, editor and agent settings: only the user can write those, "
         "with rtn apply --allow-protected), and files the user changed on the host since the "
         "sandbox started (conflicts). Refused "
         "while commands run; the sandbox restarts at the next call.",
         ARGS(apply_args), out_apply, MCP_HINT_DESTRUCTIVE | MCP_HINT_IDEMPOTENT,
         MCP_TOOLS_WS_OVERLAY, 0, CHANGES(serve_workspace_apply)},
        {"sandbox_new", "Open a sandbox",
         "Open another sandbox, on the environment's tip or on the environment or commit named "
         "by from, and return its handle. Pass the handle as the sandbox argument of any tool "
         "to act on it; calls without one act on sb-1. At most --max-sandboxes are open. A "
         "handle lasts until sandbox_close or the server's end; over HTTP it lasts across "
         "requests (stateless 2026-07-28 ones too) until unused for --idle-timeout with no "
         "job of it running.",
         ARGS(sandbox_new_args), out_sandbox, 0, 0, 0, ON_HUB(serve_sandbox_new)},
        {"sandbox_fork", "Fork a sandbox",
         "Open a new sandbox holding a copy of a sandbox's files as they are now: its "
         "uncommitted changes and an overlay workspace's pending /workspace changes. Running "
         "processes and jobs are not copied. Later writes on either side stay its own; live "
         "host directories are the same host files in both.",
         ARGS(sandbox_args), out_sandbox, 0, 0, 0, IN_SANDBOX(serve_sandbox_fork)},
        {"sandbox_list", "List sandboxes", "List the open sandboxes and their handles.", NOARGS,
         out_sandbox_list, H_READ, 0, 0, ON_HUB(serve_sandbox_list)},
        {"sandbox_close", "Close a sandbox",
         "Kill a sandbox's processes and drop everything it did not commit (an overlay "
         "workspace's unapplied changes included); its handle is refused afterwards.",
         ARGS(sandbox_close_args), out_sandbox_close, MCP_HINT_DESTRUCTIVE, 0, 0,
         IN_SANDBOX(serve_sandbox_close)},
        {"http_get", "HTTP GET",
         "Fetch a public URL from the host side. Private, loopback, link-local and metadata "
         "addresses and this machine's own are refused, on every redirect too.",
         ARGS(http_get_args), out_http, H_READ | MCP_HINT_OPEN_WORLD, MCP_TOOLS_HTTP, 0,
         ON_HUB(serve_http_call)},
        {"http_post", "HTTP POST",
         "POST to a public URL from the host side, with http_get's address filter.",
         ARGS(http_post_args), out_http, MCP_HINT_DESTRUCTIVE | MCP_HINT_OPEN_WORLD, MCP_TOOLS_HTTP,
         0, ON_HUB(serve_http_call)},
};

const struct mcp_tool_table serve_tool_table = {tools, sizeof tools / sizeof tools[0]};

const struct mcp_tool *serve_tool_find(const char *name) {
        for (size_t i = 0; i < serve_tool_table.n; i++)
                if (!strcmp(tools[i].name, name))
                        return &tools[i];
        return NULL;
}
