/* pkg_install for `rtn serve`: apt-get install as root inside the session under the
 * provisioning policy, in the gate's netns, with the gate's proxy served on the MCP loop.
 * Packages land in the session's upper: env_reset drops them, env_commit keeps them.
 * Progress notifications carry apt's latest output line every few seconds; cancelling the
 * call kills apt (op_cancel in serve.c finds the command through the call's data). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/loop.h"
#include "common/initproto.h"
#include "netns/netns.h"
#include "serve/tools/http.h"
#include "runtime/rootfs/pkg.h"
#include "serve/serve.h"

#define PKG_PROGRESS_USEC (3ULL * 1000 * 1000)
#define PKG_DEFAULT_TIMEOUT_USEC (30ULL * 60 * 1000 * 1000)

struct pkg_ctx {
        struct serve *sv;
        struct mcp_call *call;
        struct rt_cmd *cmd;
        struct rtn_loop_source *progress;
        char **names;
        size_t n;
        unsigned refused_before;
};

/* The last complete line apt printed, for the progress message. */
static void last_line(const struct rt_outbuf *o, char *buf, size_t len) {
        const char *d = o->data ? o->data : "";
        size_t end = o->len;
        while (end > 0 && (d[end - 1] == '\n' || d[end - 1] == '\r'))
                end--;
        size_t start = end;
        while (start > 0 && d[start - 1] != '\n')
                start--;
        snprintf(buf, len, "%.*s", (int)(end - start), d + start);
}

static void on_progress(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct pkg_ctx *pc = ud;
        char line[200];
        last_line(&pc->cmd->out, line, sizeof line);
        double secs = (double)(rtn_now_usec() - pc->cmd->start_usec) / (double)RTN_USEC_PER_SEC;
        mcp_call_progress(pc->call, secs, 0, line[0] ? line : "installing");
}

/* What follows apt's stderr: what the gate refused and the single-uid caveat. */
static void stderr_notes(const struct pkg_ctx *pc, int code, char *buf, size_t len) {
        char why[300] = "";
        struct serve *sv = pc->sv;
        const char *single = "";
        if (code != 0 && netns_gate_refusals(sv->gate, why, sizeof why) == pc->refused_before)
                why[0] = '\0';
        if (code != 0 && rt_session_sandbox(sv->sess)->idmap.mode == RT_IDMAP_SINGLE)
                single = rt_pkg_single_uid_note;
        snprintf(buf, len, "%s%s%s%s", why[0] ? "\nrtn: " : "", why, single[0] ? "\nrtn: " : "",
                 single);
}

static void pkg_done(struct rt_cmd *c, void *ud) {
        struct pkg_ctx *pc = ud;
        if (pc->sv->hub->installing == pc->sv)
                pc->sv->hub->installing = NULL;
        if (pc->progress)
                rtn_loop_timer_cancel(pc->sv->loop, pc->progress);
        int code = rt_cmd_exit_code(c);
        bool already = code == RT_PKG_EXIT_UNCHANGED; /* nothing ran, nothing changed */
        if (already) {
                c->wait_status = 0;
                code = 0;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "packages");
        rtn_json_arr_begin(&b);
        for (size_t i = 0; i < pc->n; i++)
                rtn_json_str(&b, pc->names[i]);
        rtn_json_arr_end(&b);
        rtn_json_kv_bool(&b, "already_installed", already);
        char notes[2048];
        stderr_notes(pc, code, notes, sizeof notes);
        serve_json_run(&b, c, notes); /* provisioning runs under the same seccomp filter */
        rtn_json_obj_end(&b);
        mcp_call_finish_json(pc->call, &b, NULL, code != 0);
        c->done_fn = NULL;
        rt_cmd_free(c);
        mcp_strv_free(pc->names);
        free(pc);
}

static int start_install(struct serve *sv, struct pkg_ctx *pc, uint64_t timeout_usec,
                         struct rtn_error *err) {
        int r = rt_session_ensure(sv->sess, err);
        if (r < 0)
                return r;
        const struct rt_sandbox *sb = rt_session_sandbox(sv->sess);
        if ((r = rt_pkg_gate_attach(sv->gate, sv->loop, sb, &sv->hub->gate_pid, err)) < 0)
                return r;
        _cleanup_free_ char *cmd = NULL;
        if ((r = rt_pkg_command(pc->names, pc->n, sb->gate_port, sb->idmap.mode, &cmd)) < 0)
                return rtn_err(err, r, "command line");
        pc->refused_before = netns_gate_refusals(sv->gate, NULL, 0);
        struct rt_cmd_opts o = {.command = cmd,
                                .cwd = "/",
                                .policy = INIT_POLICY_PROVISION,
                                .timeout_usec = timeout_usec};
        return rt_session_run(sv->sess, &o, pkg_done, pc, &pc->cmd, err);
}

int serve_pkg_install(struct serve *sv, struct mcp_call *call, const char *tool,
                      const struct mcp_args *a) {
        struct rtn_error err = {0};
        struct pkg_ctx *pc = calloc(1, sizeof *pc);
        int64_t t = 0;
        if (!pc)
                return -ENOMEM;
        pc->sv = sv;
        pc->call = call;
        if (mcp_args_strv(a, "packages", &pc->names, &pc->n) < 0) {
                free(pc);
                return -EINVAL;
        }
        (void)mcp_args_int(a, "timeout", &t);
        int r;
        if (!sv->gate)
                r = rtn_errx(&err, EOPNOTSUPP,
                             "pkg_install needs a rootfs base with a package "
                             "manager; this server runs on the host's (start it with --rootfs "
                             "NAME, see rtn rootfs bootstrap)");
        else if (sv->hub->installing && sv->hub->installing != sv)
                /* One gate per server, serving one sandbox's listener at a time. */
                r = rtn_errx(&err, EBUSY,
                             "an install runs in sandbox %s; one sandbox installs at a time, "
                             "try again when it has ended",
                             sv->hub->installing->handle);
        else if ((r = rt_pkg_validate(pc->names, pc->n, &err)) == 0)
                r = start_install(sv, pc,
                                  t > 0 ? (uint64_t)t * RTN_USEC_PER_SEC : PKG_DEFAULT_TIMEOUT_USEC,
                                  &err);
        if (r < 0) {
                mcp_call_finish_error(call, "pkg_install: %s", err.msg);
                mcp_strv_free(pc->names);
                free(pc);
                return 0;
        }
        mcp_call_set_data(call, pc->cmd);
        sv->hub->installing = sv;
        if (mcp_call_wants_progress(call))
                (void)rtn_loop_add_timer(sv->loop, PKG_PROGRESS_USEC, PKG_PROGRESS_USEC,
                                         on_progress, pc, &pc->progress);
        return 0;
}

int serve_http_call(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        if (strcmp(tool, "http_get") != 0 && strcmp(tool, "http_post") != 0) {
                mcp_call_finish_error(call, "unknown tool %s", tool);
                return 0;
        }
        return rt_http_start(&sv->http, sv->loop, &sv->spec_opts.net, call,
                             !strcmp(tool, "http_post"), a);
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

int serve_pkg_query(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        char **v = NULL;
        size_t n = 0;
        if (mcp_args_strv(a, "args", &v, &n) < 0)
                return -EINVAL;
        if (!sv->gate) { /* the host base: /var, and so dpkg's database, is not inside */
                mcp_strv_free(v);
                mcp_call_finish_error(call,
                                      "pkg_query needs a rootfs base with a package database; "
                                      "this server runs on the host's, whose /var/lib/dpkg "
                                      "is not in the sandbox, so any answer would be wrong "
                                      "(the host's /usr programs are all there: shell_list "
                                      "lists them; start the server with --rootfs NAME for "
                                      "packages)");
                return 0;
        }
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
        return serve_shell_start(sv, call, &o);
}
