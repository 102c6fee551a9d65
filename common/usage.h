/* The command line's one convention (docs/rtn.1, CONVENTIONS), shared by every verb of cli/
 * and by `rtn serve`'s entry in mcp/: --help and -h print the usage on stdout with 0; a
 * usage error prints "rtn VERB: MESSAGE" and "Try 'rtn VERB --help'." on stderr and exits
 * RTN_EXIT_USAGE; every other error of a verb is "rtn VERB: MESSAGE". */
#pragma once

/* rtn's own failure, usage errors included: docker's code for its own errors, which keeps
 * `rtn exec`'s 126, 127 and 128+N for the command (docs/rtn.1, EXIT STATUS). */
#define RTN_EXIT_USAGE 125

/* Names the program "rtn VERB" in getopt's own messages ("rtn log: unrecognized option
 * '--x'"): sets argv[0], which getopt prints, to a static copy. VERB may be two words
 * ("rootfs bootstrap"). */
void rtn_usage_prog(char **argv, const char *verb);

/* Prints "rtn VERB: MESSAGE" (none when fmt is NULL: getopt said it) and
 * "Try 'rtn VERB --help'." on stderr, escaped for the terminal; returns RTN_EXIT_USAGE. */
int rtn_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints a verb's usage on stdout (--help, -h); returns 0. */
int rtn_usage_help(const char *text);
