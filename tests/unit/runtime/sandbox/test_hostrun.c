/* The registry of host-run files (runtime/sandbox/hostrun.c) and its matcher: every entry at
 * any depth, in any case, below it, and through both forms the walk and apply use. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "runtime/sandbox/hostrun.h"

static const char *matched(const char *rel) {
        const struct rt_hostrun *h = rt_hostrun_match(rel);
        return h ? h->name : NULL;
}

/* The walk's question: dir/name split at the last '/'. */
static const struct rt_hostrun *at(const char *rel) {
        const char *slash = strrchr(rel, '/');
        if (!slash)
                return rt_hostrun_at("", 0, rel, strlen(rel));
        return rt_hostrun_at(rel, (size_t)(slash - rel), slash + 1, strlen(slash + 1));
}

/* A path the pattern names: each '*' stands for "x-y". */
static void example(const char *pat, char *buf, size_t len) {
        size_t o = 0;
        for (const char *p = pat; *p && o + 4 < len; p++) {
                if (*p == '*') {
                        memcpy(buf + o, "x-y", 3);
                        o += 3;
                } else {
                        buf[o++] = *p;
                }
        }
        buf[o] = '\0';
}

/* Every entry, as a table: at the top, at any depth, below it, in upper case, and through
 * rt_hostrun_at as the live walk asks. */
Test(rt_hostrun_match, every_entry_anywhere) {
        size_t n = 0;
        for (const struct rt_hostrun *h = rt_hostrun_names; h->name; h++, n++) {
                char ex[256], path[512], upper[512];
                example(h->name, ex, sizeof ex);
                static const char *const forms[][2] = {
                        {"", ""},      {"a/", ""}, {"a/b/c/", ""}, {"/", ""},
                        {"./a//", ""}, {"", "/f"}, {"a/", "/d/f"},
                };
                for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
                        snprintf(path, sizeof path, "%s%s%s", forms[i][0], ex, forms[i][1]);
                        cr_assert_not_null(rt_hostrun_match(path), "%s: %s not matched", h->name,
                                           path);
                        for (size_t j = 0; path[j] || (upper[j] = '\0'); j++)
                                upper[j] = (char)toupper((unsigned char)path[j]);
                        cr_assert_not_null(rt_hostrun_match(upper), "%s: %s not matched", h->name,
                                           upper);
                }
                snprintf(path, sizeof path, "a/b/%s", ex);
                cr_assert_not_null(at(path), "%s: the walk misses %s", h->name, path);
                cr_assert(h->tool && *h->tool && h->why && *h->why, "%s: tool and why", h->name);
        }
        cr_assert_gt(n, 100);
}

/* The pattern form stays small: no empty component, no bare '*', one '*' per component. */
Test(rt_hostrun_match, patterns_are_bounded) {
        for (const struct rt_hostrun *h = rt_hostrun_names; h->name; h++) {
                const char *p = h->name;
                cr_assert(*p && p[0] != '/' && p[strlen(p) - 1] != '/', "%s", p);
                for (const char *c = p; *c;) {
                        size_t n = strcspn(c, "/");
                        const char *star = memchr(c, '*', n);
                        cr_assert(n > 0 && !(n == 1 && star), "%s: bad component", p);
                        cr_assert(!star || !memchr(star + 1, '*', n - (size_t)(star - c) - 1),
                                  "%s: two '*' in a component", p);
                        c += n + (c[n] == '/');
                }
        }
}

Test(rt_hostrun_match, known_files) {
        static const char *const cases[][2] = {
                {"sub/deeper/.git/hooks/pre-commit", ".git"},
                {".pre-commit-config.yaml", ".pre-commit-config.yaml"},
                {"lefthook.yml", "lefthook.*"},
                {"pkg/lefthook-local.yml", "lefthook-local.*"},
                {".lefthook.yml", ".lefthook*"},
                {".lefthook/pre-commit/x.sh", ".lefthook*"},
                {".husky/pre-commit", ".husky"},
                {"app/.envrc", ".envrc"},
                {"mise.toml", "mise*.toml"},
                {"mise.local.toml", "mise*.toml"},
                {".mise.toml", ".mise*.toml"},
                {".config/mise/config.toml", ".config/mise"},
                {".venv/lib/python3.11/site-packages/evil.pth", "*-packages/*.pth"},
                {"venv/Lib/site-packages/sitecustomize.py", "*-packages/sitecustomize.py"},
                {"/usr/lib/python3/dist-packages/x.pth", "*-packages/*.pth"},
                {".venv/pyvenv.cfg", "pyvenv.cfg"},
                {".cargo/config.toml", ".cargo/config*"},
                {"crates/a/.cargo/config", ".cargo/config*"},
                {".yarnrc.yml", ".yarnrc.yml"},
                {".yarn/releases/yarn-4.1.js", ".yarn/releases"},
                {".dir-locals.el", ".dir-locals*.el"},
                {".dir-locals-2.el", ".dir-locals*.el"},
                {"my.sublime-project", "*.sublime-project"},
                {".irbrc", ".irbrc"},
                {".bundle/config", ".bundle/config"},
                {".mvn/jvm.config", ".mvn"},
                {"prog-gdb.py", "*-gdb.py"},
                {".vscode/tasks.json", ".vscode"},
                {"opencode.jsonc", "opencode.json*"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                const char *m = matched(cases[i][0]);
                cr_assert(m && !strcmp(m, cases[i][1]), "%s: %s, not %s", cases[i][0],
                          m ? m : "nothing", cases[i][1]);
        }
}

Test(rt_hostrun_match, spellings) {
        cr_assert_str_eq(matched("/.git/config"), ".git");
        cr_assert_str_eq(matched("./a//.git"), ".git");
        cr_assert_str_eq(matched("a/.GIT/config"), ".git"); /* casefold filesystems */
        cr_assert_str_eq(matched(".BashRC"), ".bashrc");
        cr_assert_str_eq(matched("a/./.cargo//./CONFIG.TOML"), ".cargo/config*");
        cr_assert_str_eq(matched("x/SITE-PACKAGES/Evil.PTH"), "*-packages/*.pth");
}

Test(rt_hostrun_match, not_listed) {
        static const char *const cases[] = {
                "",
                "src/main.c",
                ".gitignore",
                ".git-old/config",
                "x.git/config",
                ".gi",
                "Makefile",
                "a/.github/workflows/ci.yml",
                "package.json",
                "setup.py",
                "config.toml",
                ".cargo/registry/x",
                "cargo/config.toml",
                "site-packages/x.py",
                "lib/site-packages/pkg/x.pth",
                "x.pth",
                ".nvmrc",
                ".python-version",
                ".tool-versions",
                "AGENTS.md",
                "sitecustomize.py",
                ".yarn/cache/x.zip",
                "gradle/libs.versions.toml",
                "mise",
                ".env.local",
                "README.md",
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
                cr_assert_null(matched(cases[i]), "%s matched %s", cases[i], matched(cases[i]));
}

/* A symlink named like a directory on a pattern's way would lead the host's lookup elsewhere. */
Test(rt_hostrun_on_way, heads_of_longer_patterns) {
        cr_assert_not_null(rt_hostrun_on_way("", 0, ".cargo", 6));
        cr_assert_not_null(rt_hostrun_on_way("a/b", 3, ".CARGO", 6));
        cr_assert_not_null(rt_hostrun_on_way(".venv/lib/python3.11", 20, "site-packages", 13));
        cr_assert_not_null(rt_hostrun_on_way("", 0, ".config", 7));
        cr_assert_not_null(rt_hostrun_on_way(".config", 7, "mise", 4)); /* mise/config.toml too */
        cr_assert_null(rt_hostrun_on_way("", 0, "src", 3));
        cr_assert_null(rt_hostrun_on_way("", 0, ".git", 4)); /* a whole entry, not a way */
}

Test(rt_hostrun_name, lengths) {
        cr_assert_not_null(rt_hostrun_name(".gitx", 4));
        cr_assert_null(rt_hostrun_name(".git", 3));
        cr_assert_not_null(rt_hostrun_name("LEFTHOOK.yml", 12));
        cr_assert_null(rt_hostrun_name("lefthook", 8)); /* the npm package, not its config */
        cr_assert_null(rt_hostrun_name("config.toml", 11)); /* only with .cargo/ before it */
}
