/* Base root filesystems for sandboxes (docs/bootstrap.md): `rtn rootfs bootstrap|import|list`
 * and the resolution of `--rootfs NAME|DIR`. A rootfs lives in <data>/rootfs/NAME/ as
 *   root/    the tree, owned by the host ids that are root (and the system users) inside the
 *            sandbox, so provisioning can write over it through the overlay
 *   stamp    identity of a few key paths (device, inode, mtime, ctime, size) taken when the
 *            tree was made; compared at every start, so a changed base is noticed without
 *            re-hashing it. A hash of it is the rootfs's fingerprint.
 * The tree is only ever an overlay lowerdir: sandboxes never write it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "store/store.h"

/* Resolves a --rootfs argument. NULL or "host": *ret_path = NULL (the host base). A path
 * (contains '/', or is "." / ".."): its realpath. Otherwise a rootfs NAME in data_dir (NULL:
 * the default data dir), whose stamp must still match: -ESTALE with a message naming the
 * changed path otherwise. */
int rt_rootfs_resolve(const char *data_dir, const char *arg, char **ret_path,
                      struct rtn_error *err);

/* Host names of the package mirrors a base uses: the URIs of its apt sources (sources.list,
 * sources.list.d/ *.list and deb822 *.sources), read from the base itself (for the host base
 * from the host's /etc/apt), never from a sandbox's upper. NULL-terminated, free with
 * rt_strv_free. */
int rt_rootfs_mirrors(const char *rootfs, char ***ret_hosts, size_t *ret_n);
void rt_strv_free(char **v);

/* Fingerprint (16 hex digits, FNV-1a of the stamp) of the rootfs at dir (root/'s parent). */
int rt_rootfs_fingerprint(const char *dir, char ret[17], struct rtn_error *err);

/* The base identity of a sandbox on rootfs (a resolved --rootfs dir; NULL: the host):
 * "host", or "rootfs:" and the fingerprint of the tree's stamp as it is now, which is a
 * NAME's recorded one (docs/store.md, "Bases"). */
int rt_rootfs_identity(const char *rootfs, struct store_base *ret, struct rtn_error *err);
/* What a sandbox on rootfs needs of environment env: its base checked (store_base_check,
 * recorded at once when keep: its changes are kept as pending changes; the base goes to
 * ret_base for the commit) and its layers held (store_stack_get). */
int rt_env_stack(struct store *s, const char *env, const char *rootfs, bool keep,
                 struct store_base *ret_base, struct store_stack *ret, struct rtn_error *err);

/* The resolved --rootfs of a run that names none (docs/store.md, "Bases"): the base
 * environment env of the store in data_dir was made on, found by its label's NAME (in
 * data_dir) or DIR and checked to be that base still. *ret_path NULL: the host (also for an
 * environment with no record yet, or no store). A base that is gone or changed is an error
 * naming it. */
int rt_env_rootfs(const char *data_dir, const char *env, char **ret_path, struct rtn_error *err);
/* The same in a store the caller has open (s, of data_dir; NULL: none yet, the host). */
int rt_env_rootfs_in(struct store *s, const char *data_dir, const char *env, char **ret_path,
                     struct rtn_error *err);

/* <data_dir>/rootfs, where the rootfses are (data_dir NULL: the default data dir). */
int rt_rootfs_base(const char *data_dir, char **ret, struct rtn_error *err);
/* Makes <data>/rootfs/NAME, bootstrapped from suite/variant/mirror or imported from file,
 * owned as the sandbox maps it; built in .NAME.tmp and renamed into place when complete. */
struct rt_rootfs_make {
        enum { RT_ROOTFS_BOOTSTRAP, RT_ROOTFS_IMPORT } how;
        const char *data_dir, *name, *suite, *variant, *mirror, *file;
        /* Called as each step begins ("download and unpack bookworm (minbase) with
         * mmdebstrap", "unpack FILE", …), for the caller's progress lines; may be NULL. Each
         * step is also logged at debug. */
        void (*phase)(void *ud, const char *what);
        void *phase_ud;
        bool tool_output; /* let the bootstrap tool print its own progress (no --quiet) */
};
int rt_rootfs_make(const struct rt_rootfs_make *a, struct rtn_error *err);
/* Removes <data>/rootfs/NAME (renamed out of use first; a tree on a subordinate range is
 * removed from inside it). Whether anything still uses it is the caller's to check. */
int rt_rootfs_remove(const char *data_dir, const char *name, struct rtn_error *err);
