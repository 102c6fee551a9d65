/* The epoll event loop (see loop.h). Every fd source is a heap node whose address is the
 * epoll_event.data.ptr; fds are also kept in a list so rtn_loop_del_fd can find them by
 * number. A removed node is marked dead and moved to a graveyard emptied after each dispatch
 * round, because the same epoll_wait(2) batch may still hold an event for it.
 *
 * Timers have no fd: they wait in a list sorted by deadline, and epoll_wait's timeout is the
 * time to the first. A timerfd each cost five system calls per timer (create, arm, add,
 * delete, close), and `rtn serve` arms one for every command's timeout (docs/benchmarks.md,
 * "The warm call"). A round dispatches the fds' events, then every timer due before the
 * timers' turn began: one armed from a timer's callback, or a periodic one's next period,
 * waits for the next round, after the fds have been looked at. */
#include "common/loop.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/err.h"

enum src_kind { SRC_IO, SRC_TIMER, SRC_SIGNAL };

struct rtn_loop_source {
        enum src_kind kind;
        int fd;
        bool dead;
        bool owns_fd;
        rtn_loop_io_fn io;
        rtn_loop_timer_fn timer;
        uint64_t interval;
        uint64_t deadline; /* a timer's, rtn_now_usec's clock */
        uint64_t turn; /* a timer's: the loop's turn when it was armed */
        void *userdata;
        struct rtn_loop_source *next; /* in l->sources, l->timers or l->graveyard */
};

struct sig_handler {
        rtn_loop_signal_fn fn;
        void *userdata;
};

struct rtn_loop {
        int epfd;
        struct rtn_loop_source *sources;
        struct rtn_loop_source *graveyard;
        struct rtn_loop_source *timers; /* by deadline, the earliest first */
        uint64_t turn; /* counts the timers' turns */
        struct rtn_loop_source *sigsrc;
        sigset_t sigmask, oldmask;
        bool mask_changed;
        struct sig_handler sig[_NSIG];
        bool stopped;
        int exit_code;
};

int rtn_loop_new(struct rtn_loop **ret) {
        struct rtn_loop *l = calloc(1, sizeof *l);
        if (!l)
                return -ENOMEM;
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                int r = negative_errno();
                free(l);
                return r;
        }
        sigemptyset(&l->sigmask);
        *ret = l;
        return 0;
}

static void src_destroy(struct rtn_loop_source *s) {
        if (s->owns_fd)
                rtn_safe_close(s->fd);
        free(s);
}

static void empty_graveyard(struct rtn_loop *l) {
        while (l->graveyard) {
                struct rtn_loop_source *s = l->graveyard;
                l->graveyard = s->next;
                src_destroy(s);
        }
}

void rtn_loop_free(struct rtn_loop *l) {
        if (!l)
                return;
        /* Consume what is pending (a SIGPIPE from a vanished client): unblocking it below
         * would otherwise deliver it with its default action and kill the process. */
        if (l->sigsrc) {
                struct signalfd_siginfo si;
                while (read(l->sigsrc->fd, &si, sizeof si) == (ssize_t)sizeof si)
                        ;
        }
        while (l->sources) {
                struct rtn_loop_source *s = l->sources;
                l->sources = s->next;
                src_destroy(s);
        }
        while (l->timers) {
                struct rtn_loop_source *s = l->timers;
                l->timers = s->next;
                src_destroy(s);
        }
        empty_graveyard(l);
        if (l->mask_changed)
                sigprocmask(SIG_SETMASK, &l->oldmask, NULL);
        rtn_safe_close(l->epfd);
        free(l);
}

static int src_add(struct rtn_loop *l, enum src_kind kind, int fd, uint32_t events, bool owns,
                   struct rtn_loop_source **ret) {
        struct rtn_loop_source *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        *s = (struct rtn_loop_source){.kind = kind, .fd = fd, .owns_fd = owns};
        struct epoll_event ev = {.events = events, .data.ptr = s};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                int r = negative_errno();
                free(s);
                return r;
        }
        s->next = l->sources;
        l->sources = s;
        *ret = s;
        return 0;
}

static void unlink_from(struct rtn_loop_source **list, struct rtn_loop_source *s) {
        for (struct rtn_loop_source **p = list; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        return;
                }
}

static void timer_unlink(struct rtn_loop *l, struct rtn_loop_source *t) {
        unlink_from(&l->timers, t);
}

/* Unlinks s from its live list, stops watching its fd and queues it for freeing. */
static void src_remove(struct rtn_loop *l, struct rtn_loop_source *s) {
        if (s->kind == SRC_TIMER) {
                timer_unlink(l, s);
        } else {
                unlink_from(&l->sources, s);
                (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
        }
        s->dead = true;
        s->next = l->graveyard;
        l->graveyard = s;
}

static struct rtn_loop_source *find_fd(struct rtn_loop *l, int fd) {
        for (struct rtn_loop_source *s = l->sources; s; s = s->next)
                if (s->kind == SRC_IO && s->fd == fd)
                        return s;
        return NULL;
}

int rtn_loop_add_fd(struct rtn_loop *l, int fd, uint32_t events, rtn_loop_io_fn fn,
                    void *userdata) {
        if (fd < 0 || !fn)
                return -EINVAL;
        if (find_fd(l, fd))
                return -EEXIST;
        struct rtn_loop_source *s;
        int r = src_add(l, SRC_IO, fd, events, false, &s);
        if (r < 0)
                return r;
        s->io = fn;
        s->userdata = userdata;
        return 0;
}

int rtn_loop_mod_fd(struct rtn_loop *l, int fd, uint32_t events) {
        struct rtn_loop_source *s = find_fd(l, fd);
        if (!s)
                return -ENOENT;
        struct epoll_event ev = {.events = events, .data.ptr = s};
        return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? negative_errno() : 0;
}

int rtn_loop_del_fd(struct rtn_loop *l, int fd) {
        struct rtn_loop_source *s = find_fd(l, fd);
        if (!s)
                return -ENOENT;
        src_remove(l, s);
        return 0;
}

/* Puts t in the timers' list after every timer due no later. */
static void timer_insert(struct rtn_loop *l, struct rtn_loop_source *t) {
        struct rtn_loop_source **p = &l->timers;
        while (*p && (*p)->deadline <= t->deadline)
                p = &(*p)->next;
        t->next = *p;
        *p = t;
        t->turn = l->turn;
}

int rtn_loop_add_timer(struct rtn_loop *l, uint64_t usec, uint64_t interval_usec,
                       rtn_loop_timer_fn fn, void *userdata, struct rtn_loop_source **ret) {
        if (!fn)
                return -EINVAL;
        struct rtn_loop_source *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        uint64_t now = rtn_now_usec();
        *s = (struct rtn_loop_source){.kind = SRC_TIMER,
                                      .fd = -1,
                                      .timer = fn,
                                      .interval = interval_usec,
                                      .deadline = usec > UINT64_MAX - now ? UINT64_MAX : now + usec,
                                      .userdata = userdata};
        timer_insert(l, s);
        if (ret)
                *ret = s;
        return 0;
}

void rtn_loop_timer_cancel(struct rtn_loop *l, struct rtn_loop_source *t) {
        if (t && !t->dead && t->kind == SRC_TIMER)
                src_remove(l, t);
}

int rtn_loop_add_signal(struct rtn_loop *l, int signo, rtn_loop_signal_fn fn, void *userdata) {
        if (signo <= 0 || signo >= _NSIG)
                return -EINVAL;
        sigset_t set = l->sigmask;
        if (sigaddset(&set, signo) < 0)
                return negative_errno();
        int fd = l->sigsrc ? l->sigsrc->fd : -1;
        int nfd = signalfd(fd, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (nfd < 0)
                return negative_errno();
        if (!l->sigsrc) {
                int r = src_add(l, SRC_SIGNAL, nfd, EPOLLIN, true, &l->sigsrc);
                if (r < 0) {
                        close(nfd);
                        return r;
                }
        }
        /* Block only after the signalfd exists, so a failure leaves the mask untouched. */
        sigset_t old;
        if (sigprocmask(SIG_BLOCK, &set, &old) < 0)
                return negative_errno();
        if (!l->mask_changed) {
                l->oldmask = old;
                l->mask_changed = true;
        }
        l->sigmask = set;
        l->sig[signo] = (struct sig_handler){.fn = fn, .userdata = userdata};
        return 0;
}

static void dispatch_signals(struct rtn_loop *l) {
        struct signalfd_siginfo si;
        for (;;) {
                ssize_t n = read(l->sigsrc->fd, &si, sizeof si);
                if (n != (ssize_t)sizeof si)
                        return; /* EAGAIN: drained */
                if (si.ssi_signo < _NSIG && l->sig[si.ssi_signo].fn)
                        l->sig[si.ssi_signo].fn(l, &si, l->sig[si.ssi_signo].userdata);
        }
}

static void dispatch(struct rtn_loop *l, struct rtn_loop_source *s, uint32_t revents) {
        switch (s->kind) {
        case SRC_IO:
                s->io(l, s->fd, revents, s->userdata);
                break;
        case SRC_TIMER: /* never in epoll: dispatch_timers */
                break;
        case SRC_SIGNAL:
                dispatch_signals(l);
                break;
        }
}

/* Fires every timer due by the time this turn began, but none armed during it (one armed
 * from a callback, a periodic timer's next period): those wait for a later round, after the
 * fds have been looked at. Returns how many fired. */
static int dispatch_timers(struct rtn_loop *l) {
        uint64_t now = rtn_now_usec(), turn = ++l->turn;
        int n = 0;
        for (;;) {
                struct rtn_loop_source *t = l->timers;
                while (t && t->deadline <= now && t->turn == turn)
                        t = t->next;
                if (!t || t->deadline > now)
                        return n;
                if (t->interval) { /* the next period after now: one call for those missed */
                        uint64_t next = t->deadline + t->interval;
                        if (next <= now)
                                next += ((now - next) / t->interval + 1) * t->interval;
                        timer_unlink(l, t);
                        t->deadline = next;
                        timer_insert(l, t);
                } else {
                        src_remove(l, t); /* one-shot: gone once its callback returns */
                }
                t->timer(l, t, t->userdata);
                n++;
        }
}

/* epoll_wait's timeout: the caller's timeout_ms, or less to the first timer's deadline. */
static int wait_events(struct rtn_loop *l, struct epoll_event *evs, int max, int timeout_ms) {
        uint64_t left = UINT64_MAX;
        if (l->timers) {
                uint64_t now = rtn_now_usec();
                left = l->timers->deadline > now ? l->timers->deadline - now : 0;
        }
        if (timeout_ms >= 0 && (uint64_t)timeout_ms * 1000 < left)
                left = (uint64_t)timeout_ms * 1000;
        if (left == UINT64_MAX)
                return epoll_wait(l->epfd, evs, max, -1);
        struct timespec ts = {.tv_sec = (time_t)(left / RTN_USEC_PER_SEC),
                              .tv_nsec = (long)((left % RTN_USEC_PER_SEC) * RTN_NSEC_PER_USEC)};
        static bool no_pwait2; /* Linux < 5.11: milliseconds, rounded up */
        if (!no_pwait2) {
                int n = epoll_pwait2(l->epfd, evs, max, &ts, NULL);
                if (n >= 0 || errno != ENOSYS)
                        return n;
                no_pwait2 = true;
        }
        uint64_t ms = (left + 999) / 1000;
        return epoll_wait(l->epfd, evs, max, ms > INT32_MAX ? INT32_MAX : (int)ms);
}

int rtn_loop_run_once(struct rtn_loop *l, int timeout_ms) {
        struct epoll_event evs[64];
        int n = wait_events(l, evs, (int)ARRAY_SIZE(evs), timeout_ms);
        if (n < 0)
                return errno == EINTR ? 0 : negative_errno();
        for (int i = 0; i < n; i++) {
                struct rtn_loop_source *s = evs[i].data.ptr;
                /* "dead" here means removed before its turn in this batch. */
                if (!s->dead)
                        dispatch(l, s, evs[i].events);
        }
        n += dispatch_timers(l);
        empty_graveyard(l);
        return n;
}

int rtn_loop_run(struct rtn_loop *l) {
        while (!l->stopped) {
                int r = rtn_loop_run_once(l, -1);
                if (r < 0)
                        return r;
        }
        return l->exit_code;
}

void rtn_loop_stop(struct rtn_loop *l, int code) {
        if (!l->stopped) {
                l->stopped = true;
                l->exit_code = code;
        }
}

int rtn_loop_stopped(const struct rtn_loop *l) {
        return l->stopped;
}
