/* The overlay workspace's pending changes (`--workspace-mode overlay`; docs/architecture.md,
 * "The workspace: live or overlay"). /workspace is then an overlay whose lowest layer is the
 * host dir and whose upper holds what the agent changed there. Two places hold them:
 *
 * - DIR/ws/ of a session dir or of an environment's pending changes (DIR is an rt_spec
 *   ws_dir, on the data dir's disk): ws/state, rtn's record of the host dir the changes belong
 *   to, of the time since which a change on the host is a conflict, and of what rt_ws_apply
 *   wrote; and, for an environment, ws/upper, the changes of earlier `rtn exec --keep` runs
 *   (or of a `rtn serve` that ended), which a later run mounts read-only between the host dir
 *   and its own upper.
 * - ROOT/ws/upper and ws/work on a sandbox's size-limited tmpfs (runtime/session/upper.h;
 *   ROOT is its /proc/self/fd path, rt_ws_root), where every sandbox with a kept upper
 *   writes, so the agent's workspace writes are bounded by --upper-size like the rest of its
 *   changes. A session's stay there until applied, reset or moved; an `rtn exec --keep`
 *   run's are laid over DIR/ws/upper when it ends (rt_upper_merge).
 *
 * The sandbox sees the uppers only through the overlay, never DIR itself.
 *
 * Nothing here trusts the upper: the agent chose its names, types, modes, link targets and
 * contents. It is read without following a symlink or opening anything but a regular file,
 * and the host dir is written through openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), as the
 * caller, with temp files renamed into place. rt_ws_apply runs only while no sandbox has the
 * overlay mounted (rtn serve stops it; the CLI holds the pending changes' lock). Below, an
 * upper ROOT of NULL means the changes are in DIR/ws/upper. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/wsprep.h" /* RT_WS_DIR, rt_ws_root, rt_ws_prepare */

/* Drops the pending changes in dir and root (either may be NULL) and their record (m: the
 * mapping that wrote them, or NULL). */
int rt_ws_drop(const char *dir, const char *root, const struct rt_idmap *m, struct rtn_error *err);

/* The host dir the pending changes of dir belong to, into buf; -ENOENT when there is no
 * record. */
int rt_ws_host(const char *dir, char *buf, size_t len);

enum rt_ws_change {
        RT_WS_ADDED = 'A',
        RT_WS_MODIFIED = 'M',
        RT_WS_DELETED = 'D',
};

/* Each pending change against the host dir, in path order: path is relative to the
 * workspace, without a leading slash, and may hold any byte but '/' and NUL in a name (the
 * agent chose it). A callback returning non-zero stops the walk (rt_ws_diff returns 0). A
 * directory added is listed, then what is in it. */
typedef int (*rt_ws_diff_fn)(enum rt_ws_change what, const char *path, void *ud);
int rt_ws_diff(const char *dir, const char *root, rt_ws_diff_fn fn, void *ud,
               struct rtn_error *err);

/* Writes the pending changes to the host dir and drops from the upper what was written.
 * Refused, and left pending, with the reason given to fn: setuid/setgid files, device nodes,
 * FIFOs and sockets, symlinks that leave the workspace or point at an absolute path, the
 * files host programs run by themselves (runtime/sandbox/hostrun.h) and what lies below them,
 * a symlink where one of them would be looked up (`.cargo`), names
 * with control characters, and conflicts: a host file changed (its ctime) since the record's
 * time unless rt_ws_apply wrote it so. reason is NULL for a change applied. dry_run writes
 * nothing and reports what would happen. Returns the number of refusals, or -errno with err
 * set when the walk itself failed (what was applied before stays applied and recorded). */
typedef int (*rt_ws_apply_fn)(enum rt_ws_change what, const char *path, const char *reason,
                              void *ud);
int rt_ws_apply(const char *dir, const char *root, bool dry_run, rt_ws_apply_fn fn, void *ud,
                struct rtn_error *err);
/* Paths the user named on the command line (relative to the workspace, no leading or trailing
 * '/'), each with what lies below it: only, the changes written (rtn apply PATH...: the rest
 * stays pending, an opaque directory on the way deletes nothing unnamed; a path with no
 * pending change is -ENOENT in err, naming it, and nothing is written); allow, the registry's
 * protection lifted (rtn apply --allow-protected); force, a conflict written over (--force:
 * a host change since the sandbox started, which rtn apply showed). Never an argument the
 * agent controls, which would let it approve its own hooks or overwrite the user's work. */
struct rt_ws_apply_named {
        const char *const *only, *const *allow, *const *force;
        size_t nonly, nallow, nforce;
};
/* rt_ws_apply with names' exceptions; every other check holds. */
int rt_ws_apply_allow(const char *dir, const char *root, bool dry_run,
                      const struct rt_ws_apply_named *names, rt_ws_apply_fn fn, void *ud,
                      struct rtn_error *err);

/* One side of a pending change rt_ws_show gives: a regular file open for reading (fd >= 0,
 * closed after the callback), or text saying what is there instead (a symlink's target). */
struct rt_ws_side {
        int fd;
        char text[4160];
};

/* The pending changes at path (relative to the workspace) and below it, one file at a time,
 * in path order: host is its side on the host dir (NULL: none), upper what apply would write
 * (NULL: a deletion). For a reader to review a change apply refused; -ENOENT in err when
 * nothing is pending at path. */
typedef int (*rt_ws_show_fn)(enum rt_ws_change what, const char *path,
                             const struct rt_ws_side *host, const struct rt_ws_side *upper,
                             void *ud);
int rt_ws_show(const char *dir, const char *root, const char *path, rt_ws_show_fn fn, void *ud,
               struct rtn_error *err);

/* Keeps a session's pending changes (its record in from, its upper on the tmpfs upper_fs) as
 * to's (an environment's pending dir, on from's filesystem), when to has none: the upper is
 * copied to to/ws/upper (runtime/session/upper.h: checked for room first; m the mapping that wrote
 * it), the record moved. 1 kept, 0 nothing to keep, -EBUSY when to has changes of its own. */
int rt_ws_move(const char *from, int upper_fs, const char *to, const struct rt_idmap *m,
               struct rtn_error *err);
