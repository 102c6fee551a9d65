/* Jobs on threads, results back on the loop (see offload.h). A finished thread writes its
 * job's pointer to a pipe the loop watches (atomic: less than PIPE_BUF), so done always runs
 * on the loop thread, between two events, like every other callback. */
#include "serve/offload.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/io.h"
#include "common/loop.h"

struct job {
        struct rt_offload *o;
        const struct rt_offload_ops *ops;
        void *arg;
        const void *key;
        atomic_bool cancel;
        bool running;
        struct job *next;
};

struct rt_offload {
        struct rtn_loop *loop;
        int pipe[2];
        struct job *jobs; /* running ones and, behind them in order, queued ones */
        unsigned running;
};

static void *job_main(void *p) {
        struct job *j = p;
        j->ops->work(j->arg, &j->cancel);
        (void)!write(j->o->pipe[1], &j, sizeof j);
        return NULL;
}

static int job_start(struct job *j) {
        pthread_attr_t at;
        pthread_t tid;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int r = pthread_create(&tid, &at, job_main, j);
        pthread_attr_destroy(&at);
        if (r != 0 && r != EPERM)
                return -r;
        j->running = true;
        j->o->running++;
        /* glibc makes threads with clone3 and falls back to clone only on ENOSYS: under a
         * seccomp profile that refuses clone3 with EPERM (one that denies user namespaces,
         * docs/containers.md) no thread can start, so the job runs here, on the loop, which
         * waits for it; done still runs from the pipe, as for a thread's. */
        if (r == EPERM)
                job_main(j);
        return 0;
}

static void unlink_job(struct rt_offload *o, struct job *j) {
        for (struct job **p = &o->jobs; *p; p = &(*p)->next)
                if (*p == j) {
                        *p = j->next;
                        return;
                }
}

/* Starts queued jobs while threads are free; a job whose thread cannot start is done at once
 * with nothing computed (its cancel flag set, so done can tell). */
static void start_queued(struct rt_offload *o) {
        for (struct job *j = o->jobs, *next; j && o->running < RT_OFFLOAD_THREADS; j = next) {
                next = j->next;
                if (j->running)
                        continue;
                if (job_start(j) < 0) {
                        atomic_store(&j->cancel, true);
                        unlink_job(o, j);
                        j->ops->done(j->arg);
                        free(j);
                }
        }
}

static void on_done(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        struct rt_offload *o = ud;
        struct job *j;
        while (read(fd, &j, sizeof j) == (ssize_t)sizeof j) {
                unlink_job(o, j);
                o->running--;
                j->ops->done(j->arg);
                free(j);
        }
        start_queued(o);
}

int rt_offload_new(struct rtn_loop *loop, struct rt_offload **ret) {
        struct rt_offload *o = calloc(1, sizeof *o);
        if (!o)
                return -ENOMEM;
        int r = pipe2(o->pipe, O_CLOEXEC | O_NONBLOCK) < 0 ? -errno : 0;
        if (r == 0 && (r = rtn_loop_add_fd(loop, o->pipe[0], EPOLLIN, on_done, o)) < 0) {
                close(o->pipe[0]);
                close(o->pipe[1]);
        }
        if (r < 0) {
                free(o);
                return r;
        }
        (void)rtn_fd_nonblock(o->pipe[1], 0); /* the threads' end may block, never drop */
        o->loop = loop;
        *ret = o;
        return 0;
}

int rt_offload_run(struct rt_offload *o, const struct rt_offload_ops *ops, void *arg,
                   const void *key) {
        if (!o->loop)
                return -ESHUTDOWN;
        struct job *j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        *j = (struct job){.o = o, .ops = ops, .arg = arg, .key = key};
        atomic_init(&j->cancel, false);
        struct job **p = &o->jobs;
        while (*p)
                p = &(*p)->next;
        *p = j;
        if (o->running < RT_OFFLOAD_THREADS) {
                int r = job_start(j);
                if (r < 0) {
                        unlink_job(o, j);
                        free(j);
                        return r;
                }
        }
        return 0;
}

bool rt_offload_cancel(struct rt_offload *o, const void *key) {
        for (struct job *j = o ? o->jobs : NULL; j; j = j->next)
                if (j->key == key) {
                        atomic_store(&j->cancel, true);
                        return true;
                }
        return false;
}

void rt_offload_shutdown(struct rt_offload *o) {
        if (!o || !o->loop)
                return;
        rtn_loop_del_fd(o->loop, o->pipe[0]);
        o->loop = NULL;
        for (struct job *j = o->jobs, *next; j; j = next) {
                next = j->next;
                atomic_store(&j->cancel, true);
                j->ops->abandon(j->arg, j->running);
                if (!j->running) {
                        unlink_job(o, j);
                        free(j);
                }
        }
}

void rt_offload_free(struct rt_offload *o) {
        if (!o)
                return;
        rt_offload_shutdown(o);
        if (o->running > 0)
                return;
        close(o->pipe[0]);
        close(o->pipe[1]);
        free(o);
}
