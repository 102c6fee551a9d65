/* The client of the sandbox's file server (runtime/session/file_client.c) against a test that plays
 * rtn-init and the server on real sockets: a session with a sandbox whose control socket is
 * one end of a pair (rt_session_attach). Both run inside the sandbox, so every answer is
 * untrusted. The cases are what fuzz/fuzz_files.c found (inputs in fuzz/corpus/fuzz_files/). */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/loop.h"
#include "runtime/session/file_client.h"
#include "runtime/internal.h"
#include "runtime/session/session.h"
#include "store/store.h"

struct fixture {
        char dir[64];
        struct rtn_loop *loop;
        struct rt_session *s;
        struct rt_files *f;
        int init; /* rtn-init's end of the control socket */
        int srv; /* the file server's end of its socket */
        int answers;
        struct rt_files_reply reply;
        char message[1024];
};

static void setup(struct fixture *x) {
        struct rtn_error err = {0};
        snprintf(x->dir, sizeof x->dir, "/tmp/rtn-files-XXXXXX");
        cr_assert_not_null(mkdtemp(x->dir));
        cr_assert_eq(rtn_loop_new(&x->loop), 0);
        struct rt_session_config cfg = {.session_dir = x->dir};
        rt_spec_init(&cfg.spec);
        cfg.spec.hostname = "not a hostname"; /* a real start fails at once */
        cr_assert_eq(rt_session_new(x->loop, &cfg, &x->s, &err), 0, "%s", err.msg);
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        struct rt_sandbox sb = {.pid = -1, .pidfd = -1, .ctl = sv[0], .gate_fd = -1, .net_fd = -1};
        cr_assert_eq(rt_session_attach(x->s, &sb, &err), 0, "%s", err.msg);
        x->init = sv[1];
        x->srv = -1;
        cr_assert_eq(rt_files_new(x->loop, x->s, &x->f), 0);
}

static void teardown(struct fixture *x) {
        rt_files_free(x->f);
        rt_session_free(x->s);
        rtn_loop_free(x->loop);
        close(x->init);
        if (x->srv >= 0)
                close(x->srv);
        store_rm_rf_at(AT_FDCWD, x->dir);
}

static void on_reply(void *ud, const struct rt_files_reply *r) {
        struct fixture *x = ud;
        x->answers++;
        x->reply = *r;
        snprintf(x->message, sizeof x->message, "%s", r->message);
        x->reply.message = x->message;
}

static void spin(struct fixture *x) {
        for (int i = 0; i < 8; i++)
                rtn_loop_run_once(x->loop, 10);
}

/* Reads rtn's FILES_START and answers it with status (error, and the server's socket when
 * error is 0). */
static void start_server(struct fixture *x, int32_t error) {
        struct init_msg_hdr h;
        spin(x);
        cr_assert_eq(rtn_recv_msg(x->init, &h, sizeof h, NULL, NULL), (ssize_t)sizeof h);
        cr_assert_eq(h.type, INIT_MSG_FILES_START);
        struct init_status st = {
                .hdr = {.type = INIT_MSG_FILES_STARTED, .len = sizeof st, .id = h.id},
                .error = error};
        int sv[2] = {-1, -1};
        if (error == 0) {
                cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
                x->srv = sv[1];
        }
        cr_assert_eq(rtn_send_msg(x->init, &st, sizeof st, &sv[0], error == 0), sizeof st);
        if (sv[0] >= 0)
                close(sv[0]);
        spin(x);
}

static void call_read(struct fixture *x) {
        struct rtn_error err = {0};
        _cleanup_close_ int out = memfd_create("out", MFD_CLOEXEC);
        struct rt_files_op op = {.op = INIT_FILES_READ, .path = "a", .fd = out};
        cr_assert_eq(rt_files_call(x->f, &op, on_reply, x, &err), 0, "%s", err.msg);
}

/* fuzz/corpus/fuzz_files/crash-open-fd-not-regular: an OPEN's answer was taken with any fd,
 * and file_read then read it on the event loop: a pipe whose other end the sandbox holds
 * blocked `rtn serve` for good. The server now writes into rtn's memfd and no reply carries
 * an fd: one that comes along is closed unread and the reply is taken as it is. */
Test(rt_files, reply_fd_closed_unread) {
        struct fixture x = {0};
        setup(&x);
        call_read(&x);
        start_server(&x, 0);
        char req[INIT_FILES_REQ_MAX];
        cr_assert_gt(rtn_recv_msg(x.srv, req, sizeof req, NULL, NULL), 0);
        struct init_files_req *rq = (struct init_files_req *)req;
        struct init_files_resp m = {
                .hdr = {.type = INIT_FILES_READ, .len = sizeof m, .id = rq->hdr.id}};
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_eq(rtn_send_msg(x.srv, &m, sizeof m, &p[0], 1), sizeof m);
        close(p[0]);
        spin(&x);
        cr_assert_eq(x.answers, 1);
        cr_assert_eq(x.reply.error, 0, "error %d: %s", x.reply.error, x.message);
        /* rtn's copy of the read end is gone: a write finds no reader. */
        signal(SIGPIPE, SIG_IGN);
        cr_assert_eq(write(p[1], "x", 1), -1);
        cr_assert_eq(errno, EPIPE);
        close(p[1]);
        teardown(&x);
}

/* fuzz/corpus/fuzz_files/crash-started-errno-int-min: the errno of a failed start was
 * negated as it came, and INT_MIN has no positive form (undefined behaviour; the calls were
 * then failed with a negative errno). */
Test(rt_files, start_errno_int_min) {
        struct fixture x = {0};
        setup(&x);
        call_read(&x);
        start_server(&x, INT_MIN);
        cr_assert_eq(x.answers, 1, "%d answers", x.answers);
        cr_assert_gt(x.reply.error, 0, "errno %d", x.reply.error);
        teardown(&x);
}
