/* The store: content-addressed layers and the commits that stack them, kept in a data dir
 * that survives restarts. A layer is a directory tree used as an overlayfs lowerdir; its id
 * is the SHA-256 of a canonical manifest of its entries (docs/store.md gives the format). A
 * commit is a record {parent, layer, time, message} whose id is the SHA-256 of the record.
 * An environment names its tip commit. Every entry point returns >= 0 on success or -errno
 * and then describes the failure in *err. Writers serialise on a flock; readers need no lock
 * because every change becomes visible through one rename. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define STORE_ID_LEN 64 /* hex digits of a SHA-256 */
#define STORE_ID_SIZE 65 /* with the NUL */
#define STORE_DEFAULT_ENV "default"
#define STORE_ENV_MAX 64 /* longest environment name */
#define STORE_MSG_MAX 4096 /* longest commit message kept */
#define STORE_MIN_PREFIX 4 /* shortest id prefix store_resolve accepts */
/* Default cap on the bytes an import may unpack (sum of file sizes and metadata). */
#define STORE_IMPORT_MAX_BYTES (16ULL << 30)

struct store;

struct store_commit_info {
        char id[STORE_ID_SIZE];
        char parent[STORE_ID_SIZE]; /* "" for a root commit */
        char layer[STORE_ID_SIZE];
        int64_t time; /* seconds since the epoch, UTC */
        const char *message; /* valid during the callback only */
};

enum store_change { STORE_ADDED = 'A', STORE_MODIFIED = 'M', STORE_DELETED = 'D' };

struct store_gc_stats {
        size_t commits, layers, leftovers;
};

struct store_verify_stats {
        size_t commits, layers, envs, bad;
};

/* $RTN_DATA_DIR, else $XDG_DATA_HOME/rtn, else $HOME/.local/share/rtn. */
int store_default_dir(char *buf, size_t len, struct rtn_error *err);

/* Creates the data dir and its subdirectories as needed (mode 0700), takes the writer lock
 * long enough to remove half-written state left by a killed writer, and returns a handle.
 * data_dir NULL means store_default_dir(). */
int store_open(const char *data_dir, struct store **ret, struct rtn_error *err);
void store_close(struct store *s);
const char *store_data_dir(const struct store *s);

/* Checks an environment name: 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
int store_env_valid(const char *env);

/* Hashes the tree under dirfd into its layer id. Fails with EINVAL on an entry a layer may
 * not hold (a device node other than a 0:0 whiteout). */
int store_layer_hash(int dirfd, char ret_id[STORE_ID_SIZE], struct rtn_error *err);

/* Commits the directory upper_path (an overlay upperdir, on the data dir's filesystem) to
 * env: hashes it, syncs it, renames it to layers/<id> and makes a new commit the env's tip.
 * Returns 1 when the upper holds no change (empty, or the same layer as the tip's): nothing
 * is written and ret_commit is the current tip ("" when env has none). Returns 0 after a
 * commit; upper_path is then gone (moved, or deleted when that layer already existed). */
int store_commit(struct store *s, const char *env, const char *upper_path, const char *msg,
                 char ret_commit[STORE_ID_SIZE], struct rtn_error *err);

/* The env's tip commit into ret_id; -ENOENT when env has no commit yet. */
int store_tip(struct store *s, const char *env, char ret_id[STORE_ID_SIZE], struct rtn_error *err);

/* Resolves a commit name: NULL, "" or "HEAD" is env's tip; otherwise a full id or a unique
 * prefix of at least STORE_MIN_PREFIX hex digits. -ENOENT none, -ENOTUNIQ ambiguous. */
int store_resolve(struct store *s, const char *env, const char *name, char ret_id[STORE_ID_SIZE],
                  struct rtn_error *err);

/* Reads one commit record. info->message points into storage owned by the caller's buf. */
int store_commit_read(struct store *s, const char *id, struct store_commit_info *ret_info,
                      char *msgbuf, size_t msglen, struct rtn_error *err);

/* The layer directories of env's tip as absolute paths, newest first, each layer once (a
 * layer repeated lower in the chain adds nothing to the view). An env without commits gives
 * n = 0. Free with store_free_paths. */
int store_layer_stack(struct store *s, const char *env, char ***ret_paths, size_t *ret_n,
                      struct rtn_error *err);
void store_free_paths(char **paths, size_t n);

/* Walks env's history from the tip to the root. cb returning non-zero stops the walk and
 * that value is returned. */
typedef int (*store_log_cb)(const struct store_commit_info *c, void *userdata);
int store_log(struct store *s, const char *env, store_log_cb cb, void *userdata,
              struct rtn_error *err);

/* Moves env's tip to commit id (a name as store_resolve takes), which must be in its
 * history. ret_id receives the full id. */
int store_rollback(struct store *s, const char *env, const char *id, char ret_id[STORE_ID_SIZE],
                   struct rtn_error *err);

/* Lists what upper_path changes against env's tip: added, modified, deleted paths (relative,
 * no leading slash), in canonical order. */
typedef int (*store_diff_cb)(enum store_change what, const char *path, void *userdata);
int store_diff(struct store *s, const char *env, const char *upper_path, store_diff_cb cb,
               void *userdata, struct rtn_error *err);
/* The same against the layer dirs layers[0..n) (newest first, as store_layer_stack gives
 * them), without the store: safe on a thread of its own while the store is used elsewhere. */
int store_diff_layers(char *const *layers, size_t n, const char *upper_path, store_diff_cb cb,
                      void *userdata, struct rtn_error *err);

/* Removes every commit and layer no environment's tip reaches, everything under tmp/, and
 * session dirs under sessions/ whose lock no live process holds (store_session_new). */
int store_gc(struct store *s, struct store_gc_stats *ret_stats, struct rtn_error *err);

/* Rechecks every layer against its id, every commit record against its id and its links,
 * and every environment's tip. Returns -EUCLEAN when anything is wrong; err names the first
 * problem and ret_stats->bad counts them all. */
int store_verify(struct store *s, struct store_verify_stats *ret_stats, struct rtn_error *err);

/* Writes the chain from commit name (see store_resolve) down to its root as a .tar.zst. */
int store_export(struct store *s, const char *env, const char *name, const char *out_path,
                 struct rtn_error *err);

/* Unpacks an export into a temp dir, checks every entry, layer id and commit id, then moves
 * it into the store and makes its tip env's tip (env must have no tip, or one the import
 * descends from). max_bytes 0 means STORE_IMPORT_MAX_BYTES. On any failure the store is
 * unchanged. */
int store_import(struct store *s, const char *env, const char *in_path, uint64_t max_bytes,
                 char ret_tip[STORE_ID_SIZE], struct rtn_error *err);

/* Creates sessions/<random>/ with empty upper/ and work/ subdirs for an overlay, and returns
 * its path and an fd holding the flock that marks it live; gc removes a session dir once
 * nobody holds it. */
int store_session_new(struct store *s, char **ret_dir, int *ret_lockfd, struct rtn_error *err);

/* How walks report owners: the numbers on disk by default. A process hashing layers from
 * inside a user namespace sets the inverse of that namespace's mapping, so ids stay the host
 * numbers a hash from outside would see. NULL functions restore the default. */
void store_set_id_view(uint32_t (*uid)(uint32_t), uint32_t (*gid)(uint32_t));

/* Removes dirfd/name and everything below it, never following a symlink, making directories
 * writable as it goes (a layer holds 0555 dirs, overlayfs's work dir is 0000), with a bounded
 * number of directories open however deep the tree. Missing is success; otherwise it removes
 * what it can and returns the first error. */
int store_rm_rf_at(int dirfd, const char *name);
