/* rtn-init's two threads. Every agent command gets the same policy, and setting it up in
 * each command's child was most of what a warm command cost beyond its own exec: the
 * credential changes (one per capability dropped), Landlock's restrict_self, and above all a
 * fresh seccomp filter (checked, converted, JIT-compiled, its action cache built) with its
 * listener handed over. In Linux all of these belong to a thread, not to a process:
 * credentials and the bounding set, no_new_privs, the Landlock domain, the seccomp filter
 * stack. So once configured, rtn-init's main thread, which runs the event loop, confines
 * itself exactly as an agent command's child does (init_confine_agent), and an agent
 * command's child, cloned from it, is born confined: what is left for it is setsid, stdio,
 * chdir and rlimits (init/spawn.c).
 *
 * Everything the agent may not do, the loop may not do either. The few things it needs
 * privilege for (provisioning spawns and signals to them, the gate, the file server,
 * killing everything) run on a second thread, started just before the main thread
 * confines itself, so it keeps rtn-init's credentials; it does nothing else: the loop hands
 * it the call and waits (init_privileged), so the two threads never touch rtn-init's state
 * at once. The loop runs as the agent's uid but is PID 1: signals from inside the
 * namespace that would stop or kill it are dropped (SIGNAL_UNKILLABLE), rtn-init is not
 * dumpable (and clears the flag again after the credential change, which resets it), so
 * neither ptrace nor /proc reaches either thread, and the filter refuses
 * prlimit on any process but the caller (tests/security/escape.c, proc1_threads,
 * signal_init, prlimit_init). Its filter's listener is shared by all the commands it starts
 * (init/notify.c tells their calls apart). Nothing the loop calls is one the filter
 * reports: the loop itself answers those, so such a call would wait for ever. In the
 * Landlock-only mode every command must be a Landlock domain of its own, and there, or
 * should the second thread not start, the loop stays unconfined and each command confines
 * itself (init/spawn.c). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
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

static void *serve(void *arg) {
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

int init_privileged_start(void) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rpc) < 0)
                return -1;
        pthread_attr_t attr;
        pthread_t thread;
        if (pthread_attr_init(&attr) != 0) {
                rpc[0] = rtn_safe_close(rpc[0]);
                rpc[1] = rtn_safe_close(rpc[1]);
                return -1;
        }
        /* It inherits our credentials and our signal mask (SIGCHLD stays blocked for
         * rtn-init's signalfd), and only waits on its socket until the loop calls. */
        int r = pthread_attr_setstacksize(&attr, 256 * 1024) == 0 &&
                                pthread_create(&thread, &attr, serve, NULL) == 0
                        ? 0
                        : -1;
        pthread_attr_destroy(&attr);
        if (r < 0) {
                rpc[0] = rtn_safe_close(rpc[0]);
                rpc[1] = rtn_safe_close(rpc[1]);
        }
        return r;
}

void init_loop_confined(void) {
        loop_thread = pthread_self();
        confined = true;
}

bool init_loop_is_confined(void) {
        return confined;
}
