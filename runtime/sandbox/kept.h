/* What a session's kept tmpfs holds besides its work dirs (runtime/session/upper.h): the
 * trees that are the sandbox's filesystem state. One list, so that what sandbox_fork copies
 * (rt_upper_fork) and what a checkpoint keeps are the same: the root filesystem's changes
 * (upper/), an overlay workspace's pending changes (ws/upper, runtime/sandbox/wsprep.h) and
 * /tmp, which lives here as tmp/ (mount.c binds it) so that it outlives a restart of the
 * sandbox and counts against --upper-size with the rest. */
#pragma once

#include "runtime/sandbox/wsprep.h" /* RT_WS_DIR */

/* /tmp of a sandbox whose spec has tmp_kept: a directory on the kept tmpfs. */
#define RT_KEPT_TMP "tmp"

/* X(parent, name): each tree as a directory name below parent ("" for the tmpfs's top). */
#define RT_KEPT_STATE(X) X("", "upper") X(RT_WS_DIR, "upper") X("", RT_KEPT_TMP)
