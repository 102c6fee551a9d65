/* common/initproto: the one rule for the exit code of a command that never started, which
 * rtn-init, `rtn exec` and rtn serve's tools all report (docs/architecture.md, "Commands"). */
#include <criterion/criterion.h>
#include <errno.h>

#include "common/initproto.h"

struct exit_case {
        uint32_t step;
        int error;
        int code;
};

static const struct exit_case exit_cases[] = {
        {INIT_STEP_EXEC, ENOENT, 127},   {INIT_STEP_EXEC, ENOTDIR, 127},
        {INIT_STEP_EXEC, EACCES, 126},   {INIT_STEP_EXEC, ENOEXEC, 126},
        {INIT_STEP_EXEC, EISDIR, 126},   {INIT_STEP_FORK, ENOENT, 125},
        {INIT_STEP_CHDIR, ENOTDIR, 125}, {INIT_STEP_NONE, EPERM, 125},
};

Test(init_spawn_exit_code, one_rule) {
        for (size_t i = 0; i < sizeof exit_cases / sizeof exit_cases[0]; i++) {
                const struct exit_case *c = &exit_cases[i];
                cr_expect_eq(init_spawn_exit_code(c->step, c->error), c->code,
                             "step %u errno %d: want %d", c->step, c->error, c->code);
        }
}
