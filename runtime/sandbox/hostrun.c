/* The registry of host-run files (runtime/sandbox/hostrun.h) and its matcher.
 *
 * The class (docs/security-invariants.md, 13): a working-tree file that a program on the host
 * reads as code or as its own configuration when the user does something in the directory
 * other than build or run the project by choice. On the list: a version control system's
 * repository and the hook frameworks it runs on commit, shell start-up files, environment
 * managers that act on `cd`, the settings editors, IDEs and coding agents read on open (tasks,
 * language servers, MCP servers, hooks), a language's start-up files and its tools' own
 * configuration (which program to run, with which options and plugins, whatever the command),
 * debuggers' init files.
 *
 * Not on it, each the user's to review before running it:
 * - the project's code, tests and build definition (Makefile, justfile, Taskfile.yml,
 *   package.json and its scripts, setup.py, pyproject.toml, conftest.py, Cargo.toml and
 *   build.rs, build.gradle, pom.xml, CMakeLists.txt), which run when the user builds, tests
 *   or runs the project, and also when an editor builds it on open (rust-analyzer, a Gradle
 *   import) or runs its linters with their own code configuration (eslint.config.js);
 * - its dependencies (node_modules, a venv's packages), code the project runs;
 * - data a tool reads without running anything (.editorconfig, .nvmrc, .node-version,
 *   .python-version, .ruby-version, .tool-versions, .sdkmanrc: a version to switch to;
 *   go.mod's toolchain line: a checksummed official download), and instructions read by a
 *   model (AGENTS.md, CLAUDE.md, .cursorrules), which run nothing;
 * - what a tool reads only from the home directory or the environment, never from the
 *   working tree (.condarc, .gemrc, .pythonrc, .inputrc, .curlrc), and what runs only when the
 *   user starts it (tmuxinator's project file, a task runner's tasks);
 * - what git's configuration names (core.hooksPath, a hooks dir such as .githooks): computed
 *   from the repository's config, not a fixed name.
 *
 * An entry is broad on purpose: a false match costs a refusal the user can override (rtn
 * apply --allow-protected) or a read-only file in a live bind; a missing one costs the host. */
#include <string.h>
#include <strings.h>

#include "runtime/sandbox/hostrun.h"

#define GIT "git runs its hooks, fsmonitor, pager and filters from a repository's git dir"
#define SHELL "a shell runs it at start-up"
#define VIM "vim and neovim source it with 'exrc'"
#define PTH "python runs its import lines at every start of that environment's interpreter"
#define CUSTOM "python imports it at every start of that environment's interpreter"

const struct rt_hostrun rt_hostrun_names[] = {
        /* version control: the repository's own config can name programs to run */
        {".git", "git", GIT},
        {".gitmodules", "git", "git clones and checks out the submodules it names"},
        {".gitattributes", "git", "git picks filter, diff and merge drivers by it"},
        {".gitconfig", "git", "git reads it where a config includes it"},
        {".hg", "Mercurial", "Mercurial runs hooks and loads extensions from .hg/hgrc"},
        {".jj", "Jujutsu",
         "Jujutsu runs the pager, diff tools and fsmonitor its repo config names"},
        /* git hook frameworks: once installed as hooks, they read their commands from here */
        {".pre-commit-config.yaml", "pre-commit",
         "pre-commit runs the hooks it names on git commit"},
        {"lefthook.*", "lefthook", "lefthook runs the commands it names on git commit and push"},
        {"lefthook-local.*", "lefthook", "lefthook runs the commands it names on git commit"},
        {".lefthook*", "lefthook", "lefthook runs the commands and scripts it names on git commit"},
        {".husky", "husky", "husky's git hooks run the scripts there on git commit and push"},
        {".overcommit.yml", "overcommit", "overcommit runs the hooks it names on git commit"},
        {".lintstagedrc*", "lint-staged", "lint-staged runs the commands it names on git commit"},
        {"lint-staged.config.*", "lint-staged", "lint-staged runs it and its commands on commit"},
        {".commitlintrc*", "commitlint", "commitlint loads it in the commit-msg hook"},
        {"commitlint.config.*", "commitlint", "commitlint runs it in the commit-msg hook"},
        /* shells */
        {".bashrc", "bash", SHELL},
        {".bash_profile", "bash", SHELL},
        {".bash_login", "bash", SHELL},
        {".bash_logout", "bash", "bash runs it at logout"},
        {".profile", "sh", SHELL},
        {".zshrc", "zsh", SHELL},
        {".zshenv", "zsh", SHELL},
        {".zprofile", "zsh", SHELL},
        {".zlogin", "zsh", SHELL},
        {".zlogout", "zsh", "zsh runs it at logout"},
        {".cshrc", "csh", SHELL},
        {".tcshrc", "tcsh", SHELL},
        {".login", "csh", SHELL},
        /* environment managers acting on cd */
        {".envrc", "direnv", "direnv runs it on cd (and nix-direnv the nix files it uses)"},
        {".env", "autoenv", "autoenv sources it on cd; direnv loads it with load_dotenv"},
        {".env.leave", "autoenv", "autoenv sources it when leaving the directory"},
        {".autoenv*", "autoenv", "autoenv and zsh-autoenv source it on cd"},
        {"mise*.toml", "mise",
         "mise runs its env scripts and enter hooks on cd, its tasks by name"},
        {".mise*.toml", "mise",
         "mise runs its env scripts and enter hooks on cd, its tasks by name"},
        {".mise", "mise", "mise reads its config and tasks there on cd"},
        {"mise/config.toml", "mise", "mise runs its env scripts and enter hooks on cd"},
        {".config/mise", "mise", "mise reads its config and tasks there on cd"},
        {".rtx.toml", "mise", "mise (formerly rtx) runs its env scripts on cd"},
        {".rvmrc", "rvm", "rvm sources it on cd"},
        {".ruby-env", "rvm", "rvm exports its variables on cd (RUBYOPT loads code)"},
        {"shell.nix", "nix", "nix-direnv and lorri evaluate it and run its shellHook on cd"},
        {"flake.nix", "nix", "nix-direnv evaluates it and runs its devShell's hook on cd"},
        {"flake.lock", "nix", "nix-direnv fetches and evaluates the inputs it pins on cd"},
        {"default.nix", "nix",
         "nix-direnv's use nix evaluates it on cd when there is no shell.nix"},
        /* editors and IDEs: settings read on open */
        {".vscode", "VS Code",
         "VS Code runs its tasks and applies its settings (terminal, interpreters)"},
        {"*.code-workspace", "VS Code", "VS Code applies its settings and tasks on open"},
        {".idea", "JetBrains IDEs", "JetBrains IDEs run its run configurations and external tools"},
        {".devcontainer", "VS Code", "VS Code runs its lifecycle commands"},
        {".devcontainer.json", "VS Code", "VS Code runs its lifecycle commands"},
        {".zed", "Zed", "Zed runs its tasks and language servers"},
        {".helix", "Helix", "Helix starts the language servers it names"},
        {".fleet", "Fleet", "Fleet runs its run configurations and applies its settings"},
        {".theia", "Theia", "Theia runs its tasks and launch configurations"},
        {".nova", "Nova", "Nova runs its tasks"},
        {"*.sublime-project", "Sublime Text",
         "Sublime Text starts the build systems and language servers it names"},
        {".dir-locals*.el", "Emacs", "Emacs evaluates its eval: forms on open"},
        {".exrc", "vim", VIM},
        {"_exrc", "vim", VIM},
        {".vimrc", "vim", VIM},
        {"_vimrc", "vim", VIM},
        {".gvimrc", "vim", VIM},
        {"_gvimrc", "vim", VIM},
        {".nvimrc", "neovim", VIM},
        {".nvim.lua", "neovim", VIM},
        {".lvimrc", "localvimrc", "vim's localvimrc plugin sources it on open"},
        /* coding agents and their tools */
        {".mcp.json", "Claude Code", "Claude Code starts the MCP servers it names"},
        {".claude", "Claude Code", "Claude Code runs the hooks and commands its settings name"},
        {".cursor", "Cursor", "Cursor starts the MCP servers it names"},
        {".gemini", "Gemini CLI", "Gemini CLI starts the MCP servers its settings name"},
        {".qwen", "Qwen Code", "Qwen Code starts the MCP servers its settings name"},
        {".codex", "Codex", "Codex reads its config there"},
        {".aider.conf.yml", "aider", "aider runs its lint and test commands"},
        {".continue", "Continue", "Continue starts the MCP servers its config names"},
        {".windsurf", "Windsurf", "Windsurf runs its hooks and workflows"},
        {".roo", "Roo Code", "Roo Code starts the MCP servers its mcp.json names"},
        {".clinerules", "Cline", "Cline runs the hooks there"},
        {"opencode.json*", "opencode", "opencode starts the MCP servers and commands it names"},
        {".opencode", "opencode", "opencode loads its plugins (JavaScript) from there"},
        {".amazonq", "Amazon Q", "Amazon Q starts the MCP servers its mcp.json names"},
        {".kiro", "Kiro", "Kiro runs its hooks and starts the MCP servers its settings name"},
        {"*crush.json", "Crush", "Crush starts the MCP and language servers it names"},
        {".ripgreprc", "ripgrep", "ripgrep reads it where RIPGREP_CONFIG_PATH names it (--pre)"},
        /* Python: start-up files of an environment, and the debugger's */
        {"pyvenv.cfg", "python", "python reads it at start-up to find its home and site-packages"},
        {"*-packages/*.pth", "python", PTH},
        {"*-packages/sitecustomize.py", "python", CUSTOM},
        {"*-packages/usercustomize.py", "python", CUSTOM},
        {"*-packages/_virtualenv.py", "python",
         "python imports it at start-up (virtualenv's .pth)"},
        {"*-packages/_distutils_hack", "python",
         "python imports it at start-up (setuptools' .pth)"},
        {"*-packages/__editable__*", "python",
         "python imports it at start-up (an editable install's .pth and finder)"},
        {"bin/activate*", "a venv",
         "a shell sources it to enter the environment, an editor in each new terminal"},
        {".pdbrc", "pdb", "pdb runs its commands when it starts"},
        /* Ruby */
        {".irbrc", "irb", "irb runs it at start-up"},
        {"_irbrc", "irb", "irb runs it at start-up"},
        {"irb.rc", "irb", "irb runs it at start-up"},
        {".pryrc", "pry", "pry runs it at start-up"},
        {".bundle/config", "bundler", "bundler reads it on every command (BUNDLE_GEMFILE, paths)"},
        /* Node */
        {".npmrc", "npm", "npm reads it on every command (script-shell, node-options, git)"},
        {".yarnrc", "yarn", "yarn runs the yarn-path it names on every command"},
        {".yarnrc.yml", "yarn", "yarn runs the yarnPath and plugins it names on every command"},
        {".yarn/releases", "yarn", "yarn runs the release its yarnPath names on every command"},
        {".yarn/plugins", "yarn", "yarn loads its plugins on every command"},
        {".pnpmfile.cjs", "pnpm", "pnpm runs its hooks on every install"},
        /* Rust */
        {"rust-toolchain", "rustup",
         "rustup runs cargo and rustc from the toolchain path it names"},
        {"rust-toolchain.toml", "rustup",
         "rustup runs cargo and rustc from the toolchain path it names"},
        {".cargo/config*", "cargo",
         "cargo runs the runner, rustc-wrapper, linker and aliases it names"},
        /* JVM */
        {".mvn", "Maven",
         "Maven loads the JVM options, config and extensions there on every command"},
        {"gradle.properties", "Gradle", "Gradle starts its daemon with the JVM options it names"},
        {"gradle/wrapper", "Gradle",
         "the Gradle wrapper and IDE imports run the distribution it names"},
        {".sbtopts", "sbt", "sbt starts the JVM with the options it names"},
        {".jvmopts", "sbt", "sbt starts the JVM with the options it names"},
        /* other languages' start-up files */
        {".Rprofile", "R", "R runs it at start-up"},
        {".Renviron", "R", "R reads its variables at start-up (R_PROFILE_USER names code)"},
        {".ghci", "GHCi", "GHCi runs its commands at start-up"},
        {".octaverc", "Octave", "Octave runs it at start-up"},
        /* debuggers */
        {".gdbinit", "gdb", "gdb runs it at start-up where auto-load allows"},
        {"*-gdb.py", "gdb", "gdb runs it when it loads the program it is named for"},
        {"*-gdb.gdb", "gdb", "gdb runs it when it loads the program it is named for"},
        {".lldbinit", "lldb", "lldb runs it at start-up with target.load-cwd-lldbinit"},
        {NULL, NULL, NULL},
};

/* ---- the matcher --------------------------------------------------------------------------- */

/* The components of s[0..end) from the last: a cursor that skips empty and "." ones. */
struct rcur {
        const char *s;
        size_t end;
};

static bool prev_comp(struct rcur *c, const char **ret, size_t *ret_len) {
        for (;;) {
                while (c->end && c->s[c->end - 1] == '/')
                        c->end--;
                if (!c->end)
                        return false;
                size_t b = c->end;
                while (b && c->s[b - 1] != '/')
                        b--;
                *ret = c->s + b;
                *ret_len = c->end - b;
                c->end = b;
                if (!(*ret_len == 1 && **ret == '.'))
                        return true;
        }
}

/* One component against one pattern component: a name, or a name with one '*'. */
static bool comp_eq(const char *p, size_t plen, const char *s, size_t slen) {
        const char *star = memchr(p, '*', plen);
        if (!star)
                return plen == slen && !strncasecmp(p, s, slen);
        size_t pre = (size_t)(star - p), suf = plen - pre - 1;
        return slen >= pre + suf && !strncasecmp(p, s, pre) &&
               !strncasecmp(star + 1, s + slen - suf, suf);
}

/* Whether pat[0..plen) matches the trailing components of the path whose last component is
 * name and whose others are the cursor's. */
static bool tail_match(const char *pat, size_t plen, const char *name, size_t nlen,
                       struct rcur dir) {
        struct rcur pc = {pat, plen};
        const char *p, *s;
        size_t pl, sl;
        if (!prev_comp(&pc, &p, &pl) || !comp_eq(p, pl, name, nlen))
                return false;
        while (prev_comp(&pc, &p, &pl))
                if (!prev_comp(&dir, &s, &sl) || !comp_eq(p, pl, s, sl))
                        return false;
        return true;
}

static const struct rt_hostrun *at(struct rcur dir, const char *name, size_t nlen) {
        for (const struct rt_hostrun *h = rt_hostrun_names; h->name; h++)
                if (tail_match(h->name, strlen(h->name), name, nlen, dir))
                        return h;
        return NULL;
}

const struct rt_hostrun *rt_hostrun_at(const char *dir, size_t dir_len, const char *name,
                                       size_t name_len) {
        return at((struct rcur){dir, dir_len}, name, name_len);
}

const struct rt_hostrun *rt_hostrun_name(const char *name, size_t len) {
        for (const struct rt_hostrun *h = rt_hostrun_names; h->name; h++)
                if (!strchr(h->name, '/') && comp_eq(h->name, strlen(h->name), name, len))
                        return h;
        return NULL;
}

/* The entry whose pattern rel[0..end) ends with. */
static const struct rt_hostrun *ends_with(const char *rel, size_t end) {
        struct rcur c = {rel, end};
        const char *name;
        size_t nlen;
        if (!prev_comp(&c, &name, &nlen))
                return NULL;
        return at(c, name, nlen);
}

const struct rt_hostrun *rt_hostrun_match(const char *rel) {
        for (size_t end = 0;;) {
                end += strspn(rel + end, "/");
                if (!rel[end])
                        return NULL;
                end += strcspn(rel + end, "/");
                const struct rt_hostrun *h = ends_with(rel, end);
                if (h)
                        return h;
        }
}

const struct rt_hostrun *rt_hostrun_on_way(const char *dir, size_t dir_len, const char *name,
                                           size_t name_len) {
        struct rcur c = {dir, dir_len};
        for (const struct rt_hostrun *h = rt_hostrun_names; h->name; h++)
                for (const char *s = strchr(h->name, '/'); s; s = strchr(s + 1, '/'))
                        if (tail_match(h->name, (size_t)(s - h->name), name, name_len, c))
                                return h;
        return NULL;
}
