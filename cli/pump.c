/* Byte pumps between rtn's own stdio and the sandbox, used only where an fd cannot be handed
 * over as it is: a host terminal (no host tty may reach a command) and the pty master of
 * `rtn exec -t`. Non-blocking, buffered, so a command that stops reading can never wedge
 * rtn's event loop. Everything else is passed to the command directly (zero copies). */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "cli/pump.h"

void rt_pump_init(struct rt_pump *p, int from, int to, bool close_to_on_eof) {
        p->from = from;
        p->to = to;
        p->len = p->off = 0;
        p->eof = false;
        p->done = false;
        p->close_to = close_to_on_eof;
        /* Our own stdio is shared with the shell that started us: never change its flags.
         * poll says when a read will not block; a write to a terminal may, briefly. */
        if (from > 2)
                (void)rtn_fd_nonblock(from, 1);
        if (to > 2)
                (void)rtn_fd_nonblock(to, 1);
}

short rt_pump_events(const struct rt_pump *p, int *ret_fd) {
        if (p->done)
                return 0;
        if (p->off < p->len) {
                *ret_fd = p->to;
                return POLLOUT;
        }
        *ret_fd = p->from;
        return POLLIN;
}

static void finish(struct rt_pump *p) {
        p->done = true;
        if (p->close_to)
                p->to = rtn_safe_close(p->to);
}

/* One step, called when poll(2) reported the fd of rt_pump_events ready: at most one read
 * and one write, since our own stdio may be a blocking fd. */
void rt_pump_run(struct rt_pump *p) {
        if (p->done)
                return;
        if (p->off >= p->len) {
                if (p->eof) {
                        finish(p);
                        return;
                }
                ssize_t n = read(p->from, p->buf, sizeof p->buf);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                return;
                        n = 0; /* EIO from a pty master whose slave is gone: EOF */
                }
                if (n == 0) {
                        p->eof = true;
                        finish(p);
                        return;
                }
                p->len = (size_t)n;
                p->off = 0;
        }
        ssize_t n = write(p->to, p->buf + p->off, p->len - p->off);
        if (n < 0) {
                if (errno != EINTR && errno != EAGAIN)
                        finish(p); /* the reader went away: drop the rest */
                return;
        }
        p->off += (size_t)n;
}
