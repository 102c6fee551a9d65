/* __attribute__((cleanup)) helpers, after systemd's fd-util.h and macro.h. Destructors accept
 * NULL/-1, preserve errno, and never retry close() on EINTR (the fd is gone either way on
 * Linux; retrying could close an fd another thread just got). Ownership is handed on with
 * TAKE_PTR / TAKE_FD. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void rtn_freep(void *p) {
        int saved = errno;
        free(*(void **)p);
        errno = saved;
}

static inline int rtn_safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void)close(fd);
                errno = saved;
        }
        return -1;
}

static inline void rtn_closep(int *fd) {
        *fd = rtn_safe_close(*fd);
}

static inline void rtn_fclosep(FILE **f) {
        if (*f) {
                int saved = errno;
                fclose(*f);
                errno = saved;
                *f = NULL;
        }
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(rtn_freep)
#define _cleanup_close_ _cleanup_(rtn_closep)
#define _cleanup_fclose_ _cleanup_(rtn_fclosep)
/* A pidfd is an fd; the name documents intent. */
#define _cleanup_pidfd_ _cleanup_(rtn_closep)

#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _tp_ = (p);                                                          \
                (p) = NULL;                                                                        \
                _tp_;                                                                              \
        })
#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _tf_ = (fd);                                                                   \
                (fd) = -1;                                                                         \
                _tf_;                                                                              \
        })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
