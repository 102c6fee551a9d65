/* The error type every module fills on failure: a fixed-size message built up as it rises
 * (crun's crun_error_wrap), an errno, and nothing allocated, so it works between clone3 and
 * execve and inside rtn-init. Functions return >= 0 on success and -errno on failure; entry
 * points additionally describe the failure in a struct rtn_error. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

#define RTN_ERROR_MAX 1024

struct rtn_error {
        int code; /* positive errno, 0 when unset */
        char msg[RTN_ERROR_MAX]; /* "what failed: strerror (detail)" */
};

/* Set err to "<fmt>: <strerror(code)>" and return -code. code may be given as either
 * sign. err may be NULL (the return value still carries the errno). */
int rtn_err(struct rtn_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Like rtn_err but without appending strerror: for failures that are not a syscall's. */
int rtn_errx(struct rtn_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Prefix the existing message with "<fmt>: " and return -err->code (crun_error_wrap). */
int rtn_err_wrap(struct rtn_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void rtn_err_clear(struct rtn_error *err) {
        if (err) {
                err->code = 0;
                err->msg[0] = '\0';
        }
}

/* -errno of the last libc call, for "return negative_errno();" right at the call site. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EINVAL;
}
