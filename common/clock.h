/* Time in rtn's one unit inside the program, microseconds (docs/HACKING.md, "Units"): the
 * factors to and from the units at the edges, and the monotonic clock read in that unit. */
#pragma once

#include <stdint.h>
#include <time.h>

#define RTN_USEC_PER_SEC 1000000ULL
#define RTN_NSEC_PER_USEC 1000ULL
#define RTN_NSEC_PER_SEC 1000000000ULL

/* CLOCK_MONOTONIC in microseconds. */
static inline uint64_t rtn_now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * RTN_USEC_PER_SEC + (uint64_t)ts.tv_nsec / RTN_NSEC_PER_USEC;
}
