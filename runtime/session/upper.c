/* What happens to a sandbox's changes once they leave its size-limited tmpfs upper
 * (docs/architecture.md, "Bounded disk"). Every upper that outlives a command lives on a tmpfs
 * of --upper-size bytes that rtn keeps by the fd of its detached mount; to reach the store it
 * is copied onto the data dir's filesystem (rt_upper_commit, then store_commit's rename), and
 * an `rtn exec --keep` run's tmpfs is laid over the environment's pending changes on disk
 * (rt_upper_merge), as overlayfs would show the one over the other. Neither starts unless the
 * data dir's filesystem has room for all of it: a full disk fails the commit, loses nothing,
 * and never fills the host.
 *
 * The tree is the agent's: every copy goes through runtime/session/copy.h, which follows
 * nothing, blocks on no FIFO, keeps holes, links and xattrs. For every caller but host
 * root the work runs in a user namespace mapped like the sandbox (rt_userns_as_owner), whose
 * root may create files of every mapped owner and read what the agent made unreadable (a
 * 000 directory); a fork's tmpfs and copy (rt_upper_fork) are made there for every caller. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "runtime/session/copy.h"
#include "runtime/session/session.h"
#include "runtime/session/upper.h"
#include "runtime/session/wsover.h"
#include "runtime/sandbox/kept.h"

#define MAX_DEPTH RT_COPY_MAX_DEPTH

/* ---- room on the data dir's filesystem ----------------------------------------------- */

int rt_upper_usage(int upper_fs, uint64_t *ret_bytes, uint64_t *ret_inodes) {
        struct statfs f;
        if (upper_fs < 0 || fstatfs(upper_fs, &f) < 0)
                return upper_fs < 0 ? -EBADF : negative_errno();
        *ret_bytes = (uint64_t)(f.f_blocks - f.f_bfree) * (uint64_t)f.f_bsize;
        if (ret_inodes)
                *ret_inodes = (uint64_t)(f.f_files - f.f_ffree);
        return 0;
}

/* What the copy may take on disk at most: the tmpfs's data, and a block for each inode
 * (tmpfs directories and symlinks take no data blocks; on disk each may take one). A commit
 * (st) must also leave the filesystem its reserve and the store within its budget
 * (store_room). */
static int check_room(int upper_fs, const char *dir, struct store *st, struct rtn_error *err) {
        uint64_t bytes, inodes;
        struct statvfs v;
        int r = rt_upper_usage(upper_fs, &bytes, &inodes);
        if (r < 0)
                return rtn_err(err, r, "measure the sandbox's changes");
        if (statvfs(dir, &v) < 0)
                return rtn_err(err, errno, "statvfs %s", dir);
        uint64_t need = bytes + inodes * 4096, avail = (uint64_t)v.f_bavail * v.f_frsize;
        if (need > avail || (v.f_favail != (fsfilcnt_t)-1 && v.f_files && inodes > v.f_favail))
                return rtn_errx(err, ENOSPC,
                                "the data dir's filesystem has %llu MiB free, the sandbox's "
                                "changes may need %llu MiB (%llu files); nothing was written and "
                                "the changes are kept: make room, or drop them",
                                (unsigned long long)(avail >> 20),
                                (unsigned long long)((need + (1 << 20) - 1) >> 20),
                                (unsigned long long)inodes);
        return st ? store_room(st, need, err) : 0;
}

/* ---- commit: copy, prune, store_commit ------------------------------------------------ */

struct commit_call {
        struct store *st;
        const char *env, *dir;
        const struct store_commit_opts *opts;
        int upper_fs;
};

static int open_upper_dir(int upper_fs, struct stat *st, struct rtn_error *err) {
        int fd = openat(upper_fs, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, st) < 0) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                return rtn_err(err, e, "open the sandbox's upper");
        }
        return fd;
}

static int do_commit(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct commit_call *a = arg;
        _cleanup_close_ int dir = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return rtn_err(err, errno, "open %s", a->dir);
        (void)store_rm_rf_at(dir, "upper"); /* what a failed commit left */
        struct stat st;
        _cleanup_close_ int up = open_upper_dir(a->upper_fs, &st, err);
        if (up < 0)
                return up;
        struct rt_copy c;
        int r = rt_copy_init(&c, dir, err);
        if (r == 0 && (r = rt_copy_rel_push(&c, "upper", &(size_t){0})) == 0)
                r = rt_copy_dir(a->upper_fs, dir, "upper", &st, &c, 0);
        rt_copy_done(&c);
        char path[4200];
        snprintf(path, sizeof path, "%s/upper", a->dir);
        if (r < 0) {
                (void)store_rm_rf_at(dir, "upper");
                return r;
        }
        rt_upper_prune(path); /* the sandbox's own mountpoints */
        r = store_commit_with(a->st, a->env, path, a->opts, out, err);
        if (r < 0 || r == 1)
                (void)store_rm_rf_at(dir, "upper");
        return r;
}

int rt_upper_commit(const struct rt_idmap *m, struct store *st, const char *env, int upper_fs,
                    const char *dir, const struct store_commit_opts *o, char ret_id[STORE_ID_SIZE],
                    struct rtn_error *err) {
        int r = check_room(upper_fs, dir, st, err);
        if (r < 0)
                return r;
        struct commit_call a = {.st = st, .env = env, .dir = dir, .opts = o, .upper_fs = upper_fs};
        return rt_userns_as_owner(m, do_commit, &a, ret_id, STORE_ID_SIZE, err);
}

/* ---- clone: one kept tmpfs's changes into another's --------------------------------- */

/* One tree of RT_KEPT_STATE: below parent of both tmpfs, when both have parent. */
static int clone_state(int from_fs, int to_fs, const char *parent, const char *name,
                       struct rtn_error *err) {
        if (!*parent)
                return rt_copy_tree(from_fs, to_fs, name, err);
        _cleanup_close_ int s =
                openat(from_fs, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int d =
                openat(to_fs, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return s >= 0 && d >= 0 ? rt_copy_tree(s, d, name, err) : 0;
}

/* Copies RT_KEPT_STATE (upper/, an overlay workspace's ws/upper, /tmp's tmp/) of the tmpfs
 * from_fs onto to_fs. */
static int clone_uppers(int from_fs, int to_fs, struct rtn_error *err) {
        int r = 0;
#define CLONE_STATE(parent, name)                                                                  \
        if (r == 0)                                                                                \
                r = clone_state(from_fs, to_fs, parent, name, err);
        RT_KEPT_STATE(CLONE_STATE)
#undef CLONE_STATE
        return r;
}

struct fork_call {
        const struct rt_spec *spec;
        const struct rt_idmap *m;
        int from_fs;
};

/* In the helper: the fork's tmpfs, made as its sandbox would make it (rt_upper_fs_new, as
 * the namespace's root, so its root and work/ are root's), with ws/ where the source has
 * one (a sandbox's mount_ws_overlay makes it), then the copy as the caller. Returns the
 * tmpfs's fd, which rt_userns_run_fd hands to rtn. */
static int do_fork(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct fork_call *a = arg;
        /* fsopen wants CAP_SYS_ADMIN over the mount namespace: one of the helper's own */
        if (unshare(CLONE_NEWNS) < 0)
                return rtn_err(err, errno, "a mount namespace for the fork's tmpfs");
        uid_t fsuid = (uid_t)setfsuid(0);
        gid_t fsgid = (gid_t)setfsgid(0);
        _cleanup_close_ int to = rt_upper_fs_new(a->spec, a->m, err);
        _cleanup_close_ int sws =
                openat(a->from_fs, RT_WS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r = to;
        if (to >= 0 && sws >= 0 && mkdirat(to, RT_WS_DIR, 0755) < 0)
                r = rtn_err(err, errno, "create the fork's " RT_WS_DIR "/");
        setfsgid(fsgid);
        setfsuid(fsuid);
        if (r >= 0)
                r = clone_uppers(a->from_fs, to, err);
        return r < 0 ? r : TAKE_FD(to);
}

int rt_upper_fork(const struct rt_idmap *m, const struct rt_spec *spec, int from_fs, int *ret_fs,
                  struct rtn_error *err) {
        struct fork_call a = {.spec = spec, .m = m, .from_fs = from_fs};
        /* Always from a user namespace mapped like the sandbox, whatever the mapping: the
         * fork's tmpfs belongs to one mapped as its sandboxes will be, as a tmpfs a sandbox
         * made does, and it stores only ids mapped there; and the copy of a tree the agent
         * wrote acts with the sandbox's rights (its root's CAP_DAC_OVERRIDE over the mapped
         * ids, so a 000 file or directory is copied, not refused) and never with rtn's own:
         * with a single-id mapping, rtn's process is the host user with all its groups. */
        if (!m)
                return rtn_errx(err, EINVAL, "no id mapping for the copy");
        return rt_userns_run_fd(m, do_fork, &a, ret_fs, err);
}

/* ---- merge: an upper laid over the pending changes ----------------------------------- */

static bool is_opaque(int fd) {
        char v[2];
        return fgetxattr(fd, "user.overlay.opaque", v, sizeof v) == 1 && v[0] == 'y';
}

/* A directory present in both: the upper's copy-up holds the merged metadata. Its xattrs
 * replace the user's on the pending one; overlayfs's own markers there stay (an opaque
 * pending directory stays opaque under a plain upper one). */
static int merge_meta(int u, int p, struct rt_copy *c) {
        _cleanup_free_ char *names = NULL;
        size_t n;
        int r = store_xattr_names(p, &names, &n);
        if (r < 0)
                return rtn_err(c->err, r, "list xattrs of pending %s", c->rel);
        for (char *k = names; k < names + n; k += strlen(k) + 1)
                if (rt_copy_wants(c, k) && strncmp(k, "user.overlay.", 13) != 0 &&
                    fgetxattr(u, k, NULL, 0) < 0)
                        (void)fremovexattr(p, k);
        struct stat st;
        r = rt_copy_xattrs(u, p, c);
        if (r == 0 && fstat(u, &st) < 0)
                r = rtn_err(c->err, errno, "stat %s", c->rel);
        return r < 0 ? r : rt_copy_meta(p, &st, c);
}

static int merge_dir(int u, int p, struct rt_copy *c, unsigned depth);

static int merge_entry(int u, int p, const char *name, struct rt_copy *c, unsigned depth) {
        struct stat us, ps;
        if (fstatat(u, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
                return rtn_err(c->err, errno, "stat %s", c->rel);
        bool pdir = fstatat(p, name, &ps, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(ps.st_mode);
        if (S_ISDIR(us.st_mode) && pdir) {
                _cleanup_close_ int ud =
                        openat(u, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_close_ int pd =
                        openat(p, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (ud < 0 || pd < 0)
                        return rtn_err(c->err, errno, "open %s", c->rel);
                if (!is_opaque(ud)) {
                        /* writable until merge_meta sets the upper's mode */
                        int r = fchmod(pd, 0700) < 0 ? rtn_err(c->err, errno, "chmod %s", c->rel)
                                                     : merge_dir(ud, pd, c, depth + 1);
                        return r < 0 ? r : merge_meta(ud, pd, c);
                }
        }
        /* A file, link, whiteout or opaque directory of the upper replaces what the pending
         * changes have at that name (a whiteout keeps hiding what the layers below hold). */
        int r = rt_remove_at(p, name);
        if (r < 0)
                return rtn_err(c->err, r, "remove pending %s", c->rel);
        return rt_copy_at(u, p, name, &us, c, depth + 1);
}

static int merge_dir(int u, int p, struct rt_copy *c, unsigned depth) {
        if (depth > MAX_DEPTH)
                return rtn_errx(c->err, ELOOP, "more than %d directories deep: %s", MAX_DEPTH,
                                c->rel);
        DIR *d = fdopendir(fcntl(u, F_DUPFD_CLOEXEC, 3));
        if (!d)
                return rtn_err(c->err, errno, "read %s", c->rel);
        struct dirent *de;
        int r = 0;
        while (r == 0 && (errno = 0, de = readdir(d))) {
                size_t len;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if ((r = rt_copy_rel_push(c, de->d_name, &len)) == 0) {
                        r = merge_entry(u, p, de->d_name, c, depth);
                        c->rel[len] = '\0';
                }
        }
        if (r == 0 && errno)
                r = rtn_err(c->err, errno, "read %s", c->rel);
        closedir(d);
        return r;
}

/* Lays the tree named upper below sfd (the tmpfs's) over the one below dfd (the pending
 * changes'), or copies it there when dfd has none. ws: an overlay workspace's (struct rt_copy),
 * whose top directory's own metadata is merged too (it is /workspace itself). */
static int merge_tree(int sfd, int dfd, bool ws, struct rtn_error *err) {
        _cleanup_close_ int u =
                openat(sfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (u < 0 && errno == ENOENT)
                return 0;
        if (u < 0 || fstat(u, &st) < 0)
                return rtn_err(err, errno, "open the sandbox's upper");
        _cleanup_close_ int p =
                openat(dfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (p < 0 && errno != ENOENT)
                return rtn_err(err, errno, "open the pending upper");
        struct rt_copy c;
        int r = rt_copy_init(&c, p >= 0 ? p : dfd, err);
        c.ws = ws;
        if (r == 0 && p < 0 && (r = rt_copy_rel_push(&c, "upper", &(size_t){0})) == 0)
                r = rt_copy_dir(sfd, dfd, "upper", &st, &c, 0);
        else if (r == 0 && (r = merge_dir(u, p, &c, 0)) == 0 && ws)
                r = merge_meta(u, p, &c);
        rt_copy_done(&c);
        return r;
}

/* pending/RT_PENDING_SIZE: the blocks of the pending changes (upper/, ws/upper). */
static void write_size(int pdir) {
        char size[32];
        uint64_t bytes = rt_du_at(pdir, "upper", 0) + rt_du_at(pdir, RT_WS_DIR "/upper", 0);
        snprintf(size, sizeof size, "%llu\n", (unsigned long long)bytes);
        (void)unlinkat(pdir, RT_PENDING_SIZE, 0);
        _cleanup_close_ int fd = openat(pdir, RT_PENDING_SIZE,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
                (void)rtn_write_all(fd, size, strlen(size));
}

struct merge_call {
        const char *pending;
        int upper_fs;
        bool root; /* the root's upper too, not only the workspace's */
};

static int do_merge(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct merge_call *a = arg;
        _cleanup_close_ int pdir = open(a->pending, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pdir < 0)
                return rtn_err(err, errno, "open %s", a->pending);
        int r = a->root ? merge_tree(a->upper_fs, pdir, false, err) : 0;
        /* An overlay workspace's upper, made in the sandbox (ws/upper on the tmpfs), onto the
         * pending ws/ (rtn made it and its record; runtime/session/wsover.h). */
        _cleanup_close_ int sws =
                openat(a->upper_fs, RT_WS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int dws =
                openat(pdir, RT_WS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (r == 0 && sws >= 0 && dws < 0)
                r = rtn_err(err, errno, "open %s/" RT_WS_DIR, a->pending);
        if (r == 0 && sws >= 0)
                r = merge_tree(sws, dws, true, err);
        write_size(pdir);
        return r;
}

static int do_measure(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        _cleanup_close_ int pdir = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pdir < 0)
                return rtn_err(err, errno, "open %s", (const char *)arg);
        write_size(pdir);
        return 0;
}

int rt_upper_pending_measure(const struct rt_idmap *m, const char *pending, struct rtn_error *err) {
        return rt_userns_as_owner(m, do_measure, (void *)pending, NULL, 0, err);
}

static int merge(const struct rt_idmap *m, int upper_fs, const char *pending, bool root,
                 struct rtn_error *err) {
        int r = check_room(upper_fs, pending, NULL, err);
        if (r < 0)
                return r;
        struct merge_call a = {.pending = pending, .upper_fs = upper_fs, .root = root};
        return rt_userns_as_owner(m, do_merge, &a, NULL, 0, err);
}

int rt_upper_merge(const struct rt_idmap *m, int upper_fs, const char *pending,
                   struct rtn_error *err) {
        return merge(m, upper_fs, pending, true, err);
}

int rt_upper_keep_ws(const struct rt_idmap *m, int upper_fs, const char *pending,
                     struct rtn_error *err) {
        return merge(m, upper_fs, pending, false, err);
}

uint64_t rt_upper_pending_size(const char *pending) {
        char path[4200], buf[32];
        snprintf(path, sizeof path, "%s/" RT_PENDING_SIZE, pending);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        return strtoull(buf, NULL, 10);
}
