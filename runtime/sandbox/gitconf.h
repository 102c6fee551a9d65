/* Protection that follows git's configuration (docs/security-invariants.md, 13 and 16). The name
 * list of runtime/sandbox/hostrun.h covers a repository's git dir, but its configuration can
 * name files of the work tree as code or as more configuration: core.hooksPath=.githooks,
 * include.path=../tools/git.conf, core.fsmonitor=tools/mon.sh, filter.x.clean=./scripts/clean.
 * rtn reads that configuration on the trusted side, the way git does, without running
 * anything of the repository's, and protects every path it names inside a bound directory
 * (runtime/sandbox/gitconf.c says which keys and how paths resolve). The same list carries
 * the user's own --protect paths. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define RT_GITCONF_FILE_MAX (1u << 20) /* bytes of one config file rtn reads */
#define RT_GITCONF_INCLUDE_DEPTH 10 /* git's MAX_INCLUDE_DEPTH */

/* One key of a config file: section and name lower-cased, sub (the subsection) as written
 * (lower-cased in the legacy [section.sub] form) or NULL, value NULL for a bare key (git's
 * boolean true). Returning < 0 stops the parse with that value. */
typedef int (*rt_gitconf_fn)(void *arg, const char *section, const char *sub, const char *name,
                             const char *value);

/* Parses one config file as git's config.c does: comments (# ;), [section], [section "sub"]
 * with \" and \\, the legacy [section.sub], keys of letters, digits and '-', values with
 * quotes, the escapes \n \t \b \\ \" and backslash-newline continuations, a UTF-8 BOM, CRLF.
 * Calls fn for each key up to the first syntax error, then returns -EINVAL (git refuses a
 * file with a bad line); 0 when the whole file parsed. */
int rt_gitconf_parse(const char *buf, size_t len, rt_gitconf_fn fn, void *arg);

/* Paths to protect inside one bound directory: "rel\0" K "why\0", rel relative to the bound
 * directory's top, why says which configuration names it, K what a missing rel is made before
 * the start (RT_MAKE_*). One allocation, made before clone3: the sandbox child reads it without
 * allocating. */
struct rt_pathlist {
        char *buf;
        size_t len, cap;
        uint32_t n;
        /* --workspace-git rw: the top's .git directory is pinned, not read-only, and what git
         * reads configuration or programs from inside it is on the list (rt_git_rw_paths) */
        bool git_rw;
};
/* What rtn makes where a listed path does not exist yet, so that a read-only mount has
 * something to cover: the kind git reads there. An empty file where git reads configuration,
 * attributes or a program is as if nothing were there; a directory there makes the owner's
 * every later git command fail ("bad config line"). */
enum rt_make { RT_MAKE_DIR = 'd', RT_MAKE_FILE = 'f', RT_MAKE_SELF = 's' };
/* What RT_MAKE_SELF makes: a git dir's `commondir` naming the git dir itself (git reads one
 * that exists, even empty or a dangling symlink, and dies on either: "failed to read"); git
 * then finds its common files where they are. */
#define RT_MAKE_SELF_TEXT ".\n"
int rt_pathlist_add(struct rt_pathlist *l, const char *rel, const char *why, enum rt_make make);
/* What a missing path of the pair whose why this is gets made as. */
enum rt_make rt_pathlist_make(const char *why);
void rt_pathlist_free(struct rt_pathlist *l);
/* The next pair after *off (0 to start): rel and why; false at the end. */
bool rt_pathlist_next(const struct rt_pathlist *l, size_t *off, const char **ret_rel,
                      const char **ret_why);
/* Why rel (relative to the top) may not be written: it is a listed path or lies below one, or,
 * unless it is a directory, a listed path lies below it (a symlink or file there would
 * redirect it). NULL when it may. */
const char *rt_pathlist_match(const struct rt_pathlist *l, const char *rel, bool dir);

/* Whether the live walk protects rel inside top already: the first leading part of rel that
 * a registry entry (runtime/sandbox/hostrun.h) matches exists, and the walk protects it with
 * all below (an existing `.git` covers `.git/hooks`). One that does not exist yet is left to
 * the list, which makes it before the start so that there is something to mount read-only. */
bool rt_pathlist_covered(const struct rt_pathlist *l, const char *top, const char *rel);
/* --workspace-git rw: adds what git reads configuration or programs from in top's .git
 * directory (config, config.worktree, commondir, hooks/, info/, objects/info/alternates,
 * worktrees/, modules/ ...) to l, and marks l git_rw. Nothing when top has no .git dir. */
int rt_git_rw_paths(const char *top, struct rt_pathlist *l, struct rtn_error *err);

/* path (absolute) made normal lexically into out: no ".", "..", or repeated slashes. */
int rt_path_normalise(const char *path, char out[4096]);

/* How a config file is read: the host's files (NULL), or a view such as an overlay
 * workspace's after its changes are applied. read returns -ENOENT for a file that is not
 * there; *ret is malloc'd, NUL-terminated. */
struct rt_gitconf_reader {
        int (*read)(void *arg, const char *path, char **ret, size_t *ret_len);
        void *arg;
};

/* The host's file at path, as the default reader reads it: a regular file of at most
 * RT_GITCONF_FILE_MAX bytes (-EFBIG beyond), else -ENOENT. */
int rt_gitconf_read_file(const char *path, char **ret, size_t *ret_len);

/* Adds to list every path inside top (a canonical host directory) that the configuration of
 * the repositories in it and around it (the one whose work tree holds top) names as a program
 * git runs or a file git reads as configuration. Fails (E2BIG, EFBIG) rather than leave a
 * path out. */
int rt_gitconf_paths(const char *top, const struct rt_gitconf_reader *rd, struct rt_pathlist *list,
                     struct rtn_error *err);

/* The user's --protect paths that lie in top (inside: its path inside the sandbox, as
 * "/workspace"), each relative to the workspace when it is relative, added to list. */
int rt_gitconf_user_paths(const char *top, const char *inside, const char *const *paths, size_t n,
                          struct rt_pathlist *list, struct rtn_error *err);

/* rtn's side before a live sandbox starts: the first missing component of each listed path is
 * made an empty directory, or for the last component an empty file where that is what git
 * reads there (owned as its parent), so the child has something to mount read-only over;
 * where that fails, the path is replaced by its nearest existing ancestor. */
int rt_pathlist_prepare(const char *top, struct rt_pathlist *list, struct rtn_error *err);
