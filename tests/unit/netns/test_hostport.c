/* Whose listener a port is (netns/hostport.c, netns_port_rtns) while the processes around it
 * change: a process called rtn that has exited but is not yet reaped, one that is exiting,
 * one whose descriptors cannot be read, one whose main thread is gone while another thread
 * holds the listener. A reader without privileges over those processes sees their
 * /proc/PID/fd refused, so each case runs as the test's user, and as nobody too when the
 * test runs as root (root reads every /proc/PID/fd). Results leave each case's child as its
 * exit status: netns_port_rtns's answer, or SETUP_FAILED. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "netns/netns.h"

#define SETUP_FAILED 90
#define NOBODY 65534

static int listen_any(uint16_t *port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (s < 0 || bind(s, (void *)&a, sizeof a) < 0 || listen(s, 8) < 0 ||
            getsockname(s, (void *)&a, &len) < 0)
                return -1;
        *port = ntohs(a.sin_port);
        return s;
}

/* Waits (at most 5 s) until /proc/pid/stat shows state; whether it did. */
static bool wait_state(pid_t pid, char state) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        for (int i = 0; i < 500; i++) {
                ssize_t n = rtn_read_file_at(AT_FDCWD, path, buf, sizeof buf - 1);
                if (n > 0) {
                        buf[n] = '\0';
                        const char *c = strrchr(buf, ')');
                        if (c && c[1] == ' ' && c[2] == state)
                                return true;
                }
                nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        }
        return false;
}

/* The answer for port, as an exit status (2 for an error). */
static int answer(uint16_t port) {
        int r = netns_port_rtns(port);
        return r < 0 ? 2 : r;
}

/* A child called rtn that has exited, not yet reaped, of the listener's user: it holds
 * nothing (a zombie's descriptors are closed), though /proc/PID/fd refuses to be read. */
static int zombie_rtn(void) {
        uint16_t port;
        int l = listen_any(&port);
        if (l < 0)
                return SETUP_FAILED;
        pid_t z = fork();
        if (z == 0) {
                prctl(PR_SET_NAME, "rtn");
                _exit(0);
        }
        if (z < 0 || !wait_state(z, 'Z'))
                return SETUP_FAILED;
        int r = answer(port);
        waitpid(z, NULL, 0);
        return r;
}

/* The only holder of the listener is a live process called rtn that no one but root may
 * read (non-dumpable, as a setuid or setcap rtn would be): it counts as rtn's. */
static int unreadable_rtn_holder(void) {
        uint16_t port;
        int l = listen_any(&port), p[2];
        if (l < 0 || pipe2(p, O_CLOEXEC) < 0)
                return SETUP_FAILED;
        pid_t h = fork();
        if (h == 0) {
                prctl(PR_SET_NAME, "rtn");
                prctl(PR_SET_DUMPABLE, 0);
                (void)!write(p[1], "x", 1);
                pause();
                _exit(0);
        }
        char c;
        close(l);
        if (h < 0 || read(p[0], &c, 1) != 1)
                return SETUP_FAILED;
        int r = answer(port);
        kill(h, SIGKILL);
        waitpid(h, NULL, 0);
        return r;
}

static void *hold(void *arg) {
        (void)arg;
        for (;;)
                pause();
        return NULL;
}

/* A process called rtn whose main thread has exited while another thread lives on, with the
 * listener in their shared table: a zombie leader whose process still holds it. */
static int rtn_leader_gone_thread_holds(void) {
        uint16_t port;
        int l = listen_any(&port);
        if (l < 0)
                return SETUP_FAILED;
        pid_t h = fork();
        if (h == 0) {
                pthread_t t;
                prctl(PR_SET_NAME, "rtn");
                if (pthread_create(&t, NULL, hold, NULL) != 0)
                        _exit(SETUP_FAILED);
                pthread_exit(NULL);
        }
        close(l);
        if (h < 0 || !wait_state(h, 'Z'))
                return SETUP_FAILED;
        int r = answer(port);
        kill(h, SIGKILL);
        waitpid(h, NULL, 0);
        return r;
}

/* fn in a child process, as nobody when as_nobody (the test runs as root); its exit status. */
static int run_as(int (*fn)(void), bool as_nobody) {
        pid_t pid = fork();
        if (pid == 0) {
                if (as_nobody && (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                                  setresuid(NOBODY, NOBODY, NOBODY) < 0))
                        _exit(SETUP_FAILED);
                /* the credential change made this process non-dumpable, and its children with
                 * it: they must be as readable as any of the user's */
                prctl(PR_SET_DUMPABLE, 1);
                _exit(fn());
        }
        int st = 0;
        cr_assert(pid > 0 && waitpid(pid, &st, 0) == pid);
        cr_assert(WIFEXITED(st), "the case's process died: %d", st);
        return WEXITSTATUS(st);
}

/* This suite's cases make processes called rtn of the test's user, and one that cannot be
 * read holds every listener of that user (the answer fails closed): criterion runs cases in
 * parallel, so one case's would be counted in another's answer. They take turns, holding
 * an abstract socket's name (no file to leave behind), per user. */
static int take_turn(void) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "rtn-unit-port-rtns-%u", geteuid());
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(fd, 0, "socket: %m");
        while (bind(fd, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + n) <
               0) {
                cr_assert_eq(errno, EADDRINUSE, "bind: %m");
                usleep(10000);
        }
        return fd;
}

/* fn's answer must be want as the test's user, and as nobody when that user is root. */
static void expect(int (*fn)(void), int want, const char *what) {
        _cleanup_close_ int turn = take_turn();
        int r = run_as(fn, false);
        cr_assert_neq(r, SETUP_FAILED);
        cr_assert_eq(r, want, "%s: netns_port_rtns gave %d (as uid %u)", what, r, geteuid());
        if (geteuid() != 0)
                return;
        r = run_as(fn, true);
        cr_assert_neq(r, SETUP_FAILED);
        cr_assert_eq(r, want, "%s: netns_port_rtns gave %d (as nobody)", what, r);
}

Test(netns_port_rtns, zombie_rtn_holds_nothing) {
        /* a few, each a new zombie beside the listener of the same user */
        for (int i = 0; i < 3; i++)
                expect(zombie_rtn, 0, "an exited rtn not yet reaped");
}

Test(netns_port_rtns, unreadable_rtn_holder_counts) {
        expect(unreadable_rtn_holder, 1, "a non-dumpable rtn holding the listener");
}

Test(netns_port_rtns, rtn_whose_main_thread_exited_counts) {
        expect(rtn_leader_gone_thread_holds, 1, "an rtn whose other thread holds the listener");
}
