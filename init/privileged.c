/* rtn-init's two threads (init/main.c runs the loop on one of them). Every agent command
 * gets the same policy, and setting it up in each command's child was most of what a warm
 * command cost beyond its own exec: the credential changes (one per capability dropped),
 * Landlock's restrict_self, and above all a fresh seccomp filter (checked, converted,
 * JIT-compiled, its action cache built) with its listener handed over. In Linux all of these
 * belong to a thread, not to a process: credentials and the bounding set, no_new_privs, the
 * Landlock domain, the seccomp filter stack. So once configured, rtn-init runs its event
 * loop on a second thread that has confined itself exactly as an agent command's child does
 * (init_confine_agent), and an agent command's child, cloned from that thread, is born
 * confined: what is left for it is setsid, stdio, chdir and rlimits (init/spawn.c).
 *
 * Everything the agent may not do, the loop may not do either. The few things it needs
 * privilege for (provisioning spawns and signals to them, the gate, the file server,
 * killing everything) run on the first thread, which keeps rtn-init's credentials and does
 * nothing else: the loop hands it the call and waits (init_privileged), so the two threads
 * never touch rtn-init's state at once. The loop thread runs as the agent's uid but is part
 * of PID 1: signals from inside the namespace that would stop or kill it are dropped
 * (SIGNAL_UNKILLABLE), and rtn-init is not dumpable, so neither ptrace nor /proc reaches
 * it (tests/security/escape.c, proc1_threads and signal_init). Its filter's listener is
 * shared by all the commands it starts (init/notify.c tells their calls apart). Nothing
 * the loop calls is one the filter reports: the loop itself answers those, so such a call
 * would wait for ever. In the Landlock-only mode every command must be a Landlock domain
 * of its own, and there, or should the thread fail to confine itself, the first thread
 * runs the loop and each command confines itself, as before. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "init/internal.h"

static int rpc[2] = {-1, -1}; /* [0] the loop thread's end, [1] the privileged thread's */
static pthread_t loop_thread;
static bool confined; /* the loop runs on loop_thread, confined */

struct priv_call {
        void (*fn)(void *);
        void *arg;
};

void init_privileged(void (*fn)(void *), void *arg) {
        if (!confined || !pthread_equal(pthread_self(), loop_thread)) {
                fn(arg);
                return;
        }
        struct priv_call c = {.fn = fn, .arg = arg};
        char done;
        if (write(rpc[0], &c, sizeof c) != (ssize_t)sizeof c || read(rpc[0], &done, 1) != 1)
                _exit(1); /* the privileged thread is gone: so is the sandbox */
}

void init_privileged_serve(void) {
        for (;;) {
                struct priv_call c;
                ssize_t n = read(rpc[1], &c, sizeof c);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t)sizeof c)
                        _exit(1);
                c.fn(c.arg);
                if (write(rpc[1], "", 1) != 1)
                        _exit(1);
        }
}

int init_loop_confined(int result) {
        int32_t r = result;
        if (r == 0)
                confined = true; /* before the report: the privileged thread serves next */
        if (write(rpc[0], &r, sizeof r) != (ssize_t)sizeof r && r == 0)
                _exit(1);
        return r == 0 ? 0 : -1;
}

int init_loop_start(void *(*loop)(void *)) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rpc) < 0)
                return -1;
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0)
                return -1;
        /* It inherits our signal mask: SIGCHLD stays blocked for rtn-init's signalfd. */
        int r = pthread_attr_setstacksize(&attr, 256 * 1024) == 0 &&
                                pthread_create(&loop_thread, &attr, loop, NULL) == 0
                        ? 0
                        : -1;
        pthread_attr_destroy(&attr);
        int32_t result = -1;
        if (r == 0 && read(rpc[1], &result, sizeof result) != (ssize_t)sizeof result)
                _exit(1);
        if (r == 0 && result != 0)
                pthread_join(loop_thread, NULL);
        return r == 0 && result == 0 ? 0 : -1;
}
