/* What the store's files share and nobody else sees: the handle, the canonical tree walker
 * that the hasher, export and diff all read layers through, and small filesystem helpers
 * (atomic writes, tree removal, locking). */
#pragma once

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/err.h"
#include "store/store.h"

struct store {
        char *dir; /* absolute path of the data dir */
        int dirfd; /* O_PATH-free O_DIRECTORY fds of the data dir and its parts */
        int layersfd, commitsfd, envsfd, tmpfd, sessionsfd, locksfd;
        int lockfd; /* the lock file; flock()ed per operation */
        uint64_t max_bytes; /* store_set_max: the budget of store_room, 0 for none */
};

/* ---- walker (walk.c) ---------------------------------------------------------------- */

/* Entry kinds, which are also the type letters of the manifest. */
enum store_kind {
        STORE_K_DIR = 'd',
        STORE_K_FILE = 'f',
        STORE_K_HARDLINK = 'h', /* a further name of a regular file met earlier in the walk */
        STORE_K_SYMLINK = 'l',
        STORE_K_FIFO = 'p',
        STORE_K_WHITEOUT = 'w', /* char device 0:0: overlayfs's deleted-file marker */
};

struct store_xattr {
        char *name;
        void *value;
        size_t len;
};

struct store_entry {
        const char *path; /* relative to the root, "." for the root itself */
        int dirfd; /* the parent directory (the root fd for the root) */
        const char *name; /* name in dirfd ("." for the root) */
        enum store_kind kind;
        struct stat st;
        int fd; /* read-only fd of a file or directory, else -1 */
        const char *target; /* symlink target, or first path of a hard link */
        const struct store_xattr *xattrs; /* sorted by name */
        size_t nxattrs;
};

/* Calls cb for every entry under rootfd in canonical order: the root first, then each
 * directory's entries sorted bytewise by name, depth first. Sockets are skipped (they are
 * no content and tar cannot carry them). Device nodes other than 0:0 fail with -EINVAL. */
typedef int (*store_walk_cb)(const struct store_entry *e, void *userdata);
int store_walk(int rootfd, store_walk_cb cb, void *userdata, struct rtn_error *err);

/* Hashes a whole open file's contents (size bytes) into hex. */
int store_hash_fd(int fd, uint64_t size, char ret_hex[STORE_ID_SIZE]);

/* Reads the xattrs the manifest covers (see docs/store.md) of dirfd/name, or of fd when
 * fd >= 0. Caller frees with store_xattrs_free. */
int store_xattrs_read(int fd, int dirfd, const char *name, struct store_xattr **ret, size_t *ret_n);
void store_xattrs_free(struct store_xattr *x, size_t n);

/* ---- helpers (fsutil.c) --------------------------------------------------------------- */

void store_hex(const unsigned char *d, size_t n, char *out);
bool store_id_valid(const char *s);
/* Removes everything inside the directory fd (which stays open and in place). */
int store_rm_children_at(int fd);
int store_fsync_dir(int dirfd);
/* 1 if the directory fd has no entries but . and .., 0 if it has, or -errno. */
int store_dir_is_empty(int fd);
/* Opens a directory stream on a new description of fd. */
DIR *store_opendir_at(int fd);
/* Writes data to a new file under tmp/, not synced; its name goes to ret_name. */
int store_write_tmp(struct store *s, const void *data, size_t len, char *ret_name, size_t size);
/* The same, fsynced when sync. */
int store_write_tmp_synced(struct store *s, const void *data, size_t len, bool sync, char *ret_name,
                           size_t size);
/* Reads a small file (< max bytes) into a malloc'd NUL-terminated buffer. */
int store_read_small(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len);
/* A unique name for a temp entry: "<prefix>.<pid>.<random>". */
void store_tmp_name(char *buf, size_t len, const char *prefix);

int store_lock(struct store *s, bool exclusive);
/* The layer dirs of the chain from commit tip down, as store_layer_stack. */
int store_layers_of(struct store *s, const char *tip, char ***ret_paths, size_t *ret_n,
                    struct rtn_error *err);
void store_unlock(struct store *s);

/* ---- records (record.c) ---------------------------------------------------------------- */

/* Serialises a commit record; returns its length or -errno. */
int store_record_encode(const struct store_commit_info *c, const char *msg, char **ret,
                        size_t *ret_len);
/* Parses and checks a record is canonical (re-encodes to the same bytes). msgbuf receives
 * the message, cut to msglen-1. */
int store_record_decode(const char *buf, size_t len, struct store_commit_info *ret, char *msgbuf,
                        size_t msglen);
int store_id_of(const void *data, size_t len, char ret_id[STORE_ID_SIZE]);
/* The tip file's content: the commit id and a newline (what store_env_get reads). */
void store_env_line(const char *id, char ret[STORE_ID_SIZE + 1]);
int store_env_get(struct store *s, const char *env, char ret_id[STORE_ID_SIZE]);
/* True if ancestor is id or one of its ancestors. */
int store_is_ancestor(struct store *s, const char *ancestor, const char *id);

/* ---- environment metadata (envmeta.c) -------------------------------------------------- */

/* Beside each envs/<env> tip: envs/.<env>.reflog and envs/.<env>.base, names no environment
 * can have (they start with '.'), in the same directory so that the fsync of envs/ that makes
 * a new tip durable covers them too. True for such a name. */
bool store_env_meta_name(const char *name);

struct store_reflog {
        struct store_reflog_entry *e; /* oldest first */
        size_t n;
};
/* Reads and strictly parses env's reflog; a missing one is empty. -EBADMSG if malformed. */
int store_reflog_read(struct store *s, const char *env, struct store_reflog *ret);
void store_reflog_free(struct store_reflog *r);
/* The tips env's reflog keeps at now with this expiry (seconds; 0: none): the current tip
 * (tip, "" for none) and every entry left less than expire seconds ago, newest first. cb
 * returning non-zero stops and is returned. */
int store_reflog_live(const struct store_reflog *r, const char *tip, int64_t now, int64_t expire,
                      store_reflog_cb cb, void *userdata);
/* Rewrites env's reflog without the entries expired at now with expire (gc with a shorter
 * expiry than the default). envs/ is not synced. */
int store_reflog_prune(struct store *s, const char *env, const char *tip, int64_t now,
                       int64_t expire);
/* Writes env's reflog with "now id op" appended (and the current tip, tip, first when the
 * reflog does not end with it) to a temp file under tmp/, fsynced only when sync; its name
 * goes to ret_tmp. Expired and surplus entries are dropped. */
int store_reflog_stage(struct store *s, const char *env, const char *tip, const char *id,
                       const char *op, bool sync, char *ret_tmp, size_t size);
/* Renames a staged reflog (or base record) over envs/.<env>.<kind>; envs/ is not synced. */
int store_env_meta_publish(struct store *s, const char *env, const char *kind, const char *tmp);
/* Moves env's tip to id by op (rollback, import) under the writer lock: the reflog and the
 * tip are written and fsynced under tmp/, renamed reflog first, and envs/ fsynced once. */
int store_env_move(struct store *s, const char *env, const char *id, const char *op);

/* Checks a base (identity charset and lengths). */
bool store_base_valid(const struct store_base *b);
/* Writes env's base record to a temp file under tmp/ (fsynced when sync). */
int store_base_stage(struct store *s, const struct store_base *b, bool sync, char *ret_tmp,
                     size_t size);
/* The message of a base mismatch (-EMEDIUMTYPE). */
int store_base_refuse(struct rtn_error *err, const char *env, const struct store_base *have,
                      const struct store_base *want);

/* ---- live users (hold.c) --------------------------------------------------------------- */

/* Takes locks/<id> exclusively without waiting, for gc: 1 and *ret_fd when no live sandbox
 * holds layer id (remove the layer, then the lock file, then close), 0 when one does. */
int store_layer_claim(struct store *s, const char *id, int *ret_fd);
