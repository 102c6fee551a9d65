/* common/loop: fd callbacks, timers (one-shot, periodic, cancelled), removal of a source
 * whose event is pending in the same round, signals through signalfd. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "common/loop.h"

struct ctx {
        int hits, other_fd;
        struct rtn_loop_source *timer;
};

static void on_read(struct rtn_loop *l, int fd, uint32_t revents, void *ud) {
        struct ctx *c = ud;
        char b[16];
        (void)!read(fd, b, sizeof b);
        c->hits++;
        if (c->other_fd >= 0) /* remove the other fd whose event is in the same batch */
                cr_assert_eq(rtn_loop_del_fd(l, c->other_fd), 0);
}

Test(rtn_loop_add_fd, callbacks_and_removal_in_the_same_round) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        int a[2], b[2];
        cr_assert_eq(pipe2(a, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(b, O_CLOEXEC), 0);
        struct ctx ca = {.other_fd = b[0]}, cb = {.other_fd = a[0]};
        cr_assert_eq(rtn_loop_add_fd(l, a[0], EPOLLIN, on_read, &ca), 0);
        cr_assert_eq(rtn_loop_add_fd(l, a[0], EPOLLIN, on_read, &ca), -EEXIST);
        cr_assert_eq(rtn_loop_add_fd(l, b[0], EPOLLIN, on_read, &cb), 0);
        cr_assert_eq(write(a[1], "x", 1), 1);
        cr_assert_eq(write(b[1], "x", 1), 1);
        cr_assert_eq(rtn_loop_run_once(l, 1000), 2);
        cr_assert_eq(ca.hits + cb.hits, 1, "the removed source was not dispatched");
        int ran = ca.hits ? a[0] : b[0], removed = ca.hits ? b[0] : a[0];
        cr_assert_eq(rtn_loop_del_fd(l, removed), -ENOENT);
        cr_assert_eq(rtn_loop_del_fd(l, ran), 0);
        cr_assert_eq(rtn_loop_mod_fd(l, b[0], EPOLLIN), -ENOENT);
        int f = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        cr_assert_eq(rtn_loop_add_fd(l, f, EPOLLIN, on_read, &ca), -EPERM);
        close(f);
        rtn_loop_free(l);
        close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}

static void on_timer(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct ctx *c = ud;
        if (++c->hits == 3)
                rtn_loop_stop(l, 42);
}

Test(rtn_loop_add_timer, periodic_until_stopped) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        struct ctx c = {0}, never = {0};
        struct rtn_loop_source *t;
        cr_assert_eq(rtn_loop_add_timer(l, 1000, 1000, on_timer, &c, NULL), 0);
        cr_assert_eq(rtn_loop_add_timer(l, 1000, 0, on_timer, &never, &t), 0);
        rtn_loop_timer_cancel(l, t);
        cr_assert_eq(rtn_loop_run(l), 42);
        cr_assert_eq(c.hits, 3);
        cr_assert_eq(never.hits, 0);
        cr_assert(rtn_loop_stopped(l));
        rtn_loop_free(l);
}

static void on_sig(struct rtn_loop *l, const struct signalfd_siginfo *si, void *ud) {
        *(unsigned *)ud = si->ssi_signo;
        rtn_loop_stop(l, 0);
}

Test(rtn_loop_add_signal, delivered_through_signalfd) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        unsigned got = 0;
        cr_assert_eq(rtn_loop_add_signal(l, SIGUSR1, on_sig, &got), 0);
        cr_assert_eq(rtn_loop_add_signal(l, SIGPIPE, NULL, NULL), 0);
        cr_assert_eq(rtn_loop_add_signal(l, 0, on_sig, &got), -EINVAL);
        cr_assert_eq(raise(SIGPIPE), 0); /* blocked and ignored: the process survives */
        cr_assert_eq(raise(SIGUSR1), 0);
        cr_assert_eq(rtn_loop_run(l), 0);
        cr_assert_eq(got, SIGUSR1);
        rtn_loop_free(l);
        sigset_t now;
        sigprocmask(SIG_SETMASK, NULL, &now);
        cr_assert(!sigismember(&now, SIGUSR1), "mask restored on free");
}
