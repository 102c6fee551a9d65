/* common/loop: fd callbacks, timers (one-shot, periodic, cancelled; in deadline order, on no
 * fd of their own; one cancelled by another's callback in the same round, one re-armed from
 * its own), removal of a source whose event is pending in the same round, signals through
 * signalfd. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include "common/clock.h"
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

static int open_fds(void) {
        int n = 0;
        DIR *d = opendir("/proc/self/fd");
        cr_assert_not_null(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* A call's timeout is a timer: a hundred of them at once cost no fd, and so no system call
 * to make, arm, watch and close one each. */
Test(rtn_loop_add_timer, no_fd_per_timer) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        int before = open_fds();
        struct ctx c = {0};
        struct rtn_loop_source *t[100];
        for (int i = 0; i < 100; i++)
                cr_assert_eq(rtn_loop_add_timer(l, 600 * RTN_USEC_PER_SEC, 0, on_timer, &c, &t[i]),
                             0);
        cr_assert_eq(open_fds(), before, "no fd per timer");
        for (int i = 0; i < 100; i++)
                rtn_loop_timer_cancel(l, t[i]);
        cr_assert_eq(rtn_loop_run_once(l, 0), 0, "cancelled timers fire never");
        cr_assert_eq(c.hits, 0);
        rtn_loop_free(l);
}

struct order {
        int seq[8], n;
        struct rtn_loop_source *victim; /* cancelled by the first callback */
};

struct tagged {
        struct order *o;
        int tag;
};

static void on_ordered(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct tagged *g = ud;
        g->o->seq[g->o->n++] = g->tag;
        if (g->o->victim) {
                rtn_loop_timer_cancel(l, g->o->victim);
                g->o->victim = NULL;
        }
}

/* Due timers fire in the order of their deadlines, each once, and a timer that an earlier
 * callback of the same round cancelled (a command's timeout when its exit came first) does
 * not fire. All four are made due before the loop looks, so the round is the same one however
 * slowly this process is scheduled. */
Test(rtn_loop_add_timer, deadline_order_and_cancel_in_the_same_round, .timeout = 10) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        struct order o = {0};
        struct tagged g[4] = {{&o, 3}, {&o, 1}, {&o, 2}, {&o, 4}};
        struct rtn_loop_source *victim;
        cr_assert_eq(rtn_loop_add_timer(l, 30000, 0, on_ordered, &g[0], NULL), 0);
        cr_assert_eq(rtn_loop_add_timer(l, 10000, 0, on_ordered, &g[1], NULL), 0);
        cr_assert_eq(rtn_loop_add_timer(l, 20000, 0, on_ordered, &g[2], NULL), 0);
        cr_assert_eq(rtn_loop_add_timer(l, 25000, 0, on_ordered, &g[3], &victim), 0);
        o.victim = victim;
        usleep(40000);
        cr_assert_eq(rtn_loop_run_once(l, 0), 3, "the cancelled one was not dispatched");
        cr_assert_eq(rtn_loop_run_once(l, 0), 0);
        cr_assert_eq(o.n, 3);
        cr_assert_eq(o.seq[0], 1);
        cr_assert_eq(o.seq[1], 2);
        cr_assert_eq(o.seq[2], 3);
        rtn_loop_free(l);
}

/* No timer fires before its deadline: the loop's wait ends early only for an fd. */
Test(rtn_loop_add_timer, never_before_its_deadline, .timeout = 10) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        struct order o = {0};
        struct tagged g = {&o, 1};
        uint64_t t0 = rtn_now_usec();
        cr_assert_eq(rtn_loop_add_timer(l, 20000, 0, on_ordered, &g, NULL), 0);
        for (int i = 0; i < 100 && o.n == 0; i++)
                cr_assert_geq(rtn_loop_run_once(l, 1000), 0);
        cr_assert_eq(o.n, 1);
        cr_assert_geq(rtn_now_usec() - t0, 20000, "no timer fires before its deadline");
        rtn_loop_free(l);
}

static void on_rearm(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct ctx *c = ud;
        c->hits++;
        cr_assert_eq(rtn_loop_add_timer(l, 0, 0, on_rearm, c, NULL), 0);
}

/* A timer that arms another due at once from its callback (as the file client's kick does)
 * fires it in the next round, after the loop has looked at its fds: never in a loop of its
 * own that starves them. */
Test(rtn_loop_add_timer, rearmed_from_its_callback_waits_a_round, .timeout = 10) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        struct ctx c = {0}, io = {.other_fd = -1};
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_eq(rtn_loop_add_fd(l, p[0], EPOLLIN, on_read, &io), 0);
        cr_assert_eq(rtn_loop_add_timer(l, 0, 0, on_rearm, &c, NULL), 0);
        cr_assert_eq(rtn_loop_run_once(l, -1), 1);
        cr_assert_eq(c.hits, 1);
        cr_assert_eq(write(p[1], "x", 1), 1);
        cr_assert_eq(rtn_loop_run_once(l, -1), 2, "the fd and the re-armed timer");
        cr_assert_eq(io.hits, 1);
        cr_assert_eq(c.hits, 2);
        rtn_loop_free(l);
        close(p[0]), close(p[1]);
}

static void on_slow_tick(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct ctx *c = ud;
        if (++c->hits == 1)
                usleep(800000); /* three periods missed */
        else if (c->hits == 3)
                rtn_loop_timer_cancel(l, t); /* a periodic timer cancelled from its callback */
}

/* A periodic timer that fell behind fires once for the periods it missed (as a timerfd's
 * overrun count), not once each, and then keeps its period; cancelled from its own callback
 * it stops. */
Test(rtn_loop_add_timer, periodic_behind_fires_once_and_cancels_itself, .timeout = 10) {
        struct rtn_loop *l;
        cr_assert_eq(rtn_loop_new(&l), 0);
        struct ctx c = {0};
        /* A period long enough that this process, however slowly scheduled, makes the two
         * calls of run_once(0) below within one. */
        cr_assert_eq(rtn_loop_add_timer(l, 250000, 250000, on_slow_tick, &c, NULL), 0);
        cr_assert_eq(rtn_loop_run_once(l, -1), 1);
        cr_assert_eq(rtn_loop_run_once(l, 0), 1, "once for the periods missed");
        cr_assert_eq(rtn_loop_run_once(l, 0), 0, "not once for each");
        cr_assert_eq(rtn_loop_run_once(l, -1), 1, "the next period");
        cr_assert_eq(c.hits, 3);
        cr_assert_eq(rtn_loop_run_once(l, 300), 0, "cancelled: no more");
        cr_assert_eq(c.hits, 3);
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
