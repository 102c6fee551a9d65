/* A duration on the command line (`--timeout`, `--idle-timeout`): its one parser and its one
 * limit. Inside the program a duration is microseconds (docs/HACKING.md, "Units"). */
#pragma once

#include <stdint.h>

#include "common/err.h"

#define RTN_USEC_PER_SEC 1000000ULL
/* The longest duration an option takes: a year. */
#define RTN_DURATION_MAX_SEC (365ULL * 86400)
#define RTN_DURATION_MAX_USEC (RTN_DURATION_MAX_SEC * RTN_USEC_PER_SEC)

/* Parses option opt's value (opt: "--timeout", for the message) into *ret_usec: whole
 * seconds, 1 to RTN_DURATION_MAX_SEC. A bad value is EINVAL with a message naming opt and
 * the value; *ret_usec is written only on success. */
int rtn_duration_opt(const char *opt, const char *arg, uint64_t *ret_usec, struct rtn_error *err);
