/* common/duration: a duration as people write it on the command line (--timeout 1.5, 30s, 5m,
 * 1h, 1h30m), microseconds inside; everything else is refused with a message that names the
 * option, and *ret is left as it was. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/duration.h"

static void good(const char *arg, uint64_t want) {
        struct rtn_error err = {0};
        uint64_t got = 7;
        int r = rtn_duration_opt("--timeout", arg, &got, &err);
        cr_expect_eq(r, 0, "'%s': %s", arg, err.msg);
        cr_expect_eq(got, want, "'%s': %llu usec, want %llu", arg, (unsigned long long)got,
                     (unsigned long long)want);
}

static void bad(const char *arg, const char *why) {
        struct rtn_error err = {0};
        uint64_t got = 7;
        int r = rtn_duration_opt("--idle-timeout", arg, &got, &err);
        cr_expect_lt(r, 0, "'%s' was taken as %llu usec", arg, (unsigned long long)got);
        cr_expect_eq(got, 7, "'%s' wrote the result", arg);
        cr_expect(strstr(err.msg, "--idle-timeout") != NULL, "'%s': %s", arg, err.msg);
        cr_expect(strstr(err.msg, why) != NULL, "'%s': '%s' does not say '%s'", arg, err.msg, why);
}

Test(duration, spellings_people_write) {
        good("1", 1000000);
        good("90", 90000000);
        good("1.5", 1500000);
        good("0.25", 250000);
        good("30s", 30000000);
        good("5m", 300000000);
        good("1h", 3600000000ULL);
        good("1.5h", 5400000000ULL);
        good("1h30m", 5400000000ULL);
        good("2m30s", 150000000);
        good("500ms", 500000);
        good("1d", 86400000000ULL);
        good("365d", RTN_DURATION_MAX_USEC);
        good("31536000", RTN_DURATION_MAX_USEC);
}

Test(duration, bad_spellings_are_refused_by_name) {
        bad("", "not a duration");
        bad("-1", "not a duration");
        bad("+1", "not a duration");
        bad("1e9", "not a duration");
        bad("5 m", "not a duration");
        bad(" 5m", "not a duration");
        bad("5m ", "not a duration");
        bad("0x10", "not a duration");
        bad("1.", "not a duration");
        bad(".5", "not a duration");
        bad("5M", "not a duration");
        bad("1h1h", "not a duration");
        bad("30s5m", "not a duration");
        bad("1m30", "not a duration");
        bad("s", "not a duration");
        bad("nan", "not a duration");
        bad("0", "above 0");
        bad("0s", "above 0");
        bad("0.0000001", "above 0");
        bad("31536001", "at most");
        bad("366d", "at most");
        bad("99999999999999999999", "at most");
        bad("18446744073709551616s", "at most");
        bad("8761h", "at most");
        bad("1.00000000000000000000001", "not a duration");
}

Test(duration, formats_back) {
        char buf[RTN_DURATION_BUF];
        cr_expect_str_eq(rtn_duration_format(1000000, buf), "1 s");
        cr_expect_str_eq(rtn_duration_format(1500000, buf), "1.5 s");
        cr_expect_str_eq(rtn_duration_format(250000, buf), "0.25 s");
        cr_expect_str_eq(rtn_duration_format(300000000, buf), "300 s");
}
