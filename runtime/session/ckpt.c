/* Checkpoints for env_undo, by copying only what changed (docs/benchmarks.md, "Checkpoints";
 * docs/tools.md, env_history). RT_UNDO_DIR/ on the session's own tmpfs, so that it counts
 * against --upper-size with the state, holds:
 *
 *   shadow/   the state (RT_KEPT_STATE, runtime/sandbox/kept.h) as it was at the last
 *             checkpoint, laid out as on the tmpfs (shadow/upper, shadow/ws/upper, shadow/tmp)
 *   dirs      for each directory of the shadow, the inode of the live directory it copies, so
 *             that a directory moved into another's place is not taken for it
 *   <step>/   list: what a step holds, records "K<path>\0" in walk order; t/: their versions
 *
 * A seal walks the live state against the shadow. An entry whose ctime is at or after the
 * checkpoint's (CLOCK_REALTIME_COARSE: the kernel stamps a change no earlier than that clock
 * read before it) changed: the shadow's old version moves into the step (a rename, record W),
 * or its absence is noted (A), and the new version is copied into the shadow. A directory
 * still the same one (its inode as dirs says) is walked into; a changed one gets its old
 * metadata kept (M) and its shadow listing compared for deletions. A walk that finds nothing
 * changed copies nothing. A swap applies a step to the shadow and the live state and leaves
 * the versions it replaced in the step: an undo and its redo are the same operation.
 *
 * The trees are the agent's: every path below a root is opened with RESOLVE_BENEATH and
 * RESOLVE_NO_SYMLINKS, and the copies go through copy.h (nothing followed, no FIFO opened for
 * reading, holes kept, links kept). The work runs in a user namespace mapped like the sandbox
 * (rt_userns_run), with its root's rights over the mapped ids; only a walk that finds nothing
 * changed runs in rtn itself (rt_ckpt). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/syscall.h"
#include "runtime/sandbox/kept.h"
#include "runtime/session/copy.h"
#include "runtime/session/upper.h"

#define SHADOW "shadow"
#define DIRS "dirs"
#define RECENT "recent" /* live inode -> its ctime when last copied, if at or after since */
#define LIST "list"
#define TREE "t"
#define SWAP_TMP "x" /* beside t/: never a name of the state */
#define META_TMP "m"

int64_t rt_ckpt_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME_COARSE, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t nsec(const struct timespec *t) {
        return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* ---- dirs: shadow inode -> live inode ------------------------------------------------- */

struct inomap {
        uint64_t (*v)[2]; /* key 0: free (no tmpfs inode is 0) */
        size_t n, cap;
};

static int inomap_put(struct inomap *m, uint64_t k, uint64_t val) {
        if ((m->n + 1) * 2 > m->cap) {
                struct inomap g = {.cap = m->cap ? m->cap * 2 : 256};
                if (!(g.v = calloc(g.cap, sizeof *g.v)))
                        return -ENOMEM;
                for (size_t i = 0; i < m->cap; i++)
                        if (m->v[i][0])
                                (void)inomap_put(&g, m->v[i][0], m->v[i][1]);
                free(m->v);
                *m = g;
        }
        size_t i = k % m->cap;
        while (m->v[i][0] && m->v[i][0] != k)
                i = (i + 1) % m->cap;
        if (!m->v[i][0])
                m->n++;
        m->v[i][0] = k;
        m->v[i][1] = val;
        return 0;
}

static uint64_t inomap_get(const struct inomap *m, uint64_t k) {
        for (size_t i = 0; m->cap && i < m->cap; i++) {
                size_t j = (k + i) % m->cap;
                if (!m->v[j][0])
                        return 0;
                if (m->v[j][0] == k)
                        return m->v[j][1];
        }
        return 0;
}

static int inomap_load(int undo, const char *name, struct inomap *m) {
        _cleanup_close_ int fd = openat(undo, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        uint64_t pairs[256][2]; /* read a page at a time, not a pair: every seal loads two */
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        for (ssize_t n; (n = read(fd, pairs, sizeof pairs)) >= (ssize_t)sizeof pairs[0];)
                for (size_t i = 0; i < (size_t)n / sizeof pairs[0]; i++)
                        if (inomap_put(m, pairs[i][0], pairs[i][1]) < 0)
                                return -ENOMEM;
        return 0;
}

static int inomap_save(int undo, const char *name, const struct inomap *m) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%s.new", name);
        (void)unlinkat(undo, tmp, 0);
        _cleanup_close_ int fd =
                openat(undo, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return negative_errno();
        for (size_t i = 0; i < m->cap; i++)
                if (m->v[i][0] && rtn_write_all(fd, m->v[i], sizeof m->v[i]) < 0)
                        return negative_errno();
        return renameat(undo, tmp, undo, name) < 0 ? negative_errno() : 0;
}

/* ---- the work of one helper ----------------------------------------------------------- */

struct ck {
        int fs, undo, shadow;
        int step; /* undo/<step> */
        int tree; /* undo/<step>/t */
        int list; /* its list, appended to (seal) */
        int64_t since;
        bool dry; /* count what changed, change nothing */
        bool sealing; /* copies go live -> shadow (else shadow -> live) */
        struct inomap dirs, seen;
        struct inomap recent, recent_new; /* RECENT as read, and as this seal leaves it */
        struct rt_copy cp; /* cp.rel: the path of the entry at hand below every root */
        const char *const *spare; /* steps a seal may drop for room, oldest first */
        size_t nspare, dropped;
        uint64_t records, bytes;
        struct rtn_error *err;
};

static void ck_done(struct ck *k) {
        free(k->dirs.v);
        free(k->seen.v);
        free(k->recent.v);
        free(k->recent_new.v);
        rt_copy_done(&k->cp);
        if (k->list >= 0)
                close(k->list);
        if (k->tree >= 0)
                close(k->tree);
        if (k->step >= 0)
                close(k->step);
        if (k->shadow >= 0)
                close(k->shadow);
        if (k->undo >= 0)
                close(k->undo);
}

/* A directory below root, never through a symlink or out of it ("" is root). */
static int open_beneath(int root, const char *rel) {
        if (!*rel)
                return fcntl(root, F_DUPFD_CLOEXEC, 3);
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
        int fd = sys_openat2(root, rel, &how, sizeof how);
        return fd < 0 ? negative_errno() : fd;
}

/* The directory rel below the step's tree, made (0700, a container) where missing. */
static int step_dir(struct ck *k, const char *rel) {
        char buf[PATH_MAX];
        int fd = fcntl(k->tree, F_DUPFD_CLOEXEC, 3);
        snprintf(buf, sizeof buf, "%s", rel);
        for (char *p = buf, *slash; fd >= 0 && *p; p = slash ? slash + 1 : p + strlen(p)) {
                if ((slash = strchr(p, '/')))
                        *slash = '\0';
                if (mkdirat(fd, p, 0700) < 0 && errno != EEXIST) {
                        int e = -errno;
                        close(fd);
                        return e;
                }
                int next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int e = -errno;
                close(fd);
                fd = next < 0 ? e : next;
        }
        return fd;
}

/* Splits rel into its parent ("" at the top) and last name. */
static const char *split(const char *rel, char parent[PATH_MAX]) {
        const char *slash = strrchr(rel, '/');
        size_t n = slash ? (size_t)(slash - rel) : 0;
        memcpy(parent, rel, n);
        parent[n] = '\0';
        return slash ? slash + 1 : rel;
}

static int record(struct ck *k, char kind) {
        k->records++;
        if (k->dry)
                return 0;
        char head[1] = {kind};
        if (rtn_write_all(k->list, head, 1) < 0 ||
            rtn_write_all(k->list, k->cp.rel, strlen(k->cp.rel) + 1) < 0)
                return rtn_err(k->err, errno, "record %s", k->cp.rel);
        return 0;
}

/* The xattrs of to become exactly from's, then its owner, mode and times. */
static int meta_copy(int from, int to, struct ck *k) {
        _cleanup_free_ char *names = NULL;
        size_t n;
        struct stat st;
        int r = store_xattr_names(to, &names, &n);
        if (r < 0)
                return rtn_err(k->err, -r, "list xattrs of %s", k->cp.rel);
        for (char *x = names; x < names + n; x += strlen(x) + 1)
                if (rt_copy_wants(&k->cp, x) && fgetxattr(from, x, NULL, 0) < 0)
                        (void)fremovexattr(to, x);
        if ((r = rt_copy_xattrs(from, to, &k->cp)) < 0)
                return r;
        if (fstat(from, &st) < 0)
                return rtn_err(k->err, errno, "stat %s", k->cp.rel);
        return rt_copy_meta(to, &st, &k->cp);
}

/* The shadow's version of the entry (below sp) moves into the step: it is the old one. */
static int keep_old(struct ck *k, int sp, const char *name, const struct stat *ss) {
        char parent[PATH_MAX];
        int r = record(k, 'W');
        if (r < 0)
                return r;
        k->bytes += S_ISDIR(ss->st_mode) ? rt_du_at(sp, name, 0) : (uint64_t)ss->st_blocks * 512;
        if (k->dry)
                return 0;
        split(k->cp.rel, parent);
        _cleanup_close_ int xp = step_dir(k, parent);
        if (xp < 0)
                return rtn_err(k->err, -xp, "make the checkpoint's %s", parent);
        if (renameat(sp, name, xp, name) < 0)
                return rtn_err(k->err, errno, "keep %s", k->cp.rel);
        return 0;
}

/* Frees room by dropping the oldest step the caller said may go. */
static bool drop_spare(struct ck *k) {
        if (k->dropped >= k->nspare)
                return false;
        (void)rt_remove_at(k->undo, k->spare[k->dropped++]);
        return true;
}

/* The live entry (below lp) copied into the shadow, dropping spare steps while it finds no
 * room. */
static int copy_new(struct ck *k, int lp, int sp, const char *name, const struct stat *ls,
                    unsigned depth) {
        if (k->dry)
                return 0;
        for (;;) {
                int r = rt_copy_at(lp, sp, name, ls, &k->cp, depth);
                if (r >= 0 || (r != -ENOSPC && r != -EDQUOT))
                        return r;
                (void)rt_remove_at(sp, name);
                if (!drop_spare(k))
                        return r;
                k->err->msg[0] = '\0';
        }
}

static void note_recent(struct ck *k, struct inomap *m, int dir, const char *name);

static void copied(struct rt_copy *c, const struct stat *src, int ddir, const char *name) {
        struct ck *k = c->ud;
        struct stat d;
        if (k->sealing) { /* live -> shadow */
                if (nsec(&src->st_ctim) >= k->since)
                        (void)inomap_put(&k->recent_new, src->st_ino,
                                         (uint64_t)nsec(&src->st_ctim));
                if (S_ISDIR(src->st_mode) && fstatat(ddir, name, &d, AT_SYMLINK_NOFOLLOW) == 0)
                        (void)inomap_put(&k->seen, d.st_ino, src->st_ino);
                return;
        }
        /* shadow -> live */
        note_recent(k, &k->recent, ddir, name);
        if (S_ISDIR(src->st_mode) && fstatat(ddir, name, &d, AT_SYMLINK_NOFOLLOW) == 0)
                (void)inomap_put(&k->dirs, src->st_ino, d.st_ino);
}

/* The names in dir, "a\0b\0" (without . and ..). */
/* The names in dir, read from dir itself (just opened by the caller, read once): a
 * DIR of a dup of it cost four more system calls per directory, and every warm call's seal
 * walks the state's directories (docs/benchmarks.md, "The warm call"). */
static int list_names(int dir, char **ret, size_t *ret_len) {
        char dents[16 * 1024] __attribute__((aligned(8)));
        char *buf = NULL;
        size_t len = 0, cap = 0;
        ssize_t got;
        while ((got = sys_getdents64(dir, dents, sizeof dents)) > 0)
                for (ssize_t off = 0; off < got;) {
                        const struct dirent64 *de = (const void *)(dents + off);
                        off += de->d_reclen;
                        size_t n = strlen(de->d_name) + 1;
                        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                                continue;
                        if (len + n > cap) {
                                char *g = realloc(buf, cap = (len + n) * 2);
                                if (!g) {
                                        free(buf);
                                        return -ENOMEM;
                                }
                                buf = g;
                        }
                        memcpy(buf + len, de->d_name, n);
                        len += n;
                }
        if (got < 0) {
                int r = negative_errno();
                free(buf);
                return r;
        }
        *ret = buf, *ret_len = len;
        return 0;
}

static int walk(struct ck *k, int lp, int sp, const char *name, unsigned depth);

/* A ctime at or after since is a change, unless it is the one the entry had when a copy
 * was last made of it: the clock is coarse (a tick, 4 ms at HZ=250) and a stamp may be
 * finer, so what changed just before a checkpoint may carry a ctime after it. */
static bool changed(struct ck *k, const struct stat *st) {
        int64_t c = nsec(&st->st_ctim);
        if (c < k->since)
                return false;
        if (inomap_get(&k->recent, st->st_ino) != (uint64_t)c)
                return true;
        (void)inomap_put(&k->recent_new, st->st_ino, (uint64_t)c); /* still at or after */
        return false;
}

/* An entry copied: its ctime as the next walk will see it. */
static void note_recent(struct ck *k, struct inomap *m, int dir, const char *name) {
        struct stat st;
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && nsec(&st.st_ctim) >= k->since)
                (void)inomap_put(m, st.st_ino, (uint64_t)nsec(&st.st_ctim));
}

/* Each name of listed below the pair, walked. */
static int walk_names(struct ck *k, int l, int s, int listed, unsigned depth) {
        _cleanup_free_ char *names = NULL;
        size_t n = 0;
        int r = list_names(listed, &names, &n);
        if (r < 0)
                return rtn_err(k->err, -r, "read %s", k->cp.rel);
        for (char *x = names; r == 0 && x < names + n; x += strlen(x) + 1) {
                size_t len;
                if (listed == s && fstatat(l, x, &(struct stat){0}, AT_SYMLINK_NOFOLLOW) == 0)
                        continue; /* in both: walked with the live listing */
                if ((r = rt_copy_rel_push(&k->cp, x, &len)) == 0) {
                        r = walk(k, l, s, x, depth + 1);
                        k->cp.rel[len] = '\0';
                }
        }
        return r;
}

/* The same directory in both: into it. */
static int walk_dir(struct ck *k, int lp, int sp, const char *name, const struct stat *ls,
                    const struct stat *ss, unsigned depth) {
        bool changed_dir = changed(k, ls);
        char parent[PATH_MAX];
        if (depth > RT_COPY_MAX_DEPTH)
                return rtn_errx(k->err, ELOOP, "more than %d directories deep: %s",
                                RT_COPY_MAX_DEPTH, k->cp.rel);
        _cleanup_close_ int l = openat(lp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int s = openat(sp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (l < 0 || s < 0)
                return rtn_err(k->err, errno, "open %s", k->cp.rel);
        int r = 0;
        if (changed_dir && (r = record(k, 'M')) == 0 && !k->dry) {
                split(k->cp.rel, parent);
                _cleanup_close_ int xp = step_dir(k, parent);
                _cleanup_close_ int x = -1;
                if (xp < 0 || mkdirat(xp, name, 0700) < 0 ||
                    (x = openat(xp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                        return rtn_err(k->err, xp < 0 ? -xp : errno, "keep %s", k->cp.rel);
                if ((r = meta_copy(s, x, k)) < 0)
                        return r;
        }
        if (r == 0)
                r = walk_names(k, l, s, l, depth);
        if (r == 0 && changed_dir) /* what the live listing lacks was deleted */
                r = walk_names(k, l, s, s, depth);
        if (r == 0 && changed_dir && !k->dry && (r = meta_copy(l, s, k)) == 0)
                note_recent(k, &k->recent_new, lp, name);
        if (r == 0)
                r = inomap_put(&k->seen, ss->st_ino, ls->st_ino);
        return r;
}

static int walk(struct ck *k, int lp, int sp, const char *name, unsigned depth) {
        struct stat ls, ss;
        bool lhas = fstatat(lp, name, &ls, AT_SYMLINK_NOFOLLOW) == 0;
        if (!lhas && errno != ENOENT)
                return rtn_err(k->err, errno, "stat %s", k->cp.rel);
        bool shas = fstatat(sp, name, &ss, AT_SYMLINK_NOFOLLOW) == 0;
        if (!shas && errno != ENOENT)
                return rtn_err(k->err, errno, "stat the checkpoint's %s", k->cp.rel);
        int r;
        if (!lhas)
                return shas ? keep_old(k, sp, name, &ss) : 0;
        if (!shas)
                return (r = record(k, 'A')) < 0 ? r : copy_new(k, lp, sp, name, &ls, depth);
        if (S_ISDIR(ls.st_mode) && S_ISDIR(ss.st_mode) &&
            inomap_get(&k->dirs, ss.st_ino) == ls.st_ino)
                return walk_dir(k, lp, sp, name, &ls, &ss, depth);
        if (!S_ISDIR(ls.st_mode) && (ls.st_mode & S_IFMT) == (ss.st_mode & S_IFMT) &&
            !changed(k, &ls))
                return 0; /* unchanged: a change, a rename or a new link stamps the ctime */
        if ((r = keep_old(k, sp, name, &ss)) < 0)
                return r;
        return copy_new(k, lp, sp, name, &ls, depth);
}

/* Opens undo/ (made when make), its shadow/ and, for step, undo/<step> and its tree. */
static int ck_open(struct ck *k, int fs, const char *step, bool make, struct rtn_error *err) {
        *k = (struct ck){
                .fs = fs, .undo = -1, .shadow = -1, .step = -1, .tree = -1, .list = -1, .err = err};
        int r = rt_copy_init(&k->cp, -1, err);
        if (r < 0)
                return r;
        k->cp.ws = true; /* everything the tmpfs holds: the shadow is an upper too */
        k->cp.on_entry = copied;
        k->cp.ud = k;
        if (make && mkdirat(fs, RT_UNDO_DIR, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", RT_UNDO_DIR);
        if ((k->undo = openat(fs, RT_UNDO_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
            0)
                return rtn_err(err, errno, "open %s", RT_UNDO_DIR);
        if (make && mkdirat(k->undo, SHADOW, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create the checkpoints' shadow");
        if ((k->shadow = openat(k->undo, SHADOW, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
            0)
                return rtn_err(err, errno, "open the checkpoints' shadow");
        if ((r = inomap_load(k->undo, DIRS, &k->dirs)) < 0 ||
            (r = inomap_load(k->undo, RECENT, &k->recent)) < 0)
                return rtn_err(err, -r, "read the checkpoints' directories");
        if (!step)
                return 0;
        if (make && mkdirat(k->undo, step, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create checkpoint %s", step);
        if ((k->step = openat(k->undo, step, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                return errno == ENOENT && !make ? 0 /* sealed with nothing: nothing to swap */
                                                : rtn_err(err, errno, "open checkpoint %s", step);
        if (make && mkdirat(k->step, TREE, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create checkpoint %s", step);
        if ((k->tree = openat(k->step, TREE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                return rtn_err(err, errno, "open checkpoint %s", step);
        return 0;
}

static int seal_root(struct ck *k, const char *parent, const char *name) {
        size_t len;
        k->cp.rel[0] = '\0';
        if (!*parent) { /* the tmpfs's own: walked from fs and shadow themselves */
                int r = rt_copy_rel_push(&k->cp, name, &len);
                if (r == 0)
                        r = walk(k, k->fs, k->shadow, name, 0);
                k->cp.rel[0] = '\0';
                return r;
        }
        _cleanup_close_ int lp = open_beneath(k->fs, parent);
        if (lp < 0)
                return lp == -ENOENT ? 0 : rtn_err(k->err, -lp, "open %s", parent);
        if (mkdirat(k->shadow, parent, 0700) < 0 && errno != EEXIST)
                return rtn_err(k->err, errno, "create the shadow's %s", parent);
        _cleanup_close_ int sp = open_beneath(k->shadow, parent);
        if (sp < 0)
                return rtn_err(k->err, -sp, "open the shadow's %s", parent);
        int r = rt_copy_rel_push(&k->cp, parent, &len);
        if (r == 0 && (r = rt_copy_rel_push(&k->cp, name, &len)) == 0)
                r = walk(k, lp, sp, name, 0);
        k->cp.rel[0] = '\0';
        return r;
}

/* Every tree of RT_KEPT_STATE walked (seal). */
static int seal_all(struct ck *k) {
        int r = 0;
#define SEAL_ROOT(parent, name)                                                                    \
        if (r == 0)                                                                                \
                r = seal_root(k, parent, name);
        RT_KEPT_STATE(SEAL_ROOT)
#undef SEAL_ROOT
        return r;
}

/* ---- swap: a step applied, the versions it replaced kept in it ------------------------ */

static int read_list(struct ck *k, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(k->step, LIST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 && errno == ENOENT) {
                *ret = NULL, *ret_len = 0;
                return 0;
        }
        if (fd < 0 || fstat(fd, &st) < 0)
                return rtn_err(k->err, errno, "open the checkpoint's list");
        char *buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return rtn_err(k->err, ENOMEM, "read the checkpoint's list");
        size_t len = 0;
        for (ssize_t n; len < (size_t)st.st_size; len += (size_t)n)
                if ((n = read(fd, buf + len, (size_t)st.st_size - len)) <= 0) {
                        free(buf);
                        return rtn_err(k->err, n < 0 ? errno : EIO, "read the checkpoint's list");
                }
        buf[len] = '\0';
        while (len && buf[len - 1] != '\0')
                len--; /* a record cut short is not one */
        *ret = buf, *ret_len = len;
        return 0;
}

/* A and W: the step's version (or absence) and the shadow's trade places; the live entry
 * becomes a copy of the shadow's. Returns the record the step now holds. */
static int swap_entry(struct ck *k, const char *path, char kind) {
        char parent[PATH_MAX];
        const char *name = split(path, parent);
        snprintf(k->cp.rel, sizeof k->cp.rel, "%s", path);
        _cleanup_close_ int sp = open_beneath(k->shadow, parent);
        _cleanup_close_ int lp = open_beneath(k->fs, parent);
        _cleanup_close_ int xp = step_dir(k, parent);
        if (sp < 0 || lp < 0 || xp < 0)
                return rtn_err(k->err, -(sp < 0 ? sp : lp < 0 ? lp : xp), "open %s", parent);
        bool cur = fstatat(sp, name, &(struct stat){0}, AT_SYMLINK_NOFOLLOW) == 0;
        (void)rt_remove_at(k->step, SWAP_TMP);
        if ((kind == 'W' && renameat(xp, name, k->step, SWAP_TMP) < 0) ||
            (cur && renameat(sp, name, xp, name) < 0) ||
            (kind == 'W' && renameat(k->step, SWAP_TMP, sp, name) < 0))
                return rtn_err(k->err, errno, "swap %s", path);
        int r = rt_remove_at(lp, name);
        if (r < 0)
                return rtn_err(k->err, -r, "remove %s", path);
        struct stat st;
        if (fstatat(sp, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (r = rt_copy_at(sp, lp, name, &st, &k->cp, 0)) < 0)
                return r;
        return cur ? 'W' : 'A';
}

/* M: the directory's metadata in the step and in the shadow trade places; the live one's
 * becomes the shadow's. */
static int swap_meta(struct ck *k, const char *path) {
        snprintf(k->cp.rel, sizeof k->cp.rel, "%s", path);
        _cleanup_close_ int s = open_beneath(k->shadow, path);
        _cleanup_close_ int l = open_beneath(k->fs, path);
        _cleanup_close_ int x = open_beneath(k->tree, path);
        if (s < 0 || l < 0 || x < 0)
                return rtn_err(k->err, -(s < 0 ? s : l < 0 ? l : x), "open %s", path);
        (void)rt_remove_at(k->step, META_TMP);
        _cleanup_close_ int t = -1;
        if (mkdirat(k->step, META_TMP, 0700) < 0 ||
            (t = openat(k->step, META_TMP, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                return rtn_err(k->err, errno, "swap %s", path);
        int r;
        if ((r = meta_copy(x, t, k)) < 0 || (r = meta_copy(s, x, k)) < 0 ||
            (r = meta_copy(t, s, k)) < 0 || (r = meta_copy(s, l, k)) < 0)
                return r;
        note_recent(k, &k->recent, l, ".");
        (void)rt_remove_at(k->step, META_TMP);
        return 'M';
}

static int do_swap(struct ck *k) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, n = 0;
        int r = read_list(k, &buf, &len);
        if (r < 0)
                return r;
        k->cp.dst_root = k->fs;
        /* entries first, in walk order; then directories' metadata, deepest last written */
        for (size_t i = 0; i < len; i += strlen(buf + i + 1) + 2, n++) {
                if (buf[i] == 'M')
                        continue;
                if ((r = swap_entry(k, buf + i + 1, buf[i])) < 0)
                        return r;
                buf[i] = (char)r;
        }
        _cleanup_free_ size_t *at = calloc(n + 1, sizeof *at);
        if (!at)
                return rtn_err(k->err, ENOMEM, "swap");
        n = 0;
        for (size_t i = 0; i < len; i += strlen(buf + i + 1) + 2)
                at[n++] = i;
        while (n-- > 0)
                if (buf[at[n]] == 'M' && (r = swap_meta(k, buf + at[n] + 1)) < 0)
                        return r;
        (void)unlinkat(k->step, LIST ".new", 0);
        _cleanup_close_ int fd = openat(k->step, LIST ".new",
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || rtn_write_all(fd, buf, len) < 0 ||
            renameat(k->step, LIST ".new", k->step, LIST) < 0)
                return rtn_err(k->err, errno, "write the checkpoint's list");
        if ((r = inomap_save(k->undo, DIRS, &k->dirs)) < 0 ||
            (r = inomap_save(k->undo, RECENT, &k->recent)) < 0)
                return rtn_err(k->err, -r, "write the checkpoints' directories");
        return 0;
}

/* ---- the entry point ------------------------------------------------------------------ */

struct ckpt_call {
        int fs;
        enum rt_ckpt_op op;
        const char *step;
        int64_t since;
        const char *const *spare;
        size_t nspare;
};

static int do_seal(struct ck *k, const struct ckpt_call *a, char *out, size_t outlen) {
        k->sealing = true;
        k->cp.dst_root = k->shadow;
        k->since = a->since;
        k->spare = a->spare;
        k->nspare = a->nspare;
        k->dry = a->op == RT_CKPT_COUNT;
        if (!k->dry &&
            (k->list = openat(k->step, LIST, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                              0600)) < 0)
                return rtn_err(k->err, errno, "open the checkpoint's list");
        int r = seal_all(k);
        if (r == 0 && !k->dry &&
            ((r = inomap_save(k->undo, DIRS, &k->seen)) < 0 ||
             (r = inomap_save(k->undo, RECENT, &k->recent_new)) < 0))
                r = rtn_err(k->err, -r, "write the checkpoints' directories");
        snprintf(out, outlen, "%llu %llu %zu", (unsigned long long)k->records,
                 (unsigned long long)k->bytes, k->dropped);
        return r;
}

static int do_ckpt(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        const struct ckpt_call *a = arg;
        struct ck k;
        int r;
        if (a->op == RT_CKPT_CLEAR || a->op == RT_CKPT_BASE || a->op == RT_CKPT_BASE_EMPTY) {
                if ((r = rt_remove_at(a->fs, RT_UNDO_DIR)) < 0)
                        return rtn_err(err, -r, "remove the checkpoints");
                if (a->op == RT_CKPT_CLEAR)
                        return 0;
        }
        if (a->op == RT_CKPT_DROP) {
                _cleanup_close_ int undo =
                        openat(a->fs, RT_UNDO_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = undo < 0 ? (errno == ENOENT ? 0 : -errno) : rt_remove_at(undo, a->step);
                return r < 0 ? rtn_err(err, -r, "remove checkpoint %s", a->step) : 0;
        }
        bool make = a->op != RT_CKPT_SWAP && a->op != RT_CKPT_COUNT;
        const char *step = a->op == RT_CKPT_BASE                            ? "base"
                           : a->op == RT_CKPT_SWAP || a->op == RT_CKPT_SEAL ? a->step
                                                                            : NULL;
        r = ck_open(&k, a->fs, step, make, err);
        if (r == 0 && a->op == RT_CKPT_SWAP)
                r = k.step >= 0 ? do_swap(&k) : 0;
        else if (r == 0 && a->op != RT_CKPT_BASE_EMPTY) /* a base: the whole state, as a seal
                                                         * into a step dropped at once */
                r = do_seal(&k, a, out, outlen);
        if (r == 0 && a->op == RT_CKPT_BASE && (r = rt_remove_at(k.undo, "base")) < 0)
                r = rtn_err(err, -r, "remove the checkpoints' base");
        ck_done(&k);
        return r;
}

/* Whether undo/step (or undo/ itself) is certainly not there. */
static bool step_absent(int fs, const char *step) {
        _cleanup_close_ int undo =
                openat(fs, RT_UNDO_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (undo < 0)
                return errno == ENOENT;
        struct stat st;
        return fstatat(undo, step, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* rt_ckpt and rt_ckpt_as_owner: the helper runs through run (rt_userns_run or
 * rt_userns_as_owner). */
static int ckpt_with(int (*run)(const struct rt_idmap *, rt_userns_fn, void *, char *, size_t,
                                struct rtn_error *),
                     const struct rt_idmap *m, int fs, enum rt_ckpt_op op, const char *step,
                     int64_t since, const char *const *spare, size_t nspare,
                     struct rt_ckpt_report *ret, struct rtn_error *err) {
        if (!m && run == rt_userns_run)
                return rtn_errx(err, EINVAL, "no id mapping for the checkpoint");
        if (step &&
            (!*step || strspn(step, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(step) ||
             !strcmp(step, SHADOW) || !strcmp(step, "base")))
                return rtn_errx(err, EINVAL, "bad checkpoint name");
        if ((op == RT_CKPT_SEAL || op == RT_CKPT_SWAP || op == RT_CKPT_DROP) && !step)
                return rtn_errx(err, EINVAL, "no checkpoint named");
        struct ckpt_call a = {.fs = fs,
                              .op = op,
                              .step = step,
                              .since = op == RT_CKPT_BASE ? 0 : since,
                              .spare = spare,
                              .nspare = nspare};
        char out[128] = "";
        int r = -1;
        /* A drop of a step that holds nothing on the tmpfs makes no helper either: a seal
         * that found nothing changed (below) made no directory for its step, and once
         * --undo-depth steps are kept every changing call drops the oldest. rtn may look
         * (only an lstat of a name in undo/, which it walks itself below); anything but
         * ENOENT leaves the removal to the helper. */
        if (op == RT_CKPT_DROP && step_absent(fs, step))
                return 0;
        /* A seal that finds nothing changed makes no helper: the walk only stats and lists,
         * which rtn may do itself where the agent left every directory readable to it;
         * anything else (a 000 directory) leaves it to the helper. */
        if (op == RT_CKPT_SEAL) {
                struct ckpt_call count = a;
                count.op = RT_CKPT_COUNT;
                struct rtn_error e2 = {0};
                unsigned long long n = 1;
                if (do_ckpt(&count, out, sizeof out, &e2) == 0 && sscanf(out, "%llu", &n) == 1 &&
                    n == 0)
                        r = 0;
        }
        if (r < 0)
                r = run(m, do_ckpt, &a, out, sizeof out, err);
        unsigned long long records = 0, bytes = 0;
        size_t dropped = 0;
        if (ret && sscanf(out, "%llu %llu %zu", &records, &bytes, &dropped) >= 0)
                *ret = (struct rt_ckpt_report){
                        .records = records, .bytes = bytes, .dropped = dropped};
        return r;
}

int rt_ckpt(const struct rt_idmap *m, int fs, enum rt_ckpt_op op, const char *step, int64_t since,
            const char *const *spare, size_t nspare, struct rt_ckpt_report *ret,
            struct rtn_error *err) {
        /* As rt_upper_fork: in a user namespace mapped like the sandbox, with its rights. */
        return ckpt_with(rt_userns_run, m, fs, op, step, since, spare, nspare, ret, err);
}

int rt_ckpt_as_owner(const struct rt_idmap *m, int fs, enum rt_ckpt_op op, const char *step,
                     int64_t since, const char *const *spare, size_t nspare,
                     struct rt_ckpt_report *ret, struct rtn_error *err) {
        return ckpt_with(rt_userns_as_owner, m, fs, op, step, since, spare, nspare, ret, err);
}

int rt_ckpt_list(int fs, const char *step, char **ret, size_t *ret_len) {
        /* the helper made them as the caller (rt_userns_run): rtn reads them itself */
        char path[64];
        struct ck k = {.err = &(struct rtn_error){0}};
        _cleanup_close_ int dir = -1;
        snprintf(path, sizeof path, RT_UNDO_DIR "/%s", step);
        if ((dir = open_beneath(fs, path)) < 0)
                return dir;
        k.step = dir;
        int r = read_list(&k, ret, ret_len);
        k.step = -1;
        return r < 0 ? -EIO : 0;
}
