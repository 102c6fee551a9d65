/* Formatting for struct rtn_error. Uses only vsnprintf and strerror_r's GNU form into stack
 * buffers (musl, which rtn-init may be built with, has a constant table behind strerror), so
 * it is safe to call in a forked child before execve. */
#include "common/err.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int vset(struct rtn_error *err, int code, int with_strerror, const char *fmt, va_list ap) {
        /* Codes can come from a peer (rtn-init's replies): INT_MIN has no positive form. */
        if (code < 0)
                code = code == INT_MIN ? EINVAL : -code;
        if (code == 0)
                code = EINVAL;
        if (!err)
                return -code;
        int saved = errno;
        int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        if (n < 0)
                n = 0;
        if (with_strerror && (size_t)n < sizeof err->msg) {
#ifdef __GLIBC__
                char buf[128];
                const char *s = strerror_r(code, buf, sizeof buf);
#else
                const char *s = strerror(code);
#endif
                snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", s);
        }
        err->code = code;
        errno = saved;
        return -code;
}

int rtn_err(struct rtn_error *err, int code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vset(err, code, 1, fmt, ap);
        va_end(ap);
        return r;
}

int rtn_errx(struct rtn_error *err, int code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vset(err, code, 0, fmt, ap);
        va_end(ap);
        return r;
}

int rtn_err_wrap(struct rtn_error *err, const char *fmt, ...) {
        if (!err)
                return -EINVAL;
        int code = err->code ? err->code : EINVAL;
        char prefix[RTN_ERROR_MAX];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        if (n < 0)
                n = 0;
        char old[RTN_ERROR_MAX];
        memcpy(old, err->msg, sizeof old);
        old[sizeof old - 1] = '\0';
        /* Truncation is fine: the message is for people and stays NUL-terminated. */
        size_t pl = strnlen(prefix, sizeof err->msg - 3);
        memcpy(err->msg, prefix, pl);
        memcpy(err->msg + pl, ": ", 2);
        size_t room = sizeof err->msg - pl - 2;
        size_t ol = strnlen(old, room - 1);
        memcpy(err->msg + pl + 2, old, ol);
        err->msg[pl + 2 + ol] = '\0';
        err->code = code;
        return -code;
}
