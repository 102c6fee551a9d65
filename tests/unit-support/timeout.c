/* Linked into every unit binary (GNUmakefile): a test that declares no timeout of its own
 * (nor its suite) gets RTN_UNIT_TIMEOUT seconds (default 120), so one that hangs is ended
 * and reported by name as timed out, not found by tools/test.sh's whole-binary limit after
 * fifteen minutes that name nothing. criterion's own --timeout only lowers a timeout a test
 * already has (2.4's runner applies it as a cap), hence this hook; it runs in the runner
 * before any test is started, and the runner is what enforces each test's limit. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/internal/ordered-set.h>
#include <stdlib.h>

enum { DEFAULT_TIMEOUT_S = 120 };

/* With a timeout on every test the runner keeps one request per running test in boxfort's
 * killer thread; the last one cancelled is freed by that thread when it next wakes, which the
 * runner's exit does not wait for. LeakSanitizer (in the sanitized tree) is told of that one
 * allocation site of criterion's and no other: a leak of a test's own still fails the binary. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
        return "leak:bxfi_push_timeout\n";
}

/* ...and does not print that it was used, after every binary's run. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void) {
        return "print_suppressions=0";
}

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
        const char *env = getenv("RTN_UNIT_TIMEOUT");
        double limit = env && *env ? atof(env) : DEFAULT_TIMEOUT_S;
        if (limit <= 0)
                return;
        struct criterion_suite_set *ss;
        FOREACH_SET(ss, set->suites) {
                if (ss->suite.data && ss->suite.data->timeout > 0)
                        continue;
                if (!ss->tests)
                        continue;
                struct criterion_test *t;
                FOREACH_SET(t, ss->tests) {
                        if (t->data && t->data->timeout <= 0)
                                t->data->timeout = limit;
                }
        }
}
