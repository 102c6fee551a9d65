/* The upper dir's clean-up before a commit (rt_upper_prune) and its removal (rt_rm_rf_at):
 * both act on a tree the agent made, so neither may follow a symlink out of it, and removal
 * must not depend on how deep the agent made it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/session/session.h"

static char top[256];

/* top/rel; two buffers in turn, so that one call can take two paths. */
static const char *at(const char *rel) {
        static char buf[2][600];
        static int k;
        k ^= 1;
        snprintf(buf[k], sizeof buf[k], "%s/%s", top, rel);
        return buf[k];
}

static void setup(void) {
        snprintf(top, sizeof top, "/tmp/rtn-upper.XXXXXX");
        cr_assert_not_null(mkdtemp(top));
}

static void teardown(void) {
        int d = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        (void)rt_rm_rf_at(d, top + strlen("/tmp/"));
        close(d);
}

TestSuite(rt_upper_prune, .init = setup, .fini = teardown);
TestSuite(rt_rm_rf_at, .init = setup, .fini = teardown);

/* upper/var is a symlink to a host dir holding an empty "tmp": pruning the skeleton's
 * var/tmp must not rmdir it; the skeleton's own empty dirs still go, real changes stay. */
Test(rt_upper_prune, never_follows_a_symlink_out) {
        const char *dirs[] = {"upper",          "host",      "host/tmp", "upper/home",
                              "upper/home/rtn", "upper/etc", "upper/mnt"};
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
                cr_assert_eq(mkdir(at(dirs[i]), 0755), 0, "%s", dirs[i]);
        cr_assert_eq(symlink(at("host"), at("upper/var")), 0);
        cr_assert_eq(close(open(at("upper/etc/changed"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        rt_upper_prune(at("upper"));
        struct stat st;
        cr_assert_eq(stat(at("host/tmp"), &st), 0, "the host dir behind the symlink was removed");
        cr_assert_eq(lstat(at("upper/var"), &st), 0);
        cr_assert_neq(lstat(at("upper/home"), &st), 0, "an empty skeleton dir was kept");
        cr_assert_neq(lstat(at("upper/mnt"), &st), 0, "an empty skeleton dir was kept");
        cr_assert_eq(lstat(at("upper/etc/changed"), &st), 0, "a change was removed");
}

/* 600 levels with 64 descriptors to spare: one open directory per level cannot do it. */
Test(rt_rm_rf_at, deeper_than_the_fd_limit) {
        struct rlimit rl = {64, 64};
        cr_assert_eq(mkdir(at("tree"), 0755), 0);
        /* Made writable, then given their modes from the bottom up (a user, unlike root,
         * cannot make a directory in a 0555 one): levels 0555, one of mode 0. */
        static int parent[600];
        int d = open(at("tree"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; i < 600; i++) {
                cr_assert_eq(mkdirat(d, "d", 0755), 0);
                parent[i] = d;
                cr_assert_geq(d = openat(d, "d", O_PATH | O_DIRECTORY | O_CLOEXEC), 0);
        }
        close(d);
        for (int i = 599; i >= 0; i--) {
                cr_assert_eq(fchmodat(parent[i], "d", i == 300 ? 0 : 0555, 0), 0);
                close(parent[i]);
        }
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        int top_fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_eq(rt_rm_rf_at(top_fd, "tree"), 0);
        struct stat st;
        cr_assert_neq(fstatat(top_fd, "tree", &st, AT_SYMLINK_NOFOLLOW), 0);
        close(top_fd);
}

/* A symlink inside the tree is removed, never followed. */
Test(rt_rm_rf_at, symlinks_are_not_followed) {
        cr_assert_eq(mkdir(at("tree"), 0755), 0);
        cr_assert_eq(mkdir(at("keep"), 0755), 0);
        cr_assert_eq(close(open(at("keep/f"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        cr_assert_eq(symlink(at("keep"), at("tree/link")), 0);
        int top_fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_eq(rt_rm_rf_at(top_fd, "tree"), 0);
        close(top_fd);
        struct stat st;
        cr_assert_eq(stat(at("keep/f"), &st), 0);
}
