/* An environment's pending changes for the CLI (runtime/session/pending.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/runtime.h"
#include "store/store.h"

/* <data>/pending/<env>[/sub] into buf. */
int rt_pending_path(struct store *s, const char *env, const char *sub, char *buf, size_t len);
/* Creates pending/<env>/upper as needed and locks it for one sandbox; the dir (an rt_spec
 * ws_dir) goes to dir, the lock fd (close to unlock) to *ret_lock. -EBUSY while
 * another holds them. */
int rt_pending_open(struct store *s, const char *env, char *dir, size_t len, int *ret_lock,
                    struct rtn_error *err);
/* Takes pending/<env>/lock, as rtn exec --keep holds it while it runs: *ret_lock -1 when
 * there is none (nothing pending); -EBUSY while another holds it. */
int rt_pending_lock(struct store *s, const char *env, int *ret_lock, struct rtn_error *err);
bool rt_pending_exists(struct store *s, const char *env);
/* Whether anything is pending: a change in the pending upper or in the overlay workspace's
 * (rtn apply empties the latter), not the empty directories a run leaves (rtn env list). */
bool rt_pending_any(struct store *s, const char *env);
/* Drops the pending changes (m: the mapping that wrote them, or NULL); -EBUSY while a
 * running rtn exec --keep holds them. */
int rt_pending_reset(struct store *s, const char *env, const struct rt_idmap *m,
                     struct rtn_error *err);
/* Drops them and the rest of pending/<env> (an overlay workspace's record, the lock): for
 * an environment that is being removed. -EBUSY while held. */
int rt_pending_remove(struct store *s, const char *env, const struct rt_idmap *m,
                      struct rtn_error *err);
/* Commits them: 0 committed, 1 nothing to commit (ret_id: the tip, "" when none). lock: the
 * pending lock the caller holds (rt_pending_open), or -1 to take it (-EBUSY while held). */
int rt_pending_commit(struct store *s, const char *env, const char *msg, const struct rt_idmap *m,
                      int lock, char ret_id[STORE_ID_SIZE], struct rtn_error *err);

/* `rtn undo` (runtime/session/pendundo.c): each `rtn exec --keep` run is a step of the
 * pending changes, kept by env_undo's checkpoints (rt_ckpt, runtime/session/upper.h) in
 * pending/<env>/undo/: a shadow of the pending changes as the last run left them, and per
 * run the old versions of what it changed. A commit, a reset, an apply or the workspace
 * changes an rtn serve leaves pending end the history (rtn undo goes back to it, not past
 * it). */
#define RT_PENDING_CMD 160 /* the bytes of a run's command line a step names */
struct rt_pending_step {
        unsigned num; /* 1 for the first run since the history began */
        int64_t when_sec; /* when it ended (seconds since the epoch) */
        uint64_t records, bytes; /* paths it changed, and its old versions' bytes */
        char cmd[RT_PENDING_CMD]; /* its command line, space-separated, cut short */
};
struct rt_pending_undo_opts {
        unsigned depth; /* --undo-depth: steps kept (0: none) */
        uint64_t bytes; /* --undo-bytes: their old versions' bytes at most */
        /* --upper-size: the pending changes, the history's shadow of them and the steps'
         * old versions together at most this (invariant 10), as a session's checkpoints
         * share its upper; 0: no such bound */
        uint64_t limit;
};
/* --keep's end: lays the tmpfs upper_fs over the pending changes (rt_upper_merge) as a new
 * step named by argv. A history that cannot be kept (no room, no user namespace for its
 * helper) is dropped and *note says why (else note is ""): the changes are kept either way.
 * m: the sandbox's mapping. */
int rt_pending_keep(const struct rt_idmap *m, int upper_fs, const char *pending, int argc,
                    char *const argv[], const struct rt_pending_undo_opts *o, char *note,
                    size_t notelen, struct rtn_error *err);
/* The steps, oldest first (*ret NULL and 0 when there are none; free() it); *ret_dropped:
 * the older ones dropped for --undo-depth or --undo-bytes. */
int rt_pending_steps(struct store *s, const char *env, struct rt_pending_step **ret, size_t *ret_n,
                     unsigned *ret_dropped, struct rtn_error *err);
/* Puts the pending changes back as they were before the newest n steps and forgets those
 * steps; *ret: them, newest first (free() it). ENOENT when fewer than n are kept (nothing is
 * changed), EBUSY while an rtn exec --keep runs on them. m: the mapping of the sandboxes
 * that wrote them (rt_idmap_choose). */
int rt_pending_undo(struct store *s, const char *env, const struct rt_idmap *m, unsigned n,
                    struct rt_pending_step **ret, struct rtn_error *err);
/* Ends the history (rtn apply: what it wrote is no longer pending; rtn serve: what it left
 * pending no run made). Best effort. */
void rt_pending_undo_clear(const char *pending, const struct rt_idmap *m);
