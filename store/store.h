/* The store: content-addressed layers and the commits that stack them, kept in a data dir
 * that survives restarts. A layer is a directory tree used as an overlayfs lowerdir; its id
 * is the SHA-256 of a canonical manifest of its entries (docs/store.md gives the format). A
 * commit is a record {parent, layer, time, message} whose id is the SHA-256 of the record.
 * An environment names its tip commit. Every entry point returns >= 0 on success or -errno
 * and then describes the failure in *err. Writers serialise on a flock; readers need no lock
 * because every change becomes visible through one rename. */
#pragma once

#include <stdbool.h>
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
/* How long a tip an environment left stays in its reflog (and reachable, and kept by gc). */
#define STORE_REFLOG_EXPIRE_SEC (30LL * 24 * 3600)
#define STORE_REFLOG_MAX 4096 /* entries kept per environment; the oldest go first */
#define STORE_BASE_ID_MAX 64 /* longest base identity ("host", "rootfs:<fingerprint>") */
#define STORE_BASE_LABEL_MAX 255 /* longest base label (for messages) */

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
        size_t held; /* unreachable layers kept because a live sandbox still uses them */
};

/* What an environment's layers were made on: an identity (ASCII [a-z0-9:._-]) and a label
 * for messages (printable ASCII). The store compares identities and never interprets them. */
struct store_base {
        char id[STORE_BASE_ID_MAX + 1];
        char label[STORE_BASE_LABEL_MAX + 1];
};

/* The layers a sandbox mounts, held for as long as it runs: a shared flock(2) on
 * locks/<layer id> per layer, which gc honours (a held layer is kept) and the kernel drops
 * when the holder dies, however it dies. */
struct store_stack {
        char tip[STORE_ID_SIZE]; /* the commit they come from, "" for an env without one */
        char **paths; /* absolute layer dirs, newest first, each once */
        size_t n;
        int *locks; /* n lock fds */
};

/* How a commit is made (store_commit_with). */
struct store_commit_opts {
        const char *msg;
        /* The tip the upper was made on ("" for none). When env's tip has moved since (another
         * writer committed or rolled back), the commit is refused with -ESTALE and a message
         * naming both. NULL: commit on whatever the tip is. */
        const char *parent;
        /* The base the upper was made on: recorded with env's first commit, and a commit on
         * another base than the recorded one is refused (-EMEDIUMTYPE). NULL: not checked. */
        const struct store_base *base;
        /* The flock the caller holds on the session dir around the upper (its file `lock`,
         * store_session_new), or -1: the commit then takes upper/../lock itself, without
         * waiting, and refuses (-EBUSY) an upper a live sandbox holds. */
        int upper_lock;
};

/* One entry of an environment's reflog: commit id became the tip at time, by op ("commit",
 * "rollback", "import", or "found": a tip that had no entry, from a store older than the
 * reflog or a writer killed between the two renames). */
struct store_reflog_entry {
        int64_t time; /* seconds since the epoch, UTC */
        char id[STORE_ID_SIZE];
        const char *op;
};

struct store_verify_stats {
        size_t commits, layers, envs, bad;
};

/* $RTN_DATA_DIR, else $XDG_DATA_HOME/rtn, else $HOME/.local/share/rtn. */
int store_default_dir(char *buf, size_t len, struct rtn_error *err);

/* Makes data_dir, and every directory missing above it (a fresh account has no ~/.local),
 * mode 0700, when it is missing; every verb that writes under the data dir calls it (through
 * store_open, or directly as rt_rootfs_make does). */
int store_make_dir(const char *data_dir, struct rtn_error *err);
/* Creates the data dir and its subdirectories as needed (mode 0700), takes the writer lock
 * long enough to remove half-written state left by a killed writer, and returns a handle.
 * data_dir NULL means store_default_dir(). */
int store_open(const char *data_dir, struct store **ret, struct rtn_error *err);
/* For a reader (rtn log, rtn diff): creates, recovers and writes nothing, so a read-only
 * data dir serves; *ret is NULL when there is no store there yet (an empty one). The lock
 * file is open read-only, which shared locks need no more. */
int store_open_ro(const char *data_dir, struct store **ret, struct rtn_error *err);
void store_close(struct store *s);
const char *store_data_dir(const struct store *s);

/* Room for a commit (store/room.c; docs/store.md, "Room"). The data dir's filesystem keeps
 * store_reserve_bytes of its size free (5%, at least STORE_RESERVE_MIN, at most a quarter),
 * and a store given a budget (--store-max) stays within it, counted as the data dir's whole
 * use on disk (store_usage: unreachable layers gc still keeps included). store_room: 0 when
 * need more bytes fit, else -ENOSPC with err saying the numbers and how to get room. */
#define STORE_RESERVE_MIN (1ULL << 30)
void store_set_max(struct store *s, uint64_t max_bytes);
uint64_t store_reserve_bytes(uint64_t fs_bytes);
int store_usage(struct store *s, uint64_t *ret_bytes);
int store_room(struct store *s, uint64_t need, struct rtn_error *err);

/* Checks an environment name: 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
int store_env_valid(const char *env);
/* The same for a name the user gave: the error says the rule, and that --env is not a
 * variable when the name looks like NAME=VALUE. */
int store_env_check(const char *env, struct rtn_error *err);

/* Hashes the tree under dirfd into its layer id. Fails with EINVAL on an entry a layer may
 * not hold (a device node other than a 0:0 whiteout). */
int store_layer_hash(int dirfd, char ret_id[STORE_ID_SIZE], struct rtn_error *err);

/* Commits the directory upper_path (an overlay upperdir, on the data dir's filesystem) to
 * env: hashes it, syncs it, renames it to layers/<id> and makes a new commit the env's tip.
 * Returns 1 when the upper holds no change (empty, or the same layer as the tip's): nothing
 * is written and ret_commit is the current tip ("" when env has none). Returns 0 after a
 * commit; upper_path is then gone (moved, or deleted when that layer already existed).
 * store_commit is store_commit_with msg and every check left at its default. */
int store_commit(struct store *s, const char *env, const char *upper_path, const char *msg,
                 char ret_commit[STORE_ID_SIZE], struct rtn_error *err);
int store_commit_with(struct store *s, const char *env, const char *upper_path,
                      const struct store_commit_opts *o, char ret_commit[STORE_ID_SIZE],
                      struct rtn_error *err);

/* Takes the lock of the session dir around upper_path (upper/../lock, when that file
 * exists) exclusively without waiting: -EBUSY, with a message, while a live sandbox holds
 * it. *ret_fd is the lock (close it to release), or -1 when there is no lock file. */
int store_upper_claim(const char *upper_path, int *ret_fd, struct rtn_error *err);

/* The env's tip commit into ret_id; -ENOENT when env has no commit yet. */
int store_tip(struct store *s, const char *env, char ret_id[STORE_ID_SIZE], struct rtn_error *err);

/* Resolves a commit name: NULL or "HEAD" is env's tip; otherwise a full id or a unique
 * prefix of at least STORE_MIN_PREFIX hex digits. -ENOENT none, -ENOTUNIQ ambiguous,
 * -EINVAL for anything else, "" included. */
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

/* Whether an xattr of an upper is content the store keeps and hashes (docs/store.md): the
 * user's user.*, overlayfs's markers, file capabilities and ACLs; not overlayfs's bookkeeping
 * of inodes and file handles. What copies an upper keeps the same ones. */
bool store_xattr_covered(const char *name);

/* The names of fd's xattrs ("a\0b\0"), in a buffer sized from the kernel's answer (at most
 * XATTR_LIST_MAX); free() *ret_list. A filesystem without xattrs gives an empty list. */
int store_xattr_names(int fd, char **ret_list, size_t *ret_len);

/* Copies onto fd to the xattrs of fd from that want(name, arg) accepts (NULL: the covered
 * ones), however many and large the kernel allows (values up to XATTR_SIZE_MAX): nothing is
 * cut, and a failure names the xattr. */
int store_xattrs_copy(int from, int to, bool (*want)(const char *name, const void *arg),
                      const void *arg, struct rtn_error *err);

/* The layer stack of env's tip (as store_layer_stack) with the tip it comes from, each layer
 * held (struct store_stack) until store_stack_free. A layer gc removes between the read of
 * the tip and the lock is noticed and the stack read again. */
int store_stack_get(struct store *s, const char *env, struct store_stack *ret,
                    struct rtn_error *err);
/* The same for commit id (a full id; "" gives an empty stack): the layers a sandbox started
 * from it, or forked from one that did, runs on. -ESTALE when gc took them meanwhile. */
int store_stack_of(struct store *s, const char *id, struct store_stack *ret, struct rtn_error *err);
void store_stack_free(struct store_stack *st);

/* env's recorded base into ret; -ENOENT when it has none. */
int store_base_get(struct store *s, const char *env, struct store_base *ret, struct rtn_error *err);
/* Checks that env may run on base: -EMEDIUMTYPE, with a message naming both, when env
 * records another. An env without a record takes this base as its record when it has
 * commits (made before the store kept one, or imported) or when record is set (a run whose
 * changes are kept, as rtn exec --keep's); otherwise its first commit records it. */
int store_base_check(struct store *s, const char *env, const struct store_base *base, bool record,
                     struct rtn_error *err);
/* Drops env's base record if env has no commits (its pending changes were dropped). */
int store_base_forget(struct store *s, const char *env, struct rtn_error *err);
/* The environments: every name with a tip or a base record, sorted; free with
 * store_free_paths. */
int store_env_list(struct store *s, char ***ret_names, size_t *ret_n, struct rtn_error *err);
/* Removes env's tip, reflog and base record under the writer lock (-ENOENT when it has
 * none): its name is free again, and what only it reached goes at the next gc. Pending
 * changes (runtime/session/pending.h) are the caller's to drop first. */
int store_env_remove(struct store *s, const char *env, struct rtn_error *err);

/* Walks env's history from the tip to the root. cb returning non-zero stops the walk and
 * that value is returned. */
typedef int (*store_log_cb)(const struct store_commit_info *c, void *userdata);
int store_log(struct store *s, const char *env, store_log_cb cb, void *userdata,
              struct rtn_error *err);

/* Moves env's tip to commit id (a name as store_resolve takes, "" refused), which must be in
 * the history of its tip or of a tip its reflog still holds. ret_id receives the full id. */
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

/* Env's reflog, newest first: every tip it had that has not expired (a tip expires
 * STORE_REFLOG_EXPIRE_SEC after it stopped being the tip), the current tip first. cb
 * returning non-zero stops the walk and that value is returned. */
typedef int (*store_reflog_cb)(const struct store_reflog_entry *e, void *userdata);
int store_reflog(struct store *s, const char *env, store_reflog_cb cb, void *userdata,
                 struct rtn_error *err);

/* Removes every commit and layer that neither an environment's tip nor an unexpired entry
 * of its reflog reaches, except layers a live sandbox holds (store_stack_get); everything
 * under tmp/; and session dirs under sessions/ whose lock no live process holds
 * (store_session_new). store_gc_expire takes the reflog's expiry in seconds instead
 * (0: only the tips count). */
int store_gc(struct store *s, struct store_gc_stats *ret_stats, struct rtn_error *err);
int store_gc_expire(struct store *s, int64_t expire_sec, struct store_gc_stats *ret_stats,
                    struct rtn_error *err);

/* Rechecks every layer against its id, every commit record against its id and its links,
 * and every environment's tip. Returns -EUCLEAN when anything is wrong; err names the first
 * problem and ret_stats->bad counts them all. */
int store_verify(struct store *s, struct store_verify_stats *ret_stats, struct rtn_error *err);

/* Writes the chain from commit name (see store_resolve) down to its root as a .tar.zst to
 * out_path ("-": stdout), which appears only complete: nothing is left of an export killed
 * half-way. */
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
