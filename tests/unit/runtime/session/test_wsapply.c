/* The overlay workspace's write-back (runtime/session/wsapply.c, wswalk.c, wsstate.c) on a real
 * filesystem, without a sandbox: an upper made the way overlayfs makes one (0:0 character
 * devices for whiteouts, user.overlay.opaque on a directory made again) beside a host dir,
 * and the record that rt_ws_prepare would have written. Each test is a fresh process
 * (criterion forks) with its own temp dir. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "runtime/session/wsover.h"
#include "runtime/session/wswalk.h"

static char dir[256], host[300], pend[300], upper[320];

static void put(const char *base, const char *rel, const char *content, mode_t mode) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", base, rel);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f, "create %s: %s", p, strerror(errno));
        fputs(content, f);
        fclose(f);
        cr_assert_eq(chmod(p, mode), 0);
}

static void mk(const char *base, const char *rel) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", base, rel);
        cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s: %s", p, strerror(errno));
}

static char *get(const char *base, const char *rel) {
        static char buf[256];
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", base, rel);
        FILE *f = fopen(p, "r");
        if (!f)
                return NULL;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static bool exists(const char *base, const char *rel) {
        char p[1024];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", base, rel);
        return lstat(p, &st) == 0;
}

static void whiteout(const char *rel) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", upper, rel);
        cr_assert_eq(mknod(p, S_IFCHR | 0600, makedev(0, 0)), 0, "whiteout: %s", strerror(errno));
}

/* The record of the host dir, its time now: what was made before is the start's state. */
static void record(void) {
        struct rt_ws_state st = {0};
        struct stat sb;
        struct rtn_error err = {0};
        cr_assert_eq(stat(host, &sb), 0);
        st.dev = sb.st_dev;
        st.ino = sb.st_ino;
        snprintf(st.host, sizeof st.host, "%s", host);
        clock_gettime(CLOCK_REALTIME, &st.since);
        cr_assert_eq(rt_ws_state_write(pend, &st, &err), 0, "%s", err.msg);
        usleep(20000); /* past a tick of the coarse clock that inode times come from */
}

static void setup(void) {
        snprintf(dir, sizeof dir, "%s/rtn-wsapply.XXXXXX", getenv("TMPDIR") ?: "/tmp");
        cr_assert_not_null(mkdtemp(dir));
        snprintf(host, sizeof host, "%s/host", dir);
        snprintf(pend, sizeof pend, "%s/pend", dir);
        snprintf(upper, sizeof upper, "%s/" RT_WS_DIR "/upper", pend);
        cr_assert_eq(mkdir(host, 0755), 0);
        cr_assert_eq(mkdir(pend, 0700), 0);
        mk(pend, RT_WS_DIR);
        mk(pend, RT_WS_DIR "/upper");
        umask(022);
}

static void teardown(void) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        (void)!system(cmd);
}

struct seen {
        char lines[64][256];
        int n, refused;
};

static int on_change(enum rt_ws_change what, const char *path, const char *reason, void *ud) {
        struct seen *s = ud;
        if (s->n < 64)
                snprintf(s->lines[s->n++], 256, "%c %s%s%s", (char)what, path, reason ? ": " : "",
                         reason ? reason : "");
        s->refused += reason != NULL;
        return 0;
}

static bool saw(const struct seen *s, const char *prefix) {
        for (int i = 0; i < s->n; i++)
                if (!strncmp(s->lines[i], prefix, strlen(prefix)))
                        return true;
        return false;
}

TestSuite(rt_ws_apply, .init = setup, .fini = teardown);

/* A directory of the host turned into a symlink is not opened: the guarantee behind every
 * host directory rt_ws_apply enters (a swap between its lstat and its open fails here). */
Test(rt_ws_apply, host_dirs_never_through_symlinks) {
        mk(host, "real");
        char p[1024];
        snprintf(p, sizeof p, "%s/link", host);
        cr_assert_eq(symlink("real", p), 0);
        int h = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(h, 0);
        int r = ws_open_dir(h, "link");
        cr_assert(r == -ELOOP || r == -ENOTDIR, "link: %d", r);
        cr_assert_eq(ws_open_dir(h, ".."), -EXDEV);
        snprintf(p, sizeof p, "%s/abs", host);
        cr_assert_eq(symlink("/etc", p), 0);
        r = ws_open_dir(h, "abs");
        cr_assert(r == -ELOOP || r == -ENOTDIR, "abs: %d", r);
        int fd = ws_open_dir(h, "real");
        cr_assert_geq(fd, 0);
        close(fd);
        close(h);
}

Test(rt_ws_apply, record_round_trip) {
        struct rt_ws_state st = {.dev = 7, .ino = 9, .since = {.tv_sec = 5, .tv_nsec = 6}};
        struct rtn_error err = {0};
        snprintf(st.host, sizeof st.host, "/a dir/with%%25 and\nnewline");
        const char *paths[] = {"b", "a\nc", "%41", "x y\x7f", "\xc3\xa9t\xc3\xa9"};
        for (size_t i = 0; i < 5; i++)
                cr_assert_eq(rt_ws_state_put(&st, paths[i], i + 1, (struct timespec){3, 4}), 0);
        cr_assert_eq(rt_ws_state_write(pend, &st, &err), 0, "%s", err.msg);
        struct rt_ws_state back;
        cr_assert_eq(rt_ws_state_read(pend, &back), 0);
        cr_assert_str_eq(back.host, st.host);
        cr_assert_eq(back.dev, 7);
        cr_assert_eq(back.since.tv_nsec, 6);
        cr_assert_eq(back.nrecs, 5);
        for (size_t i = 0; i < 5; i++) {
                const struct rt_ws_record *r = rt_ws_state_find(&back, paths[i]);
                cr_assert_not_null(r, "%s", paths[i]);
                cr_assert_eq(r->ino, i + 1);
        }
        rt_ws_state_free(&back);
        rt_ws_state_free(&st);
        /* a line that does not parse makes the record invalid */
        put(pend, RT_WS_DIR "/state", "rtn-ws 1\ndev 1 ino 2\nsince 1 2\nhost /x\nrec bad\n", 0600);
        cr_assert_eq(rt_ws_state_read(pend, &back), -EBADMSG);
}

/* Modified, added with a mode the agent chose, deleted (whiteout), a directory made again
 * (opaque): all applied, and the upper is empty afterwards. */
Test(rt_ws_apply, changes_apply_and_leave_the_upper) {
        put(host, "a", "old\n", 0664);
        mk(host, "d");
        put(host, "d/f", "f\n", 0644);
        put(host, "d/g", "g\n", 0644);
        mk(host, "o");
        put(host, "o/x", "x\n", 0644);
        record();
        put(upper, "a", "new\n", 0664);
        mk(upper, "d");
        whiteout("d/f");
        put(upper, "n", "n\n", 0666);
        mk(upper, "o");
        char p[1024];
        snprintf(p, sizeof p, "%s/o", upper);
        if (setxattr(p, "user.overlay.opaque", "y", 1, 0) < 0) {
                int e = errno;
                teardown(); /* criterion runs no .fini after a skip */
                cr_skip_test("user xattrs on %s: %s", upper, strerror(e));
        }
        put(upper, "o/z", "z\n", 0644);
        struct seen s = {0};
        struct rtn_error err = {0};
        cr_assert_eq(rt_ws_apply(pend, NULL, false, on_change, &s, &err), 0, "%s", err.msg);
        cr_assert_str_eq(get(host, "a"), "new\n");
        cr_assert(!exists(host, "d/f"));
        cr_assert_str_eq(get(host, "d/g"), "g\n");
        cr_assert_str_eq(get(host, "n"), "n\n");
        cr_assert(!exists(host, "o/x"));
        cr_assert_str_eq(get(host, "o/z"), "z\n");
        struct stat sb;
        snprintf(p, sizeof p, "%s/n", host);
        cr_assert_eq(stat(p, &sb), 0);
        cr_assert_eq(sb.st_mode & 07777, 0644, "umask on a new mode: %o", sb.st_mode & 07777);
        snprintf(p, sizeof p, "%s/a", host);
        cr_assert_eq(stat(p, &sb), 0);
        cr_assert_eq(sb.st_mode & 07777, 0664, "an unchanged mode is kept: %o", sb.st_mode);
        cr_assert(saw(&s, "M a") && saw(&s, "D d/f") && saw(&s, "A n") && saw(&s, "D o/x") &&
                  saw(&s, "A o/z"));
        cr_assert(!exists(upper, "a") && !exists(upper, "d") && !exists(upper, "o") &&
                  !exists(upper, "n"));
}

/* What must not reach the host is refused, stays pending, and the host is untouched. */
Test(rt_ws_apply, refusals_stay_pending) {
        record();
        put(upper, "su", "x", 04755);
        put(upper, "sg", "x", 02755);
        char p[1024];
        snprintf(p, sizeof p, "%s/fifo", upper);
        cr_assert_eq(mkfifo(p, 0644), 0);
        const char *links[][2] = {{"abs", "/etc/passwd"},
                                  {"up", "../x"},
                                  {"deep", "a/b/../../../x"},
                                  {"cfg", "sub/../.git/config"}};
        for (size_t i = 0; i < 4; i++) {
                snprintf(p, sizeof p, "%s/%s", upper, links[i][0]);
                cr_assert_eq(symlink(links[i][1], p), 0);
        }
        put(upper, ".envrc", "x", 0644);
        mk(upper, "s");
        mk(upper, "s/.GIT");
        put(upper, "s/.GIT/config", "x", 0644);
        put(upper, "bad\nname", "x", 0644);
        struct seen s = {0};
        struct rtn_error err = {0};
        cr_assert_eq(rt_ws_apply(pend, NULL, false, on_change, &s, &err), 10, "%s", err.msg);
        cr_assert(saw(&s, "A su: setuid/setgid") && saw(&s, "A sg: setuid/setgid"));
        cr_assert(saw(&s, "A fifo: a FIFO"));
        cr_assert(saw(&s, "A abs: a symlink to an absolute path"));
        cr_assert(saw(&s, "A up: a symlink that leaves") &&
                  saw(&s, "A deep: a symlink that leaves"));
        cr_assert(saw(&s, "A cfg: a symlink into .git"));
        cr_assert(saw(&s, "A .envrc: protected") && saw(&s, "A s/.GIT: protected"));
        cr_assert(saw(&s, "A bad\nname: a control character"));
        const char *all[] = {"su", "sg", "fifo", "abs", "up", "deep", "cfg", ".envrc", "s/.GIT"};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
                cr_assert(!exists(host, all[i]), "%s reached the host", all[i]);
                cr_assert(exists(upper, all[i]), "%s left the upper", all[i]);
        }
}

/* A host file changed since the start is a conflict; one rt_ws_apply wrote itself is not. */
Test(rt_ws_apply, conflicts_and_own_writes) {
        put(host, "a", "a\n", 0644);
        put(host, "b", "b\n", 0644);
        record();
        put(upper, "a", "agent\n", 0644);
        put(upper, "b", "agent\n", 0644);
        put(host, "a", "user\n", 0644);
        struct seen s = {0};
        struct rtn_error err = {0};
        cr_assert_eq(rt_ws_apply(pend, NULL, false, on_change, &s, &err), 1, "%s", err.msg);
        cr_assert(saw(&s, "M a: conflict: changed on the host"));
        cr_assert_str_eq(get(host, "a"), "user\n");
        cr_assert_str_eq(get(host, "b"), "agent\n");
        put(upper, "b", "again\n", 0644); /* b changed after the start, by apply: no conflict */
        s = (struct seen){0};
        cr_assert_eq(rt_ws_apply(pend, NULL, false, on_change, &s, &err), 1, "%s", err.msg);
        cr_assert_str_eq(get(host, "b"), "again\n");
}

/* A host file written a moment before the start is the start's state, not a conflict:
 * its multigrain ctime may run ahead of the coarse clock (Linux 6.13 on), so the record's
 * time must be the coarse clock once it has passed the start. Repeated, as ticks fall where
 * they fall. */
Test(rt_ws_apply, written_just_before_the_start_is_no_conflict) {
        struct rtn_error err = {0};
        for (int i = 0; i < 20; i++) {
                char want[16];
                put(host, "a", "user\n", 0644);
                cr_assert_eq(rt_ws_prepare(pend, NULL, host, NULL, &err), 0, "%s", err.msg);
                mk(pend, RT_WS_DIR "/upper"); /* the sandbox's overlay makes it */
                snprintf(want, sizeof want, "agent %d\n", i);
                put(upper, "a", want, 0644);
                struct seen s = {0};
                int r = rt_ws_apply(pend, NULL, false, on_change, &s, &err);
                cr_assert_eq(r, 0, "round %d: %d refused: %s %s", i, r, s.lines[0], err.msg);
                cr_assert_str_eq(get(host, "a"), want);
        }
}

Test(rt_ws_apply, dry_run_writes_nothing) {
        put(host, "a", "a\n", 0644);
        record();
        put(upper, "a", "agent\n", 0644);
        put(upper, "n", "n\n", 0644);
        whiteout("gone");
        struct seen s = {0};
        struct rtn_error err = {0};
        cr_assert_eq(rt_ws_apply(pend, NULL, true, on_change, &s, &err), 0, "%s", err.msg);
        cr_assert(saw(&s, "M a") && saw(&s, "A n"));
        cr_assert_str_eq(get(host, "a"), "a\n");
        cr_assert(!exists(host, "n"));
        cr_assert(exists(upper, "a") && exists(upper, "n") && exists(upper, "gone"));
}

/* The record names another directory (the workspace was replaced): nothing is written. */
Test(rt_ws_apply, replaced_workspace) {
        record();
        put(upper, "n", "n\n", 0644);
        char moved[400];
        snprintf(moved, sizeof moved, "%s/old", dir);
        cr_assert_eq(rename(host, moved), 0);
        cr_assert_eq(mkdir(host, 0755), 0);
        struct seen s = {0};
        struct rtn_error err = {0};
        cr_assert_eq(rt_ws_apply(pend, NULL, false, on_change, &s, &err), -ESTALE);
        cr_assert(!exists(host, "n") && !exists(moved, "n"));
}

static void ln(const char *base, const char *rel, const char *target) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", base, rel);
        cr_assert_eq(symlink(target, p), 0, "symlink %s: %s", p, strerror(errno));
}

/* A link's target is resolved in the tree as it will be: through the agent's other links
 * (made before or after it in the walk), the host's own, a directory the agent replaced by
 * a link. What leaves is refused; what stays inside through links is written. */
Test(rt_ws_apply, links_resolved_through_links) {
        mk(host, "x");
        mk(host, "x/y");
        ln(host, "x/y/up", "../..");
        ln(host, "hout", "../elsewhere");
        mk(host, "hd");
        record();
        mk(upper, "p");
        mk(upper, "p/q");
        ln(upper, "p/q/L", "../..");
        ln(upper, "evil", "p/q/L/../etc/passwd");
        ln(upper, "aa", "zz/../x"); /* through a link later in the walk */
        ln(upper, "zz", ".");
        ln(upper, "viahost", "x/y/up/../x");
        ln(upper, "viaout", "hout/x");
        whiteout("hd");
        char p[1024];
        snprintf(p, sizeof p, "%s/hd", upper);
        cr_assert_eq(unlink(p), 0);
        ln(upper, "hd", ".");
        ln(upper, "viahd", "hd/../x");
        ln(upper, "loop", "loop/x");
        ln(upper, "fine", "x/y/up/p/q/L/x");
        struct seen s = {0};
        struct rtn_error err = {0};
        cr_assert_eq(rt_ws_apply(pend, NULL, false, on_change, &s, &err), 6, "%s", err.msg);
        const char *out[] = {"evil", "aa", "viahost", "viaout", "viahd"};
        for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
                char want[64];
                snprintf(want, sizeof want, "A %s: a symlink that leaves the workspace", out[i]);
                cr_assert(saw(&s, want), "%s not refused", out[i]);
                cr_assert(!exists(host, out[i]) && exists(upper, out[i]));
        }
        cr_assert(saw(&s, "A loop: a chain of symlinks too long"));
        cr_assert(exists(host, "fine") && exists(host, "zz") && exists(host, "p/q/L"));
        cr_assert(saw(&s, "M hd"), "the directory replaced by a link inside is written");
}
