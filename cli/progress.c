/* Phase lines of the long verbs (cli/progress.h). */
#include "cli/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/term.h"

void cli_progress_init(struct cli_progress *p, const char *prog) {
        p->prog = prog;
        p->start_usec = rtn_now_usec();
        p->on = isatty(STDERR_FILENO) || rtn_log_get_level() <= RTN_LOG_INFO;
}

void cli_progress_line(struct cli_progress *p, const char *fmt, ...) {
        if (!p->on)
                return;
        char what[1024];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        uint64_t secs = (rtn_now_usec() - p->start_usec) / RTN_USEC_PER_SEC;
        /* what may quote names the user or a mirror chose: terminal-safe text. */
        rtn_term_printf(stderr, "%s: %s (%llu s)\n", p->prog, what, (unsigned long long)secs);
        fflush(stderr);
}

void cli_progress_phase(void *ud, const char *what) {
        cli_progress_line(ud, "%s", what);
}
