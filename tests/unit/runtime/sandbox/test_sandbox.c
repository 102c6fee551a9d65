/* Two commands in one sandbox are separate Landlock domains; in a full sandbox they must
 * still reach each other (a later shell_run kills an earlier job's server): the second
 * command kills the first one's process by pid. Real sandbox, real rtn-init. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/initproto.h"
#include "runtime/runtime.h"

/* Waits until the EXITED event of command id has arrived, recording every exit seen in
 * status[] (indexed by command id; -1 = not yet): the job killed by command 2 may well be
 * reported before command 2 itself. */
static int wait_exit(struct rt_sandbox *sb, uint64_t id, int status[3]) {
        char buf[1024];
        while (status[id] == -1) {
                int fds[4];
                size_t nfds = 4;
                ssize_t n = rt_sandbox_recv(sb, buf, sizeof buf, fds, &nfds);
                cr_assert_gt(n, 0, "sandbox ended");
                for (size_t i = 0; i < nfds; i++)
                        close(fds[i]);
                const struct init_exited *e = (const void *)buf;
                if (init_check_msg(buf, (size_t)n, INIT_MSG_EXITED, sizeof *e) == 0 &&
                    e->hdr.id >= 1 && e->hdr.id <= 2)
                        status[e->hdr.id] = e->wait_status;
        }
        return status[id];
}

static pid_t spawn(struct rt_sandbox *sb, uint64_t id, const char *script, int out) {
        struct rtn_error err = {0};
        struct rt_env env;
        rt_env_default(&env, sb, INIT_POLICY_AGENT, false);
        char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[3] = {null, out, out};
        cr_assert_eq(rt_sandbox_spawn(sb, id, 0, INIT_POLICY_AGENT, "/", argv, env.vars, fds, 0, 0,
                                      &err),
                     0, "%s", err.msg);
        close(null);
        char buf[1024];
        int rfds[4];
        size_t nfds = 4;
        ssize_t n = rt_sandbox_recv(sb, buf, sizeof buf, rfds, &nfds);
        const struct init_spawned *s = (const void *)buf;
        cr_assert_eq(init_check_msg(buf, (size_t)n, INIT_MSG_SPAWNED, sizeof *s), 0,
                     "spawn %llu failed", (unsigned long long)id);
        return s->pid;
}

Test(rt_sandbox_spawn, later_command_kills_earlier_job) {
        struct rtn_error err = {0};
        struct rt_spec spec;
        rt_spec_init(&spec);
        init_limits_default(&spec.limits);
        struct rt_sandbox sb;
        int r = rt_sandbox_start(&spec, &sb, &err);
        if (r == -EPERM || r == -ENOSPC)
                cr_skip_test("cannot create namespaces here: %s", err.msg);
        cr_assert_eq(r, 0, "%s", err.msg);
        if (sb.landlock_abi < 6)
                cr_log_warn("Landlock ABI %d has no scoping: the test cannot fail here",
                            sb.landlock_abi);
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t job = spawn(&sb, 1, "exec sleep 100", p[1]);
        char script[64];
        snprintf(script, sizeof script, "kill -TERM %d && echo killed", (int)job);
        spawn(&sb, 2, script, p[1]);
        close(p[1]);
        int status[3] = {-1, -1, -1};
        int st2 = wait_exit(&sb, 2, status);
        if (!WIFEXITED(st2) || WEXITSTATUS(st2) != 0)
                rt_sandbox_signal(&sb, 1, SIGKILL); /* the kill failed: end the job now */
        int st1 = wait_exit(&sb, 1, status);
        char out[128] = "";
        ssize_t n = read(p[0], out, sizeof out - 1);
        out[n > 0 ? n : 0] = '\0';
        close(p[0]);
        rt_sandbox_destroy(&sb);
        cr_assert(WIFEXITED(st2) && WEXITSTATUS(st2) == 0, "kill failed: %s", out);
        cr_assert(WIFSIGNALED(st1) && WTERMSIG(st1) == SIGTERM, "job status %#x", st1);
}
