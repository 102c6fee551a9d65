/* What happens to a sandbox's changes once they leave its size-limited tmpfs upper
 * (docs/architecture.md, "Bounded disk"). Every upper that outlives a command lives on a tmpfs
 * of --upper-size bytes that rtn keeps by the fd of its detached mount; to reach the store it
 * is copied onto the data dir's filesystem (rt_upper_commit, then store_commit's rename), and
 * an `rtn exec --keep` run's tmpfs is laid over the environment's pending changes on disk
 * (rt_upper_merge), as overlayfs would show the one over the other. Neither starts unless the
 * data dir's filesystem has room for all of it: a full disk fails the commit, loses nothing,
 * and never fills the host.
 *
 * The tree is the agent's: nothing is followed (O_NOFOLLOW, *at() from directory fds), a
 * FIFO cannot block an open (O_NONBLOCK, and the type is checked on the fd), holes stay holes
 * (SEEK_DATA), hard links stay links (a file linked 1000 times is written once), and the
 * depth and path length are bounded, and xattrs are copied whole. For every caller but host
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
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "runtime/session/session.h"
#include "runtime/session/upper.h"
#include "runtime/session/wsover.h"
#include "runtime/sandbox/kept.h"

#define MAX_DEPTH 512
#define COPY_BUF (128u << 10)

/* ---- hard links: inode -> the first name it was copied to ----------------------------- */

struct links {
        struct {
                ino_t ino;
                char *path; /* relative to the destination root */
        } * v;
        size_t n, cap;
};

static const char *links_find(const struct links *l, ino_t ino) {
        for (size_t i = 0; l->cap && i < l->cap; i++) {
                size_t k = (ino + i) % l->cap;
                if (!l->v[k].path)
                        return NULL;
                if (l->v[k].ino == ino)
                        return l->v[k].path;
        }
        return NULL;
}

static int links_add(struct links *l, ino_t ino, const char *path) {
        if ((l->n + 1) * 2 > l->cap) {
                struct links g = {.cap = l->cap ? l->cap * 2 : 64};
                if (!(g.v = calloc(g.cap, sizeof *g.v)))
                        return -ENOMEM;
                for (size_t i = 0; i < l->cap; i++)
                        if (l->v[i].path) {
                                size_t k = l->v[i].ino % g.cap;
                                while (g.v[k].path)
                                        k = (k + 1) % g.cap;
                                g.v[k] = l->v[i];
                        }
                free(l->v);
                l->v = g.v;
                l->cap = g.cap;
        }
        size_t k = ino % l->cap;
        while (l->v[k].path)
                k = (k + 1) % l->cap;
        if (!(l->v[k].path = strdup(path)))
                return -ENOMEM;
        l->v[k].ino = ino;
        l->n++;
        return 0;
}

static void links_free(struct links *l) {
        for (size_t i = 0; i < l->cap; i++)
                free(l->v[i].path);
        free(l->v);
}

/* ---- one tree copy ------------------------------------------------------------------- */

struct copy {
        int dst_root; /* the destination root directory, for hard links */
        char rel[PATH_MAX]; /* the entry's path below both roots */
        struct links links;
        char *buf;
        struct rtn_error *err;
        /* an overlay workspace's upper, which stays an upper on this machine and is read by
         * rt_ws_apply: overlayfs's own marks (user.overlay.origin: copied up from the host) and
         * sockets (refused there, by name) are kept too */
        bool ws;
};

/* Whether the copy carries the xattr k. */
static bool copied(const struct copy *c, const char *k) {
        return store_xattr_covered(k) || (c->ws && !strncmp(k, "user.", 5));
}

static bool copied_cb(const char *k, const void *c) {
        return copied(c, k);
}

/* All of them, however large: a value or list cut short would change what the copy holds,
 * and one the agent made larger than a fixed buffer would fail every fork and commit. */
static int copy_xattrs(int from, int to, struct copy *c) {
        int r = store_xattrs_copy(from, to, copied_cb, c, c->err);
        return r < 0 ? rtn_err_wrap(c->err, "%s", c->rel) : 0;
}

/* Owner, mode (after the owner: chown clears set-id bits) and times of a copied entry. */
static int copy_meta(int fd, const struct stat *st, struct copy *c) {
        struct timespec ts[2] = {st->st_atim, st->st_mtim};
        if (fchown(fd, st->st_uid, st->st_gid) < 0 || fchmod(fd, st->st_mode & 07777) < 0 ||
            futimens(fd, ts) < 0)
                return rtn_err(c->err, errno, "set owner, mode and times of %s", c->rel);
        return 0;
}

/* len bytes at off from in to out, inside the kernel (sendfile: page cache to page cache,
 * no copy through our buffer; copy_file_range refuses two tmpfs mounts, EXDEV). Returns the
 * bytes copied, 0 when the kernel cannot do it for these files (the caller reads and writes
 * instead), or -errno. */
static ssize_t copy_kernel(int in, int out, off_t off, size_t len) {
        if (lseek(out, off, SEEK_SET) < 0)
                return -errno;
        ssize_t n = sendfile(out, in, &off, len);
        if (n < 0 && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
                return 0;
        return n < 0 ? -errno : n == 0 ? -EIO : n;
}

/* The data of a regular file, segment by segment: holes are not written. */
static int copy_data(int in, int out, off_t size, struct copy *c) {
        bool kernel = true;
        for (off_t off = 0; off < size;) {
                off_t data = lseek(in, off, SEEK_DATA);
                if (data < 0 && errno == ENXIO)
                        break;
                off_t hole = data < 0 ? -1 : lseek(in, data, SEEK_HOLE);
                if (data < 0 || hole < 0)
                        return rtn_err(c->err, errno, "read %s", c->rel);
                for (off = data; off < hole;) {
                        ssize_t k = kernel ? copy_kernel(in, out, off, (size_t)(hole - off)) : 0;
                        if (k < 0)
                                return rtn_err(c->err, (int)-k, "copy %s", c->rel);
                        if (k > 0) {
                                off += k;
                                continue;
                        }
                        kernel = false;
                        size_t want =
                                (size_t)(hole - off) < COPY_BUF ? (size_t)(hole - off) : COPY_BUF;
                        ssize_t r = pread(in, c->buf, want, off);
                        if (r <= 0)
                                return rtn_err(c->err, r < 0 ? errno : EIO, "read %s", c->rel);
                        for (ssize_t w, done = 0; done < r; done += w)
                                if ((w = pwrite(out, c->buf + done, (size_t)(r - done),
                                                off + done)) < 0)
                                        return rtn_err(c->err, errno, "write %s", c->rel);
                        off += r;
                }
        }
        if (ftruncate(out, size) < 0)
                return rtn_err(c->err, errno, "write %s", c->rel);
        return 0;
}

static int copy_file(int sdir, int ddir, const char *name, const struct stat *st, struct copy *c) {
        if (st->st_nlink > 1) {
                const char *first = links_find(&c->links, st->st_ino);
                if (first) {
                        if (linkat(c->dst_root, first, c->dst_root, c->rel, 0) < 0)
                                return rtn_err(c->err, errno, "link %s to %s", c->rel, first);
                        return 0;
                }
        }
        _cleanup_close_ int in =
                openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat now;
        if (in < 0 || fstat(in, &now) < 0)
                return rtn_err(c->err, errno, "open %s", c->rel);
        if (!S_ISREG(now.st_mode) || now.st_ino != st->st_ino)
                return rtn_errx(c->err, ESTALE, "%s changed while it was copied", c->rel);
        _cleanup_close_ int out =
                openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return rtn_err(c->err, errno, "create %s", c->rel);
        int r;
        if ((r = copy_data(in, out, now.st_size, c)) < 0 || (r = copy_xattrs(in, out, c)) < 0 ||
            (r = copy_meta(out, &now, c)) < 0)
                return r;
        if (st->st_nlink > 1 && links_add(&c->links, st->st_ino, c->rel) < 0)
                return rtn_err(c->err, ENOMEM, "copy %s", c->rel);
        return 0;
}

static int copy_special(int sdir, int ddir, const char *name, const struct stat *st,
                        struct copy *c) {
        struct timespec ts[2] = {st->st_atim, st->st_mtim};
        if (S_ISLNK(st->st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(sdir, name, target, sizeof target - 1);
                if (n < 0)
                        return rtn_err(c->err, errno, "read link %s", c->rel);
                target[n] = '\0';
                if (symlinkat(target, ddir, name) < 0)
                        return rtn_err(c->err, errno, "create link %s", c->rel);
        } else if (S_ISFIFO(st->st_mode) || (S_ISCHR(st->st_mode) && st->st_rdev == 0)) {
                /* A FIFO, or overlayfs's whiteout (char 0:0), which needs no CAP_MKNOD. */
                if (mknodat(ddir, name, st->st_mode & (S_IFMT | 07777), st->st_rdev) < 0)
                        return rtn_err(c->err, errno, "create %s", c->rel);
        } else if (S_ISSOCK(st->st_mode) && c->ws) {
                if (mknodat(ddir, name, S_IFSOCK | (st->st_mode & 07777), 0) < 0)
                        return rtn_err(c->err, errno, "create %s", c->rel);
        } else if (S_ISSOCK(st->st_mode)) {
                return 0; /* no content, and nothing a layer can hold */
        } else {
                return rtn_errx(c->err, EINVAL, "%s is a device node (%u:%u)", c->rel,
                                major(st->st_rdev), minor(st->st_rdev));
        }
        if (fchownat(ddir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
            (!S_ISLNK(st->st_mode) && fchmodat(ddir, name, st->st_mode & 07777, 0) < 0) ||
            utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
                return rtn_err(c->err, errno, "set owner, mode and times of %s", c->rel);
        return 0;
}

static int copy_at(int sdir, int ddir, const char *name, const struct stat *st, struct copy *c,
                   unsigned depth);

/* Pushes name onto c->rel for the duration of a copy; returns the old length. */
static int rel_push(struct copy *c, const char *name, size_t *ret_len) {
        size_t len = strlen(c->rel), add = strlen(name);
        if (len + add + 2 > sizeof c->rel)
                return rtn_errx(c->err, ENAMETOOLONG, "a path is longer than %d bytes: %s...",
                                PATH_MAX, c->rel);
        if (len)
                c->rel[len] = '/';
        memcpy(c->rel + len + (len ? 1 : 0), name, add + 1);
        *ret_len = len;
        return 0;
}

static int copy_entries(int sfd, int dfd, struct copy *c, unsigned depth) {
        DIR *d = fdopendir(fcntl(sfd, F_DUPFD_CLOEXEC, 3));
        if (!d)
                return rtn_err(c->err, errno, "read %s", c->rel);
        struct dirent *de;
        int r = 0;
        while (r == 0 && (errno = 0, de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                struct stat st;
                size_t len;
                if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = rtn_err(c->err, errno, "stat %s/%s", c->rel, de->d_name);
                else if ((r = rel_push(c, de->d_name, &len)) == 0) {
                        r = copy_at(sfd, dfd, de->d_name, &st, c, depth + 1);
                        c->rel[len] = '\0';
                }
        }
        if (r == 0 && errno)
                r = rtn_err(c->err, errno, "read %s", c->rel);
        closedir(d);
        return r;
}

static int copy_dir(int sdir, int ddir, const char *name, const struct stat *st, struct copy *c,
                    unsigned depth) {
        if (depth > MAX_DEPTH)
                return rtn_errx(c->err, ELOOP, "more than %d directories deep: %s", MAX_DEPTH,
                                c->rel);
        if (mkdirat(ddir, name, 0700) < 0)
                return rtn_err(c->err, errno, "create %s", c->rel);
        _cleanup_close_ int s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0 || d < 0)
                return rtn_err(c->err, errno, "open %s", c->rel);
        int r;
        if ((r = copy_entries(s, d, c, depth)) < 0 || (r = copy_xattrs(s, d, c)) < 0)
                return r;
        struct stat now;
        if (fstat(s, &now) < 0)
                return rtn_err(c->err, errno, "stat %s", c->rel);
        return copy_meta(d, &now, c); /* last: a 0555 directory is filled first */
}

static int copy_at(int sdir, int ddir, const char *name, const struct stat *st, struct copy *c,
                   unsigned depth) {
        if (S_ISDIR(st->st_mode))
                return copy_dir(sdir, ddir, name, st, c, depth);
        if (S_ISREG(st->st_mode))
                return copy_file(sdir, ddir, name, st, c);
        return copy_special(sdir, ddir, name, st, c);
}

static int copy_init(struct copy *c, int dst_root, struct rtn_error *err) {
        *c = (struct copy){.dst_root = dst_root, .err = err};
        if (!(c->buf = malloc(COPY_BUF)))
                return rtn_err(err, ENOMEM, "copy buffer");
        return 0;
}

static void copy_done(struct copy *c) {
        links_free(&c->links);
        free(c->buf);
}

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
        struct copy c;
        int r = copy_init(&c, dir, err);
        if (r == 0 && (r = rel_push(&c, "upper", &(size_t){0})) == 0)
                r = copy_dir(a->upper_fs, dir, "upper", &st, &c, 0);
        copy_done(&c);
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

static int remove_at(int dir, const char *name);

/* ---- clone: one kept tmpfs's changes into another's --------------------------------- */

/* Replaces the tree name below dfd with a copy of the one below sfd (none: left empty).
 * Everything overlayfs and the agent set is kept, user.* xattrs included, as the copy stays
 * an upper (or /tmp, where the agent may set any). */
static int clone_tree(int sfd, int dfd, const char *name, struct rtn_error *err) {
        struct stat st;
        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : rtn_err(err, errno, "stat the source's %s", name);
        if (!S_ISDIR(st.st_mode))
                return rtn_errx(err, ENOTDIR, "the source's %s is not a directory", name);
        int r = remove_at(dfd, name);
        if (r < 0)
                return rtn_err(err, -r, "empty the copy's %s", name);
        struct copy c;
        r = copy_init(&c, dfd, err);
        c.ws = true;
        if (r == 0 && (r = rel_push(&c, name, &(size_t){0})) == 0)
                r = copy_dir(sfd, dfd, name, &st, &c, 0);
        copy_done(&c);
        return r;
}

/* One tree of RT_KEPT_STATE: below parent of both tmpfs, when both have parent. */
static int clone_state(int from_fs, int to_fs, const char *parent, const char *name,
                       struct rtn_error *err) {
        if (!*parent)
                return clone_tree(from_fs, to_fs, name, err);
        _cleanup_close_ int s =
                openat(from_fs, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int d =
                openat(to_fs, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return s >= 0 && d >= 0 ? clone_tree(s, d, name, err) : 0;
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

/* ---- checkpoints: the state copied to RT_UNDO_DIR/<step>/ on the same tmpfs ---------- */

enum step_op { STEP_SAVE, STEP_RESTORE, STEP_DROP };

struct step_call {
        int fs;
        const char *step;
        enum step_op op;
};

/* The directory parent ("" for top) below top, made when make; -1 when it is missing. */
static int open_parent(int top, const char *parent, bool make) {
        if (!*parent)
                return fcntl(top, F_DUPFD_CLOEXEC, 3);
        if (make && mkdirat(top, parent, 0700) < 0 && errno != EEXIST)
                return -1;
        return openat(top, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* One tree of RT_KEPT_STATE from below sfd to below dfd; a tree the source lacks is removed
 * from the destination, so that a restore brings back its absence too. */
static int step_tree(int sfd, int dfd, const char *parent, const char *name, bool restore,
                     struct rtn_error *err) {
        _cleanup_close_ int s = open_parent(sfd, parent, false);
        if (s < 0 && !restore)
                return 0; /* no overlay workspace here */
        _cleanup_close_ int d = open_parent(dfd, parent, !restore);
        if (d < 0)
                return 0;
        if (s < 0 ||
            (fstatat(s, name, &(struct stat){0}, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)) {
                int r = remove_at(d, name);
                return r < 0 ? rtn_err(err, -r, "remove %s", name) : 0;
        }
        return clone_tree(s, d, name, err);
}

static int do_step(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct step_call *a = arg;
        if (mkdirat(a->fs, RT_UNDO_DIR, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", RT_UNDO_DIR);
        _cleanup_close_ int undo =
                openat(a->fs, RT_UNDO_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (undo < 0)
                return rtn_err(err, errno, "open %s", RT_UNDO_DIR);
        int r = 0;
        if (a->op != STEP_RESTORE && (r = remove_at(undo, a->step)) < 0)
                return rtn_err(err, -r, "remove checkpoint %s", a->step);
        if (a->op == STEP_DROP)
                return 0;
        if (a->op == STEP_SAVE && mkdirat(undo, a->step, 0700) < 0)
                return rtn_err(err, errno, "create checkpoint %s", a->step);
        _cleanup_close_ int step =
                openat(undo, a->step, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (step < 0 && !(a->op == STEP_RESTORE && errno == ENOENT))
                return rtn_err(err, errno, "open checkpoint %s", a->step);
        /* A restore of a step never saved is one of the empty state (nothing had run). */
        bool restore = a->op == STEP_RESTORE;
#define STEP_STATE(parent, name)                                                                   \
        if (r == 0)                                                                                \
                r = restore ? step_tree(step, a->fs, parent, name, true, err)                      \
                            : step_tree(a->fs, step, parent, name, false, err);
        RT_KEPT_STATE(STEP_STATE)
#undef STEP_STATE
        if (r < 0 && !restore)
                (void)remove_at(undo, a->step); /* no partial step: its room comes back */
        return r;
}

static int step_run(const struct rt_idmap *m, int fs, const char *step, enum step_op op,
                    struct rtn_error *err) {
        if (!m)
                return rtn_errx(err, EINVAL, "no id mapping for the checkpoint");
        if (!*step || strspn(step, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(step))
                return rtn_errx(err, EINVAL, "bad checkpoint name");
        struct step_call a = {.fs = fs, .step = step, .op = op};
        /* As rt_upper_fork: in a user namespace mapped like the sandbox, with its rights. */
        return rt_userns_run(m, do_step, &a, NULL, 0, err);
}

int rt_upper_save(const struct rt_idmap *m, int upper_fs, const char *step, struct rtn_error *err) {
        return step_run(m, upper_fs, step, STEP_SAVE, err);
}

int rt_upper_restore(const struct rt_idmap *m, int upper_fs, const char *step,
                     struct rtn_error *err) {
        return step_run(m, upper_fs, step, STEP_RESTORE, err);
}

int rt_upper_step_drop(const struct rt_idmap *m, int upper_fs, const char *step,
                       struct rtn_error *err) {
        return step_run(m, upper_fs, step, STEP_DROP, err);
}

/* ---- merge: an upper laid over the pending changes ----------------------------------- */

/* rm -rf that first makes each directory writable and searchable (ours, or the helper's). */
static int remove_at(int dir, const char *name) {
        struct stat st;
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (S_ISDIR(st.st_mode) && fchmodat(dir, name, 0700, 0) < 0)
                return negative_errno();
        return store_rm_rf_at(dir, name);
}

static bool is_opaque(int fd) {
        char v[2];
        return fgetxattr(fd, "user.overlay.opaque", v, sizeof v) == 1 && v[0] == 'y';
}

/* A directory present in both: the upper's copy-up holds the merged metadata. Its xattrs
 * replace the user's on the pending one; overlayfs's own markers there stay (an opaque
 * pending directory stays opaque under a plain upper one). */
static int merge_meta(int u, int p, struct copy *c) {
        _cleanup_free_ char *names = NULL;
        size_t n;
        int r = store_xattr_names(p, &names, &n);
        if (r < 0)
                return rtn_err(c->err, r, "list xattrs of pending %s", c->rel);
        for (char *k = names; k < names + n; k += strlen(k) + 1)
                if (copied(c, k) && strncmp(k, "user.overlay.", 13) != 0 &&
                    fgetxattr(u, k, NULL, 0) < 0)
                        (void)fremovexattr(p, k);
        struct stat st;
        r = copy_xattrs(u, p, c);
        if (r == 0 && fstat(u, &st) < 0)
                r = rtn_err(c->err, errno, "stat %s", c->rel);
        return r < 0 ? r : copy_meta(p, &st, c);
}

static int merge_dir(int u, int p, struct copy *c, unsigned depth);

static int merge_entry(int u, int p, const char *name, struct copy *c, unsigned depth) {
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
        int r = remove_at(p, name);
        if (r < 0)
                return rtn_err(c->err, r, "remove pending %s", c->rel);
        return copy_at(u, p, name, &us, c, depth + 1);
}

static int merge_dir(int u, int p, struct copy *c, unsigned depth) {
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
                if ((r = rel_push(c, de->d_name, &len)) == 0) {
                        r = merge_entry(u, p, de->d_name, c, depth);
                        c->rel[len] = '\0';
                }
        }
        if (r == 0 && errno)
                r = rtn_err(c->err, errno, "read %s", c->rel);
        closedir(d);
        return r;
}

/* Bytes under dir (blocks), not following symlinks, bounded in depth. */
static uint64_t du_at(int at, const char *name, unsigned depth) {
        struct stat st;
        if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        uint64_t total = (uint64_t)st.st_blocks * 512;
        if (!S_ISDIR(st.st_mode) || depth > MAX_DEPTH)
                return total;
        int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return total;
        }
        struct dirent *de;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        total += du_at(dirfd(d), de->d_name, depth + 1);
        closedir(d);
        return total;
}

/* Lays the tree named upper below sfd (the tmpfs's) over the one below dfd (the pending
 * changes'), or copies it there when dfd has none. ws: an overlay workspace's (struct copy),
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
        struct copy c;
        int r = copy_init(&c, p >= 0 ? p : dfd, err);
        c.ws = ws;
        if (r == 0 && p < 0 && (r = rel_push(&c, "upper", &(size_t){0})) == 0)
                r = copy_dir(sfd, dfd, "upper", &st, &c, 0);
        else if (r == 0 && (r = merge_dir(u, p, &c, 0)) == 0 && ws)
                r = merge_meta(u, p, &c);
        copy_done(&c);
        return r;
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
        char size[32];
        uint64_t bytes = du_at(pdir, "upper", 0) + du_at(pdir, RT_WS_DIR "/upper", 0);
        snprintf(size, sizeof size, "%llu\n", (unsigned long long)bytes);
        (void)unlinkat(pdir, RT_PENDING_SIZE, 0);
        _cleanup_close_ int fd = openat(pdir, RT_PENDING_SIZE,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
                (void)rtn_write_all(fd, size, strlen(size));
        return r;
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
