/* Live host binds keep what the host runs by itself out of the agent's reach (docs/security-
 * invariants.md, 13). Run by the sandbox child on each read-write host bind (the workspace,
 * rw --bind, bind_host_dir), once it is attached below the new root and before anything of
 * the agent runs, so nothing races the walk but the host itself.
 *
 * 1. A walk of the whole bound tree (getdents64, never following a symlink) finds every
 *    entry the registry of runtime/sandbox/hostrun.h matches at any depth (a repository's
 *    `.git`, directory or gitfile, `.envrc`, `.vscode`, `.cargo/config.toml`, a venv's
 *    `.pth` files in `site-packages`, ...) and every symlink where a longer pattern is on its way
 * (a
 *    `.cargo` that points elsewhere), every directory that is a git dir
 *    itself (HEAD plus commondir, or objects/ and refs/: a bare repository, a separate git
 *    dir, a worktree's or submodule's git dir that a gitfile names) and every directory the
 *    sandbox cannot read (it might hold one). It does not descend into what it protects.
 * 2. Each of those gets a read-only bind mount of itself; a protected symlink (which cannot
 *    be bound) gets an empty read-only file mounted over it. A mountpoint cannot be renamed,
 *    removed or replaced (rename(2), unlink(2), rmdir(2): EBUSY, fs/namei.c
 *    is_local_mountpoint), so `mv .git .git-old` and `rm .git` fail, and writing a gitfile
 *    or `.git/commondir` fails with EROFS.
 * 3. Renaming a parent moves the mounts below it along, protections and all, and leaves the
 *    name free for a new one: so every directory on the way from the bind's top to a
 *    protected entry is pinned with a bind mount of itself (same flags), top-down, each a
 *    recursive clone so that what is below is carried along.
 *
 * The child may not allocate (rtn can be multi-threaded, and clone3 runs no atfork
 * handler): the walk works in an anonymous mapping and fixed arrays. It is bounded
 * (WALK_ENTRIES_MAX entries, WALK_DEPTH_MAX levels, PROTECT_MAX mounts) and fails closed
 * beyond: the sandbox does not start. What it made is reported to rtn (env_status) in
 * struct rt_protect_bind.
 * 4. What git's configuration and the user's --protect name (runtime/sandbox/gitconf.h), a
 *    list rtn made before clone3, is pinned and made read-only the same way, after the walk.
 *
 * --isolation landlock, which has no mounts, runs the same walk
 * (rt_protect_walk) in rtn and hands what it found to rtn-init as Landlock exceptions
 * (runtime/sandbox/landlock_only.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "runtime/sandbox/gitconf.h"
#include "runtime/sandbox/hostrun.h"
#include "runtime/internal.h"

#define WALK_ENTRIES_MAX 4194304 /* directory entries looked at per bind */
#define WALK_DEPTH_MAX 128
#define PROTECT_MAX 4096 /* mounts per bind: protected entries and pinned directories */
#define STR_(x) #x
#define STR(x) STR_(x)
#define ARENA_BYTES (256u << 20) /* virtual: listings of the open levels, and the paths */

struct rec {
        uint32_t off; /* its path in the arena, relative to the bind's top */
        uint8_t kind;
};

struct walk {
        const char *shown; /* the mount point inside, for messages */
        bool git_rw; /* --workspace-git rw: the top's .git directory is pinned, not read-only */
        bool through_top; /* the top is walked even where it looks like a git dir */
        struct rtn_error *err;
        char *arena; /* paths from the bottom up, listings from the top down */
        size_t paths_used, names_top;
        struct rec recs[PROTECT_MAX];
        size_t nrecs;
        uint64_t seen;
        char rel[PATH_MAX]; /* the directory being read, relative to the top ("" at the top) */
        size_t level_len[WALK_DEPTH_MAX + 1]; /* strlen(rel) at each level */
        bool pinned[WALK_DEPTH_MAX + 1]; /* that level's directory has its PIN record */
        unsigned depth;
};

static int too_many(struct walk *w, const char *what) {
        return rtn_errx(w->err, E2BIG,
                        "%s: %s; rtn protects every repository and host-run file of a live "
                        "bind and leaves none out: bind a smaller directory",
                        w->shown, what);
}

/* Stores rel's first rel_len bytes, and "/name" unless name is NULL, as a record. */
static int add_rec(struct walk *w, size_t rel_len, const char *name, enum rt_protect_kind kind) {
        if (w->nrecs >= PROTECT_MAX)
                return too_many(w, "more than " STR(PROTECT_MAX) " entries to protect");
        size_t avail = w->names_top - w->paths_used;
        char *dst = w->arena + w->paths_used;
        int n = snprintf(dst, avail, "%.*s%s%s", (int)rel_len, w->rel, name && rel_len ? "/" : "",
                         name ? name : "");
        if (n < 0 || (size_t)n >= avail)
                return too_many(w, "its paths exceed rtn's buffer");
        w->recs[w->nrecs++] = (struct rec){(uint32_t)w->paths_used, (uint8_t)kind};
        w->paths_used += (size_t)n + 1;
        return 0;
}

/* Records a PIN for every directory from the top down to the current one that has none. */
static int pin_levels(struct walk *w) {
        for (unsigned i = 1; i <= w->depth; i++) {
                if (w->pinned[i])
                        continue;
                int r = add_rec(w, w->level_len[i], NULL, RT_PROTECT_PIN);
                if (r < 0)
                        return r;
                w->pinned[i] = true;
        }
        return 0;
}

static int protect_entry(struct walk *w, const char *name, enum rt_protect_kind kind) {
        int r = pin_levels(w);
        return r < 0 ? r : add_rec(w, w->level_len[w->depth], name, kind);
}

/* The listing of one directory, pushed on the arena's top end as (type, name, NUL)
 * records. Returns the number of bytes pushed. */
static ssize_t read_listing(struct walk *w, int fd) {
        static char buf[64 * 1024];
        size_t start = w->names_top;
        for (;;) {
                ssize_t n = sys_getdents64(fd, buf, sizeof buf);
                if (n < 0)
                        return rtn_err(w->err, errno, "read a directory below %s", w->shown);
                if (n == 0)
                        break;
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64 *d = (const void *)(buf + off);
                        off += d->d_reclen;
                        if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
                                continue;
                        if (++w->seen > WALK_ENTRIES_MAX)
                                return too_many(
                                        w, "more than " STR(
                                                   WALK_ENTRIES_MAX) " entries to look through");
                        size_t len = strlen(d->d_name) + 2;
                        if (w->names_top - len < w->paths_used)
                                return too_many(w, "a directory too large for rtn's buffer");
                        w->names_top -= len;
                        w->arena[w->names_top] = (char)d->d_type;
                        memcpy(w->arena + w->names_top + 1, d->d_name, len - 1);
                }
        }
        return (ssize_t)(start - w->names_top);
}

static unsigned char type_of(int dirfd, const char *name, unsigned char t) {
        struct stat st;
        if (t != DT_UNKNOWN || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return t;
        return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
}

/* A git dir in its own right (setup.c is_git_directory): HEAD, and either a commondir file
 * (a worktree's git dir) or objects/ and refs/. */
static bool is_git_dir(const char *list, size_t len) {
        bool head = false, common = false, objects = false, refs = false;
        for (size_t off = 0; off < len; off += strlen(list + off + 1) + 2) {
                const char *n = list + off + 1;
                head |= !strcmp(n, "HEAD");
                common |= !strcmp(n, "commondir");
                objects |= !strcmp(n, "objects");
                refs |= !strcmp(n, "refs");
        }
        return head && (common || (objects && refs));
}

/* Whether name, in the directory being read, is on the registry of runtime/sandbox/hostrun.h
 * (a path pattern ending there: `.cargo/config.toml`, `site-packages/x.pth`), or is a symlink
 * where a longer pattern is on its way (`.cargo` -> elsewhere). */
static bool hostrun_at(const struct walk *w, const char *name, unsigned char t) {
        size_t dlen = w->level_len[w->depth], nlen = strlen(name);
        return rt_hostrun_at(w->rel, dlen, name, nlen) ||
               (t == DT_LNK && rt_hostrun_on_way(w->rel, dlen, name, nlen));
}

static int walk_dir(struct walk *w, int fd, bool *ret_git_dir);

static int walk_child(struct walk *w, int dirfd, const char *name) {
        _cleanup_close_ int fd =
                openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && (errno == EACCES || errno == EPERM))
                return protect_entry(w, name, RT_PROTECT_UNREADABLE);
        if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == ESRCH))
                return 0; /* gone or replaced meanwhile (ESRCH: a /proc/PID that ended), by
                           * the host: not ours to follow */
        if (fd < 0)
                return rtn_err(w->err, errno, "open a directory below %s", w->shown);
        size_t len = w->level_len[w->depth];
        if (w->depth + 1 > WALK_DEPTH_MAX)
                return too_many(w, "directories nested deeper than " STR(WALK_DEPTH_MAX) " levels");
        if (len + strlen(name) + 2 > sizeof w->rel)
                return too_many(w, "a path longer than PATH_MAX");
        snprintf(w->rel + len, sizeof w->rel - len, "%s%s", len ? "/" : "", name);
        w->depth++;
        w->level_len[w->depth] = strlen(w->rel);
        w->pinned[w->depth] = false;
        bool git_dir = false;
        int r = walk_dir(w, fd, &git_dir);
        w->depth--;
        w->rel[len] = '\0';
        /* opened but not listed: a /proc mounted there (EINVAL: another netns's /proc/PID/net) */
        if (r == -EACCES || r == -EPERM || r == -EINVAL)
                return protect_entry(w, name, RT_PROTECT_UNREADABLE);
        if (r == -ENOENT || r == -ESRCH)
                return 0; /* removed while it was listed */
        if (r >= 0 && git_dir)
                r = protect_entry(w, name, RT_PROTECT_RO);
        return r;
}

/* Reads the directory fd (at w->rel) and protects or walks each entry. A git dir is not
 * walked: *ret_git_dir tells the caller to protect it whole. */
static int walk_dir(struct walk *w, int fd, bool *ret_git_dir) {
        size_t top = w->names_top;
        ssize_t len = read_listing(w, fd);
        if (len < 0) {
                w->names_top = top;
                return (int)len;
        }
        int r = 0;
        if (!(w->through_top && w->depth == 0) &&
            is_git_dir(w->arena + w->names_top, (size_t)len)) {
                *ret_git_dir = true;
        } else {
                for (size_t off = w->names_top; off < top && r >= 0;) {
                        const char *name = w->arena + off + 1;
                        unsigned char t = type_of(fd, name, (unsigned char)w->arena[off]);
                        off += strlen(name) + 2;
                        if (w->git_rw && w->depth == 0 && t == DT_DIR && !strcmp(name, ".git"))
                                r = protect_entry(w, name, RT_PROTECT_PIN);
                        else if (hostrun_at(w, name, t))
                                r = protect_entry(w, name,
                                                  t == DT_LNK ? RT_PROTECT_LINK : RT_PROTECT_RO);
                        else if (t == DT_DIR)
                                r = walk_child(w, fd, name);
                }
        }
        w->names_top = top;
        return r;
}

/* The empty read-only file that stands in for a protected symlink, made once per child on
 * the stage (nothing of the host, nothing the agent can reach). */
static int placeholder(int *fd, struct rtn_error *err) {
        if (*fd >= 0)
                return *fd;
        _cleanup_close_ int f =
                open(RT_STAGE "/empty", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
        if (f < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create the stand-in for protected symlinks");
        *fd = sys_open_tree(AT_FDCWD, RT_STAGE "/empty", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (*fd < 0)
                return rtn_err(err, errno, "clone the stand-in for protected symlinks");
        struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                           MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
        if (sys_mount_setattr(*fd, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
                return rtn_err(err, errno, "make the stand-in read-only");
        return *fd;
}

/* Mounts one record onto itself (or the stand-in onto a symlink), found again from the top
 * without crossing a symlink: the walk's records are paths, and the mounts made for the
 * records before it (its parents) are on the way. */
static int apply(int top, const char *rel, enum rt_protect_kind kind, int *stand_in,
                 const char *shown, struct rtn_error *err) {
        struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd = sys_openat2(top, rel, &how, sizeof how);
        if (fd < 0)
                return rtn_err(err, errno, "protect %s/%s", shown, rel);
        _cleanup_close_ int tree = -1;
        if (kind == RT_PROTECT_LINK) {
                int s = placeholder(stand_in, err);
                if (s < 0)
                        return s;
                tree = sys_open_tree(s, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        } else {
                tree = sys_open_tree(
                        fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
        }
        if (tree < 0)
                return rtn_err(err, errno, "clone %s/%s", shown, rel);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
        if (kind == RT_PROTECT_RO || kind == RT_PROTECT_LINK)
                a.attr_set |= MOUNT_ATTR_RDONLY;
        if (sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
                return rtn_err(err, errno, "make %s/%s read-only", shown, rel);
        if (sys_move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return rtn_err(err, errno, "mount %s/%s onto itself", shown, rel);
        return 0;
}

static int walk_tree(int top, const char *shown, bool git_rw, bool through_top, rt_protect_fn fn,
                     void *arg, bool *ret_whole, struct rtn_error *err) {
        struct walk *w = mmap(NULL, sizeof *w + ARENA_BYTES, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (w == MAP_FAILED)
                return rtn_err(err, errno, "map the walk of %s", shown);
        w->shown = shown;
        w->git_rw = git_rw;
        w->through_top = through_top;
        w->err = err;
        w->arena = (char *)(w + 1);
        w->names_top = ARENA_BYTES;
        bool whole = false;
        int r = walk_dir(w, top, &whole);
        for (size_t i = 0; r >= 0 && !whole && i < w->nrecs; i++)
                r = fn(arg, w->arena + w->recs[i].off, (enum rt_protect_kind)w->recs[i].kind, err);
        munmap(w, sizeof *w + ARENA_BYTES);
        if (r >= 0)
                *ret_whole = whole;
        return r < 0 ? r : 0;
}

int rt_protect_walk(int top, const char *shown, rt_protect_fn fn, void *arg, bool *ret_whole,
                    struct rtn_error *err) {
        return walk_tree(top, shown, false, false, fn, arg, ret_whole, err);
}

int rt_protect_walk_through(int top, const char *shown, rt_protect_fn fn, void *arg,
                            struct rtn_error *err) {
        bool whole = false;
        return walk_tree(top, shown, false, true, fn, arg, &whole, err);
}

struct bind_ctx {
        int top;
        int *stand_in;
        const char *shown;
        struct rt_protect_bind *report;
        size_t listed_bytes;
};

/* Mounts one record, in order, and notes it in the report. */
static int apply_cb(void *arg, const char *rel, enum rt_protect_kind kind, struct rtn_error *err) {
        struct bind_ctx *c = arg;
        int r = apply(c->top, rel, kind, c->stand_in, c->shown, err);
        if (r < 0)
                return r;
        struct rt_protect_bind *p = c->report;
        if (kind == RT_PROTECT_PIN || kind == RT_PROTECT_UNREADABLE) {
                p->npinned++;
                return 0;
        }
        p->nprotected++;
        size_t n = strlen(rel) + 1;
        if (c->listed_bytes + n <= sizeof p->list) {
                memcpy(p->list + c->listed_bytes, rel, n);
                c->listed_bytes += n;
                p->nlisted++;
        }
        return 0;
}

/* Whether an entry of list before the one at upto lies below dir: dir is pinned already. */
static bool pinned_before(const struct rt_pathlist *list, const char *upto, const char *dir) {
        size_t off = 0, n = strlen(dir);
        const char *rel, *why;
        while (rt_pathlist_next(list, &off, &rel, &why) && rel != upto)
                if (!strncmp(rel, dir, n) && rel[n] == '/')
                        return true;
        return false;
}

/* The paths git's configuration and --protect name (runtime/sandbox/gitconf.h), made ready by
 * rtn before clone3 (each exists, or ends at a symlink): every directory on the way pinned,
 * then the path itself read-only, or the stand-in over it when it is a symlink. */
static int protect_listed(struct bind_ctx *c, const struct rt_pathlist *list,
                          struct rtn_error *err) {
        size_t off = 0;
        const char *rel, *why;
        char dir[PATH_MAX];
        int r = 0;
        while (r >= 0 && rt_pathlist_next(list, &off, &rel, &why)) {
                for (const char *s = strchr(rel, '/'); r >= 0 && s; s = strchr(s + 1, '/')) {
                        snprintf(dir, sizeof dir, "%.*s", (int)(s - rel), rel);
                        if (!pinned_before(list, rel, dir))
                                r = apply_cb(c, dir, RT_PROTECT_PIN, err);
                }
                struct stat st;
                if (r >= 0 && fstatat(c->top, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = rtn_err(err, errno, "protect %s/%s (%s)", c->shown, rel, why);
                if (r >= 0)
                        r = apply_cb(c, rel, S_ISLNK(st.st_mode) ? RT_PROTECT_LINK : RT_PROTECT_RO,
                                     err);
        }
        return r;
}

int rt_protect_bind(const char *path, const char *shown, const struct rt_pathlist *listed,
                    int *stand_in, struct rt_protect_bind *ret, struct rtn_error *err) {
        memset(ret, 0, sizeof *ret);
        snprintf(ret->mount_point, sizeof ret->mount_point, "%s", shown);
        _cleanup_close_ int top = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (top < 0)
                return rtn_err(err, errno, "open %s", shown);
        struct bind_ctx c = {.top = top, .stand_in = stand_in, .shown = shown, .report = ret};
        ret->git_rw = listed && listed->git_rw;
        bool whole = false;
        int r = walk_tree(top, shown, listed && listed->git_rw, false, apply_cb, &c, &whole, err);
        if (r >= 0 && !whole && listed)
                r = protect_listed(&c, listed, err);
        if (r >= 0 && whole) {
                /* The bind is a git dir itself (a bare repository): all of it read-only. */
                struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
                if (sys_mount_setattr(top, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
                        return rtn_err(err, errno, "make %s read-only", shown);
                ret->whole = true;
        }
        return r;
}
