/* Host directory binds (runtime/sandbox/hostpath.c): which host paths an agent or the user may
 * bind, with real directories and symlinks in a temp dir standing in for $HOME. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"

static char top[256], home[300], path[512];

static void setup(void) {
        snprintf(top, sizeof top, "/tmp/rtn-hostpath.XXXXXX");
        cr_assert_not_null(mkdtemp(top));
        snprintf(home, sizeof home, "%s/home", top);
        cr_assert_eq(mkdir(home, 0700), 0);
        const char *dirs[] = {"proj", "proj/sub", "proj/.git", ".ssh", "data", "real"};
        for (size_t i = 0; i < 6; i++) {
                snprintf(path, sizeof path, "%s/%s", home, dirs[i]);
                cr_assert_eq(mkdir(path, 0700), 0);
        }
        snprintf(path, sizeof path, "%s/link", home);
        cr_assert_eq(symlink("real", path), 0);
}

static void teardown(void) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
        (void)!system(cmd);
}

static int check(const char *rel, bool agent, const char *const *roots, size_t nroots) {
        char data[300];
        snprintf(data, sizeof data, "%s/data", home);
        if (rel[0] == '/')
                snprintf(path, sizeof path, "%s", rel);
        else
                snprintf(path, sizeof path, "%s%s%s", home, *rel ? "/" : "", rel);
        struct rt_hostpath_policy pol = {
                .home = home, .data_dir = data, .roots = roots, .nroots = nroots, .agent = agent};
        struct rt_hostpath hp = {.fd = -1};
        struct rtn_error err = {0};
        int r = rt_hostpath_check(path, &pol, &hp, &err);
        if (r == 0) {
                struct stat st;
                cr_assert_eq(fstat(hp.fd, &st), 0);
                cr_assert_eq(st.st_ino, hp.ino);
                close(hp.fd);
        }
        return r;
}

TestSuite(rt_hostpath_check, .init = setup, .fini = teardown);

Test(rt_hostpath_check, project_below_home) {
        cr_assert_eq(check("proj", true, NULL, 0), 0);
        cr_assert_eq(check("proj/sub", true, NULL, 0), 0);
}

Test(rt_hostpath_check, home_itself_and_hidden) {
        cr_assert_eq(check("", true, NULL, 0), -EPERM);
        cr_assert_eq(check(".ssh", true, NULL, 0), -EPERM);
        cr_assert_eq(check("proj/.git", true, NULL, 0), -EPERM);
        cr_assert_eq(check(".ssh", false, NULL, 0), -EPERM); /* the user's --bind too */
        cr_assert_eq(check(".SSH", false, NULL, 0), -EPERM); /* another case, same store */
        cr_assert_eq(check(".ssh/x", false, NULL, 0), -EPERM);
        cr_assert_eq(check(".config/GH", false, NULL, 0), -EPERM);
}

/* The user's hidden toolchain directory: read-only, unless it holds a store that is there. */
Test(rt_hostpath_check, hidden_toolchain) {
        snprintf(path, sizeof path, "%s/.nvm", home);
        cr_assert_eq(mkdir(path, 0700), 0);
        cr_assert_eq(check(".nvm", true, NULL, 0), -EPERM); /* never the agent's */
        cr_assert_eq(check(".nvm", false, NULL, 0), 0);
        snprintf(path, sizeof path, "%s/.cargo", home);
        cr_assert_eq(mkdir(path, 0700), 0);
        cr_assert_eq(check(".cargo", false, NULL, 0), 0);
        snprintf(path, sizeof path, "%s/.cargo/credentials.toml", home);
        cr_assert_eq(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
        cr_assert_eq(check(".cargo", false, NULL, 0), -EPERM);
        struct rt_bind b = {.rw = true, .mode_given = true, .src = "x"};
        struct rtn_error err;
        cr_assert_eq(rt_bind_mode(&b, &(struct rt_hostpath){.hidden = true}, &err), -EPERM);
        b.mode_given = false;
        cr_assert_eq(rt_bind_mode(&b, &(struct rt_hostpath){.hidden = true}, &err), 0);
        cr_assert(!b.rw);
}

Test(rt_hostpath_check, symlink_on_the_way) {
        cr_assert_eq(check("link", true, NULL, 0), -ELOOP);
        cr_assert_eq(check("real", true, NULL, 0), 0);
}

Test(rt_hostpath_check, system_and_root) {
        cr_assert_eq(check("/", false, NULL, 0), -EPERM);
        cr_assert_eq(check("/etc", false, NULL, 0), -EPERM);
        cr_assert_eq(check("/usr/share", false, NULL, 0), -EPERM);
        cr_assert_eq(check("/proc/self", false, NULL, 0), -EPERM);
}

Test(rt_hostpath_check, data_dir_and_above) {
        cr_assert_eq(check("data", false, NULL, 0), -EPERM);
        cr_assert_eq(check(top, false, NULL, 0), -EPERM); /* holds the data dir */
}

Test(rt_hostpath_check, not_canonical) {
        cr_assert_eq(check("proj/../proj", true, NULL, 0), -EINVAL);
        cr_assert_eq(check("proj/", true, NULL, 0), -EINVAL);
        cr_assert_eq(check("proj//sub", true, NULL, 0), -EINVAL);
        cr_assert_eq(check("proj/./sub", true, NULL, 0), -EINVAL);
}

Test(rt_hostpath_check, agent_outside_home_needs_a_root) {
        char tmpl[] = "/tmp/rtn-hostpath-root.XXXXXX";
        cr_assert_not_null(mkdtemp(tmpl));
        cr_assert_eq(check(tmpl, true, NULL, 0), -EPERM);
        const char *roots[] = {tmpl};
        cr_assert_eq(check(tmpl, true, roots, 1), 0);
        cr_assert_eq(check(tmpl, false, NULL, 0), 0); /* the user may name it */
        rmdir(tmpl);
}

Test(rt_hostpath_check, other_users_home) {
        cr_assert_eq(check("/home", false, NULL, 0), -EPERM);
        cr_assert_eq(check("/root", true, NULL, 0), -EPERM);
}

Test(rt_hostpath_check, holds_home) {
        char up[300];
        snprintf(up, sizeof up, "%s", home);
        *strrchr(up, '/') = '\0';
        cr_assert_eq(check(up, false, NULL, 0), -EPERM); /* holds $HOME */
}

/* $HOME names a symlink to the real home: the real path is the home all the same. */
Test(rt_hostpath_check, home_through_symlink) {
        char link[320], sub[400];
        snprintf(link, sizeof link, "%s/homelink", top);
        cr_assert_eq(symlink(home, link), 0);
        struct rt_hostpath_policy pol = {.home = link, .agent = true};
        struct rt_hostpath hp = {.fd = -1};
        struct rtn_error err = {0};
        cr_assert_eq(rt_hostpath_check(home, &pol, &hp, &err), -EPERM);
        cr_assert(strstr(err.msg, "your home directory"), "%s", err.msg);
        snprintf(sub, sizeof sub, "%s/.ssh", home);
        cr_assert_eq(rt_hostpath_check(sub, &pol, &hp, &err), -EPERM);
        snprintf(sub, sizeof sub, "%s/proj", home);
        cr_assert_eq(rt_hostpath_check(sub, &pol, &hp, &err), 0);
        close(hp.fd);
}

/* A regular file may be bound (and says so); a FIFO, socket or device never. */
Test(rt_hostpath_check, files) {
        char f[400], fifo[400];
        snprintf(f, sizeof f, "%s/proj/file", home);
        snprintf(fifo, sizeof fifo, "%s/proj/fifo", home);
        cr_assert_eq(close(open(f, O_WRONLY | O_CREAT, 0644)), 0);
        cr_assert_eq(mkfifo(fifo, 0644), 0);
        struct rt_hostpath_policy pol = {.home = home, .agent = true};
        struct rt_hostpath hp = {.fd = -1};
        struct rtn_error err = {0};
        cr_assert_eq(rt_hostpath_check(f, &pol, &hp, &err), 0, "%s", err.msg);
        cr_assert(hp.file);
        close(hp.fd);
        cr_assert_eq(rt_hostpath_check(fifo, &pol, &hp, &err), -EINVAL);
        cr_assert(strstr(err.msg, "neither a directory nor a regular file"), "%s", err.msg);
        struct rt_bind b = {.src = f, .rw = true, .mode_given = true};
        cr_assert_eq(rt_bind_mode(&b, &(struct rt_hostpath){.file = true}, &err), -EPERM);
        b.mode_given = false;
        cr_assert_eq(rt_bind_mode(&b, &(struct rt_hostpath){.file = true}, &err), 0);
        cr_assert(!b.rw && b.file);
        unlink(f);
        unlink(fifo);
}

struct clean_case {
        const char *in, *out;
        bool rel_ok;
        int ret;
};

static const struct clean_case clean_cases[] = {{"/mnt/x/", "/mnt/x", false, 0},
                                                {"/mnt//x/./y//", "/mnt/x/y", false, 0},
                                                {"/", "/", false, 0},
                                                {"mnt/x", NULL, false, -EINVAL},
                                                {"/mnt/../etc", NULL, false, -EINVAL},
                                                {"", NULL, true, -EINVAL}};
#define NCLEAN (sizeof clean_cases / sizeof clean_cases[0])

/* Indexes: pointers do not survive the trip to the process a parameterized test runs in. */
ParameterizedTestParameters(rt_bind_path_clean, cases) {
        static int idx[NCLEAN];
        for (size_t i = 0; i < NCLEAN; i++)
                idx[i] = (int)i;
        return cr_make_param_array(int, idx, NCLEAN);
}

ParameterizedTest(int *i, rt_bind_path_clean, cases) {
        const struct clean_case *c = &clean_cases[*i];
        char buf[4096];
        struct rtn_error err = {0};
        snprintf(buf, sizeof buf, "%s", c->in);
        cr_assert_eq(rt_bind_path_clean(buf, sizeof buf, c->rel_ok, "p", &err), c->ret, "%s",
                     c->in);
        if (c->out)
                cr_assert_str_eq(buf, c->out);
}

Test(rt_bind_path_clean, relative) {
        char buf[4096], cwd[4096];
        struct rtn_error err = {0};
        cr_assert(getcwd(cwd, sizeof cwd));
        snprintf(buf, sizeof buf, "./a/");
        cr_assert_eq(rt_bind_path_clean(buf, sizeof buf, true, "p", &err), 0);
        cr_assert_str_eq(buf + strlen(cwd), "/a");
        cr_assert_eq(strncmp(buf, cwd, strlen(cwd)), 0);
}

Test(rt_mount_point_check, cases) {
        struct rtn_error err;
        cr_assert_eq(rt_mount_point_check("/workspace/p", true, &err), 0);
        cr_assert_eq(rt_mount_point_check("/mnt", true, &err), 0);
        cr_assert_eq(rt_mount_point_check("/mnt/a/b", true, &err), 0);
        cr_assert_eq(rt_mount_point_check("/workspace", true, &err), -EPERM);
        cr_assert_eq(rt_mount_point_check("/", true, &err), -EPERM);
        cr_assert_eq(rt_mount_point_check("/etc", true, &err), -EPERM);
        cr_assert_eq(rt_mount_point_check("/usr/x", true, &err), -EPERM);
        cr_assert_eq(rt_mount_point_check("/mntx", true, &err), -EPERM);
        cr_assert_eq(rt_mount_point_check("/mnt/../etc", true, &err), -EINVAL);
        cr_assert_eq(rt_mount_point_check("/mnt/a:b", true, &err), 0); /* written \\: in --bind */
        cr_assert_eq(rt_mount_point_check("/mnt/a,b", true, &err), -EINVAL);
        cr_assert_eq(rt_mount_point_check("mnt/a", true, &err), -EINVAL);
}

/* The user's --bind: anywhere docker's -v takes, but rtn's own paths and what holds them. */
Test(rt_mount_point_check, user) {
        struct rtn_error err;
        const char *ok[] = {"/usr/x", "/opt/t",       "/srv/d", "/home/rtn/.nvm", "/tmp/x",
                            "/mnt",   "/workspace/p", "/etc/x", "/run/x",         "/procx"};
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
                cr_assert_eq(rt_mount_point_check(ok[i], false, &err), 0, "%s", ok[i]);
        const char *no[] = {"/",          "/proc", "/proc/sys",  "/sys",        "/dev/pts",  "/run",
                            "/run/rtn/x", "/etc",  "/etc/hosts", "/etc/passwd", "/workspace"};
        for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
                cr_assert_eq(rt_mount_point_check(no[i], false, &err), -EPERM, "%s", no[i]);
        cr_assert_eq(rt_mount_point_check("/mnt/../proc", false, &err), -EINVAL);
}
