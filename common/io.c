/* fd helpers: see io.h. Nothing here allocates, so rtn-init and a child between clone3 and
 * execve may use it. */
#include "common/io.h"

#include <errno.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/err.h"
#include "common/syscall.h"

int rtn_write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

ssize_t rtn_read_full(int fd, void *buf, size_t len) {
        char *p = buf;
        size_t got = 0;
        while (got < len) {
                ssize_t n = read(fd, p + got, len - got);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        return (ssize_t)got;
}

int rtn_write_file_at(int dirfd, const char *path, const char *s) {
        _cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        size_t len = strlen(s);
        ssize_t n = write(fd, s, len);
        if (n < 0)
                return negative_errno();
        return (size_t)n == len ? 0 : -EIO;
}

ssize_t rtn_read_file_at(int dirfd, const char *path, char *buf, size_t max) {
        if (max == 0)
                return -EINVAL;
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        ssize_t n = rtn_read_full(fd, buf, max - 1);
        if (n < 0)
                return n;
        buf[n] = '\0';
        return n;
}

/* Room for the SCM_RIGHTS of one message, aligned for a cmsghdr. */
union fds_control {
        char buf[CMSG_SPACE(sizeof(int) * RTN_MAX_PASS_FDS)];
        struct cmsghdr align;
};

/* msg's iovec is {buf, len}; with fds, its control message passes them (c holds it). */
static void fill_msg(struct msghdr *msg, struct iovec *iov, union fds_control *c, const void *buf,
                     size_t len, const int *fds, size_t nfds) {
        *iov = (struct iovec){.iov_base = (void *)buf, .iov_len = len};
        *msg = (struct msghdr){.msg_iov = iov, .msg_iovlen = 1};
        if (nfds == 0)
                return;
        memset(c, 0, sizeof *c);
        msg->msg_control = c->buf;
        msg->msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *h = CMSG_FIRSTHDR(msg);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(h), fds, sizeof(int) * nfds);
}

ssize_t rtn_send_msg(int sock, const void *buf, size_t len, const int *fds, size_t nfds) {
        if (nfds > RTN_MAX_PASS_FDS)
                return -EINVAL;
        union fds_control c;
        struct iovec iov;
        struct msghdr msg;
        fill_msg(&msg, &iov, &c, buf, len, fds, nfds);
        for (;;) {
                ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
                if (n >= 0)
                        return n;
                if (errno != EINTR)
                        return negative_errno();
        }
}

int rtn_send_msgs(int sock, const struct rtn_out_msg *m, size_t n) {
        struct mmsghdr mm[RTN_MAX_BATCH];
        struct iovec iov[RTN_MAX_BATCH];
        union fds_control c[RTN_MAX_BATCH];
        if (n > RTN_MAX_BATCH)
                return -EINVAL;
        memset(mm, 0, sizeof mm); /* msghdr's padding under musl too (sys_sendmmsg) */
        for (size_t i = 0; i < n; i++) {
                if (m[i].nfds > RTN_MAX_PASS_FDS)
                        return -EINVAL;
                fill_msg(&mm[i].msg_hdr, &iov[i], &c[i], m[i].buf, m[i].len, m[i].fds, m[i].nfds);
        }
        for (size_t done = 0; done < n;) {
                int r = sys_sendmmsg(sock, mm + done, (unsigned)(n - done), MSG_NOSIGNAL);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                done += (size_t)r;
        }
        return 0;
}

ssize_t rtn_recv_msg(int sock, void *buf, size_t len, int *fds, size_t *nfds) {
        size_t cap = nfds ? *nfds : 0;
        if (cap > RTN_MAX_PASS_FDS)
                cap = RTN_MAX_PASS_FDS;
        /* Every return says how many fds it filled in, errors too: a caller that closes
         * fds[0..*nfds) must never see its own capacity come back (it once closed fd 0, the
         * MCP server's stdin, with a stale stack value after a reset control socket). */
        if (nfds)
                *nfds = 0;
        union {
                char buf[CMSG_SPACE(sizeof(int) * RTN_MAX_PASS_FDS)];
                struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = buf, .iov_len = len};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof u.buf};
        ssize_t n;
        bool reset = false;
        /* A peer that closes with our messages unread posts ECONNRESET, and a SOCK_SEQPACKET
         * read reports it ahead of what the peer had sent before closing: a sandbox's
         * SETUP_FAILED, saying why, lay behind it. The read that reports the error clears
         * it, so read once more for them. */
        while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0) {
                if (errno == ECONNRESET && !reset)
                        reset = true;
                else if (errno != EINTR)
                        return negative_errno();
        }
        size_t got = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                int tmp[RTN_MAX_PASS_FDS];
                memcpy(tmp, CMSG_DATA(c), k * sizeof(int));
                for (size_t i = 0; i < k; i++) {
                        if (got < cap)
                                fds[got++] = tmp[i];
                        else
                                close(tmp[i]); /* more than asked for: never leak them */
                }
        }
        if (nfds)
                *nfds = got;
        /* Nothing was queued behind a reset (or an empty datagram was, whose fds are
         * dropped with it), or the message did not fit. */
        if ((n == 0 && reset) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                for (size_t i = 0; i < got; i++)
                        close(fds[i]);
                if (nfds)
                        *nfds = 0;
                return n == 0 && reset ? -ECONNRESET : -EMSGSIZE;
        }
        return n;
}

int rtn_fd_nonblock(int fd, int on) {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0)
                return negative_errno();
        int nfl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
        if (nfl != fl && fcntl(fd, F_SETFL, nfl) < 0)
                return negative_errno();
        return 0;
}

void *rtn_stack_new(size_t size) {
        long page = sysconf(_SC_PAGESIZE);
        char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                       -1, 0);
        if (m == MAP_FAILED)
                return NULL;
        if (mprotect(m, (size_t)page, PROT_NONE) < 0) {
                int e = errno;
                munmap(m, size);
                errno = e;
                return NULL;
        }
        return m + size;
}

void rtn_random_hex(char *buf, size_t n) {
        static const char digits[] = "0123456789abcdef";
        unsigned char rnd[64];
        for (size_t i = 0; i < n; i += sizeof rnd) {
                size_t k = n - i < sizeof rnd ? n - i : sizeof rnd;
                if (getrandom(rnd, k, 0) != (ssize_t)k)
                        abort(); /* the kernel's CSPRNG never fails once seeded */
                for (size_t j = 0; j < k; j++) {
                        buf[2 * (i + j)] = digits[rnd[j] >> 4];
                        buf[2 * (i + j) + 1] = digits[rnd[j] & 15];
                }
        }
        buf[2 * n] = '\0';
}

bool rtn_fd_passable(int fd) {
        struct stat st;
        struct statfs sf;
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || (fl & O_PATH) || fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0)
                return false;
        return (S_ISFIFO(st.st_mode) && sf.f_type == PIPEFS_MAGIC) || /* not a named FIFO */
               (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)); /* /dev/null */
}
