/* Test helper: run a check in a forked child that may confine itself (seccomp, Landlock,
 * capabilities) without confining criterion's own reporting. The child writes what went
 * wrong to a pipe opened before it confined itself; the parent returns the wait status and
 * the message for the test to assert on. */
#pragma once

#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct child_result {
        int status;
        char msg[1024];
};

/* In a child: report a failure and return 1 from the check function. */
#define CHILD_CHECK(fd, cond, ...)                                                                 \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        int e_ = errno;                                                            \
                        dprintf(fd, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
                        dprintf(fd, __VA_ARGS__);                                                  \
                        dprintf(fd, " (errno %d %s)\n", e_, strerror(e_));                         \
                        return 1;                                                                  \
                }                                                                                  \
        } while (0)

/* -1 with errno e, the way every denied call must look. */
#define CHILD_EXPECT_ERRNO(fd, call, e)                                                            \
        do {                                                                                       \
                errno = 0;                                                                         \
                long r_ = (long)(call);                                                            \
                int e2_ = errno;                                                                   \
                if (r_ != -1 || e2_ != (e)) {                                                      \
                        dprintf(fd, "%s:%d: %s returned %ld errno %d (%s), want %s\n", __FILE__,   \
                                __LINE__, #call, r_, e2_, strerror(e2_), #e);                      \
                        return 1;                                                                  \
                }                                                                                  \
        } while (0)

static inline struct child_result run_child(int (*fn)(int fd, void *arg), void *arg) {
        struct child_result res = {0};
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(p[0]);
                _exit(fn(p[1], arg));
        }
        close(p[1]);
        size_t off = 0;
        ssize_t n;
        while (off < sizeof res.msg - 1 &&
               (n = read(p[0], res.msg + off, sizeof res.msg - 1 - off)) > 0)
                off += (size_t)n;
        res.msg[off] = '\0';
        close(p[0]);
        cr_assert_eq(waitpid(pid, &res.status, 0), pid);
        return res;
}

/* The child exited 0 and said nothing. */
#define assert_child_ok(res)                                                                       \
        cr_assert(WIFEXITED((res).status) && WEXITSTATUS((res).status) == 0,                       \
                  "child failed (status 0x%x): %s", (res).status, (res).msg)
