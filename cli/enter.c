/* `rtn enter ID -- CMD...`: a command in a running sandbox, as `docker exec` runs one in a
 * running container. ID is what `rtn ps` lists: an rtn exec's pid, or PID/sb-N for an rtn
 * serve's sandbox sb-N (PID alone: sb-1). The rtn that owns the sandbox has its
 * rtn-init start the command (runtime/session/enter.h): the sandbox's policy, user,
 * namespaces, cgroup, filesystem, environment and network, never this process's. The
 * terminal, signals and exit code are `rtn exec`'s (cli/exec_io.c): a host terminal is pumped
 * through pipes, or a pty inside with -t; SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded;
 * the exit code is the command's, 128+N for signal N, 125 when rtn failed or the sandbox
 * ended first, 126 cannot execute, 127 not found. */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/exec.h"
#include "common/cleanup.h"
#include "common/initproto.h"
#include "common/term.h"
#include "common/usage.h"
#include "runtime/session/enter.h"

static const char enter_usage[] =
        "usage: rtn enter [-t] [--cwd DIR] ID -- CMD [ARG...]\n"
        "\n"
        "Run CMD in the running sandbox ID, as `rtn ps` lists it: the PID of an rtn exec of\n"
        "this user; PID/sb-N for an rtn serve's sandbox sb-N (the handle its agent uses), PID\n"
        "alone for its sb-1. The command runs as the agent's commands run there: its policy,\n"
        "user, filesystem, environment and network; it is none of the agent's jobs. It ends\n"
        "with the sandbox; one the agent has not started yet is refused. Exit code: CMD's;\n"
        "125 rtn failed or the sandbox ended first; 126 cannot execute; 127 not found;\n"
        "128+N killed by signal N. The system calls the sandbox blocked are listed on\n"
        "stderr afterwards, as rtn exec lists them.\n"
        "\n"
        "  -t, --tty             run under a new pty inside the sandbox (stdin must be a\n"
        "                        terminal)\n"
        "  --cwd DIR             working directory inside (default: the sandbox's workspace)\n"
        "  -h, --help            this text\n";

struct enter_opts {
        int pid;
        unsigned sb; /* sb-N of an rtn serve; 1: the first, an rtn exec's only one */
        bool tty;
        const char *cwd;
        char **argv;
};

/* PID, or PID/sb-N for an rtn serve's sandbox sb-N (its handle, as its agent names it). */
static int parse_id(const char *s, int *ret, unsigned *ret_sb) {
        char *end, *sbend;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || v <= 0 || v > 4194304 || (*end && strncmp(end, "/sb-", 4)))
                return -EINVAL;
        *ret = (int)v;
        *ret_sb = 1;
        if (!*end)
                return 0;
        if (end[4] < '1' || end[4] > '9')
                return -EINVAL;
        unsigned long n = strtoul(end + 4, &sbend, 10);
        if (errno || *sbend || n > UINT_MAX)
                return -EINVAL;
        *ret_sb = (unsigned)n;
        return 0;
}

static int parse_opts(int argc, char **argv, struct enter_opts *o) {
        static const struct option longopts[] = {{"tty", no_argument, NULL, 't'},
                                                 {"cwd", required_argument, NULL, 'c'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {0}};
        int c;
        rtn_usage_prog(argv, "enter");
        optind = 1;
        while ((c = getopt_long(argc, argv, "+th", longopts, NULL)) != -1) {
                if (c == 't')
                        o->tty = true;
                else if (c == 'c')
                        o->cwd = optarg;
                else if (c == 'h')
                        return rtn_usage_help(enter_usage) == 0 ? 1 : -1;
                else
                        return rtn_usage_error("enter", NULL), -1;
        }
        if (optind >= argc)
                return rtn_usage_error("enter", "no sandbox given (rtn ps lists them)"), -1;
        if (parse_id(argv[optind], &o->pid, &o->sb) < 0)
                return rtn_usage_error("enter",
                                       "'%s' is not a sandbox's ID (PID or PID/sb-N, as rtn ps "
                                       "lists them)",
                                       argv[optind]),
                       -1;
        optind++;
        if (optind < argc && !strcmp(argv[optind], "--"))
                optind++; /* getopt stops at the operand, before its "--" */
        if (optind >= argc)
                return rtn_usage_error("enter", "no command given (rtn enter ID -- CMD [ARG...])"),
                       -1;
        if (o->cwd && o->cwd[0] != '/')
                return rtn_usage_error("enter", "--cwd: '%s' is not an absolute path", o->cwd), -1;
        /* As rtn exec: a pipe behind -t would be echoed by the pty and never end. */
        if (o->tty && !isatty(STDIN_FILENO))
                return rtn_usage_error("enter", "-t: the input device is not a TTY (without -t, "
                                                "input is passed to the command as it is)"),
                       -1;
        o->argv = argv + optind;
        return 0;
}

/* Sends the request; the command's stdio is made as rtn exec makes it (no terminal in). */
static int send_request(struct exec_run *run, const struct enter_opts *o, struct rtn_error *err) {
        int fds[3], close_later[3] = {-1, -1, -1}, r = 0;
        uint16_t rows = 0, cols = 0;
        if (o->tty)
                cli_exec_term_size(&rows, &cols);
        else {
                r = cli_exec_stdio(run, fds, close_later, err);
        }
        if (r == 0)
                r = rt_enter_request(run->x.sb.ctl, o->sb, o->tty ? INIT_SPAWN_PTY : 0, o->cwd,
                                     o->argv, o->tty ? NULL : fds, rows, cols, err);
        for (int i = 0; i < 3; i++)
                rtn_safe_close(close_later[i]); /* the command has its own copies now */
        return r;
}

int cli_cmd_enter(int argc, char **argv) {
        struct enter_opts o = {0};
        struct rtn_error err = {0};
        int r = parse_opts(argc, argv, &o);
        if (r != 0)
                return r > 0 ? 0 : RTN_EXIT_FAILURE;
        /* Static, as rtn exec's: its pump buffers are large. */
        static struct exec_run run;
        run.master = run.sigfd = run.timerfd = -1;
        rt_exec_init(&run.x);
        _cleanup_close_ int fd = rt_enter_connect(o.pid, &err);
        run.x.sb.ctl = fd; /* the owner speaks rtn-init's protocol for this command */
        /* A refused request may find the connection closed: the refusal waits to be read. */
        if (fd < 0 || cli_exec_signals(&run, 0, &err) < 0 ||
            ((r = send_request(&run, &o, &err)) < 0 && r != -EPIPE && r != -ECONNRESET)) {
                rtn_term_printf(stderr, "rtn enter: %s\n", err.msg);
                return RTN_EXIT_FAILURE;
        }
        r = rt_exec_await_spawned(&run.x.sb, o.argv[0], o.cwd ? o.cwd : "the workspace",
                                  &run.master, &err);
        if (r != 0) {
                rtn_term_printf(stderr, "rtn enter: %s\n", err.msg);
                return r > 0 ? r : RTN_EXIT_FAILURE;
        }
        if (o.tty && run.master >= 0)
                cli_exec_tty_raw(&run);
        cli_exec_loop(&run);
        cli_exec_tty_restore();
        if (run.lost) {
                rtn_term_printf(stderr, "rtn enter: sandbox %d ended before the command did\n",
                                o.pid);
                return RTN_EXIT_FAILURE;
        }
        cli_exec_report_blocked(&run.blocked); /* as rtn exec reports its command's */
        return rt_exit_code(run.wait_status);
}
