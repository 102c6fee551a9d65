/* The canonical walk of a layer tree and the layer hash built on it. Everything that reads a
 * layer (the id hasher, export, diff, verify) sees entries through store_walk, so they all
 * agree on order, on which entries exist (sockets are skipped), on hard links (the first
 * name in walk order carries the content; later names point at it) and on which xattrs
 * count. The manifest format is specified in docs/store.md; change it only with a version
 * bump, because ids are forever. */
#include "store/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "store/sha256.h"

#define WALK_MAX_DEPTH 256
#define HASH_BUF (1U << 20)

struct link_seen {
        dev_t dev;
        ino_t ino;
        char *path;
};

struct walk {
        store_walk_cb cb;
        void *userdata;
        struct rtn_error *err;
        char path[PATH_MAX];
        struct link_seen *links;
        size_t nlinks, caplinks;
};

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* Reads a directory's names (without . and ..) sorted bytewise. */
static int read_names(int dirfd, char ***ret, size_t *ret_n) {
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        DIR *d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        int r = 0;
        errno = 0;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 16;
                        char **nn = realloc(names, cap * sizeof *names);
                        if (!nn) {
                                r = -ENOMEM;
                                break;
                        }
                        names = nn;
                }
                if (!(names[n] = strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
                errno = 0;
        }
        if (r == 0 && errno)
                r = negative_errno();
        closedir(d);
        if (r < 0) {
                free_names(names, n);
                return r;
        }
        if (n > 1)
                qsort(names, n, sizeof *names, cmp_names);
        *ret = names;
        *ret_n = n;
        return 0;
}

bool store_xattr_covered(const char *name) {
        /* overlayfs bookkeeping that refers to inodes or file handles of the machine that
         * wrote the upper: not content, and meaningless once the tree moves. */
        static const char *const skip[] = {"user.overlay.origin", "user.overlay.impure",
                                           "user.overlay.uuid", "user.overlay.nlink"};
        for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
                if (!strcmp(name, skip[i]))
                        return false;
        return !strncmp(name, "user.", 5) || !strcmp(name, "security.capability") ||
               !strcmp(name, "system.posix_acl_access") ||
               !strcmp(name, "system.posix_acl_default");
}

void store_xattrs_free(struct store_xattr *x, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(x[i].name);
                free(x[i].value);
        }
        free(x);
}

static int cmp_xattr(const void *a, const void *b) {
        return strcmp(((const struct store_xattr *)a)->name, ((const struct store_xattr *)b)->name);
}

static ssize_t xlist(int fd, const char *p, char *buf, size_t len) {
        return fd >= 0 ? flistxattr(fd, buf, len) : llistxattr(p, buf, len);
}

static ssize_t xget(int fd, const char *p, const char *name, void *buf, size_t len) {
        return fd >= 0 ? fgetxattr(fd, name, buf, len) : lgetxattr(p, name, buf, len);
}

/* A list (name NULL) or a value of fd, or of path p when fd < 0, into a buffer sized from the
 * kernel's answer (a list up to XATTR_LIST_MAX, a value up to XATTR_SIZE_MAX; beyond, the
 * kernel says E2BIG). The tree may be live: a list or value that grew between the two calls
 * (ERANGE) is asked for again. */
static ssize_t xread(int fd, const char *p, const char *name, char **ret) {
        for (int tries = 0; tries < 8; tries++) {
                ssize_t n = name ? xget(fd, p, name, NULL, 0) : xlist(fd, p, NULL, 0);
                if (n < 0)
                        return negative_errno();
                char *b = malloc(n ? (size_t)n : 1);
                if (!b)
                        return -ENOMEM;
                ssize_t m = name ? xget(fd, p, name, b, (size_t)n) : xlist(fd, p, b, (size_t)n);
                if (m >= 0) {
                        *ret = b;
                        return m;
                }
                int e = errno;
                free(b);
                if (e != ERANGE)
                        return -e;
        }
        return -ERANGE;
}

static int xattr_add(int fd, const char *p, const char *name, struct store_xattr *x) {
        char *val = NULL;
        ssize_t vl = xread(fd, p, name, &val);
        if (vl < 0)
                return vl == -ENODATA ? 0 : (int)vl;
        if (!(x->name = strdup(name))) {
                free(val);
                return -ENOMEM;
        }
        x->value = val;
        x->len = (size_t)vl;
        return 1;
}

int store_xattrs_read(int fd, int dirfd, const char *name, struct store_xattr **ret,
                      size_t *ret_n) {
        /* Symlinks, fifos and whiteouts cannot be opened for reading; their xattrs are read
         * through /proc/self/fd so the lookup stays relative to dirfd. */
        char p[64 + NAME_MAX];
        if (fd < 0)
                snprintf(p, sizeof p, "/proc/self/fd/%d/%s", dirfd, name);
        _cleanup_free_ char *list = NULL;
        ssize_t n = xread(fd, p, NULL, &list);
        if (n < 0)
                return n == -ENOTSUP ? (*ret = NULL, *ret_n = 0, 0) : (int)n;
        struct store_xattr *x = NULL;
        size_t cnt = 0;
        for (char *k = list; k < list + n; k += strlen(k) + 1) {
                if (!store_xattr_covered(k))
                        continue;
                struct store_xattr *nx = realloc(x, (cnt + 1) * sizeof *x);
                if (!nx) {
                        store_xattrs_free(x, cnt);
                        return -ENOMEM;
                }
                x = nx;
                int r = xattr_add(fd, p, k, &x[cnt]);
                if (r < 0) {
                        store_xattrs_free(x, cnt);
                        return r;
                }
                cnt += (size_t)r;
        }
        if (cnt > 1)
                qsort(x, cnt, sizeof *x, cmp_xattr);
        *ret = x;
        *ret_n = cnt;
        return 0;
}

int store_xattr_names(int fd, char **ret_list, size_t *ret_len) {
        char *list = NULL;
        ssize_t n = xread(fd, NULL, NULL, &list);
        if (n == -ENOTSUP) {
                n = 0;
                if (!(list = calloc(1, 1)))
                        return -ENOMEM;
        }
        if (n < 0)
                return (int)n;
        *ret_list = list;
        *ret_len = (size_t)n;
        return 0;
}

int store_xattrs_copy(int from, int to, bool (*want)(const char *name, const void *arg),
                      const void *arg, struct rtn_error *err) {
        _cleanup_free_ char *list = NULL;
        size_t n;
        int r = store_xattr_names(from, &list, &n);
        if (r < 0)
                return rtn_err(err, r, "list xattrs");
        for (char *k = list; k < list + n; k += strlen(k) + 1) {
                if (want ? !want(k, arg) : !store_xattr_covered(k))
                        continue;
                _cleanup_free_ char *v = NULL;
                ssize_t len = xread(from, NULL, k, &v);
                if (len == -ENODATA)
                        continue; /* removed since the list was read */
                if (len < 0)
                        return rtn_err(err, (int)len, "read xattr %s", k);
                if (fsetxattr(to, k, v, (size_t)len, 0) < 0)
                        return rtn_err(err, errno, "write xattr %s (%zd bytes)", k, len);
        }
        return 0;
}

/* Zeros a file's holes are hashed from: a hole is never read (a sparse file of gigabytes,
 * a disk image in an upper, would otherwise cost a copy of every zero into the buffer, and
 * under the sanitizers the page faults of a fresh buffer per file). */
static const unsigned char hole_zeros[64U << 10];

static void hash_zeros(struct store_sha256 *h, uint64_t n) {
        while (n > 0) {
                size_t k = n < sizeof hole_zeros ? (size_t)n : sizeof hole_zeros;
                store_sha256_update(h, hole_zeros, k);
                n -= k;
        }
}

/* The data region at or after OFF of a file of SIZE bytes: [*ret_start, *ret_end), both
 * SIZE when only a hole is left. A filesystem that cannot tell says all of it is data. */
static void next_data(int fd, uint64_t off, uint64_t size, uint64_t *ret_start, uint64_t *ret_end) {
        off_t d = lseek(fd, (off_t)off, SEEK_DATA);
        if (d >= 0 && (uint64_t)d < off) /* never before OFF: a hole of negative length */
                d = (off_t)off;
        if (d < 0) {
                *ret_start = errno == ENXIO ? size : off;
                *ret_end = size;
                return;
        }
        off_t e = lseek(fd, d, SEEK_HOLE);
        *ret_start = (uint64_t)d < size ? (uint64_t)d : size;
        *ret_end = e > d && (uint64_t)e < size ? (uint64_t)e : size;
}

int store_hash_fd(int fd, uint64_t size, char ret_hex[STORE_ID_SIZE]) {
        /* Only a file of a buffer or more asks where its holes are: two lseeks per file. */
        bool sparse = size >= HASH_BUF;
        /* The buffer is as large as the largest read so far, at most HASH_BUF: a small file's
         * size, a sparse file's data regions (a few KiB for a file of holes, where a 1 MiB
         * malloc was an mmap and munmap per file, and under the sanitizers a shadow mapping
         * and a quarantine to recycle). */
        _cleanup_free_ unsigned char *buf = NULL;
        size_t cap = 0;
        struct store_sha256 h;
        int r = store_sha256_init(&h, size >= STORE_SHA256_LARGE_MIN ? STORE_SHA256_LARGE
                                                                     : STORE_SHA256_ANY);
        if (r < 0)
                return r;
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        uint64_t off = 0, data_end = size;
        if (sparse)
                data_end = 0;
        while (off < size) {
                if (off >= data_end) {
                        uint64_t start;
                        next_data(fd, off, size, &start, &data_end);
                        hash_zeros(&h, start - off);
                        off = start;
                        continue;
                }
                uint64_t left = data_end - off;
                size_t want = left < HASH_BUF ? (size_t)left : HASH_BUF;
                if (want > cap) {
                        free(buf);
                        if (!(buf = malloc(want))) {
                                store_sha256_free(&h);
                                return -ENOMEM;
                        }
                        cap = want;
                }
                ssize_t n = pread(fd, buf, want, (off_t)off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 || n == 0) { /* n == 0: shrank under us, the tree was not quiescent */
                        r = n < 0 ? negative_errno() : -EIO;
                        store_sha256_free(&h);
                        return r;
                }
                store_sha256_update(&h, buf, (size_t)n);
                off += (uint64_t)n;
        }
        /* A hole read as zeros where a shrunk file has nothing: not quiescent either. */
        struct stat st;
        if (sparse && (fstat(fd, &st) < 0 || (uint64_t)st.st_size != size)) {
                store_sha256_free(&h);
                return -EIO;
        }
        unsigned char md[STORE_SHA256_LEN];
        store_sha256_final(&h, md);
        store_hex(md, sizeof md, ret_hex);
        return 0;
}

static size_t link_slot(const struct walk *w, dev_t dev, ino_t ino) {
        uint64_t h = ((uint64_t)ino ^ ((uint64_t)dev << 32)) * 0x9e3779b97f4a7c15ULL;
        size_t i = (size_t)(h >> 32) & (w->caplinks - 1);
        while (w->links[i].path && (w->links[i].dev != dev || w->links[i].ino != ino))
                i = (i + 1) & (w->caplinks - 1);
        return i;
}

/* Doubles the hash table of multiply-linked files (open addressing, linear probing). */
static int links_grow(struct walk *w) {
        size_t cap = w->caplinks ? w->caplinks * 2 : 64;
        struct link_seen *old = w->links;
        size_t oldcap = w->caplinks;
        if (!(w->links = calloc(cap, sizeof *w->links))) {
                w->links = old;
                return -ENOMEM;
        }
        w->caplinks = cap;
        for (size_t i = 0; i < oldcap; i++)
                if (old[i].path)
                        w->links[link_slot(w, old[i].dev, old[i].ino)] = old[i];
        free(old);
        return 0;
}

/* Remembers the first path of a multiply-linked file; returns it when seen before. A hash
 * table, not a list: the sandbox decides how many hard links an upper holds, and a linear
 * search made a walk quadratic in them. */
static int link_lookup(struct walk *w, const struct stat *st, const char **ret_first) {
        if ((w->nlinks + 1) * 2 > w->caplinks && links_grow(w) < 0)
                return -ENOMEM;
        size_t i = link_slot(w, st->st_dev, st->st_ino);
        if (w->links[i].path) {
                *ret_first = w->links[i].path;
                return 1;
        }
        char *p = strdup(w->path);
        if (!p)
                return -ENOMEM;
        w->links[i] = (struct link_seen){st->st_dev, st->st_ino, p};
        w->nlinks++;
        *ret_first = NULL;
        return 0;
}

static int classify(struct walk *w, struct store_entry *e, char *target, size_t tlen) {
        switch (e->st.st_mode & S_IFMT) {
        case S_IFDIR:
                e->kind = STORE_K_DIR;
                return 0;
        case S_IFREG:
                e->kind = STORE_K_FILE;
                if (e->st.st_nlink > 1) {
                        const char *first;
                        int r = link_lookup(w, &e->st, &first);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                e->kind = STORE_K_HARDLINK;
                                e->target = first;
                        }
                }
                return 0;
        case S_IFLNK: {
                ssize_t n = readlinkat(e->dirfd, e->name, target, tlen);
                if (n < 0)
                        return negative_errno();
                if ((size_t)n >= tlen)
                        return -ENAMETOOLONG;
                target[n] = '\0';
                e->kind = STORE_K_SYMLINK;
                e->target = target;
                return 0;
        }
        case S_IFIFO:
                e->kind = STORE_K_FIFO;
                return 0;
        case S_IFSOCK:
                return 1; /* skipped */
        case S_IFCHR:
                if (e->st.st_rdev == makedev(0, 0)) {
                        e->kind = STORE_K_WHITEOUT;
                        return 0;
                }
                return rtn_errx(w->err, EINVAL, "%s: device node in a layer", w->path);
        default:
                return rtn_errx(w->err, EINVAL, "%s: unsupported file type in a layer", w->path);
        }
}

static int walk_dir(struct walk *w, int dirfd, size_t plen, int depth);

static uint32_t (*view_uid)(uint32_t);
static uint32_t (*view_gid)(uint32_t);

void store_set_id_view(uint32_t (*uid)(uint32_t), uint32_t (*gid)(uint32_t)) {
        view_uid = uid;
        view_gid = gid;
}

/* Opens the directory or regular file e without blocking and checks that the fd is what
 * fstatat saw; from then on the fd's stat is the entry's (fstat the fd, never the name
 * again). A command still running can swap a FIFO in for the file (renameat2
 * RENAME_EXCHANGE) between the two calls: a plain open(2) of it would block for good, and a
 * file swapped for a bigger one would be hashed with the old size. O_NONBLOCK also makes
 * open fail at once where it would wait for a lease break (fcntl(2), F_SETLEASE). */
static int open_checked(struct walk *w, struct store_entry *e) {
        int fl = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
        if (S_ISDIR(e->st.st_mode))
                fl |= O_DIRECTORY;
        _cleanup_close_ int fd = openat(e->dirfd, e->name, fl);
        if (fd < 0)
                return rtn_err(w->err, errno, "open %s", w->path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return rtn_err(w->err, errno, "stat %s", w->path);
        if ((st.st_mode ^ e->st.st_mode) & S_IFMT)
                return rtn_errx(w->err, ESTALE,
                                "%s changed while it was read (is a command still writing "
                                "there?)",
                                w->path);
        e->st = st;
        return TAKE_FD(fd);
}

/* Visits dirfd/name whose relative path is already in w->path. */
static int visit(struct walk *w, int dirfd, const char *name, size_t plen, int depth) {
        struct store_entry e = {.path = w->path, .dirfd = dirfd, .name = name, .fd = -1};
        char target[PATH_MAX];
        if (fstatat(dirfd, name, &e.st, AT_SYMLINK_NOFOLLOW) < 0)
                return rtn_err(w->err, errno, "stat %s", w->path);
        _cleanup_close_ int fd = -1;
        if (S_ISDIR(e.st.st_mode) || S_ISREG(e.st.st_mode)) {
                if ((fd = open_checked(w, &e)) < 0)
                        return fd;
                e.fd = fd;
        }
        if (view_uid)
                e.st.st_uid = view_uid(e.st.st_uid);
        if (view_gid)
                e.st.st_gid = view_gid(e.st.st_gid);
        int r = classify(w, &e, target, sizeof target);
        if (r > 0)
                return 0;
        if (r < 0)
                return w->err->code ? r : rtn_err(w->err, r, "%s", w->path);
        struct store_xattr *x = NULL;
        size_t nx = 0;
        if (e.kind != STORE_K_HARDLINK) {
                r = store_xattrs_read(fd, dirfd, name, &x, &nx);
                if (r < 0)
                        return rtn_err(w->err, r, "read xattrs of %s", w->path);
        }
        e.xattrs = x;
        e.nxattrs = nx;
        r = w->cb(&e, w->userdata);
        store_xattrs_free(x, nx);
        if (r < 0 && w->err->code == 0)
                return rtn_err(w->err, r, "%s", w->path);
        if (r != 0 || e.kind != STORE_K_DIR)
                return r;
        return walk_dir(w, fd, plen, depth + 1);
}

static int walk_dir(struct walk *w, int dirfd, size_t plen, int depth) {
        if (depth > WALK_MAX_DEPTH)
                return rtn_errx(w->err, ELOOP, "%s: deeper than %d levels", w->path,
                                WALK_MAX_DEPTH);
        char **names = NULL;
        size_t n = 0;
        int r = read_names(dirfd, &names, &n);
        if (r < 0)
                return rtn_err(w->err, r, "read directory %s", w->path);
        for (size_t i = 0; i < n && r == 0; i++) {
                size_t nl = strlen(names[i]);
                size_t off = depth == 0 ? 0 : plen + 1;
                if (off + nl >= sizeof w->path) {
                        r = rtn_errx(w->err, ENAMETOOLONG, "%s/%s: path too long", w->path,
                                     names[i]);
                        break;
                }
                if (depth > 0)
                        w->path[plen] = '/';
                memcpy(w->path + off, names[i], nl + 1);
                r = visit(w, dirfd, names[i], off + nl, depth);
                w->path[plen] = '\0';
        }
        free_names(names, n);
        return r;
}

int store_walk(int rootfd, store_walk_cb cb, void *userdata, struct rtn_error *err) {
        struct rtn_error local;
        struct walk w = {.cb = cb, .userdata = userdata, .err = err ? err : &local};
        rtn_err_clear(w.err);
        strcpy(w.path, ".");
        /* The root is visited as "." but its children's paths carry no "./" prefix: depth
         * 0 in walk_dir starts paths afresh. */
        int r = visit(&w, rootfd, ".", 0, -1);
        for (size_t i = 0; i < w.caplinks; i++)
                free(w.links[i].path);
        free(w.links);
        return r;
}
