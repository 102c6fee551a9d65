/* A session whose rtn-init died before the event loop saw its hang-up: the next command's
 * spawn request meets the dead control socket (EPIPE or ECONNRESET), and rt_session_run
 * starts a fresh sandbox on the same upper and runs the command there, marking the crash
 * for rt_session_take_crash. Real sandbox, real rtn-init; the loop is never run in between,
 * so the spawn request is the first to notice. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/loop.h"
#include "common/syscall.h"
#include "common/initproto.h"
#include "runtime/session/session.h"

static void done(struct rt_cmd *c, void *ud) {
        *(struct rt_cmd **)ud = c;
}

static struct rt_cmd *run(struct rtn_loop *loop, struct rt_session *s, const char *cmd) {
        struct rt_cmd_opts o = {.command = cmd, .policy = INIT_POLICY_AGENT};
        struct rt_cmd *c = NULL, *finished = NULL;
        struct rtn_error err = {0};
        cr_assert_eq(rt_session_run(s, &o, done, &finished, &c, &err), 0, "%s", err.msg);
        for (int i = 0; i < 3000 && !finished; i++)
                rtn_loop_run_once(loop, 10);
        cr_assert_not_null(finished, "%s did not finish", cmd);
        return finished;
}

Test(rt_session_run, restarts_when_the_spawn_meets_a_dead_init) {
        char dir[] = "/tmp/rtn-session-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        struct rtn_loop *loop;
        cr_assert_eq(rtn_loop_new(&loop), 0);
        struct rt_session_config cfg = {
                .session_dir = dir, .default_timeout_usec = 30000000, .max_output = 1 << 16};
        rt_spec_init(&cfg.spec);
        init_limits_default(&cfg.spec.limits);
        struct rt_session *s;
        struct rtn_error err = {0};
        cr_assert_eq(rt_session_new(loop, &cfg, &s, &err), 0, "%s", err.msg);

        struct rt_cmd *c = run(loop, s, "echo kept > /workspace/f");
        cr_assert_eq(c->wait_status, 0);
        rt_cmd_free(c);
        cr_assert_not(rt_session_take_crash(s));

        /* Kill rtn-init and wait until it is gone, without running the loop. */
        const struct rt_sandbox *sb = rt_session_sandbox(s);
        cr_assert_eq(sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0), 0);
        siginfo_t si;
        cr_assert_eq(waitid(P_PIDFD, (id_t)sb->pidfd, &si, WEXITED | WNOWAIT), 0);

        c = run(loop, s, "cat /workspace/f");
        cr_assert_eq(c->wait_status, 0, "status %d, lost %d, stderr %.*s", c->wait_status, c->lost,
                     (int)c->err.len, c->err.data ? c->err.data : "");
        cr_assert_eq(c->out.len, 5);
        cr_assert_eq(memcmp(c->out.data, "kept\n", 5), 0);
        cr_assert(rt_session_take_crash(s), "the restart must be reported");
        rt_cmd_free(c);

        /* Killed again, and restarted by a call that reports nothing (a file tool ensures the
         * sandbox): the next command finds it alive and was not restarted. */
        sb = rt_session_sandbox(s);
        cr_assert_eq(sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0), 0);
        for (int i = 0; i < 3000 && rt_session_alive(s); i++)
                rtn_loop_run_once(loop, 10);
        cr_assert_not(rt_session_alive(s), "the loop did not notice the death");
        cr_assert_eq(rt_session_ensure(s, &err), 0, "%s", err.msg);
        c = run(loop, s, "true");
        cr_assert_eq(c->wait_status, 0);
        rt_cmd_free(c);
        cr_assert_not(rt_session_take_crash(s), "a restart by an earlier call was reported");

        rt_session_free(s);
        rtn_loop_free(loop);
        char rm[64];
        snprintf(rm, sizeof rm, "rm -rf %s", dir);
        (void)!system(rm);
}
