/* The control-socket replies rtn reads one at a time with a blocking read while it starts a
 * sandbox or runs `rtn exec` (runtime/sandbox/sandbox.c, runtime/exec/exec.c): READY
 * (rt_recv_typed, also what runtime/sandbox/landlock_only.c reads), CONFIGURED (rt_config_wait),
 * GATE with its listener (rt_sandbox_open_gate), the spawn reply with a pty master
 * (rt_exec_await_spawned) and the exit and blocked-call events of rtn exec's command
 * (rt_exec_read_ctl); SETUP_FAILED may come instead of any of them. The target plays rtn-init on a
 * real SOCK_SEQPACKET pair: the first byte picks the reader, then up to eight datagrams
 * (fuzz/peer.h) are queued before the end is shut for writing, so every read returns. Oracles
 * beyond the sanitizers: a reply taken is exactly the size of its message, a gate is a listening
 * socket, a blocked-call report passes fuzz_check_blocked, an error has a message, and no fd is
 * left open. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "fuzz/peer.h"
#include "runtime/exec/exec.h"
#include "runtime/internal.h"

enum { READ_READY, READ_CONFIGURED, READ_GATE, READ_SPAWNED, READ_EVENTS, READERS };

static const uint32_t types[READERS][2] = {
        [READ_READY] = {INIT_MSG_READY, INIT_MSG_SETUP_FAILED},
        [READ_CONFIGURED] = {INIT_MSG_CONFIGURED, INIT_MSG_SETUP_FAILED},
        [READ_GATE] = {INIT_MSG_GATE, INIT_MSG_SETUP_FAILED},
        [READ_SPAWNED] = {INIT_MSG_SPAWNED, INIT_MSG_SPAWN_FAILED},
        [READ_EVENTS] = {INIT_MSG_EXITED, INIT_MSG_BLOCKED},
};

static struct fuzz_dgram d;

static void check_err(int r, const struct rtn_error *err) {
        if (r < 0 && (err->code <= 0 || !err->msg[0]))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_in in = {data, size};
        unsigned which = fuzz_u8(&in) % READERS;
        int before = fuzz_count_fds();
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
        (void)rtn_fd_nonblock(sv[1], 1);
        struct fuzz_held held = {0};
        for (int i = 0; i < 8 && in.n; i++) {
                fuzz_dgram(&in, types[which][i & 1], 1, &d);
                fuzz_send(sv[1], &d, &held);
        }
        shutdown(sv[1], SHUT_WR);
        struct rt_sandbox sb = {.pid = -1, .pidfd = -1, .ctl = sv[0], .gate_fd = -1, .net_fd = -1};
        struct rtn_error err = {0};
        int r;
        switch (which) {
        case READ_READY: {
                struct init_ready ready;
                r = rt_recv_typed(&sb, &ready, sizeof ready, INIT_MSG_READY, "rtn-init start",
                                  &err);
                if (r >= 0 && r != (int)sizeof ready)
                        abort(); /* the caller reads landlock_abi from it */
                check_err(r, &err);
                break;
        }
        case READ_CONFIGURED:
                check_err(rt_config_wait(&sb, &err), &err);
                break;
        case READ_GATE: {
                r = rt_sandbox_open_gate(&sb, &err);
                check_err(r, &err);
                int listening = 0;
                socklen_t l = sizeof listening;
                if (r == 0 &&
                    (getsockopt(sb.gate_fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) < 0 ||
                     !listening))
                        abort(); /* the gate's proxy accepts on it from the event loop */
                sb.gate_fd = rtn_safe_close(sb.gate_fd);
                break;
        }
        case READ_SPAWNED: {
                int master = -1;
                r = rt_exec_await_spawned(&sb, "cmd", "/", &master, &err);
                if (r != 0 && r != 125 && r != 126 && r != 127 && r >= 0)
                        abort();
                if (r != 0 && master >= 0)
                        abort();
                if (r != 0)
                        check_err(-1, &err);
                rtn_safe_close(master);
                break;
        }
        default: {
                struct rt_blocked b = {0};
                int status = 0;
                while ((r = rt_exec_read_ctl(&sb, NULL, &status, &b)) == 0)
                        ;
                fuzz_check_blocked(&b);
                break;
        }
        }
        close(sv[0]);
        close(sv[1]);
        fuzz_release(&held);
        fuzz_fds_check(before);
        return 0;
}
