/* `rtn exec`'s side of the command's I/O while it runs (cli/exec.h): its stdio (a host
 * terminal pumped through a pipe, or a pty with -t), the signals rtn forwards, the
 * --timeout clock, and the loop that serves them with the sandbox's control socket and
 * the agent's proxy. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <unistd.h>

#include "common/duration.h"
#include "common/io.h"
#include "cli/exec.h"
#include "netns/netns.h"
#include "runtime/session/enter.h"

/* poll slots: control socket, signals, timer, proxy, rtn enter's listener; then pumps */
#define EXEC_FIRST_PUMP 5

static struct termios saved_tio;
static bool tio_saved;

void cli_exec_tty_restore(void) {
        if (tio_saved)
                tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
        tio_saved = false;
}

/* -t: the host terminal in raw mode (restored at exit) and pumped to and from the pty. */
void cli_exec_tty_raw(struct exec_run *run) {
        if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
                struct termios raw = saved_tio;
                cfmakeraw(&raw);
                tio_saved = true;
                atexit(cli_exec_tty_restore);
                tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
        }
        rt_pump_init(&run->pumps[run->npumps++], STDIN_FILENO, run->master, false);
        int out = fcntl(run->master, F_DUPFD_CLOEXEC, 3);
        rt_pump_init(&run->pumps[run->npumps++], out, STDOUT_FILENO, false);
}

static bool same_file(int a, int b) {
        struct stat sa, sb;
        return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
}

/* stdio for the command: our own fds where rtn_fd_passable allows them; the rest
 * (terminals among them) become pipes we pump. */
int cli_exec_stdio(struct exec_run *run, int fds[3], int close_later[3], struct rtn_error *err) {
        for (int i = 0; i < 3; i++) {
                close_later[i] = -1;
                if (fcntl(i, F_GETFD) < 0) {
                        fds[i] = close_later[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
                        if (fds[i] < 0)
                                return rtn_err(err, errno, "open /dev/null");
                        continue;
                }
                /* What rtn_fd_passable refuses (a terminal, a file, a socket, a device)
                 * is pumped through a pipe of ours, never handed into the sandbox. */
                if (rtn_fd_passable(i)) {
                        fds[i] = i;
                        continue;
                }
                if (i == 2 && close_later[1] >= 0 && same_file(1, 2)) {
                        fds[2] = fds[1]; /* 2>&1 to a file: one pipe keeps their order */
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

int cli_exec_signals(struct exec_run *run, uint64_t timeout_usec, struct rtn_error *err) {
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
        if (timeout_usec) {
                run->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                struct itimerspec its = {
                        .it_value = {.tv_sec = (time_t)(timeout_usec / RTN_USEC_PER_SEC),
                                     .tv_nsec = (long)(timeout_usec % RTN_USEC_PER_SEC) * 1000}};
                if (run->timerfd < 0 || timerfd_settime(run->timerfd, 0, &its, NULL) < 0)
                        return rtn_err(err, errno, "timerfd");
        }
        return 0;
}

void cli_exec_term_size(uint16_t *rows, uint16_t *cols) {
        struct winsize ws;
        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
                *rows = ws.ws_row;
                *cols = ws.ws_col;
        }
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
                        (void)rt_sandbox_signal(&run->x.sb, 1, sig);
        }
}

/* Reads one control event; returns -1 when the sandbox is gone. */
static int on_ctl(struct exec_run *run) {
        int r = rt_exec_read_ctl(&run->x.sb, run->x.enter, &run->wait_status, &run->blocked);
        if (r == 1)
                run->exited = run->x.all_exited = true;
        return r < 0 ? -1 : 0;
}

void cli_exec_loop(struct exec_run *run) {
        for (;;) {
                struct pollfd pfd[EXEC_FIRST_PUMP + 3];
                int owner[EXEC_FIRST_PUMP + 3]; /* pump of each pfd */
                nfds_t n = 0;
                pfd[n++] =
                        (struct pollfd){.fd = run->exited ? -1 : run->x.sb.ctl, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = run->sigfd, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = run->timerfd, .events = POLLIN};
                pfd[n++] =
                        (struct pollfd){.fd = run->exited ? -1 : run->x.gate_fd, .events = POLLIN};
                pfd[n++] = (struct pollfd){
                        .fd = run->exited || !run->x.enter ? -1 : rt_enter_fd(run->x.enter),
                        .events = POLLIN};
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
                if (run->exited && run->x.sb.pidfd >= 0)
                        rt_exec_end(&run->x); /* everything dies; pipes reach EOF */
                if (poll(pfd, n, -1) < 0 && errno != EINTR)
                        return;
                if (pfd[1].revents)
                        on_signals(run);
                if (pfd[2].revents) {
                        run->timed_out = run->exited = true;
                        rt_sandbox_destroy(&run->x.sb);
                }
                if (pfd[0].revents && on_ctl(run) < 0) {
                        run->exited = run->lost = true; /* init died: the sandbox is gone */
                        run->wait_status = RTN_EXIT_FAILURE << 8;
                }
                if (pfd[3].revents)
                        netns_gate_accept(run->x.gate);
                if (pfd[4].revents && run->x.enter)
                        rt_enter_serve(run->x.enter);
                for (nfds_t i = EXEC_FIRST_PUMP; i < n; i++)
                        if (pfd[i].revents)
                                rt_pump_run(&run->pumps[owner[i]]);
        }
}
