/* Phase lines of the verbs that run long (`rtn rootfs bootstrap`, `rtn pkg install`):
 * "rtn VERB: WHAT (N s)" on stderr as each step begins, when stderr is a terminal or
 * RTN_LOG asks for info or debug; nothing otherwise, so scripts and pipes stay quiet. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct cli_progress {
        const char *prog; /* "rtn rootfs" */
        uint64_t start_usec;
        bool on;
};

void cli_progress_init(struct cli_progress *p, const char *prog);
void cli_progress_line(struct cli_progress *p, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Adapter for a library callback void (*)(void *ud, const char *what). */
void cli_progress_phase(void *ud, const char *what);
