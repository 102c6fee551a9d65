/* The session's control events (runtime/session/session.c) against a test that plays rtn-init on
 * the other end of a real control socket (rt_session_attach): what rtn-init sends is
 * untrusted, and a malformed message must change nothing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/io.h"
#include "common/loop.h"
#include "runtime/internal.h"
#include "runtime/session/session.h"
#include "store/store.h"

static void on_done(struct rt_cmd *c, void *ud) {
        *(struct rt_blocked *)ud = c->blocked;
}

static void spin(struct rtn_loop *l) {
        for (int i = 0; i < 8; i++)
                rtn_loop_run_once(l, 10);
}

/* A datagram shorter than a header was matched to a command by the id and type bytes the
 * previous message had left in the receive buffer: after a BLOCKED report, one byte of 0x0f
 * read as another, malformed, BLOCKED for the same command and erased its report. */
Test(rt_session, short_datagram_changes_nothing) {
        char dir[64];
        struct rtn_loop *loop;
        struct rt_session *s;
        struct rtn_error err = {0};
        snprintf(dir, sizeof dir, "/tmp/rtn-session-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
        cr_assert_eq(rtn_loop_new(&loop), 0);
        struct rt_session_config cfg = {.session_dir = dir};
        rt_spec_init(&cfg.spec);
        cfg.spec.hostname = "not a hostname"; /* a real start fails at once */
        cr_assert_eq(rt_session_new(loop, &cfg, &s, &err), 0, "%s", err.msg);
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        struct rt_sandbox sb = {.pid = -1, .pidfd = -1, .ctl = sv[0], .gate_fd = -1, .net_fd = -1};
        cr_assert_eq(rt_session_attach(s, &sb, &err), 0, "%s", err.msg);

        struct rt_blocked seen = {0};
        struct rt_cmd *c;
        struct rt_cmd_opts o = {.command = "true"};
        cr_assert_eq(rt_session_run(s, &o, on_done, &seen, &c, &err), 0, "%s", err.msg);
        char spawn[INIT_MSG_MAX];
        int fds[3];
        size_t nfds = 3;
        cr_assert_gt(rtn_recv_msg(sv[1], spawn, sizeof spawn, fds, &nfds), 0);
        cr_assert_eq(nfds, 3);

        struct init_blocked bl = {.hdr = {.type = INIT_MSG_BLOCKED, .len = sizeof bl, .id = c->id},
                                  .nrec = 1,
                                  .total = 1};
        bl.rec[0] = (struct init_blocked_rec){.nr = SYS_mount, .pid = 2, .count = 1};
        strcpy(bl.rec[0].comm, "mount");
        cr_assert_eq(rtn_send_msg(sv[1], &bl, sizeof bl, NULL, 0), sizeof bl);
        spin(loop);
        cr_assert_eq(c->blocked.n, 1);
        cr_assert_eq(rtn_send_msg(sv[1], "\x0f", 1, NULL, 0), 1);
        spin(loop);
        cr_assert_eq(c->blocked.n, 1, "a one-byte datagram erased the blocked-call report");

        struct init_exited ex = {.hdr = {.type = INIT_MSG_EXITED, .len = sizeof ex, .id = c->id}};
        cr_assert_eq(rtn_send_msg(sv[1], &ex, sizeof ex, NULL, 0), sizeof ex);
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]);
        spin(loop);
        cr_assert(c->done);
        cr_assert_eq(seen.n, 1);
        cr_assert_str_eq(seen.rec[0].syscall, "mount");
        rt_cmd_free(c);
        rt_session_free(s);
        rtn_loop_free(loop);
        close(sv[1]);
        store_rm_rf_at(AT_FDCWD, dir);
}
