/* Durations on the command line (common/duration.h). */
#include <errno.h>
#include <stdlib.h>

#include "common/duration.h"

int rtn_duration_opt(const char *opt, const char *arg, uint64_t *ret_usec, struct rtn_error *err) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] < '0' || arg[0] > '9' || v == 0 ||
            v > RTN_DURATION_MAX_SEC)
                return rtn_errx(err, EINVAL, "%s wants seconds (1..%llu): %s", opt,
                                RTN_DURATION_MAX_SEC, arg);
        *ret_usec = v * RTN_USEC_PER_SEC;
        return 0;
}
