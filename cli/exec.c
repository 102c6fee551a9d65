/* `rtn exec`: one command in a fresh sandbox, from a terminal or a pipe. stdio is handed to
 * the command as it is (so `rtn exec -- some-mcp-server` keeps its framing, byte for byte,
 * EOF included), except a host terminal, which is pumped through a pipe, or replaced by a
 * pty inside with -t. rtn forwards SIGINT/SIGTERM/SIGHUP, resizes the pty on SIGWINCH,
 * enforces --timeout (exit 124), and returns the command's status: its exit code, 128+N for
 * signal N, 125 when rtn failed, 126 cannot execute, 127 not found. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/initproto.h"
#include "common/term.h"
#include "common/usage.h"
#include "cli/cli.h"
#include "cli/exec.h"
#include "runtime/exec/exec.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/specopt.h"
#include "runtime/session/session.h"
#include "store/store.h"

#define EXEC_STR_(x) #x
#define EXEC_STR(x) EXEC_STR_(x)

/* rtn exec's own options, after the sandbox options it shares with rtn serve
 * (rt_spec_opt_rows). An option is a row here and a case in parse_opts. */
static const struct rt_opt exec_rows[] = {
        {"cwd",
         required_argument,
         'c',
         {"  --cwd DIR             working directory inside (default /workspace)\n"}},
        {"tty",
         no_argument,
         't',
         {"  -t, --tty             run under a new pty inside the sandbox (stdin must be a\n"
          "                        terminal)\n"}},
        {"quiet",
         no_argument,
         'q',
         {"  --quiet               no report on stderr of the system calls the sandbox blocked\n"
          "                        or the network requests its proxy refused\n"}},
        {"keep",
         no_argument,
         'K',
         {"  --keep                keep the changes as the environment's pending changes (rtn "
          "diff,\n"
          "                        rtn commit, rtn reset); later --keep runs start from them,\n"
          "                        and rtn undo takes them back run by run\n"}},
        {"undo-depth",
         required_argument,
         'U',
         {"  --undo-depth N        --keep runs rtn undo can take back, oldest dropped first\n"
          "                        (default " EXEC_STR(RT_UNDO_DEPTH_DEFAULT) "; 0: none)\n"}},
        {"undo-bytes",
         required_argument,
         'B',
         {"  --undo-bytes SIZE     old versions those runs keep, oldest dropped first\n"
          "                        (default: the --upper-size)\n"}},
        {"commit",
         no_argument,
         'C',
         {"  --commit [-m MSG]     commit the sandbox's changes to the environment if CMD exits "
          "0\n"}},
        {"message", required_argument, 'm', {""}},
};
#define EXEC_NROWS (sizeof exec_rows / sizeof exec_rows[0])

static int exec_opt(int c, const char *arg, struct exec_opts *o, struct rtn_error *err) {
        switch (c) {
        case 'c':
                o->cwd = arg;
                break;
        case 't':
                o->tty = true;
                break;
        case 'C':
                o->xo.commit = true;
                break;
        case 'K':
                o->xo.keep = true;
                break;
        case 'U': {
                char *end;
                errno = 0;
                unsigned long v = strtoul(arg, &end, 10);
                if (errno || *end || !*arg || arg[0] == '-' || v > RT_UNDO_DEPTH_MAX)
                        return rtn_errx(err, EINVAL, "bad --undo-depth value %s (0 to %d)", arg,
                                        RT_UNDO_DEPTH_MAX);
                o->xo.undo_depth = (unsigned)v;
                o->undo_set = true;
                break;
        }
        case 'B':
                o->undo_set = true;
                return rt_parse_size(arg, "--undo-bytes", &o->xo.undo_bytes, err);
        case 'm': /* checked before the command runs: a refused commit loses its work */
                if (strlen(arg) > STORE_MSG_MAX)
                        return rtn_errx(err, EMSGSIZE, "-m: a message of %zu bytes, at most %d",
                                        strlen(arg), STORE_MSG_MAX);
                o->xo.message = arg;
                break;
        case 'q':
                o->quiet = true;
                break;
        default: /* getopt said what */
                rtn_err_clear(err);
                err->code = EINVAL;
                return -EINVAL;
        }
        return 0;
}

static int parse_opts(int argc, char **argv, struct exec_opts *o, struct rtn_error *err) {
        struct option longopts[64];
        int c, r;
        if ((r = rt_opts_longopts(exec_rows, EXEC_NROWS, longopts, 64)) < 0)
                return rtn_errx(err, -r, "too many options");
        rtn_usage_prog(argv, "exec");
        optind = 1;
        while ((c = getopt_long(argc, argv, "+thm:", longopts, NULL)) != -1) {
                if (c == 'h') {
                        rt_opts_usage(stdout, RT_VERB_EXEC,
                                      "usage: rtn exec [OPTIONS] -- CMD [ARG...]\n", exec_rows,
                                      EXEC_NROWS, NULL);
                        exit(0);
                }
                r = rt_spec_opt(c, optarg, &o->spec, &o->so, err);
                if (r == 0)
                        r = exec_opt(c, optarg, o, err);
                if (r < 0)
                        return r;
        }
        o->xo.data_dir = o->so.data_dir;
        o->xo.env = o->so.env;
        if ((r = rt_spec_opts_check(&o->spec, &o->so, err)) < 0)
                return r;
        /* A pipe behind -t would be echoed by the pty and never see its end of file (the pty
         * has none to give): refused, as docker refuses it. */
        if (o->tty && !isatty(STDIN_FILENO))
                return rtn_errx(err, ENOTTY,
                                "-t: the input device is not a TTY (without -t, input is "
                                "passed to the command as it is)");
        if (optind >= argc)
                return rtn_errx(err, EINVAL,
                                "no command given (rtn exec [OPTIONS] -- CMD [ARG...])");
        o->argv = argv + optind;
        o->xo.cmd = o->argv;
        char data_dir[4096];
        struct rtn_error ignored = {0};
        int q = rt_spec_check(&o->spec, err); /* conflicts first, then what the binds name */
        if (q < 0)
                return q;
        if (o->xo.data_dir)
                snprintf(data_dir, sizeof data_dir, "%s", o->xo.data_dir);
        else if (store_default_dir(data_dir, sizeof data_dir, &ignored) < 0)
                data_dir[0] = '\0';
        return rt_binds_check(&o->spec, data_dir[0] ? data_dir : NULL, err);
}

struct queued {
        struct exec_run *run;
        struct exec_opts *o;
        /* The command's stdio, made once: a start that falls back to the Landlock mode
         * (rt_exec_start) sends the spawn request a second time. */
        bool stdio_made;
        int fds[3], close_later[3];
        bool warned; /* the fallback's warnings are out */
};

/* Sends the command's spawn request; called by rt_sandbox_start_queued with the sandbox it
 * is starting (run->x.sb is filled in only once that returns). */
static int send_command(struct rt_sandbox *sb, void *arg, struct rtn_error *err) {
        struct queued *q = arg;
        struct exec_run *run = q->run;
        struct exec_opts *o = q->o;
        struct rt_env env;
        int r;
        if ((r = rt_spec_opts_env(&o->so, &env, sb, INIT_POLICY_AGENT, o->tty, NULL, err)) < 0)
                return r;
        if (run->x.fell_back && !q->warned) {
                cli_exec_warn_mode(o, &run->x.fallback_warn);
                q->warned = true;
        }
        /* No mounts in the Landlock mode: the places the command has are host paths. */
        if (sb->isolation == INIT_ISOLATION_LANDLOCK)
                rtn_term_printf(stderr,
                                "rtn exec: there is no /workspace and /tmp is the host's (not "
                                "writable): the command starts in the workspace %s, with its "
                                "private temp dir %s as TMPDIR\n",
                                sb->workspace, sb->host_tmp);
        uint16_t rows = 0, cols = 0;
        if (o->tty)
                cli_exec_term_size(&rows, &cols);
        else if (!q->stdio_made) {
                if ((r = cli_exec_stdio(run, q->fds, q->close_later, err)) < 0)
                        return r;
                q->stdio_made = true;
        }
        return rt_sandbox_spawn(sb, 1, (o->tty ? INIT_SPAWN_PTY : 0) | INIT_SPAWN_FINAL,
                                INIT_POLICY_AGENT, o->cwd ? o->cwd : sb->workspace, o->argv,
                                env.vars, o->tty ? NULL : q->fds, rows, cols, err);
}

/* After the sandbox has started with the spawn request queued: its reply, then the tty. */
static int start_command(struct exec_run *run, struct exec_opts *o, struct rtn_error *err) {
        int r;
        if ((r = rt_exec_await_spawned(&run->x.sb, o->argv[0],
                                       o->cwd ? o->cwd : run->x.sb.workspace, &run->master, err)) !=
            0)
                return r;
        if (o->tty && run->master >= 0)
                cli_exec_tty_raw(run);
        return 0;
}

static void exec_opts_done(struct exec_opts **o) {
        netns_policy_free(&(*o)->so.net);
        netns_secrets_free(&(*o)->so.secrets);
}

static int close_exec(struct exec_run *run, int code) {
        struct rtn_error err = {0};
        if (rt_exec_close(&run->x, &err) < 0)
                rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
        return code;
}

int cli_cmd_exec(int argc, char **argv) {
        /* Both static, not on the stack, and zero as BSS: the options' 52 KiB (rt_spec_opts'
         * buffers) were a memset and a page fault per 4 KiB of stack at every start, where
         * BSS pages are faulted in only where an option writes; the run's three 64 KiB pump
         * buffers only when output flows through them. Runs once per process. */
        static struct exec_opts opts;
        __attribute__((cleanup(exec_opts_done))) struct exec_opts *o = &opts;
        o->xo.argc = argc;
        o->xo.argv = argv;
        o->xo.undo_depth = RT_UNDO_DEPTH_DEFAULT;
        static struct exec_run run;
        run.master = run.sigfd = run.timerfd = -1;
        rt_exec_init(&run.x);
        struct rtn_error err = {0};
        rt_spec_init(&o->spec);
        init_limits_default(&o->spec.limits);
        _cleanup_free_ char *rootfs = NULL;
        if (parse_opts(argc, argv, o, &err) < 0)
                return err.msg[0] ? rtn_usage_error("exec", "%s", err.msg)
                                  : rtn_usage_error("exec", NULL);
        /* Without --rootfs, rt_exec_open finds the environment's base in the store it opens */
        o->xo.env_rootfs = !o->spec.rootfs;
        if (rt_tmpfs_check(&o->spec, 1, NULL, 0, &err) < 0 ||
            (o->spec.rootfs &&
             rt_rootfs_resolve(o->so.data_dir, o->spec.rootfs, &rootfs, &err) < 0)) {
                rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
                return RTN_EXIT_FAILURE;
        }
        o->spec.rootfs = rootfs;
        cli_exec_warn_setup(o);
        if (o->xo.message && !o->xo.commit)
                return rtn_usage_error("exec", "-m needs --commit");
        if (o->undo_set && !o->xo.keep)
                return rtn_usage_error("exec", "--undo-depth and --undo-bytes need --keep");
        int r = rt_exec_open(&run.x, &o->xo, &o->spec, &o->so, &err);
        if (r == 0)
                r = cli_exec_signals(&run, o->so.timeout_usec, &err);
        struct queued q = {&run, o, .close_later = {-1, -1, -1}};
        if (r == 0) {
                r = rt_exec_start(&run.x, &o->spec, &o->so, send_command, &q, &err);
                /* Why the start failed where user namespaces are denied: an option needs them,
                 * or the Landlock mode failed too (rt_spec_opts_fallback). */
                if (r < 0 && o->so.isolation_auto[0] && !q.warned)
                        rtn_term_printf(stderr, "rtn exec: WARNING: %s\n", o->so.isolation_auto);
        }
        for (int i = 0; i < 3; i++)
                rtn_safe_close(q.close_later[i]); /* the command has its own copies now */
        if (r == 0)
                r = start_command(&run, o, &err);
        if (r != 0) {
                rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
                return close_exec(&run, r > 0 ? r : RTN_EXIT_FAILURE);
        }
        if (rt_setup_warning(&run.x.sb)[0] && !o->quiet)
                rtn_term_printf(stderr, "rtn: warning: %s\n", rt_setup_warning(&run.x.sb));
        cli_exec_loop(&run);
        rt_exec_end(&run.x);
        rt_exec_unpublish(&run.x); /* what the sandbox's servers sent reaches their clients */
        cli_exec_tty_restore();
        return close_exec(&run, cli_exec_finish(o, &run, rt_exit_code(run.wait_status)));
}
