/* The provisioning gate inside a real sandbox (host base): rtn-init's listener lives in a
 * netns of its own that only provisioning commands enter, and Landlock lets them connect to
 * its port and nothing else. Commands are bash's /dev/tcp connects, so each case is one
 * connect(2) whose outcome is the exit status; stderr says why. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/initproto.h"
#include "runtime/runtime.h"
#include "tests/unit/runtime/sandbox/spawnwait.h"

static struct rt_sandbox sb;
static uint64_t next_id = 1;

static void start(void) {
        struct rt_spec spec;
        struct rtn_error err = {0};
        rt_spec_init(&spec);
        init_limits_default(&spec.limits);
        spec.gate = true;
        int r = rt_sandbox_start(&spec, &sb, &err);
        if (r == -EPERM || r == -ENOSPC)
                cr_skip_test("user namespaces unavailable: %s", err.msg);
        cr_assert_eq(r, 0, "start: %s", err.msg);
        cr_assert_geq(sb.gate_fd, 0);
        cr_assert_neq(sb.gate_port, 0);
}

/* Runs `bash -c 'exec 3<>/dev/tcp/HOST/PORT'` under policy; returns its exit code and
 * stderr in errbuf. */
static int try_connect(uint32_t policy, const char *host, unsigned port, char *errbuf, size_t len) {
        char script[128];
        snprintf(script, sizeof script, "exec 3<>/dev/tcp/%s/%u", host, port);
        char *argv[] = {"/bin/bash", "-c", script, NULL};
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        uint64_t id = next_id++;
        t_spawn(&sb, id, policy, argv, p[1]);
        close(p[1]);
        size_t got = 0;
        ssize_t n;
        char sink[256];
        while ((n = read(p[0], got < len - 1 ? errbuf + got : sink,
                         got < len - 1 ? len - 1 - got : sizeof sink)) > 0)
                got += got < len - 1 ? (size_t)n : 0;
        errbuf[got] = '\0';
        close(p[0]);
        char msg[256];
        int rc = t_wait_exit(&sb, id, msg, sizeof msg);
        cr_assert_geq(rc, 0, "spawn failed: %s", msg);
        return rc;
}

static void need_landlock_net(void) {
        if (sb.landlock_abi < 4)
                cr_skip_test("Landlock ABI %d has no TCP rules (needs 4, Linux 6.7)",
                             sb.landlock_abi);
}

Test(gate_netns, provisioning_reaches_the_gate) {
        char e[512];
        start();
        cr_assert_eq(try_connect(INIT_POLICY_PROVISION, "127.0.0.1", sb.gate_port, e, sizeof e), 0,
                     "stderr: %s", e);
        rt_sandbox_destroy(&sb);
}

Test(gate_netns, agent_cannot_reach_the_gate) {
        char e[512];
        start();
        int rc = try_connect(INIT_POLICY_AGENT, "127.0.0.1", sb.gate_port, e, sizeof e);
        cr_assert_eq(rc, 1, "exit %d, stderr: %s", rc, e);
        cr_assert(strstr(e, "Connection refused"), "stderr: %s", e);
        rt_sandbox_destroy(&sb);
}

Test(gate_netns, provisioning_cannot_connect_elsewhere) {
        char e[512];
        start();
        need_landlock_net();
        /* another port in its own netns, a public address, the agent's loopback port 80 */
        cr_assert_eq(try_connect(INIT_POLICY_PROVISION, "127.0.0.1", 1, e, sizeof e), 1);
        cr_assert(strstr(e, "Permission denied"), "stderr: %s", e);
        cr_assert_eq(try_connect(INIT_POLICY_PROVISION, "1.1.1.1", 80, e, sizeof e), 1);
        cr_assert(strstr(e, "Permission denied"), "stderr: %s", e);
        rt_sandbox_destroy(&sb);
}

Test(gate_netns, provisioning_cannot_reach_a_host_loopback_service) {
        char e[512];
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        cr_assert(bind(s, (void *)&a, sizeof a) == 0 && listen(s, 4) == 0 &&
                  getsockname(s, (void *)&a, &len) == 0);
        start();
        unsigned port = ntohs(a.sin_port);
        cr_assert_eq(try_connect(INIT_POLICY_PROVISION, "127.0.0.1", port, e, sizeof e), 1);
        cr_assert_eq(try_connect(INIT_POLICY_AGENT, "127.0.0.1", port, e, sizeof e), 1);
        rt_sandbox_destroy(&sb);
        close(s);
}
