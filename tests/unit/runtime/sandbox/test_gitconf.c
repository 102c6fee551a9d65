/* git's config syntax (runtime/sandbox/gitconf_parse.c), what the configuration of a repository
 * names (runtime/sandbox/gitconf.c) and the list's matcher (runtime/sandbox/protectlist.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/sandbox/gitconf.h"

struct keys {
        char out[4096];
};

static int collect(void *arg, const char *section, const char *sub, const char *name,
                   const char *value) {
        struct keys *k = arg;
        size_t n = strlen(k->out);
        snprintf(k->out + n, sizeof k->out - n, "%s%s%s.%s=%s|", section, sub ? "." : "",
                 sub ? sub : "", name, value ? value : "(null)");
        return 0;
}

static const char *parse(const char *text, int *ret) {
        static struct keys k;
        memset(&k, 0, sizeof k);
        *ret = rt_gitconf_parse(text, strlen(text), collect, &k);
        return k.out;
}

Test(rt_gitconf_parse, sections_and_keys) {
        int r;
        cr_assert_str_eq(parse("[core]\n\thooksPath = .githooks\n", &r),
                         "core.hookspath=.githooks|");
        cr_assert_eq(r, 0);
        cr_assert_str_eq(parse("[Diff \"X Y\"]\ntextconv=a\n", &r), "diff.X Y.textconv=a|");
        cr_assert_str_eq(parse("[diff.X]\ntextconv=a\n", &r), "diff.x.textconv=a|"); /* legacy */
        cr_assert_str_eq(parse("[a \"q\\\"\\\\z\"]\nk=v\n", &r), "a.q\"\\z.k=v|");
        cr_assert_str_eq(parse("[core] pager = less\n", &r), "core.pager=less|");
        cr_assert_str_eq(parse("[Diff.A \"B\"]\nk=v\n", &r), "diff.a.B.k=v|"); /* fuzz_gitconf */
        cr_assert_str_eq(parse("[core]\nbare\n", &r), "core.bare=(null)|");
        cr_assert_str_eq(parse("\xef\xbb\xbf[core]\r\npager = p\r\n", &r), "core.pager=p|");
}

Test(rt_gitconf_parse, values) {
        int r;
        cr_assert_str_eq(parse("[a]\nk = \"x ; y\" # c\n", &r), "a.k=x ; y|");
        cr_assert_str_eq(parse("[a]\nk = x ; y\n", &r), "a.k=x|");
        cr_assert_str_eq(parse("[a]\nk = one \\\n two\n", &r), "a.k=one  two|");
        cr_assert_str_eq(parse("[a]\nk = a\\tb\\\\c\\\"\n", &r), "a.k=a\tb\\c\"|");
        cr_assert_str_eq(parse("[a]\nk =   x   y   \n", &r), "a.k=x   y|");
        cr_assert_str_eq(parse("; c\n# c\n[a]\n\n  k=1\n", &r), "a.k=1|");
        cr_assert_eq(r, 0);
}

Test(rt_gitconf_parse, errors_stop_after_what_parsed) {
        int r;
        cr_assert_str_eq(parse("[a]\nk=1\n[b\nk=2\n", &r), "a.k=1|");
        cr_assert_eq(r, -EINVAL);
        parse("[a]\nk = \"open\n", &r);
        cr_assert_eq(r, -EINVAL);
        parse("[a]\nk = \\q\n", &r);
        cr_assert_eq(r, -EINVAL);
        parse("k = v\n", &r); /* no section */
        cr_assert_eq(r, -EINVAL);
        parse("[a \"x]\n", &r);
        cr_assert_eq(r, -EINVAL);
        parse("[a]\n1k = v\n", &r);
        cr_assert_eq(r, -EINVAL);
        parse("[", &r);
        cr_assert_eq(r, -EINVAL);
        parse("[.x]\nk=v\n", &r);
        cr_assert_eq(r, -EINVAL);
}

/* ---- what a repository's configuration names ---------------------------------------------- */

static char dir[PATH_MAX];

static void put(const char *rel, const char *text) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/%s", dir, rel);
        char *slash = strrchr(p, '/');
        *slash = '\0';
        char cmd[PATH_MAX + 128];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
        cr_assert_eq(system(cmd), 0);
        *slash = '/';
        FILE *f = fopen(p, "w");
        cr_assert(f);
        fputs(text, f);
        fclose(f);
}

static void setup(void) {
        char tmpl[] = "/tmp/gitconf.XXXXXX";
        cr_assert(mkdtemp(tmpl));
        cr_assert(realpath(tmpl, dir));
        setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
        setenv("HOME", dir, 1); /* no ~/.gitconfig there */
        unsetenv("XDG_CONFIG_HOME");
        unsetenv("GIT_CONFIG_GLOBAL");
        put("ws/.git/HEAD", "ref: refs/heads/main\n");
        put("ws/.git/objects/x", "");
        put("ws/.git/refs/x", "");
}

static void teardown(void) {
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
}

/* The listed paths, "rel|rel|...". */
static const char *paths(void) {
        static char out[8192];
        char top[PATH_MAX + 8];
        snprintf(top, sizeof top, "%s/ws", dir);
        struct rt_pathlist l = {0};
        struct rtn_error err = {0};
        int r = rt_gitconf_paths(top, NULL, &l, &err);
        cr_assert_geq(r, 0, "%s", err.msg);
        out[0] = '\0';
        size_t off = 0;
        const char *rel, *why;
        while (rt_pathlist_next(&l, &off, &rel, &why)) {
                strcat(out, rel);
                strcat(out, "|");
        }
        rt_pathlist_free(&l);
        return out;
}

Test(rt_gitconf_paths, hooks_includes_commands, .init = setup, .fini = teardown) {
        put("ws/tools/git.conf", "[core]\n\tfsmonitor = tools/mon.sh\n");
        put("ws/.git/config", "[core]\n\thooksPath = .githooks\n"
                              "[include]\n\tpath = ../tools/git.conf\n"
                              "[filter \"x\"]\n\tclean = ./scripts/clean --opt\n"
                              "[alias]\n\tst = \"!./tools/st && git status\"\n"
                              "\tlg = log origin/main\n"
                              "[core]\n\tpager = less\n\texcludesFile = ignored\n");
        cr_assert_str_eq(paths(), ".githooks|tools/git.conf|tools/mon.sh|scripts/clean|tools/st|");
}

Test(rt_gitconf_paths, outside_and_inside_git_dir, .init = setup, .fini = teardown) {
        put("ws/.git/config", "[core]\n\thooksPath = .git/hooks\n\teditor = /usr/bin/vi\n"
                              "\tsshCommand = ../other/ssh\n");
        cr_assert_str_eq(paths(), ""); /* the git dir is on the name list; the rest is outside */
}

Test(rt_gitconf_paths, include_if_and_worktree, .init = setup, .fini = teardown) {
        put("ws/.git/config", "[includeIf \"gitdir:/nowhere/\"]\n\tpath = ../a.conf\n");
        put("ws/a.conf", "[include]\n\tpath = b.conf\n");
        put("ws/b.conf", "[diff \"x\"]\n\ttextconv = sh conv.sh\n");
        put("ws/conv.sh", "");
        put("ws/.git/config.worktree", "[core]\n\tattributesFile = attrs\n");
        cr_assert_str_eq(paths(), "a.conf|b.conf|conv.sh|attrs|");
}

Test(rt_gitconf_paths, include_loop_is_bounded, .init = setup, .fini = teardown) {
        put("ws/.git/config", "[include]\n\tpath = ../loop.conf\n");
        put("ws/loop.conf", "[include]\n\tpath = loop.conf\n");
        char top[PATH_MAX + 8];
        snprintf(top, sizeof top, "%s/ws", dir);
        struct rt_pathlist l = {0};
        struct rtn_error err = {0};
        cr_assert_eq(rt_gitconf_paths(top, NULL, &l, &err), -ELOOP);
        cr_assert(strstr(err.msg, "10 levels"), "%s", err.msg);
        rt_pathlist_free(&l);
}

Test(rt_gitconf_paths, enclosing_repository, .init = setup, .fini = teardown) {
        /* the bound dir is ws/sub; the repository's hooks are below it */
        put("ws/.git/config", "[core]\n\thooksPath = sub/hooks\n");
        put("ws/sub/x", "");
        char top[PATH_MAX + 8];
        snprintf(top, sizeof top, "%s/ws/sub", dir);
        struct rt_pathlist l = {0};
        struct rtn_error err = {0};
        cr_assert_geq(rt_gitconf_paths(top, NULL, &l, &err), 0, "%s", err.msg);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.buf, "hooks");
        rt_pathlist_free(&l);
}

Test(rt_pathlist_match, below_and_above) {
        struct rt_pathlist l = {0};
        cr_assert_eq(rt_pathlist_add(&l, "tools/mon.sh", "why", RT_MAKE_FILE), 0);
        cr_assert_eq(rt_pathlist_add(&l, "tools/mon.sh", "again", RT_MAKE_DIR), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(rt_pathlist_match(&l, "tools/mon.sh", false), "why");
        cr_assert_str_eq(rt_pathlist_match(&l, "tools/mon.sh/x", false), "why");
        cr_assert_str_eq(rt_pathlist_match(&l, "tools", false), "why"); /* a link there */
        cr_assert_null(rt_pathlist_match(&l, "tools", true)); /* a directory may be made */
        cr_assert_str_eq(rt_pathlist_match(&l, "Tools/MON.sh", false), "why"); /* casefold */
        cr_assert_null(rt_pathlist_match(&l, "tools/mon", false));
        cr_assert_null(rt_pathlist_match(&l, "tool", false));
        rt_pathlist_free(&l);
}

/* --workspace-git rw: every place in .git that git reads configuration or programs from is
 * listed, no longer covered by a read-only .git, and made before the start when missing as
 * what git finds there (a commondir naming the git dir itself: an empty one stops git). */
Test(rt_git_rw_paths, listed_and_made) {
        char tmp[] = "/tmp/rtn-gitrw.XXXXXX", path[PATH_MAX + 64];
        cr_assert_not_null(mkdtemp(tmp));
        snprintf(path, sizeof path, "%s/.git/objects/info", tmp);
        char cmd[PATH_MAX + 64];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/.git/hooks'", path, tmp);
        cr_assert_eq(system(cmd), 0);
        struct rt_pathlist ro = {0}, rw = {0};
        cr_assert(rt_pathlist_covered(&ro, tmp, ".git/hooks")); /* .git read-only covers it */
        struct rtn_error err = {0};
        cr_assert_eq(rt_git_rw_paths(tmp, &rw, &err), 0, "%s", err.msg);
        cr_assert(rw.git_rw);
        cr_assert_not(rt_pathlist_covered(&rw, tmp, ".git/hooks"));
        cr_assert_not_null(rt_pathlist_match(&rw, ".git/commondir", false));
        cr_assert_not_null(rt_pathlist_match(&rw, ".git/config", false));
        cr_assert_not_null(rt_pathlist_match(&rw, ".git/hooks/pre-commit", false));
        cr_assert_not_null(rt_pathlist_match(&rw, ".git/worktrees/x/gitdir", false));
        cr_assert_not_null(rt_pathlist_match(&rw, ".git/objects/info/alternates", false));
        cr_assert_null(rt_pathlist_match(&rw, ".git/objects/ab/cdef", false));
        cr_assert_null(rt_pathlist_match(&rw, ".git/index", false));
        cr_assert_null(rt_pathlist_match(&rw, ".git/refs/heads/main", false));
        cr_assert_eq(rt_pathlist_prepare(tmp, &rw, &err), 0, "%s", err.msg);
        cr_assert(rw.git_rw);
        char buf[8] = {0};
        snprintf(path, sizeof path, "%s/.git/commondir", tmp);
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f);
        cr_assert_eq(fread(buf, 1, sizeof buf - 1, f), 2);
        fclose(f);
        cr_assert_str_eq(buf, ".\n");
        struct stat st;
        snprintf(path, sizeof path, "%s/.git/config.worktree", tmp);
        cr_assert_eq(stat(path, &st), 0);
        cr_assert(S_ISREG(st.st_mode) && st.st_size == 0);
        snprintf(path, sizeof path, "%s/.git/worktrees", tmp);
        cr_assert_eq(stat(path, &st), 0);
        cr_assert(S_ISDIR(st.st_mode));
        rt_pathlist_free(&rw);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        (void)!system(cmd);
}
