/* `rtn serve`: an MCP stdio server (mcp/) whose backend is one persistent sandbox session
 * (runtime/session/session.c) on the store's environment. This file sets it up (options, the
 * session, the instructions) and holds the tool table; the tools are in mcp/tools/, one file
 * per family. Every tool failure is a result with isError and a sentence saying what to do;
 * nothing an agent sends ends the server. */
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
#include "common/initproto.h"
#include "common/version.h"
#include "netns/netns.h"
#include "runtime/session/file_client.h"
#include "mcp/tools/http.h"
#include "mcp/offload.h"
#include "runtime/rootfs/pkg.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/session/pending.h"
#include "mcp/serve.h"
#include "runtime/session/wsover.h"

/* ---- MCP backend ------------------------------------------------------------------------ */

/* One row per tool of mcp/tools.c (tests/unit/mcp/test_serve.c checks that each has
 * one): the name the client calls, the handler that answers it. A family's handler (env_*,
 * file_*, http_*, the job queries) is told the name. */
static const struct serve_tool serve_tools[] = {
        {"shell_run", serve_shell_run},
        {"shell_list", serve_shell_list},
        {"python_exec", serve_python_exec},
        {"shell_job_start", serve_job_start},
        {"shell_job_status", serve_job_query},
        {"shell_job_wait", serve_job_query},
        {"shell_job_kill", serve_job_query},
        {"shell_job_output", serve_job_output},
        {"shell_job_list", serve_job_list},
        {"pkg_query", serve_pkg_query},
        {"pkg_install", serve_pkg_install},
        {"env_status", serve_env_call},
        {"env_diff", serve_env_call},
        {"env_commit", serve_env_call},
        {"env_snapshot_list", serve_env_call},
        {"env_rollback", serve_env_call},
        {"env_reset", serve_env_call},
        {"env_discard", serve_env_call},
        {"env_gc", serve_env_call},
        {"workspace_apply", serve_env_call},
        {"file_read", serve_files_call},
        {"file_write", serve_files_call},
        {"file_edit", serve_files_call},
        {"file_list", serve_files_call},
        {"file_search", serve_files_call},
        {"bind_host_dir", serve_bind_call},
        {"http_get", serve_http_call},
        {"http_post", serve_http_call},
};

const struct serve_tool *serve_tool_find(const char *name) {
        for (size_t i = 0; i < sizeof serve_tools / sizeof serve_tools[0]; i++)
                if (!strcmp(serve_tools[i].name, name))
                        return &serve_tools[i];
        return NULL;
}

static int op_call(void *ctx, struct mcp_call *call, const char *tool, const struct mcp_args *a) {
        const struct serve_tool *t = serve_tool_find(tool);
        if (t)
                return t->call(ctx, call, tool, a);
        mcp_call_finish_error(call, "%s is not available in this build of rtn yet", tool);
        return 0;
}

static void op_cancel(void *ctx, struct mcp_call *call) {
        struct serve *sv = ctx;
        if (rt_http_cancel(sv->http, call) || rt_offload_cancel(sv->offload, call))
                return;
        if (serve_job_cancel(sv, call))
                return;
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
        static const struct option longopts[] = {{"data-dir", required_argument, NULL, 'd'},
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
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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

int mcp_cmd_serve(int argc, char **argv) {
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
