/* Small fd helpers shared by rtn and rtn-init: full reads/writes that retry EINTR and short
 * counts, fd passing over unix sockets (SCM_RIGHTS), and whole-file reads with a cap. All
 * return >= 0 on success, -errno on failure. Also the stack for a clone(2) child. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

int rtn_write_all(int fd, const void *buf, size_t len);
/* Reads until len bytes or EOF; returns the number read. */
ssize_t rtn_read_full(int fd, void *buf, size_t len);
/* Writes a string to a file at dirfd/path (O_WRONLY|O_CLOEXEC), e.g. /proc/PID/uid_map. */
int rtn_write_file_at(int dirfd, const char *path, const char *s);
/* Reads at most max-1 bytes of a file into buf and NUL-terminates; returns the length. */
ssize_t rtn_read_file_at(int dirfd, const char *path, char *buf, size_t max);

/* One SEQPACKET message with up to RTN_MAX_PASS_FDS fds. recv: *nfds in = capacity, out =
 * received; fds arrive O_CLOEXEC. Returns bytes (0 = peer closed), or -errno. What a peer
 * sent before a reset still arrives, then 0; a reset with nothing queued is -ECONNRESET. */
#define RTN_MAX_PASS_FDS 8
ssize_t rtn_send_msg(int sock, const void *buf, size_t len, const int *fds, size_t nfds);
ssize_t rtn_recv_msg(int sock, void *buf, size_t len, int *fds, size_t *nfds);
/* Up to RTN_MAX_BATCH such messages, in order, in one sendmmsg (a short count, from a signal
 * or a full buffer, sends the rest in another): a peer that wakes for the first finds the
 * others queued behind it. Returns 0 or -errno (what was sent before an error stays sent). */
#define RTN_MAX_BATCH 3
struct rtn_out_msg {
        const void *buf;
        size_t len;
        const int *fds;
        size_t nfds;
};
int rtn_send_msgs(int sock, const struct rtn_out_msg *m, size_t n);

/* 2*n hex digits of n random bytes from the kernel's CSPRNG, and a NUL, into buf: an id
 * that is a secret (an HTTP session's, a task's). Never fails (aborts if the kernel cannot). */
void rtn_random_hex(char *buf, size_t n);

/* Whether fd may be handed into a sandbox as a command's stdio: an anonymous pipe or
 * /dev/null, not opened O_PATH. Anything else carries more than bytes from the host: a
 * directory or an O_PATH fd is a handle on the host's tree, a socket may connect, bind or
 * accept in the host's network namespace (past the sandbox's own), a device or an anonymous
 * inode (pidfd, epoll, io_uring) acts on the host, and a regular file or a named FIFO is a
 * host inode whose mode, times and xattrs a command may change where the sandbox's user is
 * the file's owner (a user without subordinate ids), read-only fd or not. A terminal is a
 * character device, so it is never one either. `rtn enter`'s owner refuses the others; rtn
 * exec and rtn enter pump them through pipes of their own. */
bool rtn_fd_passable(int fd);

/* Sets or clears O_NONBLOCK. */
int rtn_fd_nonblock(int fd, int on);

/* A stack of size bytes for a clone(2) child (CLONE_VM: it runs in our memory), whose lowest
 * page stays PROT_NONE so an overflow faults instead of writing what lies below. Returns its
 * top (where the stack starts), or NULL with errno set. */
void *rtn_stack_new(size_t size);
