/* The one tree copy of a session's kept state (runtime/session/copy.c), shared by commit,
 * fork and merge (upper.c) and checkpoints (ckpt.c): nothing is followed (O_NOFOLLOW, *at()
 * from directory fds), a FIFO cannot block an open, holes stay holes, hard links stay links
 * within one copy, xattrs are copied whole, and depth and path length are bounded. Internal
 * to runtime/session/. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/err.h"

#define RT_COPY_MAX_DEPTH 512

/* hard links: inode -> the first name it was copied to */
struct rt_copy_links {
        struct {
                ino_t ino;
                char *path; /* relative to the destination root */
        } * v;
        size_t n, cap;
};

struct rt_copy {
        int dst_root; /* the destination root directory, for hard links */
        char rel[PATH_MAX]; /* the entry's path below both roots */
        struct rt_copy_links links;
        char *buf;
        struct rtn_error *err;
        /* an overlay workspace's upper, which stays an upper on this machine and is read by
         * rt_ws_apply: overlayfs's own marks (user.overlay.origin: copied up from the host) and
         * sockets (refused there, by name) are kept too */
        bool ws;
        uint64_t bytes; /* the blocks of the files copied, in bytes */
        /* when set: told of each entry copied (src: its stat; the copy is name below ddir) */
        void (*on_entry)(struct rt_copy *c, const struct stat *src, int ddir, const char *name);
        void *ud;
};

/* Starts a copy whose hard links are made below dst_root (c->rel is relative to it). */
int rt_copy_init(struct rt_copy *c, int dst_root, struct rtn_error *err);
void rt_copy_done(struct rt_copy *c);
/* Pushes name onto c->rel; *ret_len: the old length, to cut it back to. */
int rt_copy_rel_push(struct rt_copy *c, const char *name, size_t *ret_len);
/* Copies the entry name of sdir (st: its lstat) to ddir, a directory with all below it. */
int rt_copy_at(int sdir, int ddir, const char *name, const struct stat *st, struct rt_copy *c,
               unsigned depth);
int rt_copy_dir(int sdir, int ddir, const char *name, const struct stat *st, struct rt_copy *c,
                unsigned depth);
/* Whether the copy carries the xattr k. */
bool rt_copy_wants(const struct rt_copy *c, const char *k);
int rt_copy_xattrs(int from, int to, struct rt_copy *c);
/* Owner, mode (after the owner: chown clears set-id bits) and times of a copied entry. */
int rt_copy_meta(int fd, const struct stat *st, struct rt_copy *c);
/* Replaces the tree name below dfd with a copy of the one below sfd (none: left empty),
 * keeping everything overlayfs and the agent set, user.* xattrs included. */
int rt_copy_tree(int sfd, int dfd, const char *name, struct rtn_error *err);
/* rm -rf that first makes each directory writable and searchable; 0 when name is absent. */
int rt_remove_at(int dir, const char *name);
/* Bytes under name (blocks), not following symlinks, bounded in depth. */
uint64_t rt_du_at(int at, const char *name, unsigned depth);
