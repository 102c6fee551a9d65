/* Per-user kernel budgets (tests/security/budgets.sh):
 *   budget hold KIND   use up KIND inside the sandbox until the kernel refuses, print
 *                      "held KIND N: <errno>" and hold it all until killed.
 *   budget one KIND    take one more of KIND (on the host, as the sandbox's owner): print
 *                      "ok KIND" and exit 0, or "refused KIND: <errno>" and exit 1.
 * KIND: inotify (instances), watches (inotify watches), mqueue (POSIX message queue bytes,
 * RLIMIT_MSGQUEUE), sigpending (queued signals, RLIMIT_SIGPENDING), userns (unshare). */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TRIES 400000

/* One of KIND; 0 or the errno that refused it. */
static int take(const char *kind, long i) {
        static int wfd = -1;
        if (!strcmp(kind, "inotify"))
                return inotify_init1(IN_CLOEXEC) < 0 ? errno : 0;
        if (!strcmp(kind, "watches")) {
                if (wfd < 0 && (wfd = inotify_init1(IN_CLOEXEC)) < 0)
                        return errno;
                char path[64];
                snprintf(path, sizeof path, "%s/w%ld", getenv("WATCH_DIR") ?: "/tmp", i);
                int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
                if (fd < 0)
                        return errno;
                close(fd);
                int r = inotify_add_watch(wfd, path, IN_MODIFY) < 0 ? errno : 0;
                if (getenv("WATCH_DIR"))
                        unlink(path); /* the host's check: leave nothing behind */
                return r;
        }
        if (!strcmp(kind, "mqueue")) {
                char name[64];
                snprintf(name, sizeof name, "/rtn-budget-%d-%ld", (int)getpid(), i);
                struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 1024};
                mqd_t q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &a);
                if (q == (mqd_t)-1)
                        return errno;
                mq_unlink(name); /* the queue lives as long as it is open */
                return 0;
        }
        if (!strcmp(kind, "sigpending")) {
                union sigval v = {0};
                return sigqueue(getpid(), SIGRTMIN, v) < 0 ? errno : 0;
        }
        if (!strcmp(kind, "userns"))
                return unshare(CLONE_NEWUSER) < 0 ? errno : 0;
        return EINVAL;
}

int main(int argc, char **argv) {
        if (argc != 3)
                return 2;
        const char *kind = argv[2];
        sigset_t rt;
        sigemptyset(&rt);
        sigaddset(&rt, SIGRTMIN);
        sigprocmask(SIG_BLOCK, &rt, NULL); /* queued, never delivered */
        if (!strcmp(argv[1], "one")) {
                int e = take(kind, getpid());
                if (e)
                        printf("refused %s: %s\n", kind, strerror(e));
                else
                        printf("ok %s\n", kind);
                return e ? 1 : 0;
        }
        long n = 0;
        int e = 0;
        for (; n < MAX_TRIES && !(e = take(kind, n)); n++)
                ;
        printf("held %s %ld: %s\n", kind, n, e ? strerror(e) : "no limit met");
        fflush(stdout);
        for (;;)
                pause();
}
