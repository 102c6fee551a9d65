/* Commits, history, rollback, gc, verify, diff and recovery against a real data dir. */
#include "tests/unit/store/helpers.h"

#include <dirent.h>
#include <sys/file.h>
#include <sys/wait.h>

TestSuite(store_commit, .init = t_setup, .fini = t_teardown);
TestSuite(store_rollback, .init = t_setup, .fini = t_teardown);
TestSuite(store_gc, .init = t_setup, .fini = t_teardown);
TestSuite(store_verify, .init = t_setup, .fini = t_teardown);
TestSuite(store_diff, .init = t_setup, .fini = t_teardown);
TestSuite(store_open, .init = t_setup, .fini = t_teardown);
TestSuite(store_resolve, .init = t_setup, .fini = t_teardown);
TestSuite(store_default_dir);

static int count_cb(const struct store_commit_info *c, void *ud) {
        (*(int *)ud)++;
        return 0;
}

static int count_entries(const char *rel) {
        DIR *d = opendir(t_path(rel));
        cr_assert_not_null(d);
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

Test(store_commit, commit_moves_upper_and_sets_tip) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE], tip[STORE_ID_SIZE];
        struct rtn_error err = {0};
        cr_assert_eq(t_commit_files(s, "default", "first", id, (const char *[]){"a=hi\n", NULL}),
                     0);
        cr_assert_eq(access(t_path("up0"), F_OK), -1, "upper must be moved");
        cr_assert_eq(store_tip(s, "default", tip, &err), 0);
        cr_assert_str_eq(tip, id);
        char **paths;
        size_t n;
        cr_assert_eq(store_layer_stack(s, "default", &paths, &n, &err), 0);
        cr_assert_eq(n, 1);
        char a[600];
        snprintf(a, sizeof a, "%s/a", paths[0]);
        cr_assert_str_eq(t_read(a), "hi\n");
        store_free_paths(paths, n);
        struct store_commit_info c;
        char msg[64];
        cr_assert_eq(store_commit_read(s, id, &c, msg, sizeof msg, &err), 0);
        cr_assert_str_eq(msg, "first");
        cr_assert_str_eq(c.parent, "");
        store_close(s);
        /* Survives a restart. */
        s = t_open("data");
        cr_assert_eq(store_tip(s, "default", tip, &err), 0);
        cr_assert_str_eq(tip, id);
        store_close(s);
}

Test(store_commit, empty_upper_is_noop) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE], again[STORE_ID_SIZE];
        cr_assert_eq(t_commit_files(s, "default", "x", again, NULL), 1);
        cr_assert_str_eq(again, "");
        cr_assert_eq(t_commit_files(s, "default", "x", id, (const char *[]){"a=1", NULL}), 0);
        cr_assert_eq(t_commit_files(s, "default", "y", again, NULL), 1);
        cr_assert_str_eq(again, id);
        /* The same tree again is no new layer and no new commit either. */
        cr_assert_eq(t_commit_files(s, "default", "z", again, (const char *[]){"a=1", NULL}), 1);
        cr_assert_str_eq(again, id);
        cr_assert_eq(count_entries("data/layers"), 1);
        cr_assert_eq(count_entries("data/commits"), 1);
        store_close(s);
}

Test(store_commit, deletion_is_permanent) {
        struct store *s = t_open("data");
        char c1[STORE_ID_SIZE], c2[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "add", c1, (const char *[]){"a=1", "b=2", NULL});
        t_commit_files(s, "default", "rm", c2, (const char *[]){"a=<whiteout>", NULL});
        cr_assert_str_neq(c1, c2);
        char **paths;
        size_t n;
        cr_assert_eq(store_layer_stack(s, "default", &paths, &n, &err), 0);
        cr_assert_eq(n, 2);
        char p[600];
        struct stat st;
        snprintf(p, sizeof p, "%s/a", paths[0]);
        cr_assert_eq(lstat(p, &st), 0);
        cr_assert(S_ISCHR(st.st_mode) && st.st_rdev == 0, "whiteout kept in the newest layer");
        store_free_paths(paths, n);
        store_close(s);
}

Test(store_commit, layer_repeated_in_chain_is_stacked_once) {
        struct store *s = t_open("data");
        char c[3][STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "1", c[0], (const char *[]){"a=1", NULL});
        t_commit_files(s, "default", "2", c[1], (const char *[]){"a=2", NULL});
        cr_assert_eq(t_commit_files(s, "default", "3", c[2], (const char *[]){"a=1", NULL}), 0);
        char **paths;
        size_t n;
        cr_assert_eq(store_layer_stack(s, "default", &paths, &n, &err), 0);
        cr_assert_eq(n, 2);
        store_free_paths(paths, n);
        int cnt = 0;
        cr_assert_eq(store_log(s, "default", count_cb, &cnt, &err), 0);
        cr_assert_eq(cnt, 3);
        store_close(s);
}

Test(store_commit, refuses_bad_env_and_other_filesystem) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE] = "keep";
        struct rtn_error err = {0};
        t_mkdir("up");
        cr_assert_eq(store_commit(s, "../x", t_path("up"), "m", id, &err), -EINVAL);
        cr_assert_eq(store_commit(s, "default", t_path("missing"), "m", id, &err), -ENOENT);
        cr_assert_eq(store_commit(s, "default", "/proc", "m", id, &err), -EXDEV);
        cr_assert(strstr(err.msg, "not on the filesystem"), "%s", err.msg);
        cr_assert_str_eq(id, "keep");
        store_close(s);
}

Test(store_commit, hundred_deep) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE];
        struct rtn_error err = {0};
        for (int i = 0; i < 100; i++) {
                char f[32];
                snprintf(f, sizeof f, "f%d=%d", i, i);
                cr_assert_eq(t_commit_files(s, "default", "n", id, (const char *[]){f, NULL}), 0);
        }
        char **paths;
        size_t n;
        cr_assert_eq(store_layer_stack(s, "default", &paths, &n, &err), 0);
        cr_assert_eq(n, 100);
        char p[600];
        snprintf(p, sizeof p, "%s/f99", paths[0]);
        cr_assert_str_eq(t_read(p), "99");
        snprintf(p, sizeof p, "%s/f0", paths[99]);
        cr_assert_str_eq(t_read(p), "0");
        store_free_paths(paths, n);
        store_close(s);
}

Test(store_resolve, short_ids_and_head) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        cr_assert_eq(store_resolve(s, "default", NULL, got, &err), -ENOENT);
        t_commit_files(s, "default", "m", id, (const char *[]){"a=1", NULL});
        char pre[8];
        snprintf(pre, sizeof pre, "%.7s", id);
        cr_assert_eq(store_resolve(s, "default", pre, got, &err), 0);
        cr_assert_str_eq(got, id);
        cr_assert_eq(store_resolve(s, "default", "HEAD", got, &err), 0);
        cr_assert_str_eq(got, id);
        cr_assert_eq(store_resolve(s, "default", "abc", got, &err), -EINVAL);
        cr_assert_eq(store_resolve(s, "default", "../../etc", got, &err), -EINVAL);
        char other[8];
        snprintf(other, sizeof other, "%.4s", id[0] == '0' ? "1111" : "0000");
        cr_assert_eq(store_resolve(s, "default", other, got, &err), -ENOENT);
        /* Two commits sharing a prefix: plant a second record name. */
        char fake[STORE_ID_SIZE];
        memcpy(fake, id, STORE_ID_SIZE);
        fake[63] = fake[63] == 'a' ? 'b' : 'a';
        char p[128];
        snprintf(p, sizeof p, "data/commits/%s", fake);
        t_write(p, "x");
        snprintf(pre, sizeof pre, "%.6s", id);
        cr_assert_eq(store_resolve(s, "default", pre, got, &err), -ENOTUNIQ, "%s", err.msg);
        store_close(s);
}

Test(store_rollback, moves_tip_within_history_only) {
        struct store *s = t_open("data");
        char c1[STORE_ID_SIZE], c2[STORE_ID_SIZE], o[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "1", c1, (const char *[]){"a=1", NULL});
        t_commit_files(s, "default", "2", c2, (const char *[]){"a=2", NULL});
        t_commit_files(s, "other", "o", o, (const char *[]){"o=1", NULL});
        cr_assert_eq(store_rollback(s, "default", o, got, &err), -ENOENT);
        cr_assert(strstr(err.msg, "not in the history"), "%s", err.msg);
        cr_assert_eq(store_rollback(s, "default", c1, got, &err), 0, "%s", err.msg);
        cr_assert_str_eq(got, c1);
        cr_assert_eq(store_tip(s, "default", got, &err), 0);
        cr_assert_str_eq(got, c1);
        int cnt = 0;
        cr_assert_eq(store_log(s, "default", count_cb, &cnt, &err), 0);
        cr_assert_eq(cnt, 1);
        store_close(s);
}

Test(store_gc, removes_only_unreachable) {
        struct store *s = t_open("data");
        char c1[STORE_ID_SIZE], c2[STORE_ID_SIZE], o[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        struct store_gc_stats st;
        t_commit_files(s, "default", "1", c1, (const char *[]){"a=1", NULL});
        t_commit_files(s, "default", "2", c2, (const char *[]){"a=2", NULL});
        t_commit_files(s, "other", "o", o, (const char *[]){"o=1", NULL});
        t_mkdir("data/tmp/leftover");
        cr_assert_eq(store_gc(s, &st, &err), 0, "%s", err.msg);
        cr_assert_eq(st.commits, 0);
        cr_assert_eq(st.layers, 0);
        cr_assert_eq(st.leftovers, 1);
        cr_assert_eq(store_rollback(s, "default", c1, got, &err), 0, "%s", err.msg);
        cr_assert_eq(store_gc(s, &st, &err), 0); /* c2 is in the reflog: kept */
        cr_assert_eq(st.commits, 0);
        cr_assert_eq(st.layers, 0);
        cr_assert_eq(store_gc_expire(s, 0, &st, &err), 0);
        cr_assert_eq(st.commits, 1);
        cr_assert_eq(st.layers, 1);
        cr_assert_eq(count_entries("data/commits"), 2);
        cr_assert_eq(count_entries("data/layers"), 2);
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), 0, "%s", err.msg);
        cr_assert_eq(vs.commits, 2);
        store_close(s);
}

Test(store_gc, keeps_everything_when_a_history_is_broken) {
        struct store *s = t_open("data");
        char c1[STORE_ID_SIZE], c2[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "1", c1, (const char *[]){"a=1", NULL});
        t_commit_files(s, "default", "2", c2, (const char *[]){"a=2", NULL});
        cr_assert_eq(store_rollback(s, "default", c1, got, &err), 0, "%s", err.msg);
        char p[128];
        snprintf(p, sizeof p, "data/commits/%s", c1);
        t_write(p, "corrupt");
        cr_assert_eq(store_gc(s, NULL, &err), -EUCLEAN);
        cr_assert_eq(count_entries("data/commits"), 2);
        cr_assert_eq(count_entries("data/layers"), 2);
        store_close(s);
}

Test(store_gc, stale_sessions_go_live_ones_stay) {
        struct store *s = t_open("data");
        struct rtn_error err = {0};
        char *live, *dead;
        int lfd, dfd;
        cr_assert_eq(store_session_new(s, &live, &lfd, &err), 0, "%s", err.msg);
        cr_assert_eq(store_session_new(s, &dead, &dfd, &err), 0);
        close(dfd);
        struct store_gc_stats st;
        cr_assert_eq(store_gc(s, &st, &err), 0);
        cr_assert_eq(st.leftovers, 1);
        cr_assert_eq(access(dead, F_OK), -1);
        char up[600];
        snprintf(up, sizeof up, "%s/upper", live);
        cr_assert_eq(access(up, F_OK), 0);
        close(lfd);
        free(live);
        free(dead);
        store_close(s);
}

Test(store_verify, detects_tampering) {
        struct store *s = t_open("data");
        char c1[STORE_ID_SIZE];
        struct rtn_error err = {0};
        struct store_verify_stats vs;
        t_commit_files(s, "default", "1", c1, (const char *[]){"a=1", NULL});
        cr_assert_eq(store_verify(s, &vs, &err), 0);
        cr_assert_eq(vs.layers, 1);
        cr_assert_eq(vs.envs, 1);
        char **paths;
        size_t n;
        cr_assert_eq(store_layer_stack(s, "default", &paths, &n, &err), 0);
        char p[600];
        snprintf(p, sizeof p, "%s/a", paths[0]);
        int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
        cr_assert_eq(write(fd, "2", 1), 1);
        close(fd);
        store_free_paths(paths, n);
        cr_assert_eq(store_verify(s, &vs, &err), -EUCLEAN);
        cr_assert_eq(vs.bad, 1);
        cr_assert(strstr(err.msg, "content hashes to"), "%s", err.msg);
        store_close(s);
}

Test(store_open, recovery_clears_tmp_and_creates_layout) {
        struct store *s = t_open("deep/data");
        store_close(s);
        t_mkdir("deep/data/tmp/half");
        t_write("deep/data/tmp/half/x", "1");
        s = t_open("deep/data");
        cr_assert_eq(count_entries("deep/data/tmp"), 0);
        /* layers commits envs tmp sessions locks lock */
        cr_assert_eq(count_entries("deep/data"), 7);
        store_close(s);
}

/* Takes data/lock with lock_op (LOCK_EX: a writer, LOCK_SH: verify or export) and opens the
 * store in a child, which exits 0 once store_open succeeded (within 5 s). */
static pid_t open_beside_lock(int lock_op, int *ret_fd) {
        int fd = open(t_path("data/lock"), O_RDWR | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(flock(fd, lock_op), 0);
        pid_t pid = fork();
        if (pid == 0) {
                struct store *s2;
                close(fd); /* the inherited description holds the lock too */
                alarm(5);
                _exit(store_open(t_path("data"), &s2, NULL) == 0 ? 0 : 1);
        }
        *ret_fd = fd;
        return pid;
}

Test(store_open, waits_for_the_writer_lock) {
        struct store *s = t_open("data");
        store_close(s);
        int fd;
        pid_t pid = open_beside_lock(LOCK_EX, &fd);
        usleep(100 * 1000);
        int status;
        cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "open must block while locked");
        close(fd);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert_eq(WEXITSTATUS(status), 0);
}

/* A shared holder (verify, export, another open) is no writer: with nothing to recover, an
 * open goes ahead without waiting for it. */
Test(store_open, does_not_wait_for_readers) {
        struct store *s = t_open("data");
        store_close(s);
        int fd;
        pid_t pid = open_beside_lock(LOCK_SH, &fd);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "open waited for a reader");
        close(fd);
}

/* Leftovers under tmp/ are removed only under the exclusive lock: while a reader holds the
 * lock shared, the open waits, and recovers once the reader is done. */
Test(store_open, recovers_only_under_the_exclusive_lock) {
        struct store *s = t_open("data");
        store_close(s);
        t_write("data/tmp/w.1.0", "left");
        int fd;
        pid_t pid = open_beside_lock(LOCK_SH, &fd);
        usleep(100 * 1000);
        int status;
        cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "recovery ran beside a lock holder");
        cr_assert_eq(count_entries("data/tmp"), 1);
        close(fd);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert_eq(WEXITSTATUS(status), 0);
        cr_assert_eq(count_entries("data/tmp"), 0);
}

struct diffs {
        char out[1024];
};

static int diff_cb(enum store_change what, const char *path, void *ud) {
        struct diffs *d = ud;
        size_t l = strlen(d->out);
        snprintf(d->out + l, sizeof d->out - l, "%c %s\n", (char)what, path);
        return 0;
}

Test(store_diff, added_modified_deleted) {
        struct store *s = t_open("data");
        char c1[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_mkdir("base");
        t_commit_files(s, "default", "1", c1, (const char *[]){"keep=1", "mod=1", "del=1", NULL});
        t_mkdir("up");
        t_write("up/mod", "2");
        t_write("up/new", "x");
        t_whiteout("up/del");
        t_whiteout("up/never"); /* deleting what never existed is no change */
        t_mkdir("up/nd");
        t_write("up/nd/f", "y");
        struct diffs d = {""};
        cr_assert_eq(store_diff(s, "default", t_path("up"), diff_cb, &d, &err), 0, "%s", err.msg);
        cr_assert_str_eq(d.out, "D del\nM mod\nA nd\nA nd/f\nA new\n");
        store_close(s);
}

Test(store_default_dir, precedence) {
        char buf[256];
        struct rtn_error err = {0};
        setenv("RTN_DATA_DIR", "/x/rtn-data", 1);
        cr_assert_eq(store_default_dir(buf, sizeof buf, &err), 0);
        cr_assert_str_eq(buf, "/x/rtn-data");
        unsetenv("RTN_DATA_DIR");
        setenv("XDG_DATA_HOME", "/xdg", 1);
        cr_assert_eq(store_default_dir(buf, sizeof buf, &err), 0);
        cr_assert_str_eq(buf, "/xdg/rtn");
        unsetenv("XDG_DATA_HOME");
        setenv("HOME", "/home/u", 1);
        cr_assert_eq(store_default_dir(buf, sizeof buf, &err), 0);
        cr_assert_str_eq(buf, "/home/u/.local/share/rtn");
        unsetenv("HOME");
        cr_assert_eq(store_default_dir(buf, sizeof buf, &err), -ENOENT);
        setenv("RTN_DATA_DIR", "/long", 1);
        cr_assert_eq(store_default_dir(buf, 3, &err), -ENAMETOOLONG);
}
