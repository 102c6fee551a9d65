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
        struct rtn_error err = {0};
        char *argv[] = {"/bin/true", NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[3] = {devnull, devnull, devnull};
        uint64_t id = next_id++;
        cr_assert_eq(rt_sandbox_spawn(&sb, id, 0, policy, "/", argv, envp, fds, 0, 0, &err), 0,
                     "%s", err.msg);
        close(devnull);
        for (;;) {
                union {
                        struct init_exited ex;
                        struct init_status st;
                        char raw[1024];
                } u;
                ssize_t m = rt_sandbox_recv(&sb, u.raw, sizeof u, NULL, NULL);
                cr_assert_gt(m, 0, "control socket: %zd", m);
                if (u.ex.hdr.id != id)
                        continue;
                if (u.ex.hdr.type == INIT_MSG_EXITED)
                        return rt_exit_code(u.ex.wait_status);
                if (u.st.hdr.type == INIT_MSG_SPAWN_FAILED) {
                        u.st.message[sizeof u.st.message - 1] = '\0';
                        strcpy(msg, u.st.message);
                        return -u.st.error;
                }
        }
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
