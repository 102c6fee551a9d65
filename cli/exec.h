/* What `rtn exec` (cli/exec.c) shares with the messages it prints around the command
 * (cli/exec_report.c): its options and its run. */
#pragma once

#include <limits.h>
#include <stdbool.h>

#include "cli/pump.h"
#include "common/usage.h"
#include "runtime/exec/exec.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/blocked.h"
#include "runtime/sandbox/specopt.h"

#define EXIT_TIMEOUT 124

struct exec_opts {
        struct rt_spec spec;
        struct rt_spec_opts so; /* the options rtn serve shares */
        struct rt_exec_opts xo; /* --data-dir, --env, --keep, --commit, -m */
        const char *cwd;
        bool tty;
        char **argv;
        bool quiet;
        bool undo_set; /* --undo-depth or --undo-bytes, which need --keep */
};

struct exec_run {
        struct rt_exec x; /* the sandbox, its store, proxy and ports (runtime/exec/exec.h) */
        struct rt_pump pumps[3];
        size_t npumps;
        int master;
        int sigfd, timerfd;
        bool exited, timed_out;
        bool lost; /* the control socket ended before the command's exit was reported */
        int wait_status;
        struct rt_blocked blocked; /* what seccomp blocked, from rtn-init (n = total = 0) */
};

/* What the options chose that the user should know before the command runs (stderr). */
void cli_exec_warn_setup(struct exec_opts *o);
/* The limits' warnings and the isolation mode's (stderr): at set-up, and again when the start
 * fell back to the Landlock mode. */
void cli_exec_warn_mode(const struct exec_opts *o, const struct rt_limit_warnings *warn);
/* After the command: keeps or commits its changes as the options say, reports on stderr
 * what it should know (pending changes, host-run files, blocked calls, refused requests)
 * and returns the exit code, code unless keeping, committing or the clock failed it. */
int cli_exec_finish(struct exec_opts *o, struct exec_run *run, int code);
/* One line on stderr per system call the filter blocked (docs/policy.md, "Visibility"). */
void cli_exec_report_blocked(const struct rt_blocked *b);
/* cli/exec_io.c: stdio for the command (our own fds, except terminals, which become pipes
 * it pumps), the signals and the --timeout clock, -t's raw terminal and its restoring, and
 * the loop that runs until the command has exited and its output drained. */
int cli_exec_stdio(struct exec_run *run, int fds[3], int close_later[3], struct rtn_error *err);
/* -t: the size of our terminal (stdin's), for the command's pty; rows, cols kept if none. */
void cli_exec_term_size(uint16_t *rows, uint16_t *cols);
int cli_exec_signals(struct exec_run *run, uint64_t timeout_usec, struct rtn_error *err);
void cli_exec_tty_raw(struct exec_run *run);
void cli_exec_tty_restore(void);
void cli_exec_loop(struct exec_run *run);
