/* The list of files host programs run by themselves (runtime/sandbox/hostrun.c) and its matcher. */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/sandbox/hostrun.h"

static const char *matched(const char *rel) {
        const struct rt_hostrun *h = rt_hostrun_match(rel);
        return h ? h->name : NULL;
}

Test(rt_hostrun_match, names_at_any_depth) {
        cr_assert_str_eq(matched(".git"), ".git");
        cr_assert_str_eq(matched(".git/config"), ".git");
        cr_assert_str_eq(matched("sub/deeper/.git/hooks/pre-commit"), ".git");
        cr_assert_str_eq(matched("a/.envrc"), ".envrc");
        cr_assert_str_eq(matched(".vscode/tasks.json"), ".vscode");
        cr_assert_str_eq(matched(".claude/settings.json"), ".claude");
        cr_assert_str_eq(matched(".mcp.json"), ".mcp.json");
        cr_assert_str_eq(matched(".gitmodules"), ".gitmodules");
}

Test(rt_hostrun_match, spellings) {
        cr_assert_str_eq(matched("/.git/config"), ".git");
        cr_assert_str_eq(matched("./a//.git"), ".git");
        cr_assert_str_eq(matched("a/.GIT/config"), ".git"); /* casefold filesystems */
        cr_assert_str_eq(matched(".BashRC"), ".bashrc");
}

Test(rt_hostrun_match, not_listed) {
        cr_assert_null(matched(""));
        cr_assert_null(matched("src/main.c"));
        cr_assert_null(matched(".gitignore"));
        cr_assert_null(matched(".git-old/config"));
        cr_assert_null(matched("x.git/config"));
        cr_assert_null(matched(".gi"));
        cr_assert_null(matched("Makefile"));
        cr_assert_null(matched("a/.github/workflows/ci.yml"));
}

Test(rt_hostrun_name, lengths) {
        cr_assert_not_null(rt_hostrun_name(".gitx", 4));
        cr_assert_null(rt_hostrun_name(".git", 3));
        for (const struct rt_hostrun *h = rt_hostrun_names; h->name; h++) {
                cr_assert_null(strchr(h->name, '/'), "%s: one component", h->name);
                cr_assert(h->why && *h->why);
        }
}
