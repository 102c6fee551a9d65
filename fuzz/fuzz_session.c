/* The control events of `rtn serve`'s session (runtime/session/session.c, on_ctl): SPAWNED,
 * SPAWN_FAILED, EXITED and BLOCKED for the commands it runs, FILES_STARTED routed to its
 * listener, and whatever else a compromised rtn-init sends, with or without fds. The target
 * attaches a sandbox to a real session on a real event loop (rt_session_attach) and plays its
 * rtn-init on the other end of the control socket: it reads the spawn requests and holds the
 * commands' pipes, and the input is a script of steps (start a command, send a datagram from
 * the input or a well-formed event for a command, write or close its output, run the loop,
 * kill or free a command, hang up). At the end the pipes are closed and the session stopped.
 * Oracles beyond the sanitizers: each command's callback runs at most once, and exactly once
 * unless it was freed first; an exit code is 0-255 and a signal below 128; a blocked-call
 * report passes fuzz_check_blocked; no fd is left open. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "fuzz/peer.h"

#define MAX_CMDS 8

struct slot {
        struct rt_cmd *c; /* NULL once freed */
        uint64_t id;
        int fds[3]; /* the command's stdin, stdout, stderr as rtn-init got them */
        int calls;
        bool freed_early;
};

static struct slot slots[MAX_CMDS];
static int nslots;
static struct fuzz_dgram d;

static void on_done(struct rt_cmd *c, void *ud) {
        struct slot *sl = ud;
        if (++sl->calls > 1 || sl->c != c)
                abort();
        int code = rt_cmd_exit_code(c), sig = rt_cmd_signal(c);
        if (code < 0 || code > 255 || sig < 0 || sig > 127)
                abort();
        fuzz_check_blocked(&c->blocked);
}

/* Reads what rtn sent rtn-init: spawn requests (their pipes are kept for the command) and
 * signals. */
static void drain(int fd, struct fuzz_held *held) {
        static char buf[INIT_MSG_MAX];
        for (;;) {
                int fds[3] = {-1, -1, -1};
                size_t nfds = 3;
                ssize_t n = rtn_recv_msg(fd, buf, sizeof buf, fds, &nfds);
                if (n <= 0)
                        return;
                struct init_msg_hdr h;
                memcpy(&h, buf, sizeof h);
                struct slot *sl = NULL;
                for (int i = 0; i < nslots; i++)
                        if (slots[i].id == h.id)
                                sl = &slots[i];
                for (size_t i = 0; i < nfds; i++) {
                        if (h.type == INIT_MSG_SPAWN && sl && nfds == 3 && sl->fds[i] < 0) {
                                sl->fds[i] = fds[i];
                                (void)rtn_fd_nonblock(fds[i], 1);
                        } else {
                                fuzz_hold(held, fds[i]);
                        }
                }
        }
}

static void run_cmd(struct rt_session *s, struct fuzz_in *in) {
        if (nslots == MAX_CMDS || !rt_session_alive(s))
                return;
        uint8_t how = fuzz_u8(in);
        struct slot *sl = &slots[nslots];
        struct rt_cmd_opts o = {.command = "true", .job = how & 1};
        if (how & 2) {
                o.stdin_data = "input\n";
                o.stdin_len = 6;
        }
        struct rtn_error err = {0};
        *sl = (struct slot){.fds = {-1, -1, -1}};
        if (rt_session_run(s, &o, on_done, sl, &sl->c, &err) < 0)
                return;
        sl->id = sl->c->id;
        nslots++;
}

static void send_event(int init, struct fuzz_in *in, struct fuzz_held *held) {
        static const uint32_t types[] = {INIT_MSG_SPAWNED, INIT_MSG_SPAWN_FAILED, INIT_MSG_EXITED,
                                         INIT_MSG_BLOCKED, INIT_MSG_FILES_STARTED};
        uint32_t type = types[fuzz_u8(in) % 5];
        uint64_t id = nslots ? slots[fuzz_u8(in) % nslots].id : 1;
        uint32_t a = fuzz_u32(in), b = fuzz_u32(in);
        union {
                struct init_spawned sp;
                struct init_status st;
                struct init_exited ex;
                struct init_blocked bl;
        } m;
        memset(&m, 0, sizeof m);
        size_t len = sizeof m.st;
        switch (type) {
        case INIT_MSG_SPAWNED:
                m.sp.pid = (int32_t)a;
                len = sizeof m.sp;
                break;
        case INIT_MSG_EXITED:
                m.ex.wait_status = (int32_t)a;
                m.ex.pid = (int32_t)b;
                len = sizeof m.ex;
                break;
        case INIT_MSG_BLOCKED:
                m.bl.nrec = a % (INIT_BLOCKED_MAX + 1);
                m.bl.total = b;
                for (uint32_t i = 0; i < m.bl.nrec; i++) {
                        m.bl.rec[i].nr = fuzz_u16(in);
                        m.bl.rec[i].pid = fuzz_u16(in);
                        m.bl.rec[i].count = 1 + fuzz_u8(in);
                        snprintf(m.bl.rec[i].comm, sizeof m.bl.rec[i].comm, "c%u", i);
                }
                len = sizeof m.bl;
                break;
        default: /* SPAWN_FAILED, FILES_STARTED */
                m.st.error = (int32_t)a;
                m.st.step = b;
                snprintf(m.st.message, sizeof m.st.message, "step failed");
                break;
        }
        m.sp.hdr = (struct init_msg_hdr){.type = type, .len = (uint32_t)len, .id = id};
        fuzz_send_raw(init, &m, len, fuzz_u8(in), held);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct rtn_loop *loop;
        struct rt_session *s = fuzz_session(&loop);
        struct fuzz_in in = {data, size};
        struct fuzz_held held = {0};
        int before = fuzz_count_fds();
        int init = fuzz_session_attach(s);
        nslots = 0;
        for (int steps = 0; in.n && steps < 64; steps++) {
                uint8_t op = fuzz_u8(&in);
                struct slot *sl = nslots ? &slots[fuzz_u8(&in) % nslots] : NULL;
                switch (op % 10) {
                case 0:
                        run_cmd(s, &in);
                        drain(init, &held);
                        break;
                case 1: {
                        static const uint32_t types[] = {INIT_MSG_SPAWNED, INIT_MSG_EXITED,
                                                         INIT_MSG_BLOCKED, INIT_MSG_SPAWN_FAILED};
                        fuzz_dgram(&in, types[op / 10 % 4], sl ? sl->id : 1, &d);
                        if (init >= 0)
                                fuzz_send(init, &d, &held);
                        break;
                }
                case 2:
                        if (init >= 0)
                                send_event(init, &in, &held);
                        break;
                case 3: {
                        const uint8_t *p;
                        size_t k = fuzz_take(&in, fuzz_u8(&in), &p);
                        if (sl && sl->fds[1 + (op / 10 & 1)] >= 0)
                                (void)!write(sl->fds[1 + (op / 10 & 1)], p, k);
                        break;
                }
                case 4:
                        for (int i = 0; sl && i < 3; i++)
                                sl->fds[i] = rtn_safe_close(sl->fds[i]);
                        break;
                case 5:
                        rtn_loop_run_once(loop, 0);
                        break;
                case 6:
                        if (sl && sl->c)
                                rt_cmd_kill(sl->c);
                        drain(init, &held);
                        break;
                case 7:
                        if (sl && sl->c) {
                                sl->freed_early = sl->calls == 0;
                                rt_cmd_free(sl->c);
                                sl->c = NULL;
                        }
                        break;
                case 8:
                        init = rtn_safe_close(init);
                        break;
                default:
                        if (init >= 0)
                                drain(init, &held);
                        break;
                }
        }
        /* The end: every pipe closed, the loop run until it has read them all, the session
         * stopped (every command still running ends), every command freed. */
        if (init >= 0)
                drain(init, &held);
        for (int i = 0; i < nslots; i++)
                for (int k = 0; k < 3; k++)
                        slots[i].fds[k] = rtn_safe_close(slots[i].fds[k]);
        fuzz_release(&held);
        for (int i = 0; i < 16; i++)
                rtn_loop_run_once(loop, 0);
        rt_session_stop(s);
        rtn_safe_close(init);
        for (int i = 0; i < 16; i++)
                rtn_loop_run_once(loop, 0);
        for (int i = 0; i < nslots; i++) {
                if (slots[i].c && slots[i].calls != 1)
                        abort(); /* a command the session stopped was never answered */
                if (!slots[i].c && !slots[i].freed_early && slots[i].calls != 1)
                        abort();
                rt_cmd_free(slots[i].c);
        }
        for (int i = 0; i < 16; i++)
                rtn_loop_run_once(loop, 0);
        if (rt_session_running(s) != 0)
                abort();
        fuzz_fds_check(before);
        return 0;
}
