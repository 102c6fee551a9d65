/* `rtn serve`: an MCP stdio server (mcp/) whose backend is one persistent sandbox session
 * (runtime/session.c) on the store's environment. This file sets it up and implements the
 * command tools: shell_run, shell_list, python_exec, pkg_query and the shell_job_* family.
 * Environment tools (commit, rollback, diff ...) are in serve_env.c. Every tool failure is a
 * result with isError and a sentence saying what to do; nothing an agent sends ends the
 * server. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "common/log.h"
#include "common/term.h"
#include "common/loop.h"
#include "init/policy.h"
#include "runtime/cmd.h"
#include "netns/netns.h"
#include "runtime/files.h"
#include "runtime/http.h"
#include "runtime/offload.h"
#include "runtime/pkg.h"
#include "runtime/rootfs.h"
#include "runtime/pending.h"
#include "runtime/serve.h"
#include "runtime/wsover.h"

#define PROGRESS_USEC (2ULL * 1000 * 1000)
#define PYTHON_CODE_MAX (96 * 1024)

struct run_ctx {
        struct serve *sv;
        struct mcp_call *call;
        struct rt_cmd *cmd;
        struct rtn_loop_source *progress;
        bool restarted; /* this command started a fresh sandbox after rtn-init died */
};

static void json_run_fields(struct rtn_json_buf *b, const struct rt_cmd *c) {
        int sig = rt_cmd_signal(c);
        rtn_json_kv_int(b, "exit_code", rt_cmd_exit_code(c));
        rtn_json_key(b, "signal");
        if (sig)
                rtn_json_int(b, sig);
        else
                rtn_json_null(b);
        rtn_json_key(b, "stdout");
        rtn_json_strn(b, c->out.data ? c->out.data : "", c->out.len);
        rtn_json_key(b, "stderr");
        if (c->spawn_errno) {
                rtn_json_strf(b, "rtn: %s /bin/sh: %s", init_step_name(c->spawn_step),
                              strerror(c->spawn_errno));
        } else {
                rtn_json_strn(b, c->err.data ? c->err.data : "", c->err.len);
        }
        rtn_json_kv_bool(b, "stdout_truncated", c->out.total > c->out.len);
        rtn_json_kv_bool(b, "stderr_truncated", c->err.total > c->err.len);
        rtn_json_kv_bool(b, "timed_out", c->timed_out);
        rtn_json_kv_int(b, "duration_ms", (int64_t)(c->end_ms - c->start_ms));
        if (c->blocked.total > 0)
                rt_blocked_json(b, &c->blocked);
}

/* The report's lines ("rtn: blocked mount(2) by pid 7 (mount): EPERM"), one per record, for
 * the result's second text content; NULL when nothing was blocked. */
static char *blocked_note(const struct rt_blocked *bl) {
        if (bl->total == 0)
                return NULL;
        char *note = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&note, &size);
        if (!f)
                return NULL;
        char line[256];
        for (uint32_t i = 0; rt_blocked_line(bl, i, line, sizeof line) >= 0; i++)
                fprintf(f, "%srtn: %s", i ? "\n" : "", line);
        if (fclose(f) != 0) {
                free(note);
                return NULL;
        }
        return note;
}

static void finish_json_note(struct mcp_call *call, struct rtn_json_buf *b, const char *note,
                             bool is_error) {
        if (b->err)
                mcp_call_finish_error(call, "result too large (%s)", strerror(-b->err));
        else
                mcp_call_finish_note(call, b->data, note, is_error);
        rtn_json_buf_free(b);
}

static void finish_json(struct mcp_call *call, struct rtn_json_buf *b, bool is_error) {
        finish_json_note(call, b, NULL, is_error);
}

static void run_done(struct rt_cmd *c, void *ud) {
        struct run_ctx *rc = ud;
        if (rc->progress)
                rtn_loop_timer_cancel(rc->sv->loop, rc->progress);
        if (c->lost && c->lost_why) {
                mcp_call_finish_error(rc->call, "the command was killed: %s while it ran",
                                      c->lost_why);
        } else if (c->lost) {
                mcp_call_finish_error(rc->call,
                                      "the sandbox ended while the command ran (its "
                                      "init died); the next call starts a fresh sandbox on the "
                                      "same layers and uncommitted changes");
        } else {
                struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
                rtn_json_obj_begin(&b);
                json_run_fields(&b, c);
                if (rc->restarted)
                        rtn_json_kv_bool(&b, "sandbox_restarted", true);
                rtn_json_obj_end(&b);
                _cleanup_free_ char *note = blocked_note(&c->blocked);
                finish_json_note(rc->call, &b, note, false);
        }
        /* The command cannot outlive its call: free it after the callback returns. */
        c->done_fn = NULL;
        rt_cmd_free(c);
        free(rc);
}

static void on_progress(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct run_ctx *rc = ud;
        char msg[64];
        uint64_t secs = (rt_now_ms() - rc->cmd->start_ms) / 1000;
        snprintf(msg, sizeof msg, "running for %llu s", (unsigned long long)secs);
        mcp_call_progress(rc->call, (double)secs, 0, msg);
}

/* Reads the arguments shared by shell_run-like tools into o. */
static int read_run_args(const struct mcp_args *a, struct rt_cmd_opts *o, char **cwd, char ***env,
                         char **in) {
        int64_t t = 0;
        if (mcp_args_str(a, "cwd", cwd) == 0)
                o->cwd = *cwd;
        if (mcp_args_int(a, "timeout", &t) == 0)
                o->timeout_ms = (uint64_t)t * 1000;
        if (mcp_args_map(a, "env", "=", env) == 0)
                o->env = *env;
        if (mcp_args_str(a, "stdin", in) == 0) {
                o->stdin_data = *in;
                o->stdin_len = strlen(*in);
        }
        return 0;
}

static int start_run(struct serve *sv, struct mcp_call *call, struct rt_cmd_opts *o) {
        struct rtn_error err = {0};
        struct run_ctx *rc = calloc(1, sizeof *rc);
        if (!rc)
                return -ENOMEM;
        rc->sv = sv;
        rc->call = call;
        int r = rt_session_run(sv->sess, o, run_done, rc, &rc->cmd, &err);
        /* Asked after the run: the death may have been noticed before it, or by its own
         * spawn request (rt_session_run then starts the fresh sandbox itself). */
        if (r == 0 && rt_session_take_crash(sv->sess)) {
                rc->restarted = true;
                mcp_log(sv->srv, MCP_LOG_WARNING,
                        "the sandbox's init had died; this command "
                        "runs in a fresh sandbox on the same layers and uncommitted changes");
        }
        if (r < 0) {
                free(rc);
                mcp_call_finish_error(call, "cannot start the command: %s", err.msg);
                return 0;
        }
        mcp_call_set_data(call, rc->cmd);
        if (mcp_call_wants_progress(call))
                (void)rtn_loop_add_timer(sv->loop, PROGRESS_USEC, PROGRESS_USEC, on_progress, rc,
                                         &rc->progress);
        return 0;
}

static int tool_shell_run(struct serve *sv, struct mcp_call *call, const struct mcp_args *a,
                          const char *command) {
        _cleanup_free_ char *cmd = NULL, *cwd = NULL, *in = NULL;
        char **env = NULL;
        struct rt_cmd_opts o = {.policy = INIT_POLICY_AGENT};
        if (!command) {
                if (mcp_args_str(a, "command", &cmd) < 0)
                        return -EINVAL;
                command = cmd;
        }
        o.command = command;
        read_run_args(a, &o, &cwd, &env, &in);
        int r = start_run(sv, call, &o);
        mcp_strv_free(env);
        return r;
}

/* python_exec: the code travels in the environment so stdin stays the caller's. */
static int tool_python(struct serve *sv, struct mcp_call *call, const struct mcp_args *a) {
        _cleanup_free_ char *code = NULL, *in = NULL, *var = NULL;
        if (mcp_args_str(a, "code", &code) < 0)
                return -EINVAL;
        if (strlen(code) > PYTHON_CODE_MAX) {
                mcp_call_finish_error(call,
                                      "code is longer than %d bytes; write it to a file "
                                      "with file_write and run it with shell_run",
                                      PYTHON_CODE_MAX);
                return 0;
        }
        if (asprintf(&var, "RTN_PYTHON_CODE=%s", code) < 0)
                return -ENOMEM;
        char *env[] = {var, NULL};
        struct rt_cmd_opts o = {
                .policy = INIT_POLICY_AGENT,
                .command = "command -v python3 >/dev/null || { echo 'python3 is not installed in "
                           "this sandbox' >&2; exit 127; }; exec python3 -c 'import os; "
                           "c = os.environ.pop(\"RTN_PYTHON_CODE\"); "
                           "exec(compile(c, \"<python_exec>\", \"exec\"))'",
                .env = env,
        };
        int64_t t;
        if (mcp_args_int(a, "timeout", &t) == 0)
                o.timeout_ms = (uint64_t)t * 1000;
        if (mcp_args_str(a, "stdin", &in) == 0) {
                o.stdin_data = in;
                o.stdin_len = strlen(in);
        }
        return start_run(sv, call, &o);
}

/* shell_list: run inside, since PATH and the files are the sandbox's. */
static void list_done(struct rt_cmd *c, void *ud) {
        struct run_ctx *rc = ud;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "executables");
        rtn_json_arr_begin(&b);
        const char *p = c->out.data ? c->out.data : "", *end = p + c->out.len;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                if (!nl)
                        break; /* a cut last line */
                if (nl > p)
                        rtn_json_strn(&b, p, (size_t)(nl - p));
                p = nl + 1;
        }
        rtn_json_arr_end(&b);
        rtn_json_kv_bool(&b, "truncated", c->out.total > c->out.len);
        rtn_json_obj_end(&b);
        finish_json(rc->call, &b, c->lost);
        c->done_fn = NULL;
        rt_cmd_free(c);
        free(rc);
}

static int tool_shell_list(struct serve *sv, struct mcp_call *call) {
        struct rtn_error err = {0};
        struct rt_cmd_opts o = {
                .policy = INIT_POLICY_AGENT,
                .command = "IFS=:; for d in $PATH; do for f in \"$d\"/*; do "
                           "[ -f \"$f\" ] && [ -x \"$f\" ] && echo \"${f##*/}\"; done; done | "
                           "sort -u",
                .max_output = 512 * 1024,
        };
        struct run_ctx *rc = calloc(1, sizeof *rc);
        if (!rc)
                return -ENOMEM;
        rc->sv = sv;
        rc->call = call;
        if (rt_session_run(sv->sess, &o, list_done, rc, &rc->cmd, &err) < 0) {
                free(rc);
                mcp_call_finish_error(call, "cannot list executables: %s", err.msg);
                return 0;
        }
        mcp_call_set_data(call, rc->cmd);
        return 0;
}

/* Single-quotes s for /bin/sh. */
static int sh_quote(char *buf, size_t cap, size_t *off, const char *s) {
        if (*off + 3 > cap)
                return -E2BIG;
        buf[(*off)++] = '\'';
        for (; *s; s++) {
                const char *piece = *s == '\'' ? "'\\''" : NULL;
                size_t n = piece ? 4 : 1;
                if (*off + n + 2 > cap)
                        return -E2BIG;
                if (piece)
                        memcpy(buf + *off, piece, n);
                else
                        buf[*off] = *s;
                *off += n;
        }
        buf[(*off)++] = '\'';
        buf[(*off)++] = ' ';
        buf[*off] = '\0';
        return 0;
}

static bool pkg_query_allowed(char **v, size_t n) {
        static const char *const apt_ok[] = {"policy",   "show",    "search",  "depends",
                                             "rdepends", "madison", "showpkg", NULL};
        static const char *const dpkg_ok[] = {"-l",          "-L",       "-S",       "-s", "--list",
                                              "--listfiles", "--search", "--status", NULL};
        if (n < 2)
                return false;
        const char *const *ok = !strcmp(v[0], "apt-cache") ? apt_ok
                                : !strcmp(v[0], "dpkg")    ? dpkg_ok
                                                           : NULL;
        if (!ok)
                return false;
        bool sub = false;
        for (size_t i = 0; ok[i]; i++)
                sub |= !strcmp(v[1], ok[i]);
        if (!sub)
                return false;
        for (size_t i = 2; i < n; i++)
                if (v[i][0] == '-' || v[i][0] == '\0')
                        return false; /* no options beyond the verb: nothing that writes */
        return true;
}

static int tool_pkg_query(struct serve *sv, struct mcp_call *call, const struct mcp_args *a) {
        char **v = NULL;
        size_t n = 0;
        if (mcp_args_strv(a, "args", &v, &n) < 0)
                return -EINVAL;
        if (!pkg_query_allowed(v, n)) {
                mcp_strv_free(v);
                mcp_call_finish_error(call,
                                      "pkg_query runs only read-only queries: apt-cache "
                                      "policy|show|search|depends|rdepends|madison|showpkg NAME... "
                                      "or dpkg -l|-L|-S|-s NAME... (no further options)");
                return 0;
        }
        char cmd[8192];
        size_t off = 0;
        int r = 0;
        for (size_t i = 0; i < n && r == 0; i++)
                r = sh_quote(cmd, sizeof cmd, &off, v[i]);
        mcp_strv_free(v);
        if (r < 0) {
                mcp_call_finish_error(call, "query too long");
                return 0;
        }
        struct rt_cmd_opts o = {.policy = INIT_POLICY_AGENT, .command = cmd};
        return start_run(sv, call, &o);
}

/* ---- jobs ---------------------------------------------------------------------------- */

#define JOB_DEFAULT_TIMEOUT_MS (24ULL * 3600 * 1000)
#define JOB_LOG_MAX (4u << 20)

static const char *job_state(const struct rt_cmd *c) {
        if (c->lost)
                return "killed"; /* its sandbox ended: gone, even before its pipes drain */
        if (!c->done)
                return "running";
        if (c->timed_out)
                return "timed_out";
        if (c->killed || c->lost)
                return "killed";
        return "exited";
}

static void json_job(struct rtn_json_buf *b, const struct serve_job *j) {
        const struct rt_cmd *c = j->cmd;
        rtn_json_key(b, "job_id");
        rtn_json_strf(b, "%u", j->num);
        rtn_json_kv_str(b, "command", c->command);
        rtn_json_kv_str(b, "state", job_state(c));
        rtn_json_key(b, "exit_code");
        if (c->done)
                rtn_json_int(b, rt_cmd_exit_code(c));
        else
                rtn_json_null(b);
        rtn_json_key(b, "signal");
        if (c->done && rt_cmd_signal(c))
                rtn_json_int(b, rt_cmd_signal(c));
        else
                rtn_json_null(b);
        uint64_t end = c->done ? c->end_ms : rt_now_ms();
        rtn_json_kv_int(b, "duration_ms", (int64_t)(end - c->start_ms));
        rtn_json_kv_int(b, "output_bytes", (int64_t)c->out.total);
        if (c->done && c->blocked.total > 0)
                rt_blocked_json(b, &c->blocked);
}

static void answer_job(struct mcp_call *call, const struct serve_job *j, int waiting) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        json_job(&b, j);
        if (waiting >= 0)
                rtn_json_kv_bool(&b, "timed_out_waiting", waiting);
        rtn_json_obj_end(&b);
        finish_json(call, &b, false);
}

/* Answers waiter slot; its timer is cancelled unless it is the one firing (from_timer). */
static void job_wake(struct serve *sv, struct serve_job *j, int slot, bool timed_out,
                     bool from_timer) {
        struct mcp_call *call = j->waiters[slot];
        j->waiters[slot] = NULL;
        if (j->wait_timers[slot] && !from_timer)
                rtn_loop_timer_cancel(sv->loop, j->wait_timers[slot]);
        j->wait_timers[slot] = NULL;
        answer_job(call, j, timed_out);
}

static void job_done(struct rt_cmd *c, void *ud) {
        struct serve_job *j = ud;
        for (int i = 0; i < SERVE_MAX_WAITERS; i++)
                if (j->waiters[i])
                        job_wake(j->sv, j, i, false, false);
}

static struct serve_job *job_find(struct serve *sv, const struct mcp_args *a) {
        _cleanup_free_ char *id = NULL;
        if (mcp_args_str(a, "job_id", &id) < 0)
                return NULL;
        char *end;
        unsigned long n = strtoul(id, &end, 10);
        if (*end || n == 0)
                return NULL;
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                if (sv->jobs[i].cmd && sv->jobs[i].num == n)
                        return &sv->jobs[i];
        return NULL;
}

static void job_forget(struct serve *sv, struct serve_job *j) {
        for (int i = 0; i < SERVE_MAX_WAITERS; i++)
                if (j->waiters[i])
                        job_wake(sv, j, i, !j->cmd->done && !j->cmd->lost, false);
        rt_cmd_free(j->cmd);
        memset(j, 0, sizeof *j);
}

/* A free slot, evicting the job that finished longest ago when the table is full. */
static struct serve_job *job_slot(struct serve *sv) {
        struct serve_job *old = NULL;
        for (int i = 0; i < SERVE_MAX_JOBS; i++) {
                struct serve_job *j = &sv->jobs[i];
                if (!j->cmd)
                        return j;
                if (j->cmd->done && (!old || j->cmd->end_ms < old->cmd->end_ms))
                        old = j;
        }
        if (old)
                job_forget(sv, old);
        return old;
}

static int tool_job_start(struct serve *sv, struct mcp_call *call, const struct mcp_args *a) {
        _cleanup_free_ char *cmd = NULL, *cwd = NULL, *in = NULL;
        char **env = NULL;
        struct rtn_error err = {0};
        if (mcp_args_str(a, "command", &cmd) < 0)
                return -EINVAL;
        struct serve_job *j = job_slot(sv);
        if (!j) {
                mcp_call_finish_error(call,
                                      "%d jobs are running, the most this server keeps; "
                                      "kill one with shell_job_kill first",
                                      SERVE_MAX_JOBS);
                return 0;
        }
        struct rt_cmd_opts o = {.policy = INIT_POLICY_AGENT,
                                .command = cmd,
                                .job = true,
                                .timeout_ms = JOB_DEFAULT_TIMEOUT_MS,
                                .max_output = JOB_LOG_MAX};
        read_run_args(a, &o, &cwd, &env, &in);
        int r = rt_session_run(sv->sess, &o, job_done, j, &j->cmd, &err);
        mcp_strv_free(env);
        if (r < 0) {
                j->cmd = NULL;
                mcp_call_finish_error(call, "cannot start the job: %s", err.msg);
                return 0;
        }
        j->num = ++sv->next_job;
        j->sv = sv;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "job_id");
        rtn_json_strf(&b, "%u", j->num);
        rtn_json_obj_end(&b);
        finish_json(call, &b, false);
        return 0;
}

static void on_wait_timeout(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct serve_job *j = ud;
        for (int i = 0; i < SERVE_MAX_WAITERS; i++)
                if (j->wait_timers[i] == t) {
                        job_wake(j->sv, j, i, true, true);
                        return;
                }
}

static int tool_job(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        struct serve_job *j = job_find(sv, a);
        if (!j) {
                mcp_call_finish_error(call, "no such job (shell_job_list shows the jobs kept)");
                return 0;
        }
        if (!strcmp(tool, "shell_job_status")) {
                answer_job(call, j, -1);
        } else if (!strcmp(tool, "shell_job_kill") || !strcmp(tool, "shell_job_wait")) {
                int64_t t = 5; /* a kill answers once the job is gone (SIGKILL: at once) */
                if (!strcmp(tool, "shell_job_kill"))
                        rt_cmd_kill(j->cmd);
                else
                        (void)mcp_args_int(a, "timeout", &t);
                if (j->cmd->done || t == 0) {
                        answer_job(call, j, !j->cmd->done);
                        return 0;
                }
                int slot = -1;
                for (int i = 0; i < SERVE_MAX_WAITERS && slot < 0; i++)
                        if (!j->waiters[i])
                                slot = i;
                if (slot < 0) {
                        mcp_call_finish_error(call, "too many waits on this job at once");
                        return 0;
                }
                if (rtn_loop_add_timer(sv->loop, (uint64_t)t * 1000000, 0, on_wait_timeout, j,
                                       &j->wait_timers[slot]) < 0)
                        return -ENOMEM;
                j->waiters[slot] = call;
        }
        return 0;
}

static int tool_job_output(struct serve *sv, struct mcp_call *call, const struct mcp_args *a) {
        struct serve_job *j = job_find(sv, a);
        if (!j) {
                mcp_call_finish_error(call, "no such job (shell_job_list shows the jobs kept)");
                return 0;
        }
        const struct rt_outbuf *o = &j->cmd->out;
        uint64_t first = o->total - o->len; /* offset of the oldest byte kept */
        int64_t off = -1, tail = -1;
        (void)mcp_args_int(a, "offset", &off);
        (void)mcp_args_int(a, "tail", &tail);
        uint64_t from = off >= 0 ? (uint64_t)off : first;
        if (tail > 0 && o->total - from > (uint64_t)tail)
                from = o->total - (uint64_t)tail;
        uint64_t dropped = from < first ? first - from : 0;
        if (from < first)
                from = first;
        if (from > o->total)
                from = o->total;
        size_t start = (size_t)(from - first), len = (size_t)(o->total - from);
        if (len > 256 * 1024)
                len = 256 * 1024; /* one answer at most; next_offset continues */
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "job_id");
        rtn_json_strf(&b, "%u", j->num);
        rtn_json_key(&b, "output");
        rtn_json_strn(&b, o->data ? o->data + start : "", len);
        rtn_json_kv_int(&b, "offset", (int64_t)from);
        rtn_json_kv_int(&b, "next_offset", (int64_t)(from + len));
        rtn_json_kv_int(&b, "dropped_bytes", (int64_t)dropped);
        rtn_json_kv_bool(&b, "truncated", from + len < o->total);
        rtn_json_kv_str(&b, "state", job_state(j->cmd));
        rtn_json_obj_end(&b);
        finish_json(call, &b, false);
        return 0;
}

static int tool_job_list(struct serve *sv, struct mcp_call *call) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "jobs");
        rtn_json_arr_begin(&b);
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                if (sv->jobs[i].cmd) {
                        rtn_json_obj_begin(&b);
                        json_job(&b, &sv->jobs[i]);
                        rtn_json_obj_end(&b);
                }
        rtn_json_arr_end(&b);
        rtn_json_obj_end(&b);
        finish_json(call, &b, false);
        return 0;
}

unsigned serve_running_jobs(const struct serve *sv) {
        unsigned n = 0;
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                n += sv->jobs[i].cmd && !sv->jobs[i].cmd->done;
        return n;
}

unsigned serve_drop_jobs(struct serve *sv) {
        unsigned n = serve_running_jobs(sv);
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                if (sv->jobs[i].cmd)
                        job_forget(sv, &sv->jobs[i]);
        return n;
}

/* ---- MCP backend ------------------------------------------------------------------------ */

static int op_call(void *ctx, struct mcp_call *call, const char *tool, const struct mcp_args *a) {
        struct serve *sv = ctx;
        if (!strcmp(tool, "shell_run"))
                return tool_shell_run(sv, call, a, NULL);
        if (!strcmp(tool, "shell_list"))
                return tool_shell_list(sv, call);
        if (!strcmp(tool, "python_exec"))
                return tool_python(sv, call, a);
        if (!strcmp(tool, "pkg_query"))
                return tool_pkg_query(sv, call, a);
        if (!strcmp(tool, "pkg_install"))
                return serve_pkg_install(sv, call, a);
        if (!strncmp(tool, "http_", 5))
                return serve_http_call(sv, call, tool, a);
        if (!strcmp(tool, "shell_job_start"))
                return tool_job_start(sv, call, a);
        if (!strcmp(tool, "shell_job_output"))
                return tool_job_output(sv, call, a);
        if (!strcmp(tool, "shell_job_list"))
                return tool_job_list(sv, call);
        if (!strncmp(tool, "shell_job_", 10))
                return tool_job(sv, call, tool, a);
        if (!strncmp(tool, "env_", 4) || !strcmp(tool, "workspace_apply"))
                return serve_env_call(sv, call, tool, a);
        if (!strncmp(tool, "file_", 5))
                return serve_files_call(sv, call, tool, a);
        if (!strcmp(tool, "bind_host_dir"))
                return serve_bind_call(sv, call, a);
        mcp_call_finish_error(call, "%s is not available in this build of rtn yet", tool);
        return 0;
}

static void op_cancel(void *ctx, struct mcp_call *call) {
        struct serve *sv = ctx;
        if (rt_http_cancel(sv->http, call) || rt_offload_cancel(sv->offload, call))
                return;
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                for (int k = 0; k < SERVE_MAX_WAITERS; k++)
                        if (sv->jobs[i].waiters[k] == call) {
                                job_wake(sv, &sv->jobs[i], k, true, false);
                                return;
                        }
        struct rt_cmd *c = mcp_call_get_data(call);
        if (c)
                rt_cmd_kill(c); /* its done callback finishes the call */
}

/* At exit, an overlay workspace's changes not applied become the environment's pending
 * changes, for rtn diff / rtn apply / rtn reset, unless it has some of its own. */
static void keep_workspace_changes(struct serve *sv) {
        char dir[4096];
        int lock = -1;
        struct rtn_error err = {0};
        int r = rt_pending_open(sv->store, sv->env, dir, sizeof dir, &lock, &err);
        if (r == 0)
                r = rt_ws_move(sv->session_dir, rt_session_upper_fs(sv->sess), dir,
                               rt_session_idmap(sv->sess), &err);
        rtn_safe_close(lock);
        if (r == 1)
                fprintf(stderr,
                        "rtn serve: the workspace changes not applied are kept as the pending "
                        "changes of environment %s (rtn diff, rtn apply, rtn reset)\n",
                        sv->env);
        else if (r < 0)
                fprintf(stderr, "rtn serve: the workspace changes not applied are lost: %s\n",
                        err.msg);
}

static void op_shutdown(void *ctx) {
        struct serve *sv = ctx;
        if (sv->gate)
                netns_gate_detach(sv->gate); /* before the loop goes */
        rt_http_shutdown(sv->http);
        rt_offload_shutdown(sv->offload);
        serve_drop_jobs(sv);
        rt_files_free(sv->files); /* pending file calls get their answers */
        sv->files = NULL;
        if (rt_session_idmap(sv->sess)) {
                sv->idmap = *rt_session_idmap(sv->sess);
                sv->have_idmap = true;
        }
        /* The sandbox first: no overlay may have the workspace's upper mounted while it is
         * copied out; the tmpfs it is on goes with the session. */
        rt_session_stop(sv->sess);
        if (sv->session_dir && rt_session_spec(sv->sess)->workspace_mode == RT_WS_OVERLAY)
                keep_workspace_changes(sv);
        rt_session_free(sv->sess);
        sv->sess = NULL;
}

static int op_attach(void *ctx, struct mcp_server *s) {
        struct serve *sv = ctx;
        struct rtn_error err = {0};
        sv->srv = s;
        sv->loop = mcp_server_loop(s);
        int r = rt_session_new(sv->loop, &sv->scfg, &sv->sess, &err);
        if (r == 0)
                r = serve_load_layers(sv, &err);
        if (r < 0)
                rtn_term_printf(stderr, "rtn serve: %s\n", err.msg);
        return r;
}

static const struct mcp_backend_ops serve_ops = {
        .attach = op_attach,
        .call = op_call,
        .cancel = op_cancel,
        .shutdown = op_shutdown,
};

static const char serve_usage[] =
        "usage: rtn serve [OPTIONS]\n"
        "MCP server on stdin/stdout: one persistent sandbox per server.\n"
        "  --data-dir DIR        store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
        "~/.local/share/rtn)\n"
        "  --env NAME            environment whose tip the sandbox starts from (default: default)\n"
        "  --rootfs host|NAME|DIR  base filesystem (default host; NAME: rtn rootfs list)\n"
        "  --allow-host HOST     let pkg_install reach HOST too (.example.org: all under it)\n"
        "  --workspace DIR       DIR at /workspace ('.' = the launch directory)\n"
        "  --workspace-mode live|overlay  live (default): the agent's writes to /workspace\n"
        "                        change DIR at once, and env_reset cannot undo them;\n"
        "                        overlay: they stay in the sandbox (env_diff lists them,\n"
        "                        env_reset drops them) until workspace_apply writes them to\n"
        "                        DIR; left unapplied at exit, they become the environment's\n"
        "                        pending changes (rtn diff, rtn apply, rtn reset)\n"
        "  --bind SRC:DST[:ro|rw] bind a host path; repeatable\n"
        "  --hostname NAME       hostname inside (default rtn)\n"
        "  --net loopback|none   network inside (default loopback)\n"
        "  --timeout SECS        default shell_run timeout (default 600)\n"
        "  --max-output BYTES    stdout/stderr kept per command (default 1048576)\n"
        "  --http-tools          offer http_get/http_post (they reach beyond the "
        "sandbox)\n" RT_SPEC_USAGE
        "environment: RTN_CGROUP=auto|always|never  a cgroup v2 child per sandbox where a\n"
        "                        memory or pids controller can enforce its limit (auto, the\n"
        "                        default), always, or never\n";

struct serve_opts {
        const char *data_dir;
        unsigned flags;
        char *workspace_abs;
};

static int parse_serve(int argc, char **argv, struct serve *sv, struct serve_opts *so,
                       struct rtn_error *err) {
        static const struct option lo[] = {{"data-dir", required_argument, NULL, 'd'},
                                           {"env", required_argument, NULL, 'e'},
                                           {"rootfs", required_argument, NULL, 'r'},
                                           {"workspace", required_argument, NULL, 'w'},
                                           {"bind", required_argument, NULL, 'b'},
                                           {"hostname", required_argument, NULL, 'H'},
                                           {"net", required_argument, NULL, 'n'},
                                           {"timeout", required_argument, NULL, 'T'},
                                           {"max-output", required_argument, NULL, 'm'},
                                           {"http-tools", no_argument, NULL, 'x'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"allow-host", required_argument, NULL, 'a'},
                                           RT_SPEC_LONGOPTS,
                                           {"workspace-mode", required_argument, NULL, 'M'},
                                           {0}};
        struct rt_spec *sp = &sv->scfg.spec;
        int c, r;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
                char *end;
                unsigned long long v;
                switch (c) {
                case 'd':
                        so->data_dir = optarg;
                        break;
                case 'e':
                        sv->env = optarg;
                        break;
                case 'r':
                        sp->rootfs = optarg;
                        break;
                case 'w':
                        if (!(so->workspace_abs = realpath(optarg, NULL)))
                                return rtn_err(err, errno, "--workspace %s", optarg);
                        sp->workspace = so->workspace_abs;
                        break;
                case 'b':
                        if ((r = rt_parse_bind(sp, optarg, err)) < 0)
                                return r;
                        break;
                case 'H':
                        sp->hostname = optarg;
                        break;
                case 'n':
                        if (strcmp(optarg, "none") && strcmp(optarg, "loopback"))
                                return rtn_errx(err, EINVAL, "--net must be loopback or none");
                        sp->net_none = !strcmp(optarg, "none");
                        break;
                case 'T':
                case 'm':
                        errno = 0;
                        v = strtoull(optarg, &end, 10);
                        if (errno || *end || v == 0 || v > (c == 'T' ? 86400ULL * 365 : 1ULL << 30))
                                return rtn_errx(err, EINVAL, "bad --%s value %s",
                                                c == 'T' ? "timeout" : "max-output", optarg);
                        if (c == 'T')
                                sv->scfg.default_timeout_ms = v * 1000;
                        else
                                sv->scfg.max_output = (size_t)v;
                        break;
                case 'x':
                        so->flags |= MCP_TOOLS_HTTP;
                        break;
                case 'M':
                        if ((r = rt_parse_ws_mode(sp, optarg, err)) < 0)
                                return r;
                        break;
                case 'a':
                        if (sv->nallow >= 32 || !netns_host_valid(optarg))
                                return rtn_errx(err, EINVAL, "bad --allow-host %s", optarg);
                        sv->allow_hosts[sv->nallow++] = optarg;
                        break;
                case 'h':
                        fputs(serve_usage, stdout);
                        exit(0);
                default:
                        if ((r = rt_spec_opt(c, optarg, sp, &sv->spec_opts, err)) < 0)
                                return r;
                        if (r == 0)
                                return rtn_errx(err, EINVAL, "see 'rtn serve --help'");
                        break;
                }
        }
        if (optind < argc)
                return rtn_errx(err, EINVAL, "unexpected argument '%s'", argv[optind]);
        return store_env_valid(sv->env) < 0
                       ? rtn_errx(err, EINVAL, "invalid environment name '%s'", sv->env)
                       : 0;
}

/* What the agent is told in initialize: which paths are the user's own files, changed at
 * once (live), which are the user's files seen through the sandbox (overlay), and that
 * everything else is dropped by env_reset unless committed. */
static void serve_instructions(const struct rt_spec *sp, char *buf, size_t len) {
        FILE *f = fmemopen(buf, len, "w");
        if (!f) {
                buf[0] = '\0';
                return;
        }
        fputs("rtn gives you one persistent Linux sandbox: shell_run and the file tools share its "
              "filesystem, background jobs (shell_job_*) share its loopback network. The sandbox "
              "has no network except loopback; pkg_install installs packages through a gate. ",
              f);
        if (!sp->workspace)
                fputs("/workspace is a directory of the sandbox. Nothing you change survives "
                      "unless you env_commit it; env_reset goes back to the last commit.",
                      f);
        else if (sp->workspace_mode == RT_WS_LIVE)
                fprintf(f,
                        "/workspace is the user's directory %s itself (live): what you write, "
                        "rename or delete there changes the user's files at once, and neither "
                        "env_reset nor env_rollback can undo it. Everything else you change is "
                        "dropped by env_reset unless you env_commit it; commits never include "
                        "/workspace.",
                        sp->workspace);
        else
                fprintf(f,
                        "/workspace shows the user's directory %s through an overlay: your "
                        "changes there stay in the sandbox (env_diff lists them, env_reset drops "
                        "them) until workspace_apply writes them to the user's directory. It "
                        "refuses setuid files, device nodes, symlinks that leave the workspace, "
                        "files host programs run by themselves (.git, shell rc files, .envrc, "
                        "editor and agent settings) and files the user changed meanwhile. "
                        "env_commit does not include them. Everything else you change is dropped "
                        "by env_reset unless you env_commit it.",
                        sp->workspace);
        bool any = false;
        for (size_t i = 0; i < sp->nbinds; i++) {
                fprintf(f, "%s%s%s", any ? ", " : " Live host directories: ", sp->binds[i].dst,
                        sp->binds[i].rw ? "" : " (read-only)");
                any = true;
        }
        fputs(any ? "; a write there changes the host at once." : "", f);
        fputs(" Directories added with bind_host_dir are live too; env_status lists them all.", f);
        if (fclose(f) != 0)
                buf[len - 1] = '\0';
}

int rt_cmd_serve(int argc, char **argv) {
        /* A result of megabytes passes through a few buffers of its size, each by default a
         * fresh mmap whose every page faults on first touch (tens of microseconds each on a
         * paravirtualised MMU): a third of the time the loop spent on one. Freed memory is
         * kept for the next result instead (mallopt(3)). */
        (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
        (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
        struct serve sv = {.env = STORE_DEFAULT_ENV, .session_lock = -1};
        struct serve_opts so = {0};
        struct rtn_error err = {0};
        struct mcp_config cfg;
        rt_spec_init(&sv.scfg.spec);
        init_limits_default(&sv.scfg.spec.limits);
        _cleanup_free_ char *rootfs = NULL;
        int r = parse_serve(argc, argv, &sv, &so, &err);
        const char *rootfs_arg = sv.scfg.spec.rootfs;
        if (r == 0)
                r = rt_rootfs_resolve(so.data_dir, sv.scfg.spec.rootfs, &rootfs, &err);
        if (r == 0 && rootfs) {
                sv.rootfs_path = sv.scfg.spec.rootfs = rootfs;
                sv.scfg.spec.gate = true;
                r = rt_pkg_gate_new(rootfs, sv.allow_hosts, sv.nallow, &sv.gate, &err);
        }
        if (r == 0)
                r = store_open(so.data_dir, &sv.store, &err);
        /* An environment runs on the base it was made on (docs/store.md, "Bases"). */
        if (r == 0 && (r = rt_rootfs_identity(sv.rootfs_path, &sv.base, &err)) == 0)
                r = store_base_check(sv.store, sv.env, &sv.base, false, &err);
        if (r == 0 && (r = rt_spec_check(&sv.scfg.spec, &err)) == 0)
                r = rt_binds_check(&sv.scfg.spec, store_data_dir(sv.store), &err);
        if (r == 0)
                r = store_session_new(sv.store, &sv.session_dir, &sv.session_lock, &err);
        if (r < 0) {
                rtn_term_printf(stderr, "rtn serve: %s\n", err.msg);
                goto out;
        }
        sv.rootfs = rootfs_arg ? rootfs_arg : "host";
        sv.scfg.session_dir = sv.session_dir;
        sv.scfg.opts = &sv.spec_opts;
        struct rt_limit_warnings warn;
        rt_spec_opts_limits(&sv.scfg.spec, &sv.spec_opts, &warn);
        if (warn.memory[0])
                fprintf(stderr, "rtn serve: warning: %s\n", warn.memory);
        if (warn.pids[0])
                fprintf(stderr, "rtn serve: warning: %s\n", warn.pids);
        if (sv.scfg.spec.isolation != INIT_ISOLATION_FULL)
                fprintf(stderr, "rtn serve: WARNING: %s\n",
                        rt_isolation_warning(sv.scfg.spec.isolation));
        mcp_config_init(&cfg);
        cfg.tool_flags = so.flags;
        if (sv.scfg.spec.workspace_mode == RT_WS_OVERLAY)
                cfg.tool_flags |= MCP_TOOLS_WS_OVERLAY;
        static char instructions[8192];
        serve_instructions(&sv.scfg.spec, instructions, sizeof instructions);
        cfg.instructions = instructions;
        cfg.server_name = "rtn";
        cfg.server_version = RTN_VERSION;
        r = mcp_serve_main(&cfg, &serve_ops, &sv, &err);
        if (r < 0)
                rtn_term_printf(stderr, "rtn serve: %s\n", err.msg);
out:
        if (sv.session_dir) {
                /* The session's upper dies with it: only commits persist. */
                char *slash = strrchr(sv.session_dir, '/');
                if (slash) {
                        *slash = '\0';
                        struct rtn_error e2 = {0};
                        if (rt_remove_tree(sv.have_idmap ? &sv.idmap : NULL, sv.session_dir,
                                           slash + 1, &e2) < 0)
                                rtn_term_printf(stderr, "rtn serve: %s\n", e2.msg);
                }
        }
        rtn_safe_close(sv.session_lock);
        free(sv.session_dir);
        free(so.workspace_abs);
        netns_gate_free(sv.gate);
        rt_http_free(sv.http);
        rt_offload_free(sv.offload);
        serve_bind_free(&sv);
        store_stack_free(&sv.stack);
        if (sv.store)
                store_close(sv.store);
        return r < 0 ? 1 : 0;
}
