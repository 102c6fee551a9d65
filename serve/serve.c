/* `rtn serve`: an MCP stdio server (mcp/) whose backend is persistent sandbox sessions (sb-1,
 * more by handle; runtime/session/session.c) on the store's environment. This file sets it up
 * (options, the session, the instructions) and holds the tool table; the tools are in serve/tools/,
 * one file per family. Every tool failure is a result with isError and a sentence saying what to
 * do; nothing an agent sends ends the server. */
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
#include "common/clock.h"
#include "common/duration.h"
#include "common/exitcode.h"
#include "common/json.h"
#include "common/log.h"
#include "common/term.h"
#include "common/usage.h"
#include "common/loop.h"
#include "common/initproto.h"
#include "common/version.h"
#include "netns/netns.h"
#include "runtime/session/enter.h"
#include "runtime/session/file_client.h"
#include "runtime/session/registry.h"
#include "serve/tools/http.h"
#include "serve/offload.h"
#include "runtime/rootfs/pkg.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/session/pending.h"
#include "serve/serve.h"
#include "serve/httpd/httpd.h"
#include "runtime/session/wsover.h"

/* ---- MCP backend ------------------------------------------------------------------------ */

static int op_call(void *ctx, struct mcp_call *call, const char *tool, const struct mcp_args *a) {
        struct serve_hub *h = ctx;
        const struct mcp_tool *t = serve_tool_find(tool);
        if (!t || !t->call) {
                mcp_call_finish_error(call, "%s is not available in this build of rtn yet", tool);
                return 0;
        }
        h->used_usec = rtn_now_usec();
        h->told_empty = false;
        if (t->backend & SERVE_TOOL_ON_HUB)
                return t->call(&h->tmpl, call, tool, a);
        struct serve *sv = serve_sandbox_pick(h, call, a);
        if (!sv)
                return 0;
        if (t->backend & SERVE_TOOL_CHANGES)
                serve_undo_checkpoint(sv, call, tool, a);
        /* The call keeps its sandbox while it runs (serve_sandboxes_reap), and one that ran
         * long before it returned (a sandbox's start) starts the clock when it returns. */
        unsigned num = sv->num;
        mcp_call_set_owner(call, num);
        int r = t->call(sv, call, tool, a);
        for (size_t i = 0; i < h->n; i++) /* sandbox_close may have ended it */
                if (h->sbs[i]->num == num)
                        h->sbs[i]->used_usec = rtn_now_usec();
        return r;
}

static bool cancel_in(struct serve *sv, struct mcp_call *call) {
        return rt_http_cancel(sv->http, call) || rt_offload_cancel(sv->offload, call) ||
               serve_job_cancel(sv, call);
}

static void op_cancel(void *ctx, struct mcp_call *call) {
        struct serve_hub *h = ctx;
        if (cancel_in(&h->tmpl, call))
                return;
        for (size_t i = 0; i < h->n; i++)
                if (cancel_in(h->sbs[i], call))
                        return;
        struct rt_cmd *c = mcp_call_get_data(call);
        if (c)
                rt_cmd_kill(c); /* its done callback finishes the call */
}

/* Every sandbox ends, oldest first: the first with unapplied overlay workspace changes has
 * them kept as the environment's pending changes; a later one's are lost, and stderr says so
 * (docs/tools.md, "Sandboxes"). */
static void op_shutdown(void *ctx) {
        struct serve_hub *h = ctx;
        if (h->idle_timer)
                rtn_loop_timer_cancel(h->tmpl.loop, h->idle_timer);
        h->idle_timer = NULL;
        if (h->tmpl.gate)
                netns_gate_detach(h->tmpl.gate); /* before the loop goes */
        netns_publish_stop(h->publish); /* the rest once the sandboxes have ended, at out: */
        rt_http_shutdown(h->tmpl.http);
        while (h->n > 0)
                serve_sandbox_end(h->sbs[0], true);
        if (h->enter) /* after the sandboxes, whose ends it relays */
                rtn_loop_del_fd(h->tmpl.loop, rt_enter_fd(h->enter));
        rt_enter_free(h->enter);
        h->enter = NULL;
}

/* Where a published port's connection goes: the first sandbox (SERVE_DEFAULT_SANDBOX) as it
 * is now (a reset starts a new one), by the pidfd of its rtn-init; -1 while none runs, and
 * once sandbox_close has closed it. */
static int publish_target(void *ud) {
        struct serve_hub *h = ud;
        struct serve *sv =
                h->n > 0 && !strcmp(h->sbs[0]->handle, SERVE_DEFAULT_SANDBOX) ? h->sbs[0] : NULL;
        return sv && sv->sess && rt_session_alive(sv->sess) ? rt_session_sandbox(sv->sess)->pidfd
                                                            : -1;
}

/* `rtn enter PID/sb-N` (runtime/session/enter.h): a command in the running sandbox sb-N, an
 * agent command of it that is none of the agent's jobs (docs/architecture.md, "Entering a
 * running sandbox"). */
static int enter_spawn(void *ud, unsigned sb, uint64_t id, uint32_t flags, const char *cwd,
                       char *const argv[], const int fds[3], uint16_t rows, uint16_t cols,
                       struct rtn_error *err) {
        struct serve_hub *h = ud;
        for (size_t i = 0; i < h->n; i++)
                if (h->sbs[i]->num == sb && h->sbs[i]->sess)
                        return rt_session_enter_spawn(h->sbs[i]->sess, id, flags, cwd, argv, fds,
                                                      rows, cols, err);
        return rtn_errx(err, ENOENT, "no open sandbox sb-%u in this rtn serve (rtn ps lists them)",
                        sb);
}

static void enter_signal(void *ud, uint64_t id, int signo) {
        struct serve_hub *h = ud;
        for (size_t i = 0; i < h->n; i++)
                if (h->sbs[i]->sess)
                        rt_session_enter_signal(h->sbs[i]->sess, id, signo); /* ids are unique */
}

static const struct rt_enter_ops enter_ops = {enter_spawn, enter_signal};

static void on_enter(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        rt_enter_serve(ud);
}

/* Best effort, as the registry: a server that cannot listen still serves its agent. Made
 * before the registry's entry, so that what rtn ps lists rtn enter reaches; a request waits
 * in the socket's backlog until the loop runs (enter_attach). */
static void enter_listen(struct serve_hub *h) {
        struct rtn_error err = {0};
        if (rt_enter_listen(&enter_ops, h, &h->enter, &err) < 0)
                log_debug("rtn enter cannot reach this server's sandboxes: %s", err.msg);
}

static void enter_attach(struct serve_hub *h) {
        if (h->enter &&
            rtn_loop_add_fd(h->tmpl.loop, rt_enter_fd(h->enter), EPOLLIN, on_enter, h->enter) < 0) {
                rt_enter_free(h->enter);
                h->enter = NULL;
        }
}

static void on_idle_tick(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        serve_sandboxes_reap(ud);
}

static int op_attach(void *ctx, struct mcp_server *s) {
        struct serve_hub *h = ctx;
        struct rtn_error err = {0};
        struct serve *first;
        h->tmpl.srv = s;
        h->tmpl.loop = mcp_server_loop(s);
        enter_attach(h);
        int r = serve_sandbox_open(h, NULL, NULL, &first, &err);
        /* A bind's mount point is made as the sandbox starts, and a directory the agent cannot
         * write (a read-only one of the workspace) refuses it: start the first sandbox now, so
         * that fails the server's start instead of every call after it. */
        if (r == 0 && h->tmpl.scfg.spec.nbinds > 0)
                r = rt_session_ensure(first->sess, &err);
        if (r == 0 && h->publish)
                r = netns_publish_attach(h->publish, h->tmpl.loop, publish_target, h, &err);
        /* A tick of at most a second, finer for a short timeout. */
        uint64_t tick = h->idle_usec / 4 < RTN_USEC_PER_SEC ? h->idle_usec / 4 : RTN_USEC_PER_SEC;
        h->used_usec = rtn_now_usec();
        if (r == 0 && h->idle_usec &&
            (r = rtn_loop_add_timer(h->tmpl.loop, tick ? tick : 1, tick ? tick : 1, on_idle_tick, h,
                                    &h->idle_timer)) < 0)
                rtn_err(&err, r, "idle timer");
        if (r < 0) {
                rtn_term_printf(stderr, "rtn serve: %s\n", err.msg);
                h->attach_failed = true;
        }
        return r;
}

static const struct mcp_backend_ops serve_ops = {
        .attach = op_attach,
        .call = op_call,
        .cancel = op_cancel,
        .shutdown = op_shutdown,
};

#define SERVE_STR_(x) #x
#define SERVE_STR(x) SERVE_STR_(x)

/* rtn serve's own options, after the sandbox options it shares with rtn exec
 * (rt_spec_opt_rows). An option is a row here and a case in serve_opt. */
enum {
        SERVE_OPT_MAX_OUTPUT = RT_OPT_VERB,
        SERVE_OPT_HTTP_TOOLS,
        SERVE_OPT_HTTP_SESSION,
        SERVE_OPT_ALLOW_HOST,
        SERVE_OPT_MAX_SANDBOXES,
        SERVE_OPT_UNDO_DEPTH,
        SERVE_OPT_UNDO_BYTES,
        SERVE_OPT_SANDBOX_IDLE
};
static const struct rt_opt serve_rows[] = {
        {"allow-host",
         required_argument,
         SERVE_OPT_ALLOW_HOST,
         {"  --allow-host HOST     let pkg_install reach HOST too (.example.org: it and all "
          "below)\n"}},
        {"max-output",
         required_argument,
         SERVE_OPT_MAX_OUTPUT,
         {"  --max-output BYTES    stdout/stderr kept per command (default 1048576)\n"}},
        {"http-tools",
         no_argument,
         SERVE_OPT_HTTP_TOOLS,
         {"  --http-tools          offer http_get/http_post (they reach beyond the sandbox:\n"
          "                        public addresses, one of this machine's only by an\n"
          "                        --allow-net ADDR:PORT)\n"}},
        {"max-sandboxes",
         required_argument,
         SERVE_OPT_MAX_SANDBOXES,
         {"  --max-sandboxes N     sandboxes open at once (sandbox_new, sandbox_fork; "
          "default " SERVE_STR(SERVE_SANDBOXES_DEFAULT) ")\n"}},
        {"undo-depth",
         required_argument,
         SERVE_OPT_UNDO_DEPTH,
         {"  --undo-depth N        checkpoints kept per sandbox for env_undo, oldest dropped\n"
          "                        first (default " SERVE_STR(
                  SERVE_UNDO_DEPTH_DEFAULT) "; 0: none, and env_undo has nothing)\n"}},
        {"undo-bytes",
         required_argument,
         SERVE_OPT_UNDO_BYTES,
         {"  --undo-bytes SIZE     old versions the checkpoints of a sandbox keep, oldest\n"
          "                        dropped first (default: the --upper-size)\n"}},
        /* internal: set by the --http front end */
        {"http-session", no_argument, SERVE_OPT_HTTP_SESSION, {""}},
        {"sandbox-idle-timeout", required_argument, SERVE_OPT_SANDBOX_IDLE, {""}},
};
#define SERVE_NROWS (sizeof serve_rows / sizeof serve_rows[0])

struct serve_opts {
        unsigned flags;
};

static int serve_opt(int c, const char *arg, struct serve_hub *h, struct serve_opts *so,
                     struct rtn_error *err) {
        struct serve *sv = &h->tmpl;
        char *end;
        unsigned long long v;
        errno = 0;
        switch (c) {
        case SERVE_OPT_MAX_OUTPUT:
                v = strtoull(arg, &end, 10);
                if (errno || *end || v == 0 || v > 1ULL << 30)
                        return rtn_errx(err, EINVAL, "bad --max-output value %s", arg);
                sv->scfg.max_output = (size_t)v;
                return 0;
        case SERVE_OPT_HTTP_TOOLS:
                so->flags |= MCP_TOOLS_HTTP;
                return 0;
        case SERVE_OPT_HTTP_SESSION:
                so->flags |= MCP_TOOLS_HTTP_SESSION;
                return 0;
        case SERVE_OPT_MAX_SANDBOXES:
                v = strtoull(arg, &end, 10);
                if (errno || *end || v == 0 || v > SERVE_SANDBOXES_MAX)
                        return rtn_errx(err, EINVAL, "bad --max-sandboxes value %s (1 to %d)", arg,
                                        SERVE_SANDBOXES_MAX);
                h->max = (unsigned)v;
                return 0;
        case SERVE_OPT_UNDO_DEPTH:
                v = strtoull(arg, &end, 10);
                if (errno || *end || !*arg || v > SERVE_UNDO_DEPTH_MAX)
                        return rtn_errx(err, EINVAL, "bad --undo-depth value %s (0 to %d)", arg,
                                        SERVE_UNDO_DEPTH_MAX);
                sv->undo_depth = (unsigned)v;
                return 0;
        case SERVE_OPT_UNDO_BYTES:
                return rt_parse_size(arg, "--undo-bytes", &sv->undo_bytes, err);
        case SERVE_OPT_SANDBOX_IDLE:
                return rtn_duration_opt("--sandbox-idle-timeout", arg, &h->idle_usec, err);
        case SERVE_OPT_ALLOW_HOST:
                if (sv->nallow >= 32 || !netns_host_valid(arg))
                        return rtn_errx(err, EINVAL, "bad --allow-host %s", arg);
                sv->allow_hosts[sv->nallow++] = arg;
                return 0;
        default: /* getopt said what */
                rtn_err_clear(err);
                err->code = EINVAL;
                return -EINVAL;
        }
}

static int parse_serve(int argc, char **argv, struct serve_hub *h, struct serve_opts *so,
                       struct rtn_error *err) {
        struct serve *sv = &h->tmpl;
        struct option longopts[64];
        struct rt_spec *sp = &sv->scfg.spec;
        int c, r;
        if ((r = rt_opts_longopts(serve_rows, SERVE_NROWS, longopts, 64)) < 0)
                return rtn_errx(err, -r, "too many options");
        rtn_usage_prog(argv, "serve");
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                if (c == 'h') {
                        rt_opts_usage(stdout, RT_VERB_SERVE,
                                      "usage: rtn serve [OPTIONS]\n"
                                      "MCP server on stdin/stdout: one persistent sandbox, more by "
                                      "handle (sandbox_new).\n",
                                      serve_rows, SERVE_NROWS, MCP_HTTPD_USAGE);
                        exit(0);
                }
                r = rt_spec_opt(c, optarg, sp, &sv->spec_opts, err);
                if (r == 0)
                        r = serve_opt(c, optarg, h, so, err);
                if (r < 0)
                        return r;
        }
        if (sv->spec_opts.env)
                sv->env = sv->spec_opts.env;
        if (sv->spec_opts.timeout_usec)
                sv->scfg.default_timeout_usec = sv->spec_opts.timeout_usec;
        if (optind < argc)
                return rtn_errx(err, EINVAL, "unexpected argument '%s'", argv[optind]);
        return rt_spec_opts_check(sp, &sv->spec_opts, err);
}

/* What the agent is told in initialize: which paths are the user's own files, changed at
 * once (live), which are the user's files seen through the sandbox (overlay), and that
 * everything else is dropped by env_reset unless committed. */
/* --isolation landlock has no mounts: no /workspace, no private /tmp, no network. The agent
 * learns the host paths it has instead (env_status names them once the sandbox runs). */
static void landlock_instructions(const struct rt_spec *sp, FILE *f) {
        fputs("rtn runs your commands in its weaker Landlock mode: on the host itself, without "
              "namespaces, confined by Landlock and seccomp. There is no /workspace directory "
              "for commands: they start in the workspace, ",
              f);
        if (sp->workspace)
                fprintf(f,
                        "the user's directory %s itself (live: what you write, rename or delete "
                        "there changes the user's files at once, and nothing can undo it)",
                        sp->workspace);
        else
                fputs("a temporary directory removed when the sandbox ends", f);
        fputs(", whose path env_status gives as isolation.workspace_dir; the file tools and a "
              "cwd of /workspace or below mean that directory, and the tools take relative "
              "paths from it. /tmp is the host's and not writable: use $TMPDIR, a private "
              "temporary directory (isolation.tmp_dir), also your HOME. There is no network "
              "(no TCP, no UDP), no new pseudo-terminal, no /dev/shm, and packages cannot be "
              "installed; nothing you change is thrown away or can be rolled back. To work in "
              "parallel, sandbox_new opens another sandbox; every tool takes the handle as its "
              "sandbox argument (default sb-1).",
              f);
}

static void serve_instructions(const struct rt_spec *sp, char *buf, size_t len) {
        FILE *f = fmemopen(buf, len, "w");
        if (!f) {
                buf[0] = '\0';
                return;
        }
        if (sp->isolation == INIT_ISOLATION_LANDLOCK) {
                landlock_instructions(sp, f);
                if (fclose(f) != 0)
                        buf[len - 1] = '\0';
                return;
        }
        fputs("rtn gives you one persistent Linux sandbox: shell_run and the file tools share its "
              "filesystem, background jobs (shell_job_*) share its loopback network. ",
              f);
        if (sp->net_proxy)
                fputs("The sandbox has no network except loopback and an HTTP(S) proxy (set in "
                      "http_proxy, https_proxy and the like) that reaches only the hosts the user "
                      "allowed (env_status lists them); there is no DNS, and a refused request is "
                      "reported in the result's network_denied. ",
                      f);
        else
                fputs("The sandbox has no network except loopback. ", f);
        fputs("pkg_install installs packages through a gate. ", f);
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
                        "/workspace.%s",
                        sp->workspace,
                        sp->workspace_git_rw
                                ? " You may commit there with git: its .git is writable but for "
                                  "its config, hooks, info/ and the other files git runs or reads "
                                  "configuration from, which stay read-only."
                                : "");
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
        fputs(" To try things in parallel, sandbox_fork copies a sandbox's files (not its "
              "processes) into a new one and sandbox_new opens a fresh one; every tool takes the "
              "handle as its sandbox argument (default sb-1).",
              f);
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
        /* --http: the Streamable HTTP front end (serve/httpd/), which runs one `rtn serve` on
         * stdio, with the other options, per MCP session. */
        if (mcp_httpd_requested(argc, argv))
                return mcp_httpd_cmd(argc, argv);
        static struct serve_hub h = {.max = SERVE_SANDBOXES_DEFAULT, .next = 1};
        struct serve *sv = &h.tmpl; /* the settings every sandbox starts from */
        *sv = (struct serve){.hub = &h,
                             .env = STORE_DEFAULT_ENV,
                             .session_lock = -1,
                             .undo_depth = SERVE_UNDO_DEPTH_DEFAULT};
        struct serve_opts so = {0};
        struct rtn_error err = {0};
        struct mcp_config cfg;
        rt_spec_init(&sv->scfg.spec);
        /* /tmp kept with the changes, so that a fork copies it (runtime/sandbox/kept.h) */
        sv->scfg.spec.tmp_kept = true;
        init_limits_default(&sv->scfg.spec.limits);
        _cleanup_free_ char *rootfs = NULL;
        int r = parse_serve(argc, argv, &h, &so, &err);
        bool usage = r < 0; /* a usage error: docs/rtn.1, CONVENTIONS */
        const char *rootfs_arg = sv->scfg.spec.rootfs;
        char tmpfs_warn[512] = "";
        if (r == 0) /* the tmpfs all sandboxes may hold, against the machine's memory */
                r = rt_tmpfs_check(&sv->scfg.spec, h.max, tmpfs_warn, sizeof tmpfs_warn, &err);
        if (r == 0) /* without --rootfs, the base the environment was made on */
                r = rootfs_arg
                            ? rt_rootfs_resolve(sv->spec_opts.data_dir, rootfs_arg, &rootfs, &err)
                            : rt_env_rootfs(sv->spec_opts.data_dir, sv->env, &rootfs, &err);
        if (r == 0 && rootfs) {
                sv->rootfs_path = sv->scfg.spec.rootfs = rootfs;
                sv->scfg.spec.gate = true;
                r = rt_pkg_gate_new(rootfs, sv->allow_hosts, sv->nallow, &sv->gate, &err);
                if (r == 0) /* pkg_install's mirrors behind the same proxy */
                        netns_gate_set_upstream(sv->gate, &sv->spec_opts.upstream);
        }
        if (r == 0 && (r = store_open(sv->spec_opts.data_dir, &sv->store, &err)) == 0)
                store_set_max(sv->store, sv->spec_opts.store_max);
        /* An environment runs on the base it was made on (docs/store.md, "Bases"). */
        if (r == 0 && (r = rt_rootfs_identity(sv->rootfs_path, &sv->base, &err)) == 0)
                r = store_base_check(sv->store, sv->env, &sv->base, false, &err);
        if (r == 0 && (r = rt_spec_check(&sv->scfg.spec, &err)) == 0)
                r = rt_binds_check(&sv->scfg.spec, store_data_dir(sv->store), &err);
        /* Listening now: a port in use fails the start, not a connection later. */
        if (r == 0 && sv->spec_opts.npublish)
                r = netns_publish_new(sv->spec_opts.publish, sv->spec_opts.npublish, &h.publish,
                                      &err);
        if (r < 0) {
                if (usage)
                        (void)(err.msg[0] ? rtn_usage_error("serve", "%s", err.msg)
                                          : rtn_usage_error("serve", NULL));
                else
                        rtn_term_printf(stderr, "rtn serve: %s\n", err.msg);
                goto out;
        }
        enter_listen(&h);
        struct rtn_error reg = {0}; /* for `rtn ps`; best effort */
        if (rt_registry_add("serve", sv->env, store_data_dir(sv->store), argc, argv, &reg) < 0)
                rt_registry_unavailable(&reg);
        /* env_status's base: as given, else the environment's (its label is "rootfs X") */
        sv->rootfs = rootfs_arg ? rootfs_arg : rootfs ? sv->base.label + 7 : "host";
        sv->scfg.opts = &sv->spec_opts;
        struct rt_limit_warnings warn;
        rt_spec_opts_isolation(&sv->scfg.spec, &sv->spec_opts);
        rt_spec_opts_limits(&sv->scfg.spec, &sv->spec_opts, &warn);
        if (warn.memory[0])
                rtn_term_printf(stderr, "rtn serve: warning: %s\n", warn.memory);
        if (warn.pids[0])
                rtn_term_printf(stderr, "rtn serve: warning: %s\n", warn.pids);
        if (tmpfs_warn[0])
                rtn_term_printf(stderr, "rtn serve: warning: %s\n", tmpfs_warn);
        if (sv->spec_opts.isolation_auto[0])
                rtn_term_printf(stderr, "rtn serve: WARNING: %s\n", sv->spec_opts.isolation_auto);
        if (sv->scfg.spec.isolation != INIT_ISOLATION_FULL)
                rtn_term_printf(stderr, "rtn serve: WARNING: %s\n",
                                rt_isolation_warning(sv->scfg.spec.isolation));
        mcp_config_init(&cfg);
        cfg.tools = &serve_tool_table;
        cfg.tool_flags = so.flags;
        /* The front end routes a call's log messages to its request's stream by this. */
        cfg.related_meta = so.flags & MCP_TOOLS_HTTP_SESSION;
        if (sv->scfg.spec.workspace_mode == RT_WS_OVERLAY)
                cfg.tool_flags |= MCP_TOOLS_WS_OVERLAY;
        static char instructions[8192];
        serve_instructions(&sv->scfg.spec, instructions, sizeof instructions);
        cfg.instructions = instructions;
        cfg.server_name = "rtn";
        cfg.server_version = RTN_VERSION;
        r = mcp_serve_main(&cfg, &serve_ops, &h, &err);
        if (r < 0 && !h.attach_failed)
                rtn_term_printf(stderr, "rtn serve: %s\n", err.msg);
out:
        while (h.n > 0) /* a server that never ran its loop */
                serve_sandbox_end(h.sbs[0], false);
        rt_enter_free(h.enter); /* op_shutdown's, unless the loop never ran */
        free(h.sbs);
        netns_gate_free(sv->gate);
        netns_publish_free(h.publish);
        netns_policy_free(&sv->spec_opts.net);
        netns_secrets_free(&sv->spec_opts.secrets);
        rt_http_free(sv->http);
        if (sv->store)
                store_close(sv->store);
        return usage ? RTN_EXIT_FAILURE : r < 0 ? 1 : 0;
}
