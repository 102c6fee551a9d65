/* mcp_serve_main as `rtn serve` runs it: a child process with its stdin/stdout redirected,
 * ended by stdin EOF or SIGTERM, with stdin a pipe or a regular file (the unpollable case). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/io.h"
#include "tests/unit/mcp/fake_backend.h"

static pid_t serve_child(int in_fd, int out_fd) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(in_fd, STDIN_FILENO);
                dup2(out_fd, STDOUT_FILENO);
                struct mcp_config cfg;
                mcp_config_init(&cfg);
                struct fake_backend fb = {0};
                struct rtn_error err = {0};
                int r = mcp_serve_main(&cfg, &fake_backend_ops, &fb, &err);
                _exit(r == 0 && fb.shutdowns == 1 ? 0 : 1);
        }
        return pid;
}

static int wait_exit(pid_t pid) {
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st), "child died of signal %d", WTERMSIG(st));
        return WEXITSTATUS(st);
}

static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
static const char want[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";

Test(mcp_serve_main, exits_0_on_sigterm) {
        int in[2], out[2];
        cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = serve_child(in[0], out[1]);
        close(in[0]);
        close(out[1]);
        cr_assert_eq(rtn_write_all(in[1], ping, strlen(ping)), 0);
        char buf[256] = "";
        cr_assert_eq(rtn_read_full(out[0], buf, strlen(want)), (ssize_t)strlen(want));
        cr_assert_str_eq(buf, want);
        kill(pid, SIGTERM);
        cr_assert_eq(wait_exit(pid), 0);
        close(in[1]);
        close(out[0]);
}

Test(mcp_serve_main, regular_file_stdin_served_until_eof) {
        char path[] = "/tmp/rtn-mcp-test-XXXXXX";
        int fd = mkostemp(path, O_CLOEXEC);
        cr_assert_geq(fd, 0);
        unlink(path);
        cr_assert_eq(rtn_write_all(fd, ping, strlen(ping)), 0);
        cr_assert_eq(rtn_write_all(fd, ping, strlen(ping)), 0);
        lseek(fd, 0, SEEK_SET);
        int out[2];
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = serve_child(fd, out[1]);
        close(out[1]);
        char buf[256] = "";
        cr_assert_eq(rtn_read_full(out[0], buf, sizeof buf - 1), (ssize_t)(2 * strlen(want)));
        cr_assert(!strncmp(buf, want, strlen(want)));
        cr_assert_eq(wait_exit(pid), 0, "EOF of the file ends the server cleanly");
        close(out[0]);
        close(fd);
}
