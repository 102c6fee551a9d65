/* The file server's replies (runtime/session/file_client.c): FILES_STARTED on the control socket
 * with the server's socket, then one init_files_resp per request on that socket, which carries no
 * fd (the server writes into rtn's memfd). Both the server and rtn-init run inside the sandbox. The
 * target attaches a sandbox to a real session (rt_session_attach), makes a real rt_files client on
 * it and plays rtn-init and the server: the input is a script of steps (queue a request, run the
 * loop, read what rtn sent, answer a start well or from the input, answer the oldest request well
 * or from the input, with any kind of fd, close the server or rtn-init). At the end the
 * client is freed and the session stopped. Oracles beyond the sanitizers: every request is
 * answered exactly once; an answer has a NUL-terminated message (of reasonable length) and a
 * positive errno or none; no fd is left open, whatever fds the replies carried. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "fuzz/peer.h"
#include "runtime/session/file_client.h"

#define MAX_CALLS 16

struct call {
        uint32_t op;
        int answers;
};

static struct call calls[MAX_CALLS];
static int ncalls;
static uint64_t start_id; /* the last FILES_START rtn sent */
static struct {
        uint64_t id;
        uint32_t type;
} sent[64]; /* requests the server read, oldest first */
static int nsent;
static struct fuzz_dgram d;

static void on_reply(void *ud, const struct rt_files_reply *r) {
        struct call *c = ud;
        if (++c->answers > 1)
                abort();
        if (!r->message || strnlen(r->message, 4096) == 4096 || r->error < 0)
                abort();
}

static void queue_call(struct rt_files *f, struct fuzz_in *in) {
        if (ncalls == MAX_CALLS)
                return;
        uint8_t how = fuzz_u8(in);
        struct call *c = &calls[ncalls];
        struct rt_files_op op = {.op = INIT_FILES_READ + how % 4,
                                 .path = "file",
                                 .pattern = how & 4 ? "x" : NULL,
                                 .glob = how & 8 ? "*.c" : NULL,
                                 .depth = 2,
                                 .max = 10,
                                 .fd = memfd_create("fuzz-op", MFD_CLOEXEC)};
        *c = (struct call){.op = op.op};
        struct rtn_error err = {0};
        if (rt_files_call(f, &op, on_reply, c, &err) == 0)
                ncalls++;
        rtn_safe_close(op.fd);
}

/* What rtn sent on a socket: starts on the control socket, requests on the server's. */
static void drain(int fd, bool server, struct fuzz_held *held) {
        char buf[INIT_FILES_REQ_MAX];
        while (fd >= 0) {
                int fds[2] = {-1, -1};
                size_t nfds = 2;
                ssize_t n = rtn_recv_msg(fd, buf, sizeof buf, fds, &nfds);
                for (size_t i = 0; i < nfds; i++)
                        fuzz_hold(held, fds[i]);
                if (n < (ssize_t)sizeof(struct init_msg_hdr))
                        return;
                struct init_msg_hdr h;
                memcpy(&h, buf, sizeof h);
                if (!server && h.type == INIT_MSG_FILES_START)
                        start_id = h.id;
                if (server && nsent < 64) {
                        sent[nsent].id = h.id;
                        sent[nsent++].type = h.type;
                }
        }
}

static void answer_start(int init, int *srv, struct fuzz_in *in, struct fuzz_held *held) {
        uint8_t how = fuzz_u8(in);
        struct init_status st = {
                .hdr = {.type = INIT_MSG_FILES_STARTED, .len = sizeof st, .id = start_id},
                .error = how & 1 ? (int32_t)fuzz_u32(in) : 0};
        snprintf(st.message, sizeof st.message, "file server: no");
        int sv[2] = {-1, -1};
        if (!(how & 2) && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0) {
                (void)rtn_fd_nonblock(sv[1], 1);
                rtn_safe_close(*srv);
                *srv = sv[1];
                nsent = 0;
        }
        if (sv[0] >= 0) {
                (void)rtn_send_msg(init, &st, sizeof st, &sv[0], 1);
                close(sv[0]);
        } else {
                fuzz_send_raw(init, &st, sizeof st, how >> 2, held);
        }
}

static void answer_request(int srv, struct fuzz_in *in, struct fuzz_held *held) {
        uint8_t how = fuzz_u8(in);
        struct init_files_resp m = {.hdr = {.len = sizeof m}};
        if (nsent) {
                m.hdr.id = sent[0].id;
                m.hdr.type = sent[0].type;
                memmove(sent, sent + 1, --nsent * sizeof sent[0]);
        }
        if (how & 1)
                m.error = (int32_t)fuzz_u32(in);
        if (how & 2)
                m.hdr.id = 0; /* the server's last words */
        if (how & 4)
                m.flags = fuzz_u32(in);
        m.size = fuzz_u16(in);
        m.count = fuzz_u16(in);
        const uint8_t *p;
        size_t k = fuzz_take(in, how & 8 ? sizeof m.message : 16, &p);
        memcpy(m.message, p, k);
        fuzz_send_raw(srv, &m, sizeof m, how >> 4, held);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct rtn_loop *loop;
        struct rt_session *s = fuzz_session(&loop);
        struct fuzz_in in = {data, size};
        struct fuzz_held held = {0};
        int before = fuzz_count_fds();
        int init = fuzz_session_attach(s), srv = -1;
        struct rt_files *f;
        if (rt_files_new(loop, s, &f) < 0)
                abort();
        ncalls = nsent = 0;
        start_id = 0;
        for (int steps = 0; in.n && steps < 64; steps++) {
                uint8_t op = fuzz_u8(&in);
                switch (op % 10) {
                case 0:
                        if (rt_session_alive(s))
                                queue_call(f, &in);
                        break;
                case 1:
                case 2:
                        rtn_loop_run_once(loop, 0);
                        break;
                case 3:
                        drain(init, false, &held);
                        drain(srv, true, &held);
                        break;
                case 4:
                        if (init >= 0)
                                answer_start(init, &srv, &in, &held);
                        break;
                case 5:
                        fuzz_dgram(&in, INIT_MSG_FILES_STARTED, start_id, &d);
                        if (init >= 0)
                                fuzz_send(init, &d, &held);
                        break;
                case 6:
                        if (srv >= 0)
                                answer_request(srv, &in, &held);
                        break;
                case 7:
                        fuzz_dgram(&in, nsent ? sent[0].type : INIT_FILES_READ,
                                   nsent ? sent[0].id : 1, &d);
                        if (srv >= 0)
                                fuzz_send(srv, &d, &held);
                        break;
                case 8:
                        srv = rtn_safe_close(srv);
                        break;
                default:
                        init = rtn_safe_close(init);
                        break;
                }
        }
        rt_files_free(f);
        rt_session_stop(s);
        rtn_safe_close(init);
        rtn_safe_close(srv);
        fuzz_release(&held);
        for (int i = 0; i < 8; i++)
                rtn_loop_run_once(loop, 0);
        for (int i = 0; i < ncalls; i++)
                if (calls[i].answers != 1)
                        abort();
        fuzz_fds_check(before);
        return 0;
}
