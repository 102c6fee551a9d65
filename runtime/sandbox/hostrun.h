/* The files a host program runs or reads by itself, without the user asking it to run
 * anything of the project: a repository's git dir (hooks, config, core.fsmonitor,
 * commondir, alternates), shell start-up files, direnv's .envrc, editors' and coding agents'
 * per-project settings (tasks, launch configurations, hooks, MCP servers). One home for the
 * list: a live host bind protects the ones present when the sandbox starts, and writing an
 * overlay's changes back to the host refuses them all. runtime/sandbox/hostrun.c says what is on
 * the list and what is not.
 *
 * A name is one path component and counts at any depth (a nested repository's `.git`, an
 * `.envrc` in a subdirectory that direnv loads on `cd`), whether it is a file or a directory
 * (a worktree's or a submodule's `.git` is a file), and everything below it is covered. Names
 * compare without regard to ASCII case: on a case-insensitive filesystem (ext4 casefold,
 * vfat) `.GIT` is `.git`. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct rt_hostrun {
        const char *name; /* one path component, e.g. ".git" */
        const char *why; /* which host program uses it, for messages and env_status */
};

/* The list, ended by an entry whose name is NULL. */
extern const struct rt_hostrun rt_hostrun_names[];

/* The entry for one path component of len bytes (not NUL-terminated), or NULL. */
const struct rt_hostrun *rt_hostrun_name(const char *name, size_t len);

/* Whether rel, a path relative to the root of a bound directory ('/'-separated; a leading
 * '/', empty and "." components are ignored; ".." is the caller's to refuse), is a listed
 * name or lies below one: the entry of its first listed component, or NULL.
 * `sub/.git/config` gives `.git`. */
const struct rt_hostrun *rt_hostrun_match(const char *rel);
