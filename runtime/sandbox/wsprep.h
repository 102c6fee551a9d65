/* The overlay workspace's record, which the sandbox makes before it starts on the workspace
 * (`--workspace-mode overlay`; runtime/session/wsover.h describes the whole: where the
 * pending changes lie and what reads them). Here: the names of DIR/ws/, the record's
 * preparation, and the --protect paths kept beside it. Everything that reads, applies or
 * drops the changes is the session's (runtime/session/). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "runtime/runtime.h"

#define RT_WS_DIR "ws"
#define RT_WS_PROTECT RT_WS_DIR "/protect" /* the --protect paths of the pending changes */

/* ROOT for a sandbox's tmpfs upper (an fd rtn keeps, runtime/session/upper.h) into buf; NULL
 * for -1. */
const char *rt_ws_root(char buf[32], int upper_fs);

/* Whether DIR/ws/upper holds anything (a change is pending); false for a NULL dir. */
bool rt_ws_pending(const char *dir);

/* Before a sandbox starts on dir with host as its overlay workspace, its upper on root (NULL:
 * a fresh tmpfs): with no change pending in either, makes dir/ws/ and records host's identity
 * and now as the time since which a host change conflicts (the sandbox's start); with changes
 * pending for another directory, fails with -EBUSY and says so. m: the mapping that wrote
 * what an earlier run left (to remove it). */
int rt_ws_prepare(const char *dir, const char *root, const char *host, const struct rt_idmap *m,
                  struct rtn_error *err);

/* Records the --protect paths (the ones in the workspace host) with the pending changes of dir
 * (dir/ws/protect, beside ws/state), for every later rt_ws_apply of them. */
int rt_ws_protect_save(const char *dir, const char *host, const char *const *paths, size_t n,
                       struct rtn_error *err);
