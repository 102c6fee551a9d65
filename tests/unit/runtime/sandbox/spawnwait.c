/* Spawn one command in a started sandbox and wait for its end (spawnwait.h). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "common/initproto.h"
#include "tests/unit/runtime/sandbox/spawnwait.h"

void t_spawn(struct rt_sandbox *sb, uint64_t id, uint32_t policy, char *const argv[], int errfd) {
        struct rtn_error err = {0};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        cr_assert_geq(devnull, 0);
        int fds[3] = {devnull, devnull, errfd >= 0 ? errfd : devnull};
        cr_assert_eq(rt_sandbox_spawn(sb, id, 0, policy, "/", (char **)argv, envp, fds, 0, 0, &err),
                     0, "%s", err.msg);
        close(devnull);
}

int t_wait_exit(struct rt_sandbox *sb, uint64_t id, char *msg, size_t len) {
        for (;;) {
                union {
                        struct init_exited ex;
                        struct init_status st;
                        char raw[1024];
                } u;
                ssize_t m = rt_sandbox_recv(sb, u.raw, sizeof u, NULL, NULL);
                cr_assert_gt(m, 0, "control socket: %zd", m);
                if (u.ex.hdr.id != id)
                        continue;
                if (u.ex.hdr.type == INIT_MSG_EXITED)
                        return rt_exit_code(u.ex.wait_status);
                if (u.st.hdr.type == INIT_MSG_SPAWN_FAILED) {
                        snprintf(msg, len, "%.*s", (int)sizeof u.st.message, u.st.message);
                        return -u.st.error;
                }
        }
}
