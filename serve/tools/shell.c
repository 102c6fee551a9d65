/* rtn serve's command tools: shell_run, shell_list and python_exec, each a command run by
 * /bin/sh in the session's sandbox under the agent policy, answered when it ends (with
 * progress notifications meanwhile when the client asked), and the writer of a finished
 * command's result that pkg_install shares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/initproto.h"
#include "common/json.h"
#include "common/loop.h"
#include "serve/serve.h"

#define PROGRESS_USEC (2ULL * 1000 * 1000)
#define PYTHON_CODE_MAX (96 * 1024)

struct run_ctx {
        struct serve *sv;
        struct mcp_call *call;
        struct rt_cmd *cmd;
        struct rtn_loop_source *progress;
        bool restarted; /* this command started a fresh sandbox after rtn-init died */
};

#define NET_DENIED_MAX 16

size_t serve_net_denied(const struct rt_cmd *c, struct netns_denial *out, size_t max,
                        uint64_t *ret_more) {
        struct netns_gate *g = rt_session_gate(c->s);
        *ret_more = 0;
        if (!g || !c->done || !init_policy_is_agent(c->policy))
                return 0;
        return netns_gate_denials(g, c->net_seq, c->net_end_seq, out, max, ret_more);
}

void serve_json_denials(struct rtn_json_buf *b, const char *key, const struct netns_denial *d,
                        size_t n, uint64_t more) {
        rtn_json_key(b, key);
        rtn_json_arr_begin(b);
        for (size_t i = 0; i < n; i++) {
                rtn_json_obj_begin(b);
                rtn_json_kv_str(b, "host", d[i].host);
                rtn_json_kv_int(b, "port", d[i].port);
                rtn_json_kv_str(b, "reason", d[i].reason);
                rtn_json_kv_int(b, "count", (int64_t)d[i].count);
                rtn_json_obj_end(b);
        }
        rtn_json_arr_end(b);
        if (more) {
                char k[64];
                snprintf(k, sizeof k, "%s_more", key);
                rtn_json_kv_int(b, k, (int64_t)more);
        }
}

/* network_denied: what the proxy refused while the command ran (docs/network.md). */
void serve_json_net(struct rtn_json_buf *b, const struct rt_cmd *c) {
        struct netns_denial d[NET_DENIED_MAX];
        uint64_t more = 0;
        size_t n = serve_net_denied(c, d, NET_DENIED_MAX, &more);
        if (n || more)
                serve_json_denials(b, "network_denied", d, n, more);
}

void serve_json_run(struct rtn_json_buf *b, const struct rt_cmd *c, const char *stderr_extra) {
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
                rtn_json_strf(b, "rtn: %s %s: %s", init_step_name(c->spawn_step),
                              init_step_subject(c->spawn_step, "/bin/sh", c->cwd),
                              strerror(c->spawn_errno));
        } else {
                rtn_json_strf(b, "%.*s%s", (int)c->err.len, c->err.data ? c->err.data : "",
                              stderr_extra ? stderr_extra : "");
        }
        /* JSON text is UTF-8: bytes that are not become U+FFFD, and the result says so. */
        if (c->out.data && !rtn_utf8_valid(c->out.data, c->out.len))
                rtn_json_kv_bool(b, "stdout_utf8_replaced", true);
        if (!c->spawn_errno && c->err.data && !rtn_utf8_valid(c->err.data, c->err.len))
                rtn_json_kv_bool(b, "stderr_utf8_replaced", true);
        rtn_json_kv_bool(b, "stdout_truncated", c->out.total > c->out.len);
        rtn_json_kv_bool(b, "stderr_truncated", c->err.total > c->err.len);
        rtn_json_kv_bool(b, "timed_out", c->timed_out);
        rtn_json_kv_int(b, "duration_ms", (int64_t)((c->end_usec - c->start_usec) / 1000));
        if (c->blocked.total > 0)
                rt_blocked_json(b, &c->blocked);
        serve_json_net(b, c);
}

/* The report's lines ("rtn: blocked mount(2) by pid 7 (mount): EPERM"), one per record,
 * then one per kind of network refusal, for the result's second text content; NULL when
 * nothing was blocked or refused. */
static char *blocked_note(const struct rt_cmd *c) {
        const struct rt_blocked *bl = &c->blocked;
        struct netns_denial d[NET_DENIED_MAX];
        uint64_t more = 0;
        size_t nd = serve_net_denied(c, d, NET_DENIED_MAX, &more);
        if (bl->total == 0 && nd == 0 && more == 0)
                return NULL;
        char *note = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&note, &size);
        if (!f)
                return NULL;
        char line[256];
        uint32_t i = 0;
        for (; bl->total && rt_blocked_line(bl, i, line, sizeof line) >= 0; i++)
                fprintf(f, "%srtn: %s", i ? "\n" : "", line);
        for (size_t k = 0; k < nd; k++, i++)
                fprintf(f, "%srtn: network denied %s:%u: %s (%llu time%s)", i ? "\n" : "",
                        d[k].host, d[k].port, d[k].reason, (unsigned long long)d[k].count,
                        d[k].count == 1 ? "" : "s");
        if (more)
                fprintf(f, "%srtn: network denied %llu more request%s", i ? "\n" : "",
                        (unsigned long long)more, more == 1 ? "" : "s");
        if (fclose(f) != 0) {
                free(note);
                return NULL;
        }
        return note;
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
                serve_json_run(&b, c, NULL);
                serve_undo_exit(rc->sv, rc->call, rt_cmd_exit_code(c));
                if (rc->restarted)
                        rtn_json_kv_bool(&b, "sandbox_restarted", true);
                rtn_json_obj_end(&b);
                _cleanup_free_ char *note = blocked_note(c);
                mcp_call_finish_json(rc->call, &b, note, false);
        }
        /* The command cannot outlive its call: free it after the callback returns. */
        c->done_fn = NULL;
        rt_cmd_free(c);
        free(rc);
}

static void on_progress(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct run_ctx *rc = ud;
        char msg[64];
        uint64_t secs = (rtn_now_usec() - rc->cmd->start_usec) / RTN_USEC_PER_SEC;
        snprintf(msg, sizeof msg, "running for %llu s", (unsigned long long)secs);
        mcp_call_progress(rc->call, (double)secs, 0, msg);
}

/* Reads the arguments shared by shell_run-like tools into o. */
int serve_read_run_args(const struct mcp_args *a, struct rt_cmd_opts *o, char **cwd, char ***env,
                        char **in) {
        int64_t t = 0;
        if (mcp_args_str(a, "cwd", cwd) == 0)
                o->cwd = *cwd;
        if (mcp_args_int(a, "timeout", &t) == 0)
                o->timeout_usec = (uint64_t)t * RTN_USEC_PER_SEC;
        if (mcp_args_map(a, "env", "=", env) == 0)
                o->env = *env;
        if (mcp_args_str(a, "stdin", in) == 0) {
                o->stdin_data = *in;
                o->stdin_len = strlen(*in);
        }
        return 0;
}

int serve_shell_start(struct serve *sv, struct mcp_call *call, struct rt_cmd_opts *o) {
        struct rtn_error err = {0};
        struct run_ctx *rc = calloc(1, sizeof *rc);
        if (!rc)
                return -ENOMEM;
        rc->sv = sv;
        rc->call = call;
        bool fresh = !rt_session_alive(sv->sess);
        int r = rt_session_run(sv->sess, o, run_done, rc, &rc->cmd, &err);
        /* Asked after the run: the death may have been noticed before it, or by its own
         * spawn request (rt_session_run then starts the fresh sandbox itself). */
        if (r == 0 && rt_session_take_crash(sv->sess)) {
                rc->restarted = true;
                mcp_call_log(call, MCP_LOG_WARNING,
                             "%s: the sandbox's init had died; this command runs in a fresh "
                             "sandbox on the same layers and uncommitted changes",
                             sv->handle);
        } else if (r == 0 && fresh) {
                /* Why this call took longer than the next: a client's log says so. */
                mcp_call_log(call, MCP_LOG_INFO, "%s: the sandbox started for this command",
                             sv->handle);
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

static int shell_run(struct serve *sv, struct mcp_call *call, const struct mcp_args *a,
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
        serve_read_run_args(a, &o, &cwd, &env, &in);
        _cleanup_free_ char *user = NULL;
        if (mcp_args_str(a, "user", &user) == 0 && !strcmp(user, "root"))
                o.policy = INIT_POLICY_AGENT_ROOT;
        int r = serve_shell_start(sv, call, &o);
        mcp_strv_free(env);
        return r;
}

/* python_exec: the code travels in the environment so stdin stays the caller's. */
int serve_python_exec(struct serve *sv, struct mcp_call *call, const char *tool,
                      const struct mcp_args *a) {
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
                o.timeout_usec = (uint64_t)t * RTN_USEC_PER_SEC;
        if (mcp_args_str(a, "stdin", &in) == 0) {
                o.stdin_data = in;
                o.stdin_len = strlen(in);
        }
        return serve_shell_start(sv, call, &o);
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
        mcp_call_finish_json(rc->call, &b, NULL, c->lost);
        c->done_fn = NULL;
        rt_cmd_free(c);
        free(rc);
}

int serve_shell_list(struct serve *sv, struct mcp_call *call, const char *tool,
                     const struct mcp_args *a) {
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

int serve_shell_run(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        return shell_run(sv, call, a, NULL);
}
