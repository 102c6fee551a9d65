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
/* Checkpoints (env_undo): RT_UNDO_DIR/<step>/ on the same tmpfs holds a copy of
 * RT_KEPT_STATE, so that the checkpoints count against --upper-size with the state.
 * rt_upper_save copies the state into step (replacing one of that name; ENOSPC leaves no
 * partial step), rt_upper_restore makes the state the step's copy again (no sandbox may have
 * the tmpfs mounted; the step is kept), rt_upper_step_drop removes it. step: a name of
 * digits and letters. The copies follow nothing and keep holes, links and xattrs, as
 * rt_upper_fork's. m: the mapping that wrote them. */
#define RT_UNDO_DIR "undo"
int rt_upper_save(const struct rt_idmap *m, int upper_fs, const char *step, struct rtn_error *err);
int rt_upper_restore(const struct rt_idmap *m, int upper_fs, const char *step,
                     struct rtn_error *err);
int rt_upper_step_drop(const struct rt_idmap *m, int upper_fs, const char *step,
                       struct rtn_error *err);
/* What the last merge recorded (0: none). */
uint64_t rt_upper_pending_size(const char *pending);
