/* `rtn pkg install NAME...`: a session on the environment's layers, one provisioning command
 * (apt-get as root inside, through the gate only; runtime/rootfs/pkg.h), and a commit of
 * what it installed. The verb runs its own small event loop for the session and the gate's
 * listener; `rtn serve` does the same on its MCP loop (mcp/tools/pkg.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/initproto.h"
#include "common/loop.h"
#include "common/term.h"
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
        bool done;
};

static void cli_done(struct rt_cmd *c, void *ud) {
        ((struct cli *)ud)->done = true;
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
                        rtn_term_printf(stderr, "rtn pkg: %s\n", err.msg);
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
        unsigned long timeout;
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
        if ((r = rtn_loop_new(&c->loop)) < 0 ||
            (r = rtn_loop_add_signal(c->loop, SIGPIPE, NULL, NULL)) < 0)
                return rtn_err(err, r, "event loop");
        cfg.session_dir = c->session_dir;
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
        struct rt_cmd_opts ro = {.command = cmd,
                                 .cwd = "/",
                                 .policy = INIT_POLICY_PROVISION,
                                 .timeout_ms = o->timeout * 1000};
        return rt_session_run(c->sess, &ro, cli_done, c, &c->cmd, err);
}

static const char pkg_usage[] =
        "usage: rtn pkg install --rootfs NAME [OPTIONS] PACKAGE...\n"
        "Installs Debian packages in a sandbox on rootfs NAME, through a gate that lets only\n"
        "the package mirrors through, and commits them to the environment.\n"
        "  --rootfs NAME         the rootfs (rtn rootfs list); required\n"
        "  --env NAME            environment to commit to (default: default)\n"
        "  --allow-host HOST     let the install reach HOST too (.example.org: all under it)\n"
        "  --timeout SECS        kill the install after SECS seconds (default 1800)\n"
        "  --data-dir DIR        the store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
        "~/.local/share/rtn)\n";

static int parse_pkg(int argc, char **argv, struct pkg_opts *o, struct rtn_error *err) {
        static const struct option longopts[] = {{"data-dir", required_argument, NULL, 'd'},
                                                 {"env", required_argument, NULL, 'e'},
                                                 {"rootfs", required_argument, NULL, 'r'},
                                                 {"allow-host", required_argument, NULL, 'a'},
                                                 {"timeout", required_argument, NULL, 'T'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {0}};
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        fputs(pkg_usage, stdout);
                        exit(0);
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
                                return rtn_errx(err, EINVAL, "bad --allow-host %s", optarg);
                        o->allow[o->nallow++] = optarg;
                        break;
                case 'T':
                        o->timeout = strtoul(optarg, NULL, 10);
                        if (o->timeout == 0 || o->timeout > 86400)
                                return rtn_errx(err, EINVAL, "--timeout wants 1..86400 seconds");
                        break;
                default:
                        return rtn_errx(err, EINVAL, "see 'rtn pkg --help'");
                }
        }
        if (optind >= argc || strcmp(argv[optind], "install") != 0)
                return rtn_errx(err, EINVAL,
                                "usage: rtn pkg install [--rootfs NAME] [--env ENV] "
                                "[--allow-host HOST] [--timeout SECS] PACKAGE...");
        o->names = argv + optind + 1;
        o->n = (size_t)(argc - optind - 1);
        if (store_env_valid(o->env) < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", o->env);
        return rt_pkg_validate(o->names, o->n, err);
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
        int r = rt_session_commit(c->sess, c->store, o->env, &co, id, err);
        if (r >= 0)
                printf("%s %s\n", r == 1 ? "unchanged" : "committed", id);
        return r;
}

int rt_cmd_pkg(int argc, char **argv) {
        struct pkg_opts o = {.env = STORE_DEFAULT_ENV, .timeout = 1800};
        struct cli c = {.session_lock = -1};
        struct rtn_error err = {0};
        _cleanup_free_ char *rootfs = NULL;
        int r = parse_pkg(argc, argv, &o, &err);
        if (r == 0 && (r = rt_rootfs_resolve(o.data_dir, o.rootfs, &rootfs, &err)) == 0 && !rootfs)
                r = rtn_errx(&err, EINVAL,
                             "packages install into a rootfs: give --rootfs NAME "
                             "(rtn rootfs bootstrap NAME makes one)");
        if (r == 0)
                r = cli_start(&c, &o, rootfs, &err);
        while (r == 0 && !c.done)
                if ((r = rtn_loop_run_once(c.loop, -1)) > 0)
                        r = 0;
        int code = r < 0 || !c.cmd ? 125 : rt_cmd_exit_code(c.cmd);
        if (c.cmd) {
                fwrite(c.cmd->out.data ? c.cmd->out.data : "", 1, c.cmd->out.len, stdout);
                fwrite(c.cmd->err.data ? c.cmd->err.data : "", 1, c.cmd->err.len, stderr);
                fflush(stdout);
        }
        char why[256];
        if (r == 0 && code != 0 && c.gate && netns_gate_refusals(c.gate, why, sizeof why))
                rtn_term_printf(stderr, "rtn pkg: %s\n", why);
        if (r == 0 && code != 0 && rt_session_sandbox(c.sess)->idmap.mode == RT_IDMAP_SINGLE)
                fprintf(stderr, "rtn pkg: %s\n", rt_pkg_single_uid_note);
        if (r == 0 && code == 0 && (r = cli_commit(&c, &o, &err)) < 0)
                code = 125;
        if (r < 0)
                rtn_term_printf(stderr, "rtn pkg: %s\n", err.msg);
        cli_free(&c);
        return r < 0 ? (err.code == EINVAL || err.code == ENOENT ? 2 : 125) : code;
}
