/* The CLI verbs: exit codes, what they print, and that they honour --data-dir/--env. */
#include "tests/unit/store/helpers.h"

#include "cli/cli.h"
#include "cli/storeopts.h"
#include "common/usage.h"

TestSuite(rt_cmd, .init = t_setup, .fini = t_teardown);

/* Runs a verb with stdout captured into out. */
static int run(char *out, size_t cap, int (*fn)(int, char **), char **argv) {
        int argc = 0;
        while (argv[argc])
                argc++;
        fflush(stdout);
        int saved = dup(STDOUT_FILENO);
        int fd = open(t_path("stdout"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        dup2(fd, STDOUT_FILENO);
        int rc = fn(argc, argv);
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
        ssize_t n = pread(fd, out, cap - 1, 0);
        out[n < 0 ? 0 : n] = '\0';
        close(fd);
        return rc;
}

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})

Test(rt_cmd, full_cycle) {
        char out[4096], id1[STORE_ID_SIZE], id2[STORE_ID_SIZE];
        char *dd = strdup(t_path("data"));
        t_mkdir("u1");
        t_write("u1/a", "1");
        cr_assert_eq(run(out, sizeof out, cli_cmd_commit,
                         ARGV("commit", "--data-dir", dd, "-m", "first", "--upper",
                              (char *)t_path("u1"))),
                     0);
        cr_assert_eq(strlen(out), 65, "%s", out);
        snprintf(id1, sizeof id1, "%.64s", out);
        t_mkdir("u2");
        t_write("u2/b", "2");
        cr_assert_eq(run(out, sizeof out, cli_cmd_commit,
                         ARGV("commit", "--data-dir", dd, "--upper", (char *)t_path("u2"))),
                     0);
        snprintf(id2, sizeof id2, "%.64s", out);
        cr_assert_eq(run(out, sizeof out, cli_cmd_log, ARGV("log", "--data-dir", dd)), 0);
        cr_assert(strstr(out, id1) && strstr(out, id2) && strstr(out, " first\n"), "%s", out);
        cr_assert(strstr(out, id2) < strstr(out, id1), "newest first: %s", out);
        t_mkdir("u3");
        t_write("u3/c", "3");
        t_whiteout("u3/a");
        cr_assert_eq(run(out, sizeof out, cli_cmd_diff,
                         ARGV("diff", "--data-dir", dd, "--upper", (char *)t_path("u3"))),
                     0);
        cr_assert_str_eq(out, "D /a\nA /c\n");
        char short1[9];
        snprintf(short1, sizeof short1, "%.8s", id1);
        cr_assert_eq(
                run(out, sizeof out, cli_cmd_rollback, ARGV("rollback", "--data-dir", dd, short1)),
                0);
        cr_assert_eq(strncmp(out, id1, 64), 0);
        /* The tip left behind stays in the reflog, and gc keeps it, until it expires. */
        cr_assert_eq(run(out, sizeof out, cli_cmd_reflog, ARGV("reflog", "--data-dir", dd)), 0);
        cr_assert(strstr(out, id1) && strstr(out, id2) && strstr(out, " rollback\n"), "%s", out);
        cr_assert(strstr(out, id1) < strstr(out, id2), "newest first: %s", out);
        cr_assert_eq(run(out, sizeof out, cli_cmd_gc, ARGV("gc", "--data-dir", dd)), 0);
        cr_assert_str_eq(out, "removed 0 commits, 0 layers, 0 leftovers\n");
        cr_assert_eq(run(out, sizeof out, cli_cmd_gc,
                         ARGV("gc", "--data-dir", dd, "--reflog-days", "0")),
                     0);
        cr_assert_str_eq(out, "removed 1 commits, 1 layers, 0 leftovers\n");
        char *file = strdup(t_path("e.tar.zst"));
        cr_assert_eq(
                run(out, sizeof out, cli_cmd_export, ARGV("export", "--data-dir", dd, "-o", file)),
                0);
        char *dd2 = strdup(t_path("data2"));
        cr_assert_eq(run(out, sizeof out, cli_cmd_import,
                         ARGV("import", "--data-dir", dd2, "--env", "imported", file)),
                     0);
        cr_assert_eq(strncmp(out, id1, 64), 0, "%s", out);
        cr_assert_eq(
                run(out, sizeof out, cli_cmd_store, ARGV("store", "--data-dir", dd2, "verify")), 0);
        cr_assert_str_eq(out, "ok: 1 layers, 1 commits, 1 environments\n");
        free(dd);
        free(dd2);
        free(file);
}

Test(rt_cmd, user_errors_exit_1) {
        char out[4096];
        char *dd = strdup(t_path("data"));
        cr_assert_eq(run(out, sizeof out, cli_cmd_rollback,
                         ARGV("rollback", "--data-dir", dd, "abcdef")),
                     1);

        cr_assert_eq(
                run(out, sizeof out, cli_cmd_log, ARGV("log", "--data-dir", dd, "--env", "../x")),
                1);
        cr_assert_eq(run(out, sizeof out, cli_cmd_commit, ARGV("commit", "--data-dir", dd)), 0);
        cr_assert(strstr(out, "nothing to commit"), "%s", out);
        cr_assert_eq(run(out, sizeof out, cli_cmd_import,
                         ARGV("import", "--data-dir", dd, "/nonexistent.tar.zst")),
                     1);
        free(dd);
}

/* Usage errors exit RTN_EXIT_FAILURE (docs/rtn.1, Conventions), before the store is opened. */
Test(rt_cmd, usage_errors_exit_125) {
        char out[4096];
        char *dd = strdup(t_path("data"));
        cr_assert_eq(run(out, sizeof out, cli_cmd_rollback, ARGV("rollback", "--data-dir", dd)),
                     RTN_EXIT_FAILURE);
        cr_assert_eq(run(out, sizeof out, cli_cmd_gc,
                         ARGV("gc", "--data-dir", dd, "--reflog-days", "-1")),
                     RTN_EXIT_FAILURE);
        /* Without --upper, commit takes the pending changes (rtn exec --keep); an operand is
         * still a usage error. */
        cr_assert_eq(
                run(out, sizeof out, cli_cmd_commit, ARGV("commit", "--data-dir", dd, "extra")),
                RTN_EXIT_FAILURE);
        cr_assert_eq(run(out, sizeof out, cli_cmd_store, ARGV("store", "--data-dir", dd, "frob")),
                     RTN_EXIT_FAILURE);
        cr_assert_eq(access(dd, F_OK), -1, "a usage error created the data dir");
        free(dd);
}

/* The paths rtn diff PATH and rtn apply --allow-protected PATH take, as the walks name them;
 * nothing that climbs out or names the whole workspace. */
Test(cli_ws_path, spellings) {
        static const char *const ok[][2] = {
                {".envrc", ".envrc"},
                {"/workspace/.envrc", ".envrc"},
                {"/workspace/.vscode/", ".vscode"},
                {"./a//b/./c", "a/b/c"},
                {"/a/b", "a/b"},
                {"/workspaces/x", "workspaces/x"},
        };
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
                char *p = (char *)cli_ws_path(ok[i][0]);
                cr_assert(p && !strcmp(p, ok[i][1]), "%s: %s", ok[i][0], p ? p : "NULL");
                free(p);
        }
        static const char *const bad[] = {
                "", "/", ".", "/workspace", "/workspace/", "..", "a/../b", "/workspace/../etc"};
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                cr_assert_null(cli_ws_path(bad[i]), "%s", bad[i]);
}
