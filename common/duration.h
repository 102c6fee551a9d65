/* A duration on the command line (`--timeout`, `--idle-timeout`): its one parser and its one
 * limit. Inside the program a duration is microseconds (docs/HACKING.md, "Units"). */
#pragma once

#include <stdint.h>

#include "common/err.h"

#define RTN_USEC_PER_SEC 1000000ULL
/* The longest duration an option takes: a year. */
#define RTN_DURATION_MAX_SEC (365ULL * 86400)
#define RTN_DURATION_MAX_USEC (RTN_DURATION_MAX_SEC * RTN_USEC_PER_SEC)

/* Parses option opt's value (opt: "--timeout", for the message) into *ret_usec, as people
 * write a duration: seconds ("90", "1.5"), or components with a unit, largest first, each
 * once ("500ms", "30s", "5m", "1h", "1h30m", "2d"; a fraction in each: "1.5h"). Above 0 and at
 * most a year (RTN_DURATION_MAX_USEC). No sign, blank, exponent, hex or bare trailing number
 * ("1m30"). A bad value is EINVAL (ERANGE past a year) with a message naming opt and the
 * value; *ret_usec is written only on success. */
int rtn_duration_opt(const char *opt, const char *arg, uint64_t *ret_usec, struct rtn_error *err);

/* usec as seconds for a message ("1 s", "1.5 s"), in buf; returns buf. */
#define RTN_DURATION_BUF 32
const char *rtn_duration_format(uint64_t usec, char buf[RTN_DURATION_BUF]);
