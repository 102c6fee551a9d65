/* common/io: rtn_recv_msg reports how many fds it filled in on every return, so a caller
 * closing fds[0..n) after an error never closes a descriptor it does not own, and it finds
 * what a peer sent before closing even when the kernel reports a reset first. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/io.h"

Test(rtn_recv_msg, error_leaves_no_fds_to_close) {
        int fds[2] = {123, 123};
        size_t nfds = 2;
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* not a socket */
        cr_assert_geq(fd, 0);
        char buf[8];
        cr_assert_eq(rtn_recv_msg(fd, buf, sizeof buf, fds, &nfds), -ENOTSOCK);
        cr_assert_eq(nfds, 0, "an error must report 0 fds, got %zu", nfds);
        close(fd);
}

Test(rtn_recv_msg, reset_peer_leaves_no_fds_to_close) {
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        /* A peer closed with a message still unread gives ECONNRESET: what rtn serve saw
         * from a killed rtn-init that had not read its last spawn request. */
        cr_assert_eq(rtn_send_msg(sv[0], "x", 1, NULL, 0), 1);
        close(sv[1]);
        int fds[1] = {0};
        size_t nfds = 1;
        char buf[8];
        cr_assert_eq(rtn_recv_msg(sv[0], buf, sizeof buf, fds, &nfds), -ECONNRESET);
        cr_assert_eq(nfds, 0);
        close(sv[0]);
}

/* The peer said why it is leaving, then closed with our message unread: the kernel reports
 * ECONNRESET ahead of its message, and rtn_recv_msg must still return the message (a
 * sandbox's SETUP_FAILED was lost this way), then end of file. */
Test(rtn_recv_msg, message_behind_a_reset) {
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        cr_assert_geq(devnull, 0);
        cr_assert_eq(rtn_send_msg(sv[1], "why", 3, &devnull, 1), 3);
        cr_assert_eq(rtn_send_msg(sv[0], "x", 1, NULL, 0), 1);
        close(sv[1]);
        int fds[1] = {-1};
        size_t nfds = 1;
        char buf[8] = {0};
        cr_assert_eq(rtn_recv_msg(sv[0], buf, sizeof buf, fds, &nfds), 3);
        cr_assert_str_eq(buf, "why");
        cr_assert_eq(nfds, 1);
        cr_assert_geq(fds[0], 0);
        close(fds[0]);
        nfds = 1;
        cr_assert_eq(rtn_recv_msg(sv[0], buf, sizeof buf, fds, &nfds), 0);
        cr_assert_eq(nfds, 0);
        close(devnull);
        close(sv[0]);
}

Test(rtn_recv_msg, passes_fds) {
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        cr_assert_eq(rtn_send_msg(sv[0], "m", 1, &devnull, 1), 1);
        int fds[2] = {-1, -1};
        size_t nfds = 2;
        char buf[8];
        cr_assert_eq(rtn_recv_msg(sv[1], buf, sizeof buf, fds, &nfds), 1);
        cr_assert_eq(nfds, 1);
        cr_assert_geq(fds[0], 0);
        close(fds[0]);
        close(devnull);
        close(sv[0]);
        close(sv[1]);
}

/* A batch arrives as its messages, in order, each with its own fds only: rtn's CONFIG and
 * spawn request (runtime/sandbox/sandbox.c), rtn-init's held answers (init/ctl.c). */
Test(rtn_send_msgs, messages_in_order_with_their_own_fds) {
        int sv[2], p[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        struct rtn_out_msg m[] = {{.buf = "one", .len = 3},
                                  {.buf = "two", .len = 3, .fds = p, .nfds = 2},
                                  {.buf = "3", .len = 1}};
        cr_assert_eq(rtn_send_msgs(sv[0], m, 3), 0);
        static const char *const want[] = {"one", "two", "3"};
        static const size_t want_fds[] = {0, 2, 0};
        for (size_t i = 0; i < 3; i++) {
                char buf[8] = {0};
                int fds[RTN_MAX_PASS_FDS];
                size_t nfds = RTN_MAX_PASS_FDS;
                cr_assert_eq(rtn_recv_msg(sv[1], buf, sizeof buf, fds, &nfds),
                             (ssize_t)strlen(want[i]));
                cr_assert_str_eq(buf, want[i]);
                cr_assert_eq(nfds, want_fds[i], "message %zu brought %zu fds", i, nfds);
                for (size_t j = 0; j < nfds; j++)
                        close(fds[j]);
        }
        close(p[0]);
        close(p[1]);
        close(sv[0]);
        close(sv[1]);
}

Test(rtn_send_msgs, refuses_more_than_it_holds) {
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        struct rtn_out_msg m[RTN_MAX_BATCH + 1] = {{.buf = "x", .len = 1}};
        cr_assert_eq(rtn_send_msgs(sv[0], m, RTN_MAX_BATCH + 1), -EINVAL);
        int fds[RTN_MAX_PASS_FDS + 1] = {0};
        m[0].fds = fds;
        m[0].nfds = RTN_MAX_PASS_FDS + 1;
        cr_assert_eq(rtn_send_msgs(sv[0], m, 1), -EINVAL);
        /* Nothing of a refused batch went out */
        char buf[4];
        cr_assert_eq(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), -1);
        cr_assert_eq(errno, EAGAIN);
        close(sv[0]);
        close(sv[1]);
}

/* Found by fuzz/fuzz_session.c (fuzz/corpus/fuzz_session/crash-reset-empty-datagram-fd): an
 * empty datagram behind a reset is reported as the reset, and the fd it carried was neither
 * returned nor closed. rtn-init can send that and close: an fd of its choosing then stayed
 * open in `rtn serve` for good. */
Test(rtn_recv_msg, empty_datagram_behind_a_reset_leaks_no_fd) {
        int sv[2], p[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_eq(rtn_send_msg(sv[1], "", 0, &p[0], 1), 0);
        close(p[0]);
        cr_assert_eq(rtn_send_msg(sv[0], "x", 1, NULL, 0), 1);
        close(sv[1]);
        int fds[1] = {-1};
        size_t nfds = 1;
        char buf[8];
        cr_assert_eq(rtn_recv_msg(sv[0], buf, sizeof buf, fds, &nfds), -ECONNRESET);
        cr_assert_eq(nfds, 0);
        signal(SIGPIPE, SIG_IGN);
        cr_assert_eq(write(p[1], "x", 1), -1, "the pipe's read end is still open in the reader");
        cr_assert_eq(errno, EPIPE);
        close(p[1]);
        close(sv[0]);
}
