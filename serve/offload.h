/* Slow read-only work off the event loop. `rtn serve` has one loop thread for every client
 * message, every sandbox and every timer, so anything whose time the sandbox decides (a walk
 * of an upper the agent filled with a million files) must not run on it: ping and
 * cancellation would wait. A job runs on a thread of its own and its result is handed back
 * to the loop through a pipe, as serve/tools/http.c does for requests. At most
 * RT_OFFLOAD_THREADS jobs run at once; later ones wait in order. Where a seccomp profile
 * leaves no way to make a thread, a job runs on the loop instead (offload.c). */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>

struct rtn_loop;
struct rt_offload;

struct rt_offload_ops {
        /* On the job's thread: the slow part. It touches only what arg holds, and stops early
         * when *cancel becomes true. */
        void (*work)(void *arg, const atomic_bool *cancel);
        /* On the loop, once work returned: answer, then free arg. */
        void (*done)(void *arg);
        /* On the loop, at shutdown, for a job whose work has not returned: answer, and free
         * arg unless running (then its thread still uses arg, which stays with it until the
         * process exits). */
        void (*abandon)(void *arg, bool running);
};

#define RT_OFFLOAD_THREADS 4

int rt_offload_new(struct rtn_loop *loop, struct rt_offload **ret);
/* Queues a job; key (the MCP call, say) finds it again for rt_offload_cancel. */
int rt_offload_run(struct rt_offload *o, const struct rt_offload_ops *ops, void *arg,
                   const void *key);
/* Asks the job of key to stop early; its done still runs. False when there is none. */
bool rt_offload_cancel(struct rt_offload *o, const void *key);
/* Abandons every job (ops->abandon) and leaves the loop. */
void rt_offload_shutdown(struct rt_offload *o);
/* Frees everything, unless a thread is still running: then the process is about to exit and
 * its memory stays with it. */
void rt_offload_free(struct rt_offload *o);
