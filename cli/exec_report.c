/* What `rtn exec` says on stderr around the command (cli/exec.h): the warnings of its
 * setup, what became of its changes, and what the sandbox refused it. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common/duration.h"
#include "common/term.h"
#include "cli/exec.h"
#include "netns/netns.h"
#include "runtime/sandbox/hostrun.h"
#include "store/store.h"

/* The seccomp filter kills (SIGSYS, SECCOMP_RET_KILL_PROCESS) only for a foreign system-call
 * ABI; every other blocked call fails with a documented errno (docs/policy.md). A process
 * killed by SIGSYS cannot report which call it made (the kernel logs that to the host's
 * audit log only), so name the rule that does this. A program may also raise SIGSYS itself:
 * hence "most likely". */
static void report_violation(int wait_status, const char *cmd) {
        if (WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGSYS)
                rtn_term_printf(
                        stderr,
                        "rtn exec: %s was killed by seccomp (SIGSYS): most likely a system "
                        "call through a foreign ABI (32-bit int 0x80 or x32), which the sandbox "
                        "forbids; see docs/policy.md\n",
                        cmd);
}

/* After an --keep run with an overlay workspace: what is now pending, and how to go on. */
static void report_pending(const struct rt_exec *x, const char *workspace) {
        struct rtn_error err = {0};
        unsigned n = 0;
        if (rt_exec_pending_count(x, &n, &err) < 0)
                rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
        else if (n > 0)
                rtn_term_printf(
                        stderr,
                        "rtn exec: %u pending change%s to %s (rtn diff lists, rtn apply writes, "
                        "rtn "
                        "reset drops them)\n",
                        n, n == 1 ? "" : "s", workspace);
}

struct hostrun_seen {
        unsigned n;
        bool git_rw; /* --workspace-git rw: the top's .git is the agent's to write */
};

static int warn_hostrun(const char *rel, const struct rt_hostrun *h, void *ud) {
        struct hostrun_seen *s = ud;
        if (s->git_rw && !strcmp(rel, ".git"))
                return 0;
        if (s->n++ < 32)
                rtn_term_printf(stderr,
                                "rtn exec: WARNING: the command made or changed /workspace/%s, "
                                "which a host program runs by itself (%s: %s); review it\n",
                                rel, h->name, h->why);
        return 0;
}

/* A live workspace: the files of the registry of host-run files the command made, which the
 * walk at the start could not make read-only (docs/security-invariants.md, 13). */
static void report_hostrun(const char *workspace, bool git_rw,
                           const struct rt_hostrun_mark *started) {
        struct rtn_error err = {0};
        struct hostrun_seen s = {.git_rw = git_rw};
        if (rt_hostrun_since(workspace, started, warn_hostrun, &s, &err) < 0)
                rtn_term_printf(stderr,
                                "rtn exec: WARNING: could not look for files host programs run "
                                "that the command made: %s\n",
                                err.msg);
        else if (s.n > 32)
                fprintf(stderr, "rtn exec: WARNING: %u more such files\n", s.n - 32);
}

/* Whether a word of the command line is git, or a shell script's word is (`sh -c '... git
 * commit'`, `/usr/bin/git`). */
static bool mentions_git(char *const *argv) {
        for (; *argv; argv++)
                for (const char *p = *argv; (p = strstr(p, "git")); p += 3) {
                        bool start = p == *argv || strchr(" \t\n/;&|(`'\"", p[-1]);
                        if (start && (!p[3] || strchr(" \t\n;&|)`'\"", p[3])))
                                return true;
                }
        return false;
}

/* A live workspace's git dir is read-only (docs/security-invariants.md, 13): a git command
 * that writes it fails with "Read-only file system" and says no more. After a command that
 * ran git and failed, say why and what to use instead. */
static void report_git_read_only(const struct exec_opts *o, int wait_status) {
        struct stat sb;
        char git[4096];
        if (!o->spec.workspace || o->spec.workspace_mode != RT_WS_LIVE || !WIFEXITED(wait_status) ||
            WEXITSTATUS(wait_status) == 0 || !mentions_git(o->argv) ||
            (size_t)snprintf(git, sizeof git, "%s/.git", o->spec.workspace) >= sizeof git ||
            fstatat(AT_FDCWD, git, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                return;
        if (o->spec.workspace_git_rw && S_ISDIR(sb.st_mode)) {
                fprintf(stderr, "rtn exec: note: with --workspace-git rw, /workspace/.git's "
                                "config, config.worktree, commondir, hooks/, info/, "
                                "objects/info/alternates, worktrees/ and modules/ stay read-only "
                                "(git config, hook and worktree changes fail there)\n");
                return;
        }
        fprintf(stderr, "rtn exec: note: /workspace/.git is read-only in a live workspace, so git "
                        "commit, checkout and whatever else writes it fail there (Read-only file "
                        "system): a host git would run what the agent planted in it. "
                        "--workspace-git rw lets the command commit, with .git's configuration "
                        "and hooks kept read-only; with --workspace-mode overlay --keep it can "
                        "commit in the sandbox, and rtn apply writes its work tree back\n");
}

/* One line per system call the filter blocked (docs/policy.md, "Visibility"), after the
 * command's own output, on stderr only. */
void cli_exec_report_blocked(const struct rt_blocked *b) {
        char line[256];
        for (uint32_t i = 0; rt_blocked_line(b, i, line, sizeof line) >= 0; i++)
                rtn_term_printf(stderr, "rtn: %s\n",
                                line); /* as serve's note; comm is the agent's */
}

/* One line per kind of request the proxy refused (docs/network.md, "Reports"), like the
 * blocked calls' report. */
static void report_denied(struct netns_gate *g) {
        struct netns_denial d[16];
        uint64_t more = 0;
        size_t n = g ? netns_gate_denials(g, NETNS_GATE_ALL, 0, d, 16, &more) : 0;
        for (size_t i = 0; i < n; i++)
                rtn_term_printf(stderr, "rtn: network denied %s:%u: %s (%llu time%s)\n", d[i].host,
                                d[i].port, d[i].reason, (unsigned long long)d[i].count,
                                d[i].count == 1 ? "" : "s"); /* names the agent's */
        if (more)
                rtn_term_printf(stderr, "rtn: network denied %llu more request%s\n",
                                (unsigned long long)more, more == 1 ? "" : "s");
}

/* The limits' warnings and the isolation mode's (stderr). */
void cli_exec_warn_mode(const struct exec_opts *o, const struct rt_limit_warnings *warn) {
        if (warn->memory[0])
                rtn_term_printf(stderr, "rtn exec: warning: %s\n", warn->memory);
        if (warn->pids[0])
                rtn_term_printf(stderr, "rtn exec: warning: %s\n", warn->pids);
        if (o->so.isolation_auto[0])
                rtn_term_printf(stderr, "rtn exec: WARNING: %s\n", o->so.isolation_auto);
        if (o->spec.isolation != INIT_ISOLATION_FULL)
                rtn_term_printf(stderr, "rtn exec: WARNING: %s\n",
                                rt_isolation_warning(o->spec.isolation));
}

/* What the options chose that the user should know before the command runs. The Landlock
 * mode rtn may choose by itself is said only once the full sandbox failed to start
 * (rt_exec_start, cli_exec_warn_mode). */
void cli_exec_warn_setup(struct exec_opts *o) {
        struct rt_limit_warnings warn;
        rt_spec_opts_limits(&o->spec, &o->so, &warn);
        cli_exec_warn_mode(o, &warn);
        if (o->spec.workspace_mode == RT_WS_OVERLAY && !o->xo.keep && !o->quiet)
                fprintf(stderr, "rtn exec: the overlay workspace's changes are discarded when the "
                                "command ends (--keep keeps them for rtn apply)\n");
}

/* What rtn-init says of the sandbox and the command once it ran, the changes' fate after. */
int cli_exec_finish(struct exec_opts *o, struct exec_run *run, int code) {
        struct rtn_error err = {0};
        char id[STORE_ID_SIZE];
        int r;
        char note[300] = "";
        bool lost = o->xo.keep && rt_exec_keep(&run->x, note, sizeof note, &err) < 0;
        if (note[0] && !o->quiet) /* kept, without a step rtn undo can take back */
                rtn_term_printf(stderr, "rtn exec: the changes were kept; %s\n", note);
        if (lost) {
                rtn_term_printf(stderr, "rtn exec: the changes were not kept: %s\n", err.msg);
                code = RTN_EXIT_FAILURE;
        } else if (run->timed_out) {
                char d[RTN_DURATION_BUF];
                rtn_term_printf(stderr, "rtn exec: timed out after %s\n",
                                rtn_duration_format(o->so.timeout_usec, d));
                code = EXIT_TIMEOUT;
        } else if (o->xo.commit && code == 0) {
                if ((r = rt_exec_commit(&run->x, id, &err)) < 0)
                        rtn_term_printf(stderr, "rtn exec: commit: %s\n", err.msg);
                else if (r == 1)
                        fprintf(stderr, "rtn exec: nothing to commit\n");
                else
                        rtn_term_printf(stderr, "rtn exec: committed %s\n", id);
                code = r < 0 ? RTN_EXIT_FAILURE : 0;
        } else if (o->xo.commit) {
                fprintf(stderr, "rtn exec: not committed: the command exited with %d\n", code);
        }
        if (o->spec.workspace_mode == RT_WS_OVERLAY && o->xo.keep && !o->quiet)
                report_pending(&run->x, o->spec.workspace);
        if (o->spec.workspace && o->spec.workspace_mode == RT_WS_LIVE)
                report_hostrun(o->spec.workspace, o->spec.workspace_git_rw, &run->x.started);
        report_violation(run->wait_status, o->argv[0]);
        if (!o->quiet)
                report_git_read_only(o, run->wait_status);
        if (!o->quiet) {
                cli_exec_report_blocked(&run->blocked);
                report_denied(run->x.gate);
        }
        return code;
}
