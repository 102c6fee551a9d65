/* Walking an overlay workspace's upper beside the host dir (runtime/session/wswalk.c), for
 * rt_ws_diff there and rt_ws_apply (runtime/session/wsapply.c). The upper is the agent's: an entry
 * is looked at with fstatat(AT_SYMLINK_NOFOLLOW) and lgetxattr on its name under the directory's
 * fd, never opened unless it is a regular file (then as O_PATH first, re-opened through
 * /proc/self/fd once fstat says so, so a FIFO never blocks and a device is never opened). Host
 * directories are opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) from their
 * parent's fd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "common/err.h"
#include "runtime/session/wsover.h"
#include "runtime/sandbox/wsstate.h"

#define WS_PATH_MAX 4096
#define WS_DEPTH_MAX 128
#define WS_ENTRIES_MAX 1000000 /* upper and host entries one walk looks at */

enum ws_type {
        WS_WHITEOUT, /* a 0:0 character device, or an overlay xattr whiteout */
        WS_DIR,
        WS_REG,
        WS_LNK,
        WS_FIFO,
        WS_SOCK,
        WS_DEV, /* any other device node */
};

struct ws_entry {
        struct stat st;
        enum ws_type type;
        bool opaque; /* a directory whose lower contents are hidden (user.overlay.opaque=y) */
        bool origin; /* copied up from the host (user.overlay.origin) */
        bool feature; /* metacopy or redirect: an overlay feature rtn does not write back */
};

/* A walk's position: the path relative to the workspace, grown and cut one name at a time. */
struct ws_path {
        char buf[WS_PATH_MAX];
        size_t len;
        size_t entries; /* looked at so far, against WS_ENTRIES_MAX */
};

/* Appends name; returns the previous length to restore with ws_path_pop, or -ENAMETOOLONG. */
int ws_path_push(struct ws_path *p, const char *name);
void ws_path_pop(struct ws_path *p, int prev);

/* The sorted names of a directory (its fd is not moved); *ret_n of them. -E2BIG past the
 * walk's entry limit. */
int ws_read_names(int dirfd, struct ws_path *p, char ***ret, size_t *ret_n);
void ws_free_names(char **v, size_t n);

/* What name in the upper directory udir is. */
int ws_upper_entry(int udir, const char *name, struct ws_entry *ret);

/* lstat of name in the host directory hdir (-ENOENT when hdir < 0). */
int ws_host_stat(int hdir, const char *name, struct stat *ret);

/* Opens the directory name below dirfd for reading, refusing a symlink anywhere and a mount
 * point (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV): the overlay showed the agent the directory below a host mount, so
 * nothing is written into what is mounted there. */
int ws_open_dir(int dirfd, const char *name);

/* A name the walk refuses to carry to the host: it holds a control character (a newline
 * in a name can forge lines in a listing, an escape sequence can rewrite a terminal, a bidi
 * control shows it reordered): rtn_term_has_control, common/term.h. */
bool ws_name_bad(const char *name);

/* The record of dir, the host dir and the upper (root's, or dir's for a NULL root), ready for
 * a walk: ret_host and ret_upper are O_RDONLY directory fds. 0 with both -1 when nothing is
 * pending and there is no record. */
int ws_open(const char *dir, const char *root, struct rt_ws_state *ret_st, int *ret_host,
            int *ret_upper, struct rtn_error *err);

/* Whether the host's st (at path) changed since the record's time, other than by a write of
 * rt_ws_apply's own. Directories never count: their times move with what is in them. */
bool ws_host_changed(const struct rt_ws_state *st, const char *path, const struct stat *hst);
