/* The command line's convention (common/usage.h). */
#include "common/exitcode.h"
#include "common/usage.h"

#include <stdarg.h>
#include <stdio.h>

#include "common/term.h"

void rtn_usage_prog(char **argv, const char *verb) {
        static char prog[64];
        snprintf(prog, sizeof prog, "rtn %s", verb);
        argv[0] = prog;
}

int rtn_usage_error(const char *verb, const char *fmt, ...) {
        if (fmt) {
                char msg[1024];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(msg, sizeof msg, fmt, ap);
                va_end(ap);
                rtn_term_printf(stderr, "rtn %s: %s\n", verb, msg);
        }
        fprintf(stderr, "Try 'rtn %s --help'.\n", verb);
        return RTN_EXIT_FAILURE;
}

int rtn_usage_help(const char *text) {
        fputs(text, stdout);
        return 0;
}
