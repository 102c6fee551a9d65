/* What the fuzz targets of the sandbox's side of the trust boundary share (docs/fuzzing.md):
 * they play rtn-init (or its file server) on the far end of a real SOCK_SEQPACKET socket pair
 * and feed rtn's real receiving code, so lengths, truncation (MSG_TRUNC) and the fds that
 * ride along (SCM_RIGHTS) all go through the kernel as they would from a sandbox. The input
 * is read as a small script: bytes, little-endian u16 lengths, and datagrams, each with a
 * control byte that says what fd to attach and whether to patch its header. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/json.h"
#include "common/initproto.h"
#include "runtime/sandbox/blocked.h"

struct fuzz_in {
        const uint8_t *p;
        size_t n;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in) {
        if (!in->n)
                return 0;
        in->n--;
        return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in) {
        uint16_t lo = fuzz_u8(in);
        return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_in *in) {
        uint32_t lo = fuzz_u16(in);
        return lo | (uint32_t)fuzz_u16(in) << 16;
}

/* Up to want bytes of the input; returns how many *ret points at. */
static inline size_t fuzz_take(struct fuzz_in *in, size_t want, const uint8_t **ret) {
        size_t k = want < in->n ? want : in->n;
        *ret = in->p;
        in->p += k;
        in->n -= k;
        return k;
}

/* fds the sandbox's side holds during one input; all closed at its end. */
#define FUZZ_HELD_MAX 128
struct fuzz_held {
        int fd[FUZZ_HELD_MAX];
        int n;
};

static inline void fuzz_hold(struct fuzz_held *h, int fd) {
        if (fd < 0)
                return;
        if (h->n < FUZZ_HELD_MAX)
                h->fd[h->n++] = fd;
        else
                close(fd);
}

static inline void fuzz_release(struct fuzz_held *h) {
        while (h->n > 0)
                close(h->fd[--h->n]);
}

/* The kinds of fd a sandbox can attach to a message. Those with a far end (pipes, sockets)
 * keep it in h, so a read of the fd blocks instead of seeing EOF, as it would when the
 * sandbox holds the other end. */
enum {
        FUZZ_FD_NONE,
        FUZZ_FD_MEMFD, /* a regular file */
        FUZZ_FD_PIPE_READ, /* a pipe whose writer stays open */
        FUZZ_FD_PIPE_WRITE,
        FUZZ_FD_SOCKET, /* one end of a SOCK_SEQPACKET pair: what FILES_STARTED sends */
        FUZZ_FD_STREAM, /* one end of a SOCK_STREAM pair */
        FUZZ_FD_DIR,
        FUZZ_FD_EVENTFD,
        FUZZ_FD_LISTEN, /* a listening TCP socket on 127.0.0.1: what GATE sends */
        FUZZ_FD_KINDS
};

static inline int fuzz_make_fd(unsigned kind, struct fuzz_held *h) {
        int p[2], fd = -1;
        switch (kind % FUZZ_FD_KINDS) {
        case FUZZ_FD_MEMFD:
                fd = memfd_create("fuzz", MFD_CLOEXEC);
                if (fd >= 0 && write(fd, "content\n", 8) != 8) {
                        close(fd);
                        fd = -1;
                }
                break;
        case FUZZ_FD_PIPE_READ:
        case FUZZ_FD_PIPE_WRITE:
                if (pipe2(p, O_CLOEXEC) < 0)
                        return -1;
                fd = p[kind % FUZZ_FD_KINDS == FUZZ_FD_PIPE_READ ? 0 : 1];
                fuzz_hold(h, p[kind % FUZZ_FD_KINDS == FUZZ_FD_PIPE_READ ? 1 : 0]);
                break;
        case FUZZ_FD_SOCKET:
        case FUZZ_FD_STREAM:
                if (socketpair(AF_UNIX,
                               (kind % FUZZ_FD_KINDS == FUZZ_FD_SOCKET ? SOCK_SEQPACKET
                                                                       : SOCK_STREAM) |
                                       SOCK_CLOEXEC,
                               0, p) < 0)
                        return -1;
                fd = p[0];
                fuzz_hold(h, p[1]);
                break;
        case FUZZ_FD_DIR:
                fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                break;
        case FUZZ_FD_EVENTFD:
                fd = eventfd(0, EFD_CLOEXEC);
                break;
        case FUZZ_FD_LISTEN: {
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0 &&
                    (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 1) < 0)) {
                        close(fd);
                        fd = -1;
                }
                break;
        }
        default:
                break;
        }
        return fd;
}

/* A datagram from the input: control byte (bits 0-3 the fd kind, bit 4 patch hdr.len to
 * the length, bit 5 patch hdr.type to type, bit 6 patch hdr.id to id), u16 length, bytes.
 * The patches let the fuzzer past the header checks without having to guess them. */
#define FUZZ_DGRAM_MAX (INIT_MSG_MAX + 64)
struct fuzz_dgram {
        uint8_t buf[FUZZ_DGRAM_MAX];
        size_t len;
        unsigned fd_kind;
};

static inline void fuzz_dgram(struct fuzz_in *in, uint32_t type, uint64_t id,
                              struct fuzz_dgram *d) {
        uint8_t ctl = fuzz_u8(in);
        size_t want = fuzz_u16(in);
        const uint8_t *p;
        d->len = fuzz_take(in, want, &p);
        memcpy(d->buf, p, d->len);
        d->fd_kind = ctl & 15;
        struct init_msg_hdr h;
        if (d->len < sizeof h)
                return;
        memcpy(&h, d->buf, sizeof h);
        if (ctl & 16)
                h.len = (uint32_t)d->len;
        if (ctl & 32)
                h.type = type;
        if (ctl & 64)
                h.id = id;
        memcpy(d->buf, &h, sizeof h);
}

/* Sends d on sock with its fd (made now; the receiver owns its copy). */
static inline void fuzz_send(int sock, const struct fuzz_dgram *d, struct fuzz_held *h) {
        int fd = fuzz_make_fd(d->fd_kind, h);
        (void)rtn_send_msg(sock, d->buf, d->len, &fd, fd >= 0);
        if (fd >= 0)
                close(fd);
}

/* Sends a message built by the target (a well-formed one, to reach the states behind it). */
static inline void fuzz_send_raw(int sock, const void *buf, size_t len, unsigned fd_kind,
                                 struct fuzz_held *h) {
        int fd = fuzz_make_fd(fd_kind, h);
        (void)rtn_send_msg(sock, buf, len, &fd, fd >= 0);
        if (fd >= 0)
                close(fd);
}

/* Open fds of this process: a target checks the count is back where it was after each input,
 * so an fd rtn received and dropped without closing is a finding (fuzz_fds_check lists what
 * is open before it aborts). */
static inline int fuzz_count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        int n = 0;
        if (!d)
                abort();
        for (struct dirent *e; (e = readdir(d));)
                n += e->d_name[0] != '.';
        closedir(d);
        return n - 1; /* the directory's own fd */
}

static inline void fuzz_fds_check(int before) {
        if (fuzz_count_fds() == before)
                return;
        DIR *d = opendir("/proc/self/fd");
        for (struct dirent *e; d && (e = readdir(d));) {
                char path[300], to[256] = "";
                snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
                (void)!readlink(path, to, sizeof to - 1);
                fprintf(stderr, "open fd %s -> %s\n", e->d_name, to);
        }
        fprintf(stderr, "%d fds open before the input\n", before);
        abort();
}

/* The oracle for everything rtn writes from what it decoded: the text is one valid JSON
 * value, and (counts, sizes, lines) no number in it is negative. */
static inline void fuzz_check_json(const struct rtn_json_buf *b) {
        struct rtn_json_doc d;
        if (b->err == -ENOMEM)
                return;
        if (b->err || rtn_json_parse(b->data, b->len, 1u << 22, 64, &d, NULL) < 0)
                abort();
        for (int i = 0; i < d.ntoks; i++)
                if (rtn_json_kind(&d, i) == 'd' && d.js[d.toks[i].start] == '-')
                        abort();
        rtn_json_doc_free(&d);
}

/* A decoded blocked-call report as rtn uses it: at most INIT_BLOCKED_MAX records whose counts
 * add up to at most the total, named syscalls, comms of printable ASCII, stderr lines that fit
 * rtn exec's buffer, JSON that parses. */
static inline void fuzz_check_blocked(const struct rt_blocked *b) {
        if (b->n > INIT_BLOCKED_MAX)
                abort();
        uint64_t sum = 0;
        for (uint32_t i = 0; i < b->n; i++) {
                const char *c = b->rec[i].comm;
                size_t cl = strnlen(c, sizeof b->rec[i].comm);
                if (cl == 0 || cl == sizeof b->rec[i].comm ||
                    strnlen(b->rec[i].syscall, sizeof b->rec[i].syscall) ==
                            sizeof b->rec[i].syscall)
                        abort();
                for (size_t k = 0; k < cl; k++)
                        if (c[k] < 0x20 || c[k] >= 0x7f)
                                abort();
                if (b->rec[i].count == 0 || b->rec[i].count > b->total - sum)
                        abort();
                sum += b->rec[i].count;
        }
        char line[256];
        for (uint32_t i = 0; i <= b->n + 1; i++)
                if (rt_blocked_line(b, i, line, sizeof line) >= (int)sizeof line)
                        abort();
        struct rtn_json_buf jb = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&jb);
        rt_blocked_json(&jb, b);
        rtn_json_obj_end(&jb);
        fuzz_check_json(&jb);
        rtn_json_buf_free(&jb);
}

/* ---- a session whose rtn-init is the target ------------------------------------------- */
#include "common/loop.h"
#include "runtime/internal.h"
#include "runtime/session/session.h"
#include "store/store.h"

static char fuzz_session_dir[64];

static void fuzz_session_cleanup(void) {
        char *slash = strrchr(fuzz_session_dir, '/');
        if (slash) {
                *slash = '\0';
                (void)store_rm_rf_at(AT_FDCWD, fuzz_session_dir);
        }
}

/* One session (and its loop) for the whole run, made on first use. Its spec has a hostname
 * rt_spec_check refuses, so should anything ever ask it to start a sandbox of its own (the
 * targets attach theirs first and never act once it is gone), that fails at once. */
static inline struct rt_session *fuzz_session(struct rtn_loop **ret_loop) {
        static struct rtn_loop *loop;
        static struct rt_session *s;
        static struct rt_session_config cfg;
        if (!s) {
                struct rtn_error err = {0};
                char tmpl[] = "/tmp/rtn-fuzz-XXXXXX";
                if (!mkdtemp(tmpl) || rtn_loop_new(&loop) < 0)
                        abort();
                signal(SIGPIPE, SIG_IGN); /* as rtn serve: a write to a closed pipe fails */
                snprintf(fuzz_session_dir, sizeof fuzz_session_dir, "%s/session", tmpl);
                atexit(fuzz_session_cleanup);
                rt_spec_init(&cfg.spec);
                cfg.spec.hostname = "not a hostname";
                cfg.session_dir = fuzz_session_dir;
                cfg.default_timeout_usec = 600000000;
                cfg.max_output = 4096;
                if (rt_session_new(loop, &cfg, &s, &err) < 0)
                        abort();
        }
        *ret_loop = loop;
        return s;
}

/* Hands the session a sandbox whose control socket is one end of a fresh pair; the other end
 * (non-blocking) is the target's rtn-init. */
static inline int fuzz_session_attach(struct rt_session *s) {
        int sv[2];
        struct rtn_error err = {0};
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
        (void)rtn_fd_nonblock(sv[1], 1);
        struct rt_sandbox sb = {.pid = -1,
                                .pidfd = -1,
                                .ctl = sv[0],
                                .gate_fd = -1,
                                .net_fd = -1,
                                .isolation = INIT_ISOLATION_FULL};
        snprintf(sb.home, sizeof sb.home, "/home/rtn");
        snprintf(sb.workspace, sizeof sb.workspace, "/workspace");
        if (rt_session_attach(s, &sb, &err) < 0)
                abort();
        (void)rt_session_take_crash(s);
        return sv[1];
}
