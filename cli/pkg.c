/* `rtn pkg install NAME...`: a session on the environment's layers, one provisioning command
 * (apt-get as root inside, through the gate only; runtime/rootfs/pkg.h), and a commit of
 * what it installed. The verb runs its own small event loop for the session and the gate's
 * listener; `rtn serve` does the same on its MCP loop (serve/tools/pkg.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "common/duration.h"
#include "common/cleanup.h"
#include "common/clock.h"
#include "common/exitcode.h"
#include "common/initproto.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/term.h"
#include "common/usage.h"
#include "netns/netns.h"
#include "runtime/rootfs/pkg.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/session/session.h"
#include "store/store.h"

struct cli {
        struct store *store;
        struct rtn_loop *loop;
        struct rt_session *sess;
        struct netns_gate *gate;
        struct rt_cmd *cmd;
        char *session_dir;
        int session_lock;
        struct store_stack stack; /* the env's layers, held until the commit */
        struct store_base base;
        struct cli_progress prog;
        bool done;
};

static void cli_done(struct rt_cmd *c, void *ud) {
        ((struct cli *)ud)->done = true;
}

/* apt's output as it comes, not once apt has exited: an install takes minutes. */
static void cli_output(struct rt_cmd *c, bool err, const char *p, size_t n, void *ud) {
        FILE *f = err ? stderr : stdout;
        fwrite(p, 1, n, f);
        fflush(f);
}

static void cli_free(struct cli *c) {
        /* The session's upper holds files of subordinate ids (what apt-get wrote as inside
         * root): removing it may need a user namespace mapped like the sandbox was. */
        struct rt_idmap idmap;
        const struct rt_idmap *m = c->sess ? rt_session_idmap(c->sess) : NULL;
        if (m)
                idmap = *m;
        rt_session_free(c->sess);
        netns_gate_free(c->gate);
        if (c->loop)
                rtn_loop_free(c->loop);
        if (c->session_dir) {
                char *slash = strrchr(c->session_dir, '/');
                struct rtn_error err = {0};
                *slash = '\0';
                if (rt_remove_tree(m ? &idmap : NULL, c->session_dir, slash + 1, &err) < 0)
                        rtn_term_printf(stderr, "rtn pkg install: %s\n", err.msg);
                free(c->session_dir);
        }
        rtn_safe_close(c->session_lock);
        store_stack_free(&c->stack);
        if (c->store)
                store_close(c->store);
}

struct pkg_opts {
        const char *data_dir, *env, *rootfs;
        const char *allow[32];
        size_t nallow;
        struct netns_upstream upstream; /* --upstream-proxy, or unset */
        uint64_t timeout_usec;
        char **names;
        size_t n;
};

/* Session on the env's layers with the gate attached to our loop, then the command. */
static int cli_start(struct cli *c, const struct pkg_opts *o, const char *rootfs,
                     struct rtn_error *err) {
        struct rt_session_config cfg = {0};
        pid_t attached = -1;
        rt_spec_init(&cfg.spec);
        init_limits_default(&cfg.spec.limits);
        cfg.spec.rootfs = rootfs;
        cfg.spec.gate = true;
        int r;
        if ((r = store_open(o->data_dir, &c->store, err)) < 0 ||
            (r = rt_env_stack(c->store, o->env, rootfs, false, &c->base, &c->stack, err)) < 0 ||
            (r = store_session_new(c->store, &c->session_dir, &c->session_lock, err)) < 0 ||
            (r = rt_pkg_gate_new(rootfs, o->allow, o->nallow, &c->gate, err)) < 0)
                return r;
        netns_gate_set_upstream(c->gate, &o->upstream);
        if ((r = rtn_loop_new(&c->loop)) < 0 ||
            (r = rtn_loop_add_signal(c->loop, SIGPIPE, NULL, NULL)) < 0)
                return rtn_err(err, r, "event loop");
        cfg.session_dir = c->session_dir;
        cli_progress_line(&c->prog, "starting a sandbox on %s",
                          o->rootfs ? o->rootfs : "the environment's rootfs");
        if ((r = rt_session_new(c->loop, &cfg, &c->sess, err)) < 0)
                return r;
        r = rt_session_set_layers(c->sess, c->stack.paths, c->stack.n);
        if (r < 0)
                return rtn_err(err, r, "layer stack");
        if ((r = rt_session_ensure(c->sess, err)) < 0)
                return r;
        const struct rt_sandbox *sb = rt_session_sandbox(c->sess);
        if ((r = rt_pkg_gate_attach(c->gate, c->loop, sb, &attached, err)) < 0)
                return r;
        _cleanup_free_ char *cmd = NULL;
        if ((r = rt_pkg_command(o->names, o->n, sb->gate_port, sb->idmap.mode, &cmd)) < 0)
                return rtn_err(err, r, "command line");
        log_debug("pkg: the install, as root inside through the gate: %s", cmd);
        struct rt_cmd_opts ro = {.command = cmd,
                                 .cwd = "/",
                                 .policy = INIT_POLICY_PROVISION,
                                 .timeout_usec = o->timeout_usec,
                                 .output_fn = cli_output};
        cli_progress_line(&c->prog, "apt-get update and install through the gate");
        return rt_session_run(c->sess, &ro, cli_done, c, &c->cmd, err);
}

static const char pkg_usage[] =
        "usage: rtn pkg install [--rootfs NAME] [OPTIONS] PACKAGE...\n"
        "Installs Debian packages in a sandbox on rootfs NAME, through a gate that lets only\n"
        "the package mirrors through, and commits them to the environment.\n"
        "  --rootfs NAME         the rootfs (rtn rootfs list); default: the one the\n"
        "                        environment was made on\n"
        "  --env NAME            environment to commit to (default: default)\n"
        "  --allow-host HOST     let the install reach HOST too (.example.org: all under it)\n"
        "  --upstream-proxy URL|env  the mirrors through this HTTP proxy (http://[USER:PASSWORD@]\n"
        "                        HOST:PORT, with CONNECT); env: the caller's https_proxy or\n"
        "                        http_proxy, honouring no_proxy\n"
        "  --timeout DURATION    kill the install after DURATION (default 30m; at most 24h)\n"
        "  --data-dir DIR        the store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
        "~/.local/share/rtn)\n"
        "apt's output is shown as it comes; on a terminal (or with RTN_LOG=info) each step is\n"
        "named on stderr. apt's lists, cache and logs stay out of the commit. When every\n"
        "package is installed already nothing is committed: it prints \"unchanged TIP\".\n";

/* `rtn pkg install`'s options and packages: -1 to go on, else the exit code to stop with
 * (0 after --help, RTN_EXIT_FAILURE after a usage error, both printed). */
static int parse_pkg(int argc, char **argv, struct pkg_opts *o) {
        static const struct option longopts[] = {{"data-dir", required_argument, NULL, 'd'},
                                                 {"env", required_argument, NULL, 'e'},
                                                 {"rootfs", required_argument, NULL, 'r'},
                                                 {"allow-host", required_argument, NULL, 'a'},
                                                 {"upstream-proxy", required_argument, NULL, 'u'},
                                                 {"timeout", required_argument, NULL, 'T'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {0}};
        const char *verb = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
        if (verb && strcmp(verb, "install") != 0)
                return rtn_usage_error("pkg", "unknown sub-command '%s'", verb);
        const char *name = verb ? "pkg install" : "pkg";
        argc -= !!verb;
        argv += !!verb;
        rtn_usage_prog(argv, name);
        optind = 0;
        int c;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        return rtn_usage_help(pkg_usage);
                case 'd':
                        o->data_dir = optarg;
                        break;
                case 'e':
                        o->env = optarg;
                        break;
                case 'r':
                        o->rootfs = optarg;
                        break;
                case 'a':
                        if (o->nallow >= 32 || !netns_host_valid(optarg))
                                return rtn_usage_error(name, "bad --allow-host %s", optarg);
                        o->allow[o->nallow++] = optarg;
                        break;
                case 'u': {
                        struct rtn_error err = {0};
                        if (netns_upstream_parse(&o->upstream, optarg, &err) < 0)
                                return rtn_usage_error(name, "%s", err.msg);
                        break;
                }
                case 'T': {
                        struct rtn_error err = {0};
                        if (rtn_duration_opt("--timeout", optarg, &o->timeout_usec, &err) < 0)
                                return rtn_usage_error(name, "%s", err.msg);
                        if (o->timeout_usec > 86400 * RTN_USEC_PER_SEC)
                                return rtn_usage_error(name, "--timeout %s: at most a day (24h)",
                                                       optarg);
                        break;
                }
                default:
                        return rtn_usage_error(name, NULL);
                }
        }
        if (!verb)
                return rtn_usage_error("pkg", "missing sub-command (install)");
        o->names = argv + optind;
        o->n = (size_t)(argc - optind);
        if (o->n == 0)
                return rtn_usage_error(name, "no PACKAGE given");
        struct rtn_error err = {0};
        if (store_env_check(o->env, &err) < 0)
                return rtn_usage_error(name, "%s", err.msg);
        if (rt_pkg_validate(o->names, o->n, &err) < 0)
                return rtn_usage_error(name, "%s", err.msg);
        return -1;
}

static int cli_commit(struct cli *c, const struct pkg_opts *o, struct rtn_error *err) {
        char msg[1024], id[STORE_ID_SIZE];
        int len = snprintf(msg, sizeof msg, "pkg install");
        for (size_t i = 0; i < o->n && len > 0 && (size_t)len < sizeof msg - 1; i++)
                len += snprintf(msg + len, sizeof msg - (size_t)len, " %s", o->names[i]);
        /* On the tip it was installed on only: a tip moved meanwhile is another writer's. */
        struct store_commit_opts co = {.msg = msg,
                                       .parent = c->stack.tip,
                                       .base = &c->base,
                                       .upper_lock = c->session_lock};
        cli_progress_line(&c->prog, "committing to environment %s", o->env);
        int r = rt_session_commit(c->sess, c->store, o->env, &co, id, err);
        if (r >= 0)
                rtn_term_printf(stdout, "%s %s\n", r == 1 ? "unchanged" : "committed", id);
        return r;
}

/* Every package was installed already: nothing was written, nothing is committed. */
static void cli_unchanged(struct cli *c, const struct pkg_opts *o) {
        char tip[STORE_ID_SIZE] = "";
        (void)store_tip(c->store, o->env, tip, NULL);
        fprintf(stderr, "rtn pkg install: nothing changed, nothing committed\n");
        rtn_term_printf(stdout, "unchanged %s\n", tip);
}

int cli_cmd_pkg(int argc, char **argv) {
        struct pkg_opts o = {.env = STORE_DEFAULT_ENV, .timeout_usec = 1800 * RTN_USEC_PER_SEC};
        struct cli c = {.session_lock = -1};
        struct rtn_error err = {0};
        cli_progress_init(&c.prog, "rtn pkg install");
        _cleanup_free_ char *rootfs = NULL;
        int r = parse_pkg(argc, argv, &o);
        if (r >= 0)
                return r;
        /* without --rootfs, the base the environment was made on (docs/store.md, "Bases") */
        if ((r = o.rootfs ? rt_rootfs_resolve(o.data_dir, o.rootfs, &rootfs, &err)
                          : rt_env_rootfs(o.data_dir, o.env, &rootfs, &err)) == 0 &&
            !rootfs)
                r = rtn_errx(&err, EINVAL,
                             "packages install into a rootfs: give --rootfs NAME "
                             "(rtn rootfs bootstrap NAME makes one)");
        if (r == 0)
                r = cli_start(&c, &o, rootfs, &err);
        while (r == 0 && !c.done)
                if ((r = rtn_loop_run_once(c.loop, -1)) > 0)
                        r = 0;
        int code = r < 0 || !c.cmd ? RTN_EXIT_FAILURE : rt_cmd_exit_code(c.cmd);
        fflush(stdout);
        if (r == 0 && code == RT_PKG_EXIT_UNCHANGED) {
                cli_unchanged(&c, &o);
                code = 0;
                c.cmd = NULL; /* no commit */
        }
        char why[256];
        if (r == 0 && code != 0 && c.gate && netns_gate_refusals(c.gate, why, sizeof why))
                rtn_term_printf(stderr, "rtn pkg install: %s\n", why);
        if (r == 0 && c.cmd && code != 0 &&
            rt_session_sandbox(c.sess)->idmap.mode == RT_IDMAP_SINGLE)
                rtn_term_printf(stderr, "rtn pkg install: %s\n", rt_pkg_single_uid_note);
        if (r == 0 && c.cmd && code == 0 && (r = cli_commit(&c, &o, &err)) < 0)
                code = RTN_EXIT_FAILURE;
        if (r < 0)
                rtn_term_printf(stderr, "rtn pkg install: %s\n", err.msg);
        cli_free(&c);
        return r < 0 ? (err.code == EINVAL || err.code == ENOENT ? 1 : RTN_EXIT_FAILURE) : code;
}
