/* The policies a sandbox's commands may run under (rt_spec.policies, init_config.policies,
 * init/spawn.c): rtn-init builds a Landlock ruleset only for those, so it refuses a spawn of
 * any other rather than run it without one, and the provisioning gate, whose opening builds
 * provisioning's ruleset by walking /, opens only before the first command (init/gate.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/initproto.h"
#include "runtime/internal.h"
#include "runtime/runtime.h"
#include "tests/unit/runtime/sandbox/spawnwait.h"

static struct rt_sandbox sb;
static uint64_t next_id = 1;

static void start(uint32_t policies) {
        struct rt_spec spec;
        struct rtn_error err = {0};
        rt_spec_init(&spec);
        init_limits_default(&spec.limits);
        spec.policies = policies;
        int r = rt_sandbox_start(&spec, &sb, &err);
        if (r == -EPERM || r == -ENOSPC)
                cr_skip_test("user namespaces unavailable: %s", err.msg);
        cr_assert_eq(r, 0, "start: %s", err.msg);
}

/* Spawns /bin/true under policy; returns its exit code, or -(errno) of a refused spawn with
 * its message in msg. */
static int run_true(uint32_t policy, char msg[256]) {
        char *argv[] = {"/bin/true", NULL};
        uint64_t id = next_id++;
        t_spawn(&sb, id, policy, argv, -1);
        return t_wait_exit(&sb, id, msg, 256);
}

Test(policies, only_the_configured_ones_run) {
        char msg[256] = "";
        start(INIT_POLICY_BIT(INIT_POLICY_AGENT)); /* rtn exec's */
        cr_assert_eq(run_true(INIT_POLICY_AGENT, msg), 0, "%s", msg);
        cr_assert_eq(run_true(INIT_POLICY_AGENT_ROOT, msg), -EPERM, "a root command by call ran");
        cr_assert(strstr(msg, "landlock"), "%s", msg);
        cr_assert_eq(run_true(INIT_POLICY_PROVISION, msg), -EPERM, "provisioning ran");
        cr_assert_eq(run_true(INIT_POLICY_AGENT, msg), 0, "%s", msg);
        rt_sandbox_destroy(&sb);
}

Test(policies, all_by_default) {
        char msg[256] = "";
        start(0);
        cr_assert_eq(run_true(INIT_POLICY_AGENT_ROOT, msg), 0, "%s", msg);
        cr_assert_eq(run_true(INIT_POLICY_PROVISION, msg), 0, "%s", msg);
        rt_sandbox_destroy(&sb);
}

Test(policies, no_gate_after_a_command) {
        char msg[256] = "";
        struct rtn_error err = {0};
        start(0);
        cr_assert_eq(run_true(INIT_POLICY_AGENT, msg), 0, "%s", msg);
        cr_assert_eq(rt_sandbox_open_gate(&sb, &err), -EBUSY, "the gate opened late: %s", err.msg);
        rt_sandbox_destroy(&sb);
}
