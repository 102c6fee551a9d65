/* Sandbox uppers that outlive their sandbox (runtime/session/upper.c): a size-limited tmpfs
 * kept by the fd of its detached mount (rt_sandbox.upper_fs), holding upper/ and work/, and
 * ws/ for an overlay workspace (runtime/session/wsover.h). Commit copies
 * it onto the data dir's filesystem; `rtn exec --keep` lays it over the pending changes. */
#pragma once

#include <stdint.h>

#include "runtime/runtime.h"
#include "store/store.h"

/* pending/<env>/size: the bytes the pending changes took after the last merge. */
#define RT_PENDING_SIZE "size"

/* Bytes and inodes in use on the tmpfs. */
int rt_upper_usage(int upper_fs, uint64_t *ret_bytes, uint64_t *ret_inodes);
/* Copies the tmpfs's upper to dir/upper (dir on the data dir's filesystem, a session dir),
 * drops the sandbox's skeleton dirs and commits it to env as o says (store_commit_with;
 * same returns). A
 * data dir without room for it fails with ENOSPC before anything is written. m: the
 * mapping that wrote it (SUBID: the work runs in a user namespace mapped the same). */
int rt_upper_commit(const struct rt_idmap *m, struct store *st, const char *env, int upper_fs,
                    const char *dir, const struct store_commit_opts *o, char ret_id[STORE_ID_SIZE],
                    struct rtn_error *err);
/* Lays the tmpfs's upper over pending/upper (overlayfs's view of the one over the other), and
 * an overlay workspace's ws/upper over pending/ws/upper (runtime/session/wsover.h), and records the
 * result's size in pending/RT_PENDING_SIZE. */
int rt_upper_merge(const struct rt_idmap *m, int upper_fs, const char *pending,
                   struct rtn_error *err);
/* The same for the workspace's upper alone (pending/ws/ must exist): a session's kept. */
int rt_upper_keep_ws(const struct rt_idmap *m, int upper_fs, const char *pending,
                     struct rtn_error *err);
/* A fork's tmpfs (rt_upper_fs_new of spec), made without a sandbox by a helper mapped as m
 * (the mapping that wrote from_fs), holding a copy of the state on the tmpfs from_fs
 * (RT_KEPT_STATE of runtime/sandbox/kept.h: upper/, an overlay workspace's ws/upper, /tmp's tmp/):
 * afterwards the two hold the same files and share nothing. *ret_fs: the new tmpfs's detached
 * mount. */
int rt_upper_fork(const struct rt_idmap *m, const struct rt_spec *spec, int from_fs, int *ret_fs,
                  struct rtn_error *err);
/* Checkpoints (env_undo) on the tmpfs itself, in RT_UNDO_DIR/ (runtime/session/ckpt.c): a
 * shadow of the state (RT_KEPT_STATE) as the last checkpoint saw it, and per step the old
 * versions of what changed after it. op:
 *   BASE        the shadow becomes a copy of the state now (other steps are removed)
 *   BASE_EMPTY  the shadow becomes empty: the state the first call started from
 *   SEAL        step gets the shadow's version of each entry changed at or after since
 *               (rt_ckpt_now's clock), the shadow the new one; spare: steps, oldest first,
 *               it may remove for room (ret->dropped of them went)
 *   COUNT       what a SEAL would find (ret), changing nothing
 *   SWAP        step applied to the state (no sandbox may have the tmpfs mounted): it then
 *               holds what it replaced, so the same call takes it back
 *   DROP        step removed; CLEAR: every checkpoint and the shadow removed
 * ret (may be NULL): the records and bytes the step holds. m: the mapping that wrote them. */
#define RT_UNDO_DIR "undo"
enum rt_ckpt_op {
        RT_CKPT_BASE,
        RT_CKPT_BASE_EMPTY,
        RT_CKPT_SEAL,
        RT_CKPT_COUNT,
        RT_CKPT_SWAP,
        RT_CKPT_DROP,
        RT_CKPT_CLEAR,
};
struct rt_ckpt_report {
        uint64_t records; /* paths (entries added, removed or changed) */
        uint64_t bytes; /* the old versions' blocks, in bytes */
        size_t dropped; /* spare steps removed for room */
};
int rt_ckpt(const struct rt_idmap *m, int fs, enum rt_ckpt_op op, const char *step, int64_t since,
            const char *const *spare, size_t nspare, struct rt_ckpt_report *ret,
            struct rtn_error *err);
/* The same where fs is the caller's own (`rtn exec --keep`'s pending dir, as its merge):
 * through rt_userns_as_owner, so host root works as itself. */
int rt_ckpt_as_owner(const struct rt_idmap *m, int fs, enum rt_ckpt_op op, const char *step,
                     int64_t since, const char *const *spare, size_t nspare,
                     struct rt_ckpt_report *ret, struct rtn_error *err);
/* The list of what step holds: records "K<path>\0", K 'A' (absent at the other end), 'W' (a
 * whole entry) or 'M' (a directory's own metadata), path below the tmpfs (upper/..., ws/upper/...,
 * tmp/...); *ret NULL and 0 when it has none. free() *ret. */
int rt_ckpt_list(int fs, const char *step, char **ret, size_t *ret_len);
/* The checkpoints' clock (CLOCK_REALTIME_COARSE, what tmpfs stamps ctimes with), in ns. */
int64_t rt_ckpt_now(void);
/* Records the pending changes' size in pending/RT_PENDING_SIZE, as a merge does (after
 * rtn undo). */
int rt_upper_pending_measure(const struct rt_idmap *m, const char *pending, struct rtn_error *err);
/* What the last merge recorded (0: none). */
uint64_t rt_upper_pending_size(const char *pending);
