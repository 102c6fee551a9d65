/* An environment's pending changes for the CLI (runtime/session/pending.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "runtime/runtime.h"
#include "store/store.h"

/* <data>/pending/<env>[/sub] into buf. */
int rt_pending_path(struct store *s, const char *env, const char *sub, char *buf, size_t len);
/* Creates pending/<env>/upper as needed and locks it for one sandbox; the dir (an rt_spec
 * ws_dir) goes to dir, the lock fd (close to unlock) to *ret_lock. -EBUSY while
 * another holds them. */
int rt_pending_open(struct store *s, const char *env, char *dir, size_t len, int *ret_lock,
                    struct rtn_error *err);
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
