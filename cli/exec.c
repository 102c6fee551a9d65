/* `rtn exec`: one command in a fresh sandbox, from a terminal or a pipe. stdio is handed to
 * the command as it is (so `rtn exec -- some-mcp-server` keeps its framing, byte for byte,
 * EOF included), except a host terminal, which is pumped through a pipe, or replaced by a
 * pty inside with -t. rtn forwards SIGINT/SIGTERM/SIGHUP, resizes the pty on SIGWINCH,
 * enforces --timeout (exit 124), and returns the command's status: its exit code, 128+N for
 * signal N, 125 when rtn failed, 126 cannot execute, 127 not found. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/log.h"
#include "common/term.h"
#include "common/usage.h"
#include "common/initproto.h"
#include "netns/netns.h"
#include "runtime/sandbox/blocked.h"
#include "cli/cli.h"
#include "runtime/internal.h"
#include "cli/pump.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/hostrun.h"
#include "runtime/session/pending.h"
#include "runtime/session/session.h"
#include "runtime/session/wsover.h"
#include "runtime/sandbox/specopt.h"
#include "runtime/session/registry.h"
#include "runtime/session/upper.h"
#include "store/store.h"

#define EXIT_RTN RTN_EXIT_USAGE /* rtn failed, called wrong included */
#define EXEC_FIRST_PUMP 4 /* poll slots: control socket, signals, timer, proxy; then pumps */
#define EXIT_TIMEOUT 124

struct exec_opts {
        struct rt_spec spec;
        struct rt_spec_opts so; /* the options rtn serve shares */
        const char *cwd;
        unsigned long timeout;
        bool tty;
        char **argv;
        const char *data_dir, *env, *message;
        bool commit, keep, quiet;
        char workspace_abs[PATH_MAX]; /* --workspace, resolved: what the policy checks */
};

struct exec_run {
        struct rt_sandbox sb;
        struct rt_pump pumps[3];
        size_t npumps;
        int master;
        int sigfd, timerfd;
        bool exited, timed_out;
        bool all_exited; /* rtn-init said so with the exit (INIT_SPAWN_FINAL) */
        bool wait_end; /* the sandbox's end must be waited for (see end_sandbox) */
        int wait_status;
        struct rt_blocked blocked; /* what seccomp blocked, from rtn-init (n = total = 0) */
        struct netns_gate *gate; /* the agent's proxy (--allow-net), or NULL */
        int gate_fd; /* its listener, polled here; -1 */
};

static struct termios saved_tio;
static bool tio_saved;

static void restore_tty(void) {
        if (tio_saved)
                tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
        tio_saved = false;
}

static const char exec_usage[] =
        "usage: rtn exec [OPTIONS] -- CMD [ARG...]\n"
        "  --rootfs host|NAME|DIR  base filesystem: host (a read-only view of /usr /etc /opt\n"
        "                        ...), a rootfs NAME (rtn rootfs list) or a directory;\n"
        "                        default: the one the environment was made on, else host\n"
        "  --workspace DIR       DIR at /workspace (default: an empty dir, discarded)\n"
        "  --workspace-mode live|overlay  live (default): writes to /workspace are on the host\n"
        "                        at once; overlay: they go to the sandbox's upper, and with\n"
        "                        --keep become pending changes (rtn diff, rtn apply writes\n"
        "                        them to DIR, rtn reset drops them); without --keep they are\n"
        "                        discarded when the command ends\n"
        "  --bind SRC:DST[:ro|rw] bind a host dir or file at DST, below /workspace or under\n"
        "                        /mnt (default rw; a file ro only); '\\:' is a ':' of a\n"
        "                        path, SRC may be relative; repeatable\n"
        "  --cwd DIR             working directory inside (default /workspace)\n"
        "  --net loopback|none   loopback only (default), or no network at all\n"
        "  --hostname NAME       hostname inside (default rtn)\n"
        "  --timeout SECS        kill the sandbox after SECS seconds (exit 124)\n" RT_SPEC_USAGE
        "  -t, --tty             run under a new pty inside the sandbox (stdin must be a\n"
        "                        terminal)\n"
        "  --quiet               no report on stderr of the system calls the sandbox blocked\n"
        "                        or the network requests its proxy refused\n"
        "  --env NAME            start from environment NAME's tip (default: default)\n"
        "  --keep                keep the changes as the environment's pending changes (rtn diff,\n"
        "                        rtn commit, rtn reset); later --keep runs start from them\n"
        "  --commit [-m MSG]     commit the sandbox's changes to the environment if CMD exits 0\n"
        "  --data-dir DIR        the store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
        "~/.local/share/rtn)\n"
        "environment: RTN_CGROUP=auto|always|never  a cgroup v2 child per sandbox where a\n"
        "                        memory or pids controller can enforce its limit (auto, the\n"
        "                        default), always, or never\n";

static int parse_opts(int argc, char **argv, struct exec_opts *o, struct rtn_error *err) {
        static const struct option longopts[] = {{"rootfs", required_argument, NULL, 'r'},
                                                 {"workspace", required_argument, NULL, 'w'},
                                                 {"bind", required_argument, NULL, 'b'},
                                                 {"cwd", required_argument, NULL, 'c'},
                                                 {"net", required_argument, NULL, 'n'},
                                                 {"hostname", required_argument, NULL, 'H'},
                                                 {"timeout", required_argument, NULL, 'T'},
                                                 {"tty", no_argument, NULL, 't'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {"env", required_argument, NULL, 'E'},
                                                 {"commit", no_argument, NULL, 'C'},
                                                 {"keep", no_argument, NULL, 'K'},
                                                 {"message", required_argument, NULL, 'm'},
                                                 {"data-dir", required_argument, NULL, 'D'},
                                                 {"quiet", no_argument, NULL, 'q'},
                                                 RT_SPEC_LONGOPTS,
                                                 {"workspace-mode", required_argument, NULL, 'W'},
                                                 {0}};
        int c, r;
        rtn_usage_prog(argv, "exec");
        optind = 1;
        while ((c = getopt_long(argc, argv, "+thm:", longopts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        o->spec.rootfs = optarg;
                        break;
                case 'w':
                        if (!optarg[0])
                                return rtn_errx(err, EINVAL, "--workspace wants a directory");
                        if (!realpath(optarg, o->workspace_abs))
                                return rtn_err(err, errno, "--workspace %s", optarg);
                        o->spec.workspace = o->workspace_abs;
                        break;
                case 'b':
                        if ((r = rt_parse_bind(&o->spec, optarg, err)) < 0)
                                return r;
                        break;
                case 'c':
                        o->cwd = optarg;
                        break;
                case 'n':
                        if (!strcmp(optarg, "none"))
                                o->spec.net_none = true;
                        else if (strcmp(optarg, "loopback") != 0)
                                return rtn_errx(err, EINVAL, "--net must be loopback or none");
                        break;
                case 'H':
                        o->spec.hostname = optarg;
                        break;
                case 'T': {
                        char *end;
                        errno = 0;
                        o->timeout = strtoul(optarg, &end, 10);
                        if (errno || *end || o->timeout == 0 || o->timeout > 31536000)
                                return rtn_errx(err, EINVAL,
                                                "--timeout wants seconds (1..31536000)");
                        break;
                }
                case 't':
                        o->tty = true;
                        break;
                case 'E':
                        if ((r = store_env_check(optarg, err)) < 0)
                                return r;
                        o->env = optarg;
                        break;
                case 'C':
                        o->commit = true;
                        break;
                case 'K':
                        o->keep = true;
                        break;
                case 'm': /* checked before the command runs: a refused commit loses its work */
                        if (strlen(optarg) > STORE_MSG_MAX)
                                return rtn_errx(err, EMSGSIZE,
                                                "-m: a message of %zu bytes, at most %d",
                                                strlen(optarg), STORE_MSG_MAX);
                        o->message = optarg;
                        break;
                case 'D':
                        o->data_dir = optarg;
                        break;
                case 'q':
                        o->quiet = true;
                        break;
                case 'W':
                        if ((r = rt_parse_ws_mode(&o->spec, optarg, err)) < 0)
                                return r;
                        break;
                case 'h':
                        fputs(exec_usage, stdout); /* rtn's own text */
                        exit(0);
                default:
                        if ((r = rt_spec_opt(c, optarg, &o->spec, &o->so, err)) < 0)
                                return r;
                        if (r == 0) { /* getopt said what */
                                rtn_err_clear(err);
                                err->code = EINVAL;
                                return -EINVAL;
                        }
                        break;
                }
        }
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
        char data_dir[4096];
        struct rtn_error ignored = {0};
        int q = rt_spec_check(&o->spec, err); /* conflicts first, then what the binds name */
        if (q < 0)
                return q;
        if (o->data_dir)
                snprintf(data_dir, sizeof data_dir, "%s", o->data_dir);
        else if (store_default_dir(data_dir, sizeof data_dir, &ignored) < 0)
                data_dir[0] = '\0';
        return rt_binds_check(&o->spec, data_dir[0] ? data_dir : NULL, err);
}

/* stdio for the command: our own fds, except terminals, which become pipes we pump. */
static int setup_stdio(struct exec_run *run, int fds[3], int close_later[3],
                       struct rtn_error *err) {
        for (int i = 0; i < 3; i++) {
                close_later[i] = -1;
                if (fcntl(i, F_GETFD) < 0) {
                        fds[i] = close_later[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
                        if (fds[i] < 0)
                                return rtn_err(err, errno, "open /dev/null");
                        continue;
                }
                if (!isatty(i)) {
                        fds[i] = i;
                        continue;
                }
                int p[2];
                if (pipe2(p, O_CLOEXEC) < 0)
                        return rtn_err(err, errno, "pipe");
                if (i == 0) {
                        fds[i] = close_later[i] = p[0];
                        rt_pump_init(&run->pumps[run->npumps++], 0, p[1], true);
                } else {
                        fds[i] = close_later[i] = p[1];
                        rt_pump_init(&run->pumps[run->npumps++], p[0], i, false);
                }
        }
        return 0;
}

static int setup_signals(struct exec_run *run, unsigned long timeout, struct rtn_error *err) {
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        sigaddset(&mask, SIGWINCH);
        sigaddset(&mask, SIGPIPE);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (run->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
                return rtn_err(err, errno, "signalfd");
        if (timeout) {
                run->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                struct itimerspec its = {.it_value = {.tv_sec = (time_t)timeout}};
                if (run->timerfd < 0 || timerfd_settime(run->timerfd, 0, &its, NULL) < 0)
                        return rtn_err(err, errno, "timerfd");
        }
        return 0;
}

static void resize_pty(int master) {
        struct winsize ws;
        if (master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                ioctl(master, TIOCSWINSZ, &ws);
}

static void on_signals(struct exec_run *run) {
        struct signalfd_siginfo si;
        while (read(run->sigfd, &si, sizeof si) == sizeof si) {
                int sig = (int)si.ssi_signo;
                if (sig == SIGWINCH)
                        resize_pty(run->master);
                else if (sig != SIGPIPE && !run->exited)
                        (void)rt_sandbox_signal(&run->sb, 1, sig);
        }
}

/* The command was the sandbox's last (INIT_SPAWN_FINAL): when rtn-init reports its exit,
 * every other process has been killed and reaped too, so nothing of the sandbox can act any
 * more, and rtn need not also wait for the kernel to tear down what is left (rtn-init's
 * own exit: the mount namespace with its overlays, each of which waits for an expedited
 * RCU grace period, the network namespace; docs/benchmarks.md), as bwrap does
 * not either. The sandbox's cgroup, which can be removed only once rtn-init has left it, is
 * left to a cleaner (rt_cgroup_release). It waits when something of its own must follow
 * that teardown: a --keep or --commit upper may be moved into the store only once no
 * overlay uses it. Until rtn-init has reported, or when it failed, the sandbox is
 * destroyed and waited for (rt_sandbox_destroy). */
static void end_sandbox(struct exec_run *run) {
        if (run->all_exited && !run->wait_end)
                rt_sandbox_release(&run->sb);
        else
                rt_sandbox_destroy(&run->sb);
}

int rt_exec_read_ctl(struct rt_sandbox *sb, int *wait_status, struct rt_blocked *blocked) {
        union {
                struct init_exited ex;
                struct init_blocked bl;
                char raw[sizeof(struct init_blocked) + 64];
        } u;
        ssize_t n = rt_sandbox_recv(sb, u.raw, sizeof u, NULL, NULL);
        if (n <= 0)
                return -1;
        if ((size_t)n < sizeof u.ex.hdr || u.ex.hdr.id != 1)
                return 0;
        if (init_check_msg(u.raw, (size_t)n, INIT_MSG_EXITED, sizeof u.ex) == 0) {
                *wait_status = u.ex.wait_status;
                return 1;
        }
        if (u.ex.hdr.type == INIT_MSG_BLOCKED)
                (void)rt_blocked_decode(u.raw, (size_t)n, blocked); /* bad: no report */
        return 0;
}

/* Reads one control event; returns -1 when the sandbox is gone. */
static int on_ctl(struct exec_run *run) {
        int r = rt_exec_read_ctl(&run->sb, &run->wait_status, &run->blocked);
        if (r == 1)
                run->exited = run->all_exited = true;
        return r < 0 ? -1 : 0;
}

int rt_exec_await_spawned(struct rt_sandbox *sb, const char *cmd, const char *cwd, int *ret_master,
                          struct rtn_error *err) {
        char buf[sizeof(struct init_status) + 64];
        int fds[1];
        size_t nfds = 1;
        ssize_t n = rt_sandbox_recv(sb, buf, sizeof buf, fds, &nfds);
        if (n > 0 &&
            init_check_msg(buf, (size_t)n, INIT_MSG_SPAWNED, sizeof(struct init_spawned)) == 0) {
                *ret_master = nfds ? fds[0] : -1;
                return 0;
        }
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]); /* an empty datagram reads as the end, and may carry one */
        if (n <= 0)
                return rtn_errx(err, EPIPE, "sandbox ended before the command started");
        const struct init_status *st = (const void *)buf;
        if (init_check_msg(buf, (size_t)n, INIT_MSG_SPAWN_FAILED, sizeof *st) < 0)
                return rtn_errx(err, EBADMSG, "unexpected reply to spawn");
        if (st->step == INIT_STEP_EXEC)
                rtn_err(err, st->error, "execute %s", cmd);
        else
                rtn_err(err, st->error, "%s %s", init_step_name(st->step),
                        init_step_subject(st->step, cmd, cwd));
        return init_spawn_exit_code(st->step, st->error);
}

static void event_loop(struct exec_run *run) {
        for (;;) {
                struct pollfd pfd[8];
                int owner[8] = {-1, -1, -1, -1, -1, -1, -1, -1}; /* pump of each pfd */
                nfds_t n = 0;
                pfd[n++] = (struct pollfd){.fd = run->exited ? -1 : run->sb.ctl, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = run->sigfd, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = run->timerfd, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = run->exited ? -1 : run->gate_fd, .events = POLLIN};
                bool busy = false;
                for (size_t i = 0; i < run->npumps; i++) {
                        int fd = -1;
                        short ev = rt_pump_events(&run->pumps[i], &fd);
                        /* input to a finished command is moot; outputs drain to EOF */
                        if (ev && !(run->exited && run->pumps[i].from == STDIN_FILENO)) {
                                busy = true;
                                owner[n] = (int)i;
                                pfd[n++] = (struct pollfd){.fd = fd, .events = ev};
                        }
                }
                if (run->exited && !busy)
                        return;
                if (run->exited && run->sb.pidfd >= 0)
                        end_sandbox(run); /* everything dies; pipes reach EOF */
                if (poll(pfd, n, -1) < 0 && errno != EINTR)
                        return;
                if (pfd[1].revents)
                        on_signals(run);
                if (pfd[2].revents) {
                        run->timed_out = run->exited = true;
                        rt_sandbox_destroy(&run->sb);
                }
                if (pfd[0].revents && on_ctl(run) < 0) {
                        run->exited = true; /* init died: the sandbox is gone */
                        run->wait_status = 125 << 8;
                }
                if (pfd[3].revents)
                        netns_gate_accept(run->gate);
                for (nfds_t i = EXEC_FIRST_PUMP; i < n; i++)
                        if (pfd[i].revents)
                                rt_pump_run(&run->pumps[owner[i]]);
        }
}

struct queued {
        struct exec_run *run;
        struct exec_opts *o;
};

/* Sends the command's spawn request; called by rt_sandbox_start_queued with the sandbox it
 * is starting (run->sb is filled in only once that returns). */
static int send_command(struct rt_sandbox *sb, void *arg, struct rtn_error *err) {
        struct exec_run *run = ((struct queued *)arg)->run;
        struct exec_opts *o = ((struct queued *)arg)->o;
        struct rt_env env;
        int r, fds[3], close_later[3] = {-1, -1, -1};
        if ((r = rt_spec_opts_env(&o->so, &env, sb, INIT_POLICY_AGENT, o->tty, NULL, err)) < 0)
                return r;
        /* No mounts in the Landlock mode: the places the command has are host paths. */
        if (sb->isolation == INIT_ISOLATION_LANDLOCK)
                rtn_term_printf(stderr,
                                "rtn exec: there is no /workspace and /tmp is the host's (not "
                                "writable): the command starts in the workspace %s, with its "
                                "private temp dir %s as TMPDIR\n",
                                sb->workspace, sb->host_tmp);
        uint16_t rows = 0, cols = 0;
        if (o->tty) {
                struct winsize ws;
                if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
                        rows = ws.ws_row;
                        cols = ws.ws_col;
                }
        } else if ((r = setup_stdio(run, fds, close_later, err)) < 0) {
                return r;
        }
        r = rt_sandbox_spawn(sb, 1, (o->tty ? INIT_SPAWN_PTY : 0) | INIT_SPAWN_FINAL,
                             INIT_POLICY_AGENT, o->cwd ? o->cwd : sb->workspace, o->argv, env.vars,
                             o->tty ? NULL : fds, rows, cols, err);
        for (int i = 0; i < 3; i++)
                rtn_safe_close(close_later[i]); /* the command has its own copies now */
        return r;
}

/* After the sandbox has started with the spawn request queued: its reply, then the tty. */
static int start_command(struct exec_run *run, struct exec_opts *o, struct rtn_error *err) {
        int r;
        if ((r = rt_exec_await_spawned(&run->sb, o->argv[0], o->cwd ? o->cwd : run->sb.workspace,
                                       &run->master, err)) != 0)
                return r;
        if (o->tty && run->master >= 0) {
                if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
                        struct termios raw = saved_tio;
                        cfmakeraw(&raw);
                        tio_saved = true;
                        atexit(restore_tty);
                        tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
                }
                rt_pump_init(&run->pumps[run->npumps++], STDIN_FILENO, run->master, false);
                int out = fcntl(run->master, F_DUPFD_CLOEXEC, 3);
                rt_pump_init(&run->pumps[run->npumps++], out, STDOUT_FILENO, false);
        }
        return 0;
}

/* The environment's layers (and, with --commit, a session dir on the store's filesystem for
 * the upper). Without --commit a store that does not exist yet is not created. */
struct exec_store {
        struct store *st;
        struct store_stack stack; /* held while the sandbox runs (gc keeps them) */
        struct store_base base;
        char *session_dir;
        int session_lock;
        char pending[4096]; /* --keep: the environment's pending dir */
        char pending_upper[4200]; /* its upper/, the sandbox's top layer */
        const char **keep_layers; /* --keep: pending_upper, then layers */
        int upper_fs; /* --keep, --commit: the sandbox's tmpfs upper (runtime/session/upper.h) */
};

/* --keep: the pending changes on disk are the sandbox's top layer, read-only; its writes go
 * to a tmpfs of what --upper-size leaves them, laid over them when the command ends
 * (rt_upper_merge), so together they never take more than --upper-size. */
static int keep_pending(struct exec_opts *o, struct exec_store *es, const char *env,
                        struct rtn_error *err) {
        int r = rt_pending_open(es->st, env, es->pending, sizeof es->pending, &es->session_lock,
                                err);
        if (r < 0)
                return r;
        uint64_t used = rt_upper_pending_size(es->pending);
        if (used + (1u << 20) > o->spec.upper_bytes)
                return rtn_errx(err, ENOSPC,
                                "the pending changes of environment %s take %llu MiB, "
                                "--upper-size is %llu MiB: commit them (rtn commit), drop them "
                                "(rtn reset) or give a larger --upper-size",
                                env, (unsigned long long)(used >> 20),
                                (unsigned long long)(o->spec.upper_bytes >> 20));
        snprintf(es->pending_upper, sizeof es->pending_upper, "%s/upper", es->pending);
        if (!(es->keep_layers = calloc(es->stack.n + 1, sizeof *es->keep_layers)))
                return rtn_err(err, ENOMEM, "layers");
        es->keep_layers[0] = es->pending_upper;
        for (size_t i = 0; i < es->stack.n; i++)
                es->keep_layers[i + 1] = es->stack.paths[i];
        o->spec.layers = es->keep_layers;
        o->spec.nlayers = es->stack.n + 1;
        o->spec.ws_dir = es->pending; /* an overlay workspace's pending changes: ws/ */
        o->spec.upper_keep = true;
        o->spec.upper_room = o->spec.upper_bytes - used;
        return 0;
}

static int open_store(struct exec_opts *o, struct exec_store *es, struct rtn_error *err) {
        char dir[4096];
        const char *data_dir = o->data_dir; /* --data-dir, else the default, in dir */
        const char *env = o->env ? o->env : STORE_DEFAULT_ENV;
        int r;
        if ((r = store_env_check(env, err)) < 0)
                return r;
        if (!data_dir) {
                if ((r = store_default_dir(dir, sizeof dir, err)) < 0)
                        return o->commit || o->env ? r : 0;
                data_dir = dir;
        }
        if (!o->commit && !o->keep && access(data_dir, F_OK) < 0)
                return o->env ? rtn_errx(err, ENOENT,
                                         "no store at %s: environment %s has no "
                                         "commits",
                                         data_dir, env)
                              : 0;
        if ((r = store_open(data_dir, &es->st, err)) < 0)
                return r;
        store_set_max(es->st, o->so.store_max);
        if ((r = rt_env_stack(es->st, env, o->spec.rootfs, o->keep, &es->base, &es->stack, err)) <
            0)
                return r;
        o->spec.layers = (const char *const *)es->stack.paths;
        o->spec.nlayers = es->stack.n;
        if (o->keep)
                return keep_pending(o, es, env, err);
        if (o->commit) {
                if ((r = store_session_new(es->st, &es->session_dir, &es->session_lock, err)) < 0)
                        return r;
                o->spec.upper_keep = true;
        }
        return 0;
}

static void close_store(struct exec_store *es, const struct rt_idmap *m) {
        if (es->session_dir) {
                struct rtn_error err = {0};
                char *slash = strrchr(es->session_dir, '/');
                *slash = '\0';
                if (rt_remove_tree(m, es->session_dir, slash + 1, &err) < 0)
                        rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
                free(es->session_dir);
        }
        rtn_safe_close(es->session_lock);
        rtn_safe_close(es->upper_fs);
        free(es->keep_layers);
        store_stack_free(&es->stack);
        if (es->st)
                store_close(es->st);
}

static int commit_upper(struct exec_opts *o, struct exec_store *es, const struct rt_idmap *m) {
        struct rtn_error err = {0};
        char id[STORE_ID_SIZE];
        const char *msg = o->message ? o->message : "rtn exec";
        const char *env = o->env ? o->env : STORE_DEFAULT_ENV;
        int r;
        if (o->keep) {
                r = rt_pending_commit(es->st, env, msg, m, es->session_lock, id, &err);
        } else {
                /* On the tip it ran on only: a tip moved meanwhile is another writer's. */
                struct store_commit_opts co = {.msg = msg,
                                               .parent = es->stack.tip,
                                               .base = &es->base,
                                               .upper_lock = es->session_lock};
                r = rt_upper_commit(m, es->st, env, es->upper_fs, es->session_dir, &co, id, &err);
        }
        if (r < 0) {
                rtn_term_printf(stderr, "rtn exec: commit: %s\n", err.msg);
                return EXIT_RTN;
        }
        if (r == 1)
                fprintf(stderr, "rtn exec: nothing to commit\n");
        else
                rtn_term_printf(stderr, "rtn exec: committed %s\n", id);
        return 0;
}

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

static int count_change(enum rt_ws_change what, const char *path, void *ud) {
        ++*(unsigned *)ud;
        return 0;
}

/* After an --keep run with an overlay workspace: what is now pending, and how to go on. */
static void report_pending(const char *pending, const char *workspace) {
        struct rtn_error err = {0};
        unsigned n = 0;
        if (rt_ws_diff(pending, NULL, count_change, &n, &err) < 0)
                rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
        else if (n > 0)
                rtn_term_printf(
                        stderr,
                        "rtn exec: %u pending change%s to %s (rtn diff lists, rtn apply writes, "
                        "rtn "
                        "reset drops them)\n",
                        n, n == 1 ? "" : "s", workspace);
}

static int warn_hostrun(const char *rel, const struct rt_hostrun *h, void *ud) {
        unsigned *n = ud;
        if ((*n)++ < 32)
                rtn_term_printf(stderr,
                                "rtn exec: WARNING: the command made or changed /workspace/%s, "
                                "which a host program runs by itself (%s: %s); review it\n",
                                rel, h->name, h->why);
        return 0;
}

/* A live workspace: the files of the registry of host-run files the command made, which the
 * walk at the start could not make read-only (docs/security-invariants.md, 13). */
static void report_hostrun(const char *workspace, const struct timespec *started) {
        struct rtn_error err = {0};
        unsigned n = 0;
        if (rt_hostrun_since(workspace, started, warn_hostrun, &n, &err) < 0)
                rtn_term_printf(stderr,
                                "rtn exec: WARNING: could not look for files host programs run "
                                "that the command made: %s\n",
                                err.msg);
        else if (n > 32)
                fprintf(stderr, "rtn exec: WARNING: %u more such files\n", n - 32);
}

/* One line per system call the filter blocked (docs/policy.md, "Visibility"), after the
 * command's own output, on stderr only. */
static void report_blocked(const struct rt_blocked *b) {
        char line[256];
        for (uint32_t i = 0; rt_blocked_line(b, i, line, sizeof line) >= 0; i++)
                rtn_term_printf(stderr, "rtn: %s\n",
                                line); /* as serve's note; comm is the agent's */
}

/* For `rtn ps` (runtime/session/registry.h); best effort: a registry that cannot be written
 * is no reason not to run. */
static void register_running(const struct exec_opts *o, int argc, char **argv) {
        char dir[4096];
        struct rtn_error err = {0};
        const char *data_dir = o->data_dir;
        if (!data_dir)
                data_dir = store_default_dir(dir, sizeof dir, &err) < 0 ? "" : dir;
        if (rt_registry_add("exec", o->env ? o->env : STORE_DEFAULT_ENV, data_dir, argc, argv,
                            &err) < 0)
                log_debug("not in the registry of running sandboxes: %s", err.msg);
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

/* The agent's proxy for --allow-net: made before the sandbox, served once it runs. */
static int gate_serve(struct exec_run *run, struct rtn_error *err) {
        if (run->sb.net_fd < 0)
                return 0;
        int r = netns_gate_listen(run->gate, TAKE_FD(run->sb.net_fd));
        if (r < 0)
                return rtn_err(err, -r, "serve the network proxy");
        run->gate_fd = r;
        return 0;
}

static void exec_opts_done(struct exec_opts *o) {
        netns_policy_free(&o->so.net);
        netns_secrets_free(&o->so.secrets);
}

int rt_cmd_exec(int argc, char **argv) {
        __attribute__((cleanup(exec_opts_done))) struct exec_opts o = {0};
        struct exec_store es = {.session_lock = -1, .upper_fs = -1};
        /* Static, not on the stack: its three 64 KiB pump buffers would cost every start a
         * 200 KiB memset and the page faults of a stack that size (~0.1 ms); zero BSS pages
         * are only faulted in when output flows through them. Runs once per process. */
        static struct exec_run run;
        run.master = run.sigfd = run.timerfd = run.gate_fd = -1;
        /* Not started yet: a failure before the sandbox exists destroys nothing (fd 0 is
         * not its control socket or pidfd). */
        run.sb.pid = run.sb.pidfd = run.sb.ctl = run.sb.gate_fd = run.sb.net_fd = -1;
        struct rtn_error err = {0};
        rt_spec_init(&o.spec);
        init_limits_default(&o.spec.limits);
        _cleanup_free_ char *rootfs = NULL;
        if (parse_opts(argc, argv, &o, &err) < 0)
                return err.msg[0] ? rtn_usage_error("exec", "%s", err.msg)
                                  : rtn_usage_error("exec", NULL);
        if (rt_tmpfs_check(&o.spec, 1, NULL, 0, &err) < 0 ||
            (o.spec.rootfs ? rt_rootfs_resolve(o.data_dir, o.spec.rootfs, &rootfs, &err)
                           : rt_env_rootfs(o.data_dir, o.env ? o.env : STORE_DEFAULT_ENV, &rootfs,
                                           &err)) < 0) {
                rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
                return EXIT_RTN;
        }
        o.spec.rootfs = rootfs;
        struct rt_limit_warnings warn;
        rt_spec_opts_limits(&o.spec, &o.so, &warn);
        if (warn.memory[0])
                rtn_term_printf(stderr, "rtn exec: warning: %s\n", warn.memory);
        if (warn.pids[0])
                rtn_term_printf(stderr, "rtn exec: warning: %s\n", warn.pids);
        if (o.so.isolation_auto[0])
                rtn_term_printf(stderr, "rtn exec: WARNING: %s\n", o.so.isolation_auto);
        if (o.spec.isolation != INIT_ISOLATION_FULL)
                rtn_term_printf(stderr, "rtn exec: WARNING: %s\n",
                                rt_isolation_warning(o.spec.isolation));
        if (o.spec.workspace_mode == RT_WS_OVERLAY && !o.keep && !o.quiet)
                fprintf(stderr, "rtn exec: the overlay workspace's changes are discarded when the "
                                "command ends (--keep keeps them for rtn apply)\n");
        if (o.message && !o.commit)
                return rtn_usage_error("exec", "-m needs --commit");
        int r = open_store(&o, &es, &err);
        if (r == 0)
                register_running(&o, argc, argv);
        if (r == 0)
                r = setup_signals(&run, o.timeout, &err);
        if (r == 0 && o.spec.net_proxy)
                r = netns_gate_new_policy(&o.so.net, &run.gate, &err);
        if (r == 0 && o.so.secrets.n)
                r = netns_gate_set_secrets(run.gate, &o.so.secrets, &err);
        o.spec.ca_pem = run.gate ? netns_gate_ca_pem(run.gate) : NULL;
        /* Listening before the sandbox starts: a port in use fails the command, not a
         * connection later. */
        struct netns_publish *publish = NULL;
        if (r == 0 && o.so.npublish)
                r = netns_publish_new(o.so.publish, o.so.npublish, &publish, &err);
        struct queued q = {&run, &o};
        struct timespec started; /* coarse, as the ctimes report_hostrun compares with it */
        clock_gettime(CLOCK_REALTIME_COARSE, &started);
        if (r == 0)
                r = rt_sandbox_start_queued(&o.spec, &run.sb, send_command, &q, &err);
        if (r == 0)
                r = gate_serve(&run, &err);
        if (r == 0 && publish)
                r = netns_publish_run(publish, run.sb.pidfd, &err);
        if (r == 0)
                r = start_command(&run, &o, &err);
        if (r != 0) {
                rtn_term_printf(stderr, "rtn exec: %s\n", err.msg);
                netns_publish_free(publish);
                rt_sandbox_destroy(&run.sb);
                close_store(&es, &run.sb.idmap);
                return r > 0 ? r : EXIT_RTN;
        }
        if (rt_setup_warning(&run.sb)[0] && !o.quiet)
                rtn_term_printf(stderr, "rtn: warning: %s\n", rt_setup_warning(&run.sb));
        run.wait_end = o.spec.upper_keep;
        es.upper_fs = TAKE_FD(run.sb.upper_fs);
        event_loop(&run);
        netns_publish_free(publish); /* the command is done: nothing left to forward to */
        end_sandbox(&run);
        restore_tty();
        int code = rt_exit_code(run.wait_status);
        if (o.keep && rt_upper_merge(&run.sb.idmap, es.upper_fs, es.pending, &err) < 0) {
                rtn_term_printf(stderr, "rtn exec: the changes were not kept: %s\n", err.msg);
                code = EXIT_RTN;
        } else if (run.timed_out) {
                fprintf(stderr, "rtn exec: timed out after %lu s\n", o.timeout);
                code = EXIT_TIMEOUT;
        } else if (o.commit && code == 0) {
                code = commit_upper(&o, &es, &run.sb.idmap);
        } else if (o.commit) {
                fprintf(stderr, "rtn exec: not committed: the command exited with %d\n", code);
        }
        if (o.spec.workspace_mode == RT_WS_OVERLAY && o.keep && !o.quiet)
                report_pending(es.pending, o.spec.workspace);
        if (o.spec.workspace && o.spec.workspace_mode == RT_WS_LIVE)
                report_hostrun(o.spec.workspace, &started);
        report_violation(run.wait_status, o.argv[0]);
        if (!o.quiet) {
                report_blocked(&run.blocked);
                report_denied(run.gate);
        }
        netns_gate_free(run.gate);
        close_store(&es, &run.sb.idmap);
        return code;
}
