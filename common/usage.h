/* The command line's one convention (docs/rtn.1, CONVENTIONS), shared by every verb of cli/
 * and by `rtn serve`'s entry in mcp/: --help and -h print the usage on stdout with 0; a
 * usage error prints "rtn VERB: MESSAGE" and "Try 'rtn VERB --help'." on stderr and exits
 * RTN_EXIT_FAILURE (common/exitcode.h); every other error of a verb is "rtn VERB: MESSAGE". */
#pragma once

#include "common/exitcode.h"

/* Names the program "rtn VERB" in getopt's own messages ("rtn log: unrecognized option
 * '--x'"): sets argv[0], which getopt prints, to a static copy. VERB may be two words
 * ("rootfs bootstrap"). */
void rtn_usage_prog(char **argv, const char *verb);

/* Prints "rtn VERB: MESSAGE" (none when fmt is NULL: getopt said it) and
 * "Try 'rtn VERB --help'." on stderr, escaped for the terminal; returns RTN_EXIT_FAILURE. */
int rtn_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints a verb's usage on stdout (--help, -h); returns 0. */
int rtn_usage_help(const char *text);
