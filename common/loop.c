/* The epoll event loop (see loop.h). Every source is a heap node whose address is the
 * epoll_event.data.ptr; fds are also kept in a list so rtn_loop_del_fd can find them by
 * number. A removed node is marked dead and moved to a graveyard emptied after each dispatch
 * round, because the same epoll_wait(2) batch may still hold an event for it. */
#include "common/loop.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
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
        void *userdata;
        struct rtn_loop_source *next; /* in l->sources or l->graveyard */
};

struct sig_handler {
        rtn_loop_signal_fn fn;
        void *userdata;
};

struct rtn_loop {
        int epfd;
        struct rtn_loop_source *sources;
        struct rtn_loop_source *graveyard;
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

/* Unlinks s from the live list, stops watching its fd and queues it for freeing. */
static void src_remove(struct rtn_loop *l, struct rtn_loop_source *s) {
        for (struct rtn_loop_source **p = &l->sources; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        break;
                }
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
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

static struct itimerspec usec_to_its(uint64_t usec, uint64_t interval) {
        struct itimerspec its = {
                .it_value = {.tv_sec = (time_t)(usec / RTN_USEC_PER_SEC),
                             .tv_nsec = (long)((usec % RTN_USEC_PER_SEC) * RTN_NSEC_PER_USEC)},
                .it_interval = {.tv_sec = (time_t)(interval / RTN_USEC_PER_SEC),
                                .tv_nsec =
                                        (long)((interval % RTN_USEC_PER_SEC) * RTN_NSEC_PER_USEC)},
        };
        /* an all-zero it_value disarms the timer: fire "now" as 1 ns instead */
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
                its.it_value.tv_nsec = 1;
        return its;
}

int rtn_loop_add_timer(struct rtn_loop *l, uint64_t usec, uint64_t interval_usec,
                       rtn_loop_timer_fn fn, void *userdata, struct rtn_loop_source **ret) {
        if (!fn)
                return -EINVAL;
        _cleanup_close_ int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (tfd < 0)
                return negative_errno();
        struct itimerspec its = usec_to_its(usec, interval_usec);
        if (timerfd_settime(tfd, 0, &its, NULL) < 0)
                return negative_errno();
        struct rtn_loop_source *s;
        int r = src_add(l, SRC_TIMER, tfd, EPOLLIN, true, &s);
        if (r < 0)
                return r;
        TAKE_FD(tfd);
        s->timer = fn;
        s->interval = interval_usec;
        s->userdata = userdata;
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
        case SRC_TIMER: {
                uint64_t ticks;
                if (read(s->fd, &ticks, sizeof ticks) != (ssize_t)sizeof ticks)
                        return; /* spurious */
                if (!s->interval)
                        src_remove(l, s); /* one-shot: gone once its callback returns */
                s->timer(l, s, s->userdata);
                break;
        }
        case SRC_SIGNAL:
                dispatch_signals(l);
                break;
        }
}

int rtn_loop_run_once(struct rtn_loop *l, int timeout_ms) {
        struct epoll_event evs[64];
        int n = epoll_wait(l->epfd, evs, (int)ARRAY_SIZE(evs), timeout_ms);
        if (n < 0)
                return errno == EINTR ? 0 : negative_errno();
        for (int i = 0; i < n; i++) {
                struct rtn_loop_source *s = evs[i].data.ptr;
                /* A one-shot timer is already in the graveyard while its callback runs,
                 * so "dead" here means removed before its turn in this batch. */
                if (!s->dead)
                        dispatch(l, s, evs[i].events);
        }
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
