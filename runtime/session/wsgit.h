/* The paths git's configuration names in an overlay workspace, as the configuration will be
 * once the upper's changes are applied (runtime/session/wsgit.c): rt_ws_apply refuses them. */
#pragma once

#include "common/err.h"
#include "runtime/sandbox/gitconf.h"
#include "runtime/session/wsover.h"

/* host: the workspace's host dir; upper: the upper's directory fd; dir: where the pending
 * changes are (the --protect paths recorded there count too). */
int ws_git_paths(const char *dir, const char *host, int upper, struct rt_pathlist *ret,
                 struct rtn_error *err);
