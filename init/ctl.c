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
#include <sys/socket.h>

#include "common/io.h"
#include "common/syscall.h"
#include "init/internal.h"

#define HELD_MAX 2
#define HELD_BYTES (sizeof(struct init_status))

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

/* The held messages, then msg (len 0: none) with its fds, in one sendmmsg; a short count
 * (a signal, a full buffer) sends the rest in another. */
static int send_all(const void *msg, size_t len, const int *fds, size_t nfds) {
        struct mmsghdr mm[HELD_MAX + 1];
        struct iovec iov[HELD_MAX + 1];
        union {
                char buf[CMSG_SPACE(sizeof(int) * RTN_MAX_PASS_FDS)];
                struct cmsghdr align;
        } u;
        unsigned n = 0;
        if (nfds > RTN_MAX_PASS_FDS)
                return -EINVAL;
        memset(mm, 0, sizeof mm); /* msghdr's padding too (sys_sendmmsg) */
        for (size_t i = 0; i < held.n; i++, n++) {
                iov[n] = (struct iovec){.iov_base = held.buf[i], .iov_len = held.len[i]};
                mm[n].msg_hdr = (struct msghdr){.msg_iov = &iov[n], .msg_iovlen = 1};
        }
        if (len) {
                iov[n] = (struct iovec){.iov_base = (void *)msg, .iov_len = len};
                mm[n].msg_hdr = (struct msghdr){.msg_iov = &iov[n], .msg_iovlen = 1};
                if (nfds) {
                        memset(&u, 0, sizeof u);
                        mm[n].msg_hdr.msg_control = u.buf;
                        mm[n].msg_hdr.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
                        struct cmsghdr *c = CMSG_FIRSTHDR(&mm[n].msg_hdr);
                        c->cmsg_level = SOL_SOCKET;
                        c->cmsg_type = SCM_RIGHTS;
                        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
                        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
                }
                n++;
        }
        held.n = 0;
        for (unsigned done = 0; done < n;) {
                int r = sys_sendmmsg(INIT_CTL_FD, mm + done, n - done, MSG_NOSIGNAL);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                done += (unsigned)r;
        }
        return 0;
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
