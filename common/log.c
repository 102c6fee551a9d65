/* stderr logger: one line per message, "prog: level: text". Writes with a single write(2)
 * so lines from concurrent processes do not interleave mid-line. */
#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/term.h"

static const char *log_prog = "rtn";
static enum rtn_log_level log_level = RTN_LOG_WARN;

int rtn_log_init(const char *prog) {
        static const char *const levels[] = {"debug", "info", "warn", "error"};
        log_prog = prog;
        const char *e = getenv("RTN_LOG");
        if (!e || !*e)
                return 0;
        for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
                if (!strcmp(e, levels[i])) {
                        log_level = (enum rtn_log_level)i;
                        return 0;
                }
        return -EINVAL; /* a typo must not silently keep the default */
}

void rtn_log_set_level(enum rtn_log_level lvl) {
        log_level = lvl;
}

enum rtn_log_level rtn_log_get_level(void) {
        return log_level;
}

void rtn_log(enum rtn_log_level lvl, const char *fmt, ...) {
        static const char *const names[] = {"debug", "info", "warning", "error"};
        if (lvl < log_level)
                return;
        int saved = errno;
        char msg[2048], buf[4096];
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        size_t mlen = m < 0 ? 0 : (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1;
        int n = snprintf(buf, sizeof buf, "%s: %s: ", log_prog, names[lvl]);
        if (n < 0 || (size_t)n >= sizeof buf)
                n = 0;
        /* Messages quote what the agent named (paths, process names): terminal-safe text. */
        size_t len = (size_t)n;
        (void)rtn_term_escape(msg, mlen, 0, buf + len, sizeof buf - len - 1);
        len += strlen(buf + len);
        buf[len++] = '\n';
        ssize_t w = write(STDERR_FILENO, buf, len);
        (void)w;
        errno = saved;
}
