/* rtn's side of the control socket, with a test playing rtn-init on a real SOCK_SEQPACKET
 * pair (runtime/sandbox/sandbox.c, runtime/exec/exec.c). Everything rtn-init sends is untrusted:
 * each case here is one the fuzz targets found (fuzz/fuzz_ctl.c; the inputs are in
 * fuzz/corpus/fuzz_ctl/) and checks the reply is refused, or taken, for the right reason. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/io.h"
#include "runtime/exec/exec.h"
#include "runtime/internal.h"

struct peer {
        int sv[2];
        struct rt_sandbox sb;
};

static void peer_open(struct peer *p) {
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p->sv), 0);
        p->sb = (struct rt_sandbox){
                .pid = -1, .pidfd = -1, .ctl = p->sv[0], .gate_fd = -1, .net_fd = -1};
}

static void peer_close(struct peer *p) {
        close(p->sv[0]);
        close(p->sv[1]);
}

/* Sends msg with fd, then hangs up the sending direction: every read returns. */
static void peer_say(struct peer *p, const void *msg, size_t len, int fd) {
        cr_assert_geq(rtn_send_msg(p->sv[1], msg, len, &fd, fd >= 0), 0);
        shutdown(p->sv[1], SHUT_WR);
}

/* True when rtn still holds the read end of the pipe whose write end is w. */
static bool reader_open(int w) {
        signal(SIGPIPE, SIG_IGN);
        return write(w, "x", 1) == 1;
}

/* fuzz/corpus/fuzz_ctl/crash-spawn-empty-datagram-fd: an empty datagram reads as the end of
 * the sandbox, and the fd that came with it stayed open in rtn. */
Test(rt_exec_await_spawned, empty_datagram_with_fd_leaks_nothing) {
        struct peer p;
        struct rtn_error err = {0};
        int pipefd[2], master = -1;
        peer_open(&p);
        cr_assert_eq(pipe2(pipefd, O_CLOEXEC), 0);
        peer_say(&p, "", 0, pipefd[0]);
        close(pipefd[0]);
        cr_assert_lt(rt_exec_await_spawned(&p.sb, "cmd", "/", &master, &err), 0);
        cr_assert_eq(master, -1);
        cr_assert_not(reader_open(pipefd[1]), "the fd that came with the datagram is open");
        close(pipefd[1]);
        peer_close(&p);
}

/* fuzz/corpus/fuzz_ctl/crash-ready-short: a READY of just a header was taken, and the
 * sandbox's landlock_abi then read from bytes no message had written. */
Test(rt_recv_typed, short_reply_is_refused) {
        struct peer p;
        struct rtn_error err = {0};
        struct init_msg_hdr h = {.type = INIT_MSG_READY, .len = sizeof h};
        struct init_ready ready;
        peer_open(&p);
        peer_say(&p, &h, sizeof h, -1);
        cr_assert_eq(rt_recv_typed(&p.sb, &ready, sizeof ready, INIT_MSG_READY, "ready", &err),
                     -EBADMSG);
        peer_close(&p);
        struct init_ready whole = {.hdr = {.type = INIT_MSG_READY, .len = sizeof whole},
                                   .version = INIT_PROTO_VERSION,
                                   .landlock_abi = 7};
        peer_open(&p);
        peer_say(&p, &whole, sizeof whole, -1);
        cr_assert_eq(rt_recv_typed(&p.sb, &ready, sizeof ready, INIT_MSG_READY, "ready", &err),
                     (int)sizeof ready);
        cr_assert_eq(ready.landlock_abi, 7);
        peer_close(&p);
}

/* fuzz/corpus/fuzz_ctl/crash-gate-not-listening: any fd was taken as the gate. The gate's
 * proxy waits on it for connections from the event loop: a pipe with data in it, say, is
 * always ready and never accepts, and `rtn serve` would spin on it. */
Test(rt_sandbox_open_gate, fd_must_be_a_listening_socket) {
        struct peer p;
        struct rtn_error err = {0};
        struct init_gate g = {.hdr = {.type = INIT_MSG_GATE, .len = sizeof g}, .port = 3128};
        int pipefd[2];
        peer_open(&p);
        cr_assert_eq(pipe2(pipefd, O_CLOEXEC), 0);
        cr_assert_eq(write(pipefd[1], "x", 1), 1);
        peer_say(&p, &g, sizeof g, pipefd[0]);
        close(pipefd[0]);
        cr_assert_eq(rt_sandbox_open_gate(&p.sb, &err), -EBADMSG);
        cr_assert_eq(p.sb.gate_fd, -1);
        cr_assert_not(reader_open(pipefd[1]), "the refused fd is open");
        close(pipefd[1]);
        peer_close(&p);

        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(l, 0);
        cr_assert_eq(listen(l, 1), 0);
        peer_open(&p);
        peer_say(&p, &g, sizeof g, l);
        close(l);
        cr_assert_eq(rt_sandbox_open_gate(&p.sb, &err), 0, "%s", err.msg);
        cr_assert_geq(p.sb.gate_fd, 0);
        cr_assert_eq(p.sb.gate_port, 3128);
        close(p.sb.gate_fd);
        peer_close(&p);
}

/* A refusal's errno is rtn-init's to choose: INT_MIN once reached rtn_errx, whose negation
 * of a negative code overflowed (undefined behaviour; UBSan stops there) and left a negative
 * errno in the error. Seeded as fuzz/corpus/fuzz_ctl/edge-configured-errno-int-min. */
Test(rt_config_wait, errno_int_min) {
        struct peer p;
        struct rtn_error err = {0};
        struct init_status st = {.hdr = {.type = INIT_MSG_CONFIGURED, .len = sizeof st},
                                 .error = INT32_MIN,
                                 .message = "no"};
        peer_open(&p);
        peer_say(&p, &st, sizeof st, -1);
        int r = rt_config_wait(&p.sb, &err);
        cr_assert_lt(r, 0);
        cr_assert_gt(err.code, 0, "errno %d", err.code);
        cr_assert_eq(r, -err.code);
        peer_close(&p);
}

/* fuzz/corpus/fuzz_ctl/crash-setup-failed-no-message: a SETUP_FAILED with an empty message
 * became an error with no text at all ("rtn: "). */
Test(rt_recv_typed, setup_failed_without_a_message) {
        struct peer p;
        struct rtn_error err = {0};
        struct init_status st = {.hdr = {.type = INIT_MSG_SETUP_FAILED, .len = sizeof st},
                                 .error = ENOENT};
        struct init_ready ready;
        peer_open(&p);
        peer_say(&p, &st, sizeof st, -1);
        cr_assert_eq(rt_recv_typed(&p.sb, &ready, sizeof ready, INIT_MSG_READY, "ready", &err),
                     -ENOENT);
        cr_assert_str_eq(err.msg, "the sandbox could not be set up (it gave no reason)");
        peer_close(&p);
}
