/* The list of files host programs run or read by itself (runtime/sandbox/hostrun.h), and its
 * matcher. What is on it: the program that acts on the file without being asked to run the
 * project's code — `git status` in a repository, a login shell, `cd` with direnv, opening the
 * folder in an editor or a coding agent. What is not: build files (Makefile, package.json,
 * .npmrc, setup.py), which run only when the user builds, and instructions read by a model
 * (AGENTS.md), which run nothing. */
#include <string.h>
#include <strings.h>

#include "runtime/sandbox/hostrun.h"

#define GIT "git runs its hooks, fsmonitor, pager and filters from a repository's git dir"
#define SHELL "a shell runs it at start-up"

const struct rt_hostrun rt_hostrun_names[] = {
        /* version control: the repository's own config can name programs to run */
        {".git", GIT},
        {".gitmodules", "git clones and checks out the submodules it names"},
        {".gitattributes", "git picks filter, diff and merge drivers by it"},
        {".gitconfig", "git reads it where a config includes it"},
        {".hg", "Mercurial runs hooks and loads extensions from .hg/hgrc"},
        {".jj", "Jujutsu runs the pager, diff tools and fsmonitor its repo config names"},
        /* shells */
        {".bashrc", SHELL},
        {".bash_profile", SHELL},
        {".bash_login", SHELL},
        {".bash_logout", "bash runs it at logout"},
        {".profile", SHELL},
        {".zshrc", SHELL},
        {".zshenv", SHELL},
        {".zprofile", SHELL},
        {".zlogin", SHELL},
        {".zlogout", "zsh runs it at logout"},
        {".cshrc", SHELL},
        {".tcshrc", SHELL},
        {".login", SHELL},
        {".envrc", "direnv loads it on cd"},
        /* editors */
        {".vscode", "VS Code runs its tasks and applies its settings (terminal, interpreters)"},
        {".idea", "JetBrains IDEs run its run configurations and external tools"},
        {".devcontainer", "VS Code runs its lifecycle commands"},
        {".zed", "Zed runs its tasks and language servers"},
        {".helix", "Helix starts the language servers it names"},
        {".exrc", "vim and neovim source it with 'exrc'"},
        {".nvimrc", "neovim sources it with 'exrc'"},
        {".nvim.lua", "neovim sources it with 'exrc'"},
        /* coding agents and their tools */
        {".mcp.json", "Claude Code starts the MCP servers it names"},
        {".claude", "Claude Code runs the hooks and commands its settings name"},
        {".cursor", "Cursor starts the MCP servers it names"},
        {".gemini", "Gemini CLI starts the MCP servers its settings name"},
        {".codex", "Codex reads its config there"},
        {".aider.conf.yml", "aider runs its lint and test commands"},
        {".ripgreprc", "ripgrep reads it where RIPGREP_CONFIG_PATH names it (--pre)"},
        {NULL, NULL},
};

const struct rt_hostrun *rt_hostrun_name(const char *name, size_t len) {
        for (const struct rt_hostrun *h = rt_hostrun_names; h->name; h++)
                if (strlen(h->name) == len && !strncasecmp(h->name, name, len))
                        return h;
        return NULL;
}

const struct rt_hostrun *rt_hostrun_match(const char *rel) {
        for (const char *p = rel; *p;) {
                size_t n = strcspn(p, "/");
                const struct rt_hostrun *h = rt_hostrun_name(p, n);
                if (h)
                        return h;
                p += n;
                p += strspn(p, "/");
        }
        return NULL;
}
