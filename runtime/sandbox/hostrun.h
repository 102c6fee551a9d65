/* The registry of host-run files (docs/security-invariants.md, 13 and 16): a working-tree file
 * that a program on the host reads as code or as its own configuration when the user does
 * something in the directory other than build or run the project by choice — `git commit`
 * with a hook framework installed, `cd` with direnv or mise, opening the folder in an editor
 * or a coding agent, starting the project's Python, a debugger. One home for the list and for
 * its matching rule: a live host bind protects the ones present when the sandbox starts
 * (runtime/sandbox/protect.c), and writing an overlay's changes back to the host refuses them
 * all (runtime/session/wsapply.c). runtime/sandbox/hostrun.c says what is on the list, what is
 * not, and why.
 *
 * An entry's pattern is one or more path components joined by '/' (`.git`,
 * `.cargo/config*`, `*-packages` over `*.pth`). Each component is a name, or a name with one '*'
 * that stands for any run of characters within that component. A path matches when some run
 * of its consecutive components, starting at any depth, matches the pattern's components in
 * order (`.cargo/config.toml` in a subdirectory too); the entry then covers that path and
 * everything below it, whether it is a file or a directory (a worktree's `.git` is a file).
 * Names compare without regard to ASCII case: on a case-insensitive filesystem (ext4
 * casefold, vfat) `.GIT` is `.git`. Matching allocates nothing, so the sandbox child's walk
 * uses it between clone3 and execve. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "common/err.h"

struct rt_hostrun {
        const char *name; /* the pattern, e.g. ".git" or ".cargo/config*" */
        const char *tool; /* the host program that reads it */
        const char *why; /* what it runs and when, for messages and env_status */
};

/* The registry, ended by an entry whose name is NULL. */
extern const struct rt_hostrun rt_hostrun_names[];

/* The entry whose pattern the path dir/name ends with (dir: dir_len bytes, '/'-separated,
 * "" for the top; name: one component of name_len bytes, neither NUL-terminated), or NULL.
 * The walk of a live bind asks this of each entry it meets. */
const struct rt_hostrun *rt_hostrun_at(const char *dir, size_t dir_len, const char *name,
                                       size_t name_len);

/* The entry of a one-component pattern that name (len bytes) matches, or NULL. */
const struct rt_hostrun *rt_hostrun_name(const char *name, size_t len);

/* Whether rel, a path relative to the root of a bound directory ('/'-separated; a leading
 * '/', empty and "." components are ignored; ".." is the caller's to refuse), matches an
 * entry or lies below a match: the entry of the shallowest match, or NULL.
 * `sub/.git/config` gives `.git`, `a/.cargo/config.toml` gives `.cargo/config*`. */
const struct rt_hostrun *rt_hostrun_match(const char *rel);

/* Whether dir/name (as for rt_hostrun_at) ends where a longer pattern is still on its way
 * (`.cargo`, `lib/site-packages`): a symlink there would let a host program read the
 * registry's file through it from anywhere the link points. The entry, or NULL. */
const struct rt_hostrun *rt_hostrun_on_way(const char *dir, size_t dir_len, const char *name,
                                           size_t name_len);

/* When a command started, as the file system of its live workspace tells time: fs is the
 * ctime of a change to an unnamed file (O_TMPFILE) made on it, beside the workspace (in its
 * parent, where no watcher of the workspace sees it) or else in it, and dev that file system,
 * when one could be made; coarse the realtime clock's coarse reading cut to an even second,
 * for files of other file systems (which may keep whole seconds, or two). A file of dev
 * changed before has an earlier ctime than fs, one changed after none earlier. The coarse
 * clock alone lags a fine-grained ctime (multigrain file systems, Linux 6.13 and later) by up
 * to a tick: a file changed just before the start looked changed by the command. */
struct rt_hostrun_mark {
        struct timespec coarse, fs;
        dev_t dev;
        bool has_fs;
        /* What the walk at the start protected (paths relative to the workspace, NUL after
         * each: rt_protect_bind's list; NULL when there was none, or the workspace was a git
         * dir whole): an entry not there is named also when a directory on its way changed
         * (one renamed into a registry name keeps its files' ctimes); listed_all: the list
         * holds every one (else an entry past its end is judged as not there). */
        const char *listed;
        uint32_t nlisted;
        bool listed_all;
};
void rt_hostrun_now(const char *dir, struct rt_hostrun_mark *ret);
/* The registry's files (and git dirs) in the host directory dir, walked whole as a live bind
 * is, whose status changed at or after since (fs on its file system, coarse elsewhere): what a
 * command made in a live workspace, which the walk at its start could not protect. fn gets each
 * path (relative to dir) and its entry; non-zero from it stops the walk and is returned. */
typedef int (*rt_hostrun_found_fn)(const char *rel, const struct rt_hostrun *h, void *ud);
int rt_hostrun_since(const char *dir, const struct rt_hostrun_mark *since, rt_hostrun_found_fn fn,
                     void *ud, struct rtn_error *err);
