/* rtn-init's side of the control socket's sends: every message to rtn goes through
 * init_ctl_send, in order. A start's answers (READY, CONFIGURED) are held (init_ctl_hold)
 * until the spawn request rtn queued behind CONFIG has been served, and then go out with its
 * SPAWNED in one sendmmsg: rtn, which sent CONFIG and the request at once and waits for the
 * three answers, is woken once for them rather than once each, and on a virtual machine
 * each wake-up of a process on the other CPU is an interrupt and an exit to the hypervisor
 * (docs/benchmarks.md, "The hand-offs of a cold start"). What is held is sent before any
 * later message and before the loop waits (init_ctl_flush), so nothing waits on it. */
#include <errno.h>
#include <string.h>

#include "common/io.h"
#include "init/internal.h"

#define HELD_MAX 2
#define HELD_BYTES (sizeof(struct init_status))
_Static_assert(HELD_MAX + 1 <= RTN_MAX_BATCH, "the held messages and one more go in one batch");

static struct {
        char buf[HELD_MAX][HELD_BYTES];
        size_t len[HELD_MAX];
        size_t n;
} held;

int init_ctl_hold(const void *msg, size_t len) {
        if (len > HELD_BYTES)
                return -EMSGSIZE;
        if (held.n == HELD_MAX) {
                int r = init_ctl_flush();
                if (r < 0)
                        return r;
        }
        memcpy(held.buf[held.n], msg, len);
        held.len[held.n++] = len;
        return 0;
}

/* The held messages, then msg (len 0: none) with its fds, in one sendmmsg. */
static int send_all(const void *msg, size_t len, const int *fds, size_t nfds) {
        struct rtn_out_msg m[HELD_MAX + 1];
        size_t n = 0;
        for (size_t i = 0; i < held.n; i++)
                m[n++] = (struct rtn_out_msg){.buf = held.buf[i], .len = held.len[i]};
        if (len)
                m[n++] = (struct rtn_out_msg){.buf = msg, .len = len, .fds = fds, .nfds = nfds};
        held.n = 0;
        return rtn_send_msgs(INIT_CTL_FD, m, n);
}

int init_ctl_flush(void) {
        return held.n ? send_all(NULL, 0, NULL, 0) : 0;
}

bool init_ctl_holding(void) {
        return held.n != 0;
}

int init_ctl_send(const void *msg, size_t len, const int *fds, size_t nfds) {
        if (!held.n) {
                ssize_t r = rtn_send_msg(INIT_CTL_FD, msg, len, fds, nfds);
                return r < 0 ? (int)r : 0;
        }
        return send_all(msg, len, fds, nfds);
}
