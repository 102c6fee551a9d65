/* The record of an overlay workspace's pending changes, DIR/ws/state (runtime/session/wsover.h):
 * made by runtime/sandbox/wsprep.c before a sandbox starts, read by runtime/session/wsover.c and
 * runtime/session/wsapply.c, which records what it wrote. rtn writes it; the sandbox never sees
 * it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/err.h"

/* What rt_ws_apply wrote to the host: the file at path (relative to the workspace) had this
 * inode and ctime right after, so its own write is no conflict later. */
struct rt_ws_record {
        char *path;
        uint64_t ino;
        struct timespec ctime;
};

struct rt_ws_state {
        char host[4096]; /* the host dir, as the user named it */
        uint64_t dev, ino; /* its identity when the changes began */
        struct timespec since; /* host changes from this time on are conflicts */
        struct rt_ws_record *recs; /* sorted by path */
        size_t nrecs, cap;
};

/* Reads dir/ws/state: -ENOENT when there is none, -EBADMSG when it is not one. */
int rt_ws_state_read(const char *dir, struct rt_ws_state *ret);
/* Writes it (temp file + rename). */
int rt_ws_state_write(const char *dir, const struct rt_ws_state *st, struct rtn_error *err);
void rt_ws_state_free(struct rt_ws_state *st);
/* The record of path, or NULL. */
const struct rt_ws_record *rt_ws_state_find(const struct rt_ws_state *st, const char *path);
/* Adds or replaces path's record; keeps the array sorted. */
int rt_ws_state_put(struct rt_ws_state *st, const char *path, uint64_t ino, struct timespec ctime);
/* Opens the host dir of st as an O_PATH fd, without crossing a symlink, and checks it is still
 * the directory the changes were made on (-ESTALE otherwise). */
int rt_ws_open_host(const struct rt_ws_state *st, struct rtn_error *err);
