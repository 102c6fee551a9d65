/* The one tree copy of a session's kept state (copy.h): what commit, fork, merge and
 * checkpoints copy goes through here. The tree is the agent's: nothing is followed, a FIFO
 * cannot block an open (O_NONBLOCK, and the type is checked on the fd), holes stay holes
 * (SEEK_DATA), hard links stay links (a file linked 1000 times is written once), and the
 * depth and path length are bounded. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/session/copy.h"
#include "store/store.h"

#define MAX_DEPTH RT_COPY_MAX_DEPTH
#define COPY_BUF (128u << 10)

/* ---- hard links: inode -> the first name it was copied to ----------------------------- */

static const char *links_find(const struct rt_copy_links *l, ino_t ino) {
        for (size_t i = 0; l->cap && i < l->cap; i++) {
                size_t k = (ino + i) % l->cap;
                if (!l->v[k].path)
                        return NULL;
                if (l->v[k].ino == ino)
                        return l->v[k].path;
        }
        return NULL;
}

static int links_add(struct rt_copy_links *l, ino_t ino, const char *path) {
        if ((l->n + 1) * 2 > l->cap) {
                struct rt_copy_links g = {.cap = l->cap ? l->cap * 2 : 64};
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

static void links_free(struct rt_copy_links *l) {
        for (size_t i = 0; i < l->cap; i++)
                free(l->v[i].path);
        free(l->v);
}

/* ---- one tree copy ------------------------------------------------------------------- */

/* Whether the copy carries the xattr k. */
bool rt_copy_wants(const struct rt_copy *c, const char *k) {
        return store_xattr_covered(k) || (c->ws && !strncmp(k, "user.", 5));
}

static bool copied_cb(const char *k, const void *c) {
        return rt_copy_wants(c, k);
}

/* All of them, however large: a value or list cut short would change what the copy holds,
 * and one the agent made larger than a fixed buffer would fail every fork and commit. */
int rt_copy_xattrs(int from, int to, struct rt_copy *c) {
        int r = store_xattrs_copy(from, to, copied_cb, c, c->err);
        return r < 0 ? rtn_err_wrap(c->err, "%s", c->rel) : 0;
}

/* Owner, mode (after the owner: chown clears set-id bits) and times of a copied entry. */
int rt_copy_meta(int fd, const struct stat *st, struct rt_copy *c) {
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
static int copy_data(int in, int out, off_t size, struct rt_copy *c) {
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

static int copy_file(int sdir, int ddir, const char *name, const struct stat *st,
                     struct rt_copy *c) {
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
        if ((r = copy_data(in, out, now.st_size, c)) < 0 || (r = rt_copy_xattrs(in, out, c)) < 0 ||
            (r = rt_copy_meta(out, &now, c)) < 0)
                return r;
        if (st->st_nlink > 1 && links_add(&c->links, st->st_ino, c->rel) < 0)
                return rtn_err(c->err, ENOMEM, "copy %s", c->rel);
        c->bytes += (uint64_t)now.st_blocks * 512;
        return 0;
}

static int copy_special(int sdir, int ddir, const char *name, const struct stat *st,
                        struct rt_copy *c) {
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

/* Pushes name onto c->rel for the duration of a copy; returns the old length. */
int rt_copy_rel_push(struct rt_copy *c, const char *name, size_t *ret_len) {
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

static int copy_entries(int sfd, int dfd, struct rt_copy *c, unsigned depth) {
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
                else if ((r = rt_copy_rel_push(c, de->d_name, &len)) == 0) {
                        r = rt_copy_at(sfd, dfd, de->d_name, &st, c, depth + 1);
                        c->rel[len] = '\0';
                }
        }
        if (r == 0 && errno)
                r = rtn_err(c->err, errno, "read %s", c->rel);
        closedir(d);
        return r;
}

int rt_copy_dir(int sdir, int ddir, const char *name, const struct stat *st, struct rt_copy *c,
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
        if ((r = copy_entries(s, d, c, depth)) < 0 || (r = rt_copy_xattrs(s, d, c)) < 0)
                return r;
        struct stat now;
        if (fstat(s, &now) < 0)
                return rtn_err(c->err, errno, "stat %s", c->rel);
        return rt_copy_meta(d, &now, c); /* last: a 0555 directory is filled first */
}

int rt_copy_at(int sdir, int ddir, const char *name, const struct stat *st, struct rt_copy *c,
               unsigned depth) {
        int r = S_ISDIR(st->st_mode)   ? rt_copy_dir(sdir, ddir, name, st, c, depth)
                : S_ISREG(st->st_mode) ? copy_file(sdir, ddir, name, st, c)
                                       : copy_special(sdir, ddir, name, st, c);
        if (r == 0 && c->on_entry)
                c->on_entry(c, st, ddir, name);
        return r;
}

int rt_copy_init(struct rt_copy *c, int dst_root, struct rtn_error *err) {
        *c = (struct rt_copy){.dst_root = dst_root, .err = err};
        if (!(c->buf = malloc(COPY_BUF)))
                return rtn_err(err, ENOMEM, "copy buffer");
        return 0;
}

void rt_copy_done(struct rt_copy *c) {
        links_free(&c->links);
        free(c->buf);
}

int rt_remove_at(int dir, const char *name) {
        struct stat st;
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (S_ISDIR(st.st_mode) && fchmodat(dir, name, 0700, 0) < 0)
                return negative_errno();
        return store_rm_rf_at(dir, name);
}

int rt_copy_tree(int sfd, int dfd, const char *name, struct rtn_error *err) {
        struct stat st;
        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : rtn_err(err, errno, "stat the source's %s", name);
        if (!S_ISDIR(st.st_mode))
                return rtn_errx(err, ENOTDIR, "the source's %s is not a directory", name);
        int r = rt_remove_at(dfd, name);
        if (r < 0)
                return rtn_err(err, -r, "empty the copy's %s", name);
        struct rt_copy c;
        r = rt_copy_init(&c, dfd, err);
        c.ws = true;
        if (r == 0 && (r = rt_copy_rel_push(&c, name, &(size_t){0})) == 0)
                r = rt_copy_dir(sfd, dfd, name, &st, &c, 0);
        rt_copy_done(&c);
        return r;
}

uint64_t rt_du_at(int at, const char *name, unsigned depth) {
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
                        total += rt_du_at(dirfd(d), de->d_name, depth + 1);
        closedir(d);
        return total;
}
