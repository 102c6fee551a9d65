/* Durations on the command line (common/duration.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/duration.h"

/* The units a component may carry, longest spelling first ("ms" before "m"). */
static const struct {
        const char *name;
        uint64_t usec;
} units[] = {
        {"ms", 1000},
        {"s", RTN_USEC_PER_SEC},
        {"m", 60 * RTN_USEC_PER_SEC},
        {"h", 3600 * RTN_USEC_PER_SEC},
        {"d", 86400 * RTN_USEC_PER_SEC},
};
#define NUNITS (sizeof units / sizeof units[0])
#define FRAC_DIGITS 9 /* beyond a nanosecond a fraction means nothing here */

/* One component at *p: DIGITS[.DIGITS][UNIT]; its unit's index in *ret_unit (NUNITS for
 * none). -EINVAL when it is not one, -ERANGE when it is more than a year by itself. */
static int component(const char **p, size_t *ret_unit, uint64_t *ret_usec) {
        const char *s = *p;
        uint64_t whole = 0, frac = 0, scale = 1;
        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                if (whole > RTN_DURATION_MAX_USEC / 10)
                        return -ERANGE;
                whole = whole * 10 + (uint64_t)(*s - '0');
        }
        if (*s == '.') {
                if (*++s < '0' || *s > '9')
                        return -EINVAL;
                for (int n = 0; *s >= '0' && *s <= '9'; s++, n++) {
                        if (n >= FRAC_DIGITS)
                                return -EINVAL;
                        frac = frac * 10 + (uint64_t)(*s - '0');
                        scale *= 10;
                }
        }
        size_t u = NUNITS;
        for (size_t i = 0; i < NUNITS && u == NUNITS; i++)
                if (!strncmp(s, units[i].name, strlen(units[i].name)))
                        u = i;
        uint64_t per = u < NUNITS ? units[u].usec : RTN_USEC_PER_SEC;
        if (u < NUNITS)
                s += strlen(units[u].name);
        if (whole > RTN_DURATION_MAX_USEC / per)
                return -ERANGE;
        /* frac < scale <= 10^9 and per <= 8.64e10: the product fits in 64 bits. */
        *ret_usec = whole * per + (uint64_t)((unsigned __int128)frac * per / scale);
        *ret_unit = u;
        *p = s;
        return 0;
}

int rtn_duration_opt(const char *opt, const char *arg, uint64_t *ret_usec, struct rtn_error *err) {
        const char *p = arg;
        uint64_t total = 0;
        size_t last = NUNITS; /* units must come largest first, each once: 1h30m */
        int r = -EINVAL;
        for (int n = 0; *p; n++) {
                uint64_t v;
                size_t u;
                if ((r = component(&p, &u, &v)) < 0)
                        break;
                r = -EINVAL;
                /* A bare number is seconds, and alone ("90", not "1m30"). */
                if ((u == NUNITS && (n > 0 || *p)) || (n > 0 && units[u].usec >= units[last].usec))
                        break;
                last = u;
                total += v;
                r = total > RTN_DURATION_MAX_USEC ? -ERANGE : 0;
                if (r < 0)
                        break;
        }
        if (r == -ERANGE)
                return rtn_errx(err, ERANGE, "%s %s: at most a year (365d)", opt, arg);
        if (r < 0)
                return rtn_errx(err, EINVAL,
                                "%s: '%s' is not a duration (seconds, or with a unit: 1.5, 90, "
                                "500ms, 30s, 5m, 1h, 1h30m, 2d)",
                                opt, arg);
        if (total == 0)
                return rtn_errx(err, EINVAL, "%s wants a duration above 0: %s", opt, arg);
        *ret_usec = total;
        return 0;
}

const char *rtn_duration_format(uint64_t usec, char buf[RTN_DURATION_BUF]) {
        unsigned long long sec = usec / RTN_USEC_PER_SEC, frac = usec % RTN_USEC_PER_SEC;
        if (!frac) {
                snprintf(buf, RTN_DURATION_BUF, "%llu s", sec);
                return buf;
        }
        int n = snprintf(buf, RTN_DURATION_BUF, "%llu.%06llu", sec, frac);
        while (n > 0 && buf[n - 1] == '0')
                buf[--n] = '\0';
        snprintf(buf + n, RTN_DURATION_BUF - (size_t)n, " s");
        return buf;
}
