/* rt_ws_apply (runtime/session/wsover.h): the overlay workspace's pending changes written to the
 * host dir. Each entry of the upper is checked, then written or refused; what was written leaves
 * the upper (the host now has it, so the overlay shows the same), what was refused stays
 * pending and is reported with its reason.
 *
 * The host side is written as the caller: files and symlinks are made under a temp name in
 * their directory (O_CREAT | O_EXCL | O_NOFOLLOW) and renamed into place, modes are the
 * permission bits only (no setuid, setgid or sticky; a mode the agent changed gets the
 * caller's umask, as a checkout would), directories are made 0700 and opened again without
 * following anything before their mode is set. Every host directory is reached from the
 * workspace's fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV), so a
 * symlink swapped in anywhere on the way, or a mount, fails the open instead of leading out.
 * A symlink's target is resolved in the tree as it will be (link_refusal), not read as
 * text. rtn run as root makes new entries the workspace owner's, as the idmapped live
 * workspace would, and keeps a replaced file's owner. What is written gets the time of the
 * write, as a checkout gives it: an agent's older mtime made make skip a changed source. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/sandbox/hostrun.h"
#include "runtime/session/wsgit.h"
#include "runtime/session/wswalk.h"

struct apply {
        struct ws_path p;
        struct rt_ws_state *st;
        bool dry;
        mode_t umask;
        bool own; /* root: chown what is made */
        uid_t uid; /* the workspace's owner */
        gid_t gid;
        unsigned tmpn;
        int refused;
        bool changed; /* something was written: the record is saved */
        rt_ws_apply_fn fn;
        void *ud;
        const char *const *allow; /* paths the user named: their protection is lifted */
        size_t nallow;
        const char *const *force; /* paths the user named: their conflicts are written */
        size_t nforce;
        const char *const *only; /* paths the user named: only these are written (nonly > 0) */
        size_t nonly;
        bool *hit; /* per only path: a change at it, below it or above it was seen */
        char why[512]; /* a reason formatted for refuse */
        struct rt_pathlist git; /* what git's configuration names, once applied (wsgit.h) */
        int host_root, upper_root; /* the top directories, for resolving links */
        dev_t host_dev;
        bool in_git_dir; /* the directory being applied is a git dir, or will be */
        unsigned keep_upper; /* opaque directories on the way to a named path, kept pending */
};

/* Whether path is one of the n paths of list, or below one. */
static bool named(const char *const *list, size_t n, const char *path) {
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(list[i]);
                if (!strncmp(path, list[i], l) && (path[l] == '\0' || path[l] == '/'))
                        return true;
        }
        return false;
}

/* Whether the user named path, or a directory above it, to be written although protected. */
static bool allowed(const struct apply *a, const char *path) {
        return named(a->allow, a->nallow, path);
}

/* Whether the user named path, or a directory above it, to be written over a conflict (a
 * host change since the sandbox started) that rtn apply showed. Protection still holds. */
static bool forced(const struct apply *a, const char *path) {
        return named(a->force, a->nforce, path);
}

enum scope { OUT, ON_WAY, IN };

/* Whether path is to be applied (IN), is a directory above a path to apply (ON_WAY: only
 * what leads there is written), or stays pending (OUT). */
static enum scope scope(const struct apply *a, const char *path) {
        if (!a->nonly || named(a->only, a->nonly, path))
                return IN;
        size_t l = strlen(path);
        for (size_t i = 0; i < a->nonly; i++)
                if (!strncmp(a->only[i], path, l) && a->only[i][l] == '/')
                        return ON_WAY;
        return OUT;
}

/* The registry's entry that protects path (runtime/sandbox/hostrun.h), unless allowed. */
static const struct rt_hostrun *protected(const struct apply *a, const char *path) {
        const struct rt_hostrun *h = rt_hostrun_match(path);
        return h && !allowed(a, path) ? h : NULL;
}

/* What git's configuration says of path (below a named directory too when dir), unless
 * allowed: the reason, or NULL. */
static const char *git_protected(const struct apply *a, const char *path, bool dir) {
        return allowed(a, path) ? NULL : rt_pathlist_match(&a->git, path, dir);
}

/* A symlink at a->p where a longer pattern of the registry is on its way (`.cargo`, a venv's
 * `site-packages`): the host would read the protected file through it from wherever it points. */
static const struct rt_hostrun *on_way(const struct apply *a) {
        const char *slash = strrchr(a->p.buf, '/');
        size_t dlen = slash ? (size_t)(slash - a->p.buf) : 0;
        const char *name = slash ? slash + 1 : a->p.buf;
        if (allowed(a, a->p.buf))
                return NULL;
        return rt_hostrun_on_way(a->p.buf, dlen, name, strlen(name));
}

static int refuse(struct apply *a, enum rt_ws_change what, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Reports a refusal of the entry at a->p; returns 1 (one refusal) for the callers to add. */
static int refuse(struct apply *a, enum rt_ws_change what, const char *fmt, ...) {
        char why[sizeof a->why];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
        a->refused++;
        a->fn(what, a->p.buf, why, a->ud);
        return 1;
}

static void applied(struct apply *a, enum rt_ws_change what) {
        a->fn(what, a->p.buf, NULL, a->ud);
}

/* The record of what was just written at a->p: its own write is no conflict later. */
static void record(struct apply *a, int hdir, const char *name) {
        struct stat sb;
        a->changed = true;
        if (fstatat(hdir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(sb.st_mode))
                (void)rt_ws_state_put(a->st, a->p.buf, sb.st_ino, sb.st_ctim);
}

/* The mode to give: the host's when the agent did not change it, else the permission bits
 * under the caller's umask. */
static mode_t new_mode(const struct apply *a, mode_t upper, const struct stat *hst) {
        if (hst && (hst->st_mode & S_IFMT) == (upper & S_IFMT) &&
            (hst->st_mode & 07777) == (upper & 07777))
                return upper & 07777;
        return upper & 0777 & ~a->umask;
}

/* ---- checks ----------------------------------------------------------------------------- */

/* A git dir in its own right, whatever its name (git's setup.c is_git_directory): HEAD, and
 * a commondir or objects/ and refs/. Git run inside one reads its config, the pager, aliases
 * and hooks included, so nothing in one is written and none is deleted. Names are counted
 * whatever they are (git follows a link), the upper's in any ASCII case (a casefold host
 * directory). */
static const char *const GIT_DIR_NAMES[] = {"HEAD", "commondir", "objects", "refs"};
#define GIT_DIR_WHY                                                                                \
        "in a git dir (HEAD with objects/ and refs/, or commondir): git run there reads its "      \
        "configuration, which names programs"
enum { GD_HEAD = 1, GD_COMMONDIR = 2, GD_OBJECTS = 4, GD_REFS = 8 }; /* bits, as the names */

static bool git_dir_bits(unsigned b) {
        return (b & GD_HEAD) &&
               ((b & GD_COMMONDIR) || (b & (GD_OBJECTS | GD_REFS)) == (GD_OBJECTS | GD_REFS));
}

/* Which of GIT_DIR_NAMES the host directory hdir holds, as bits. */
static unsigned host_git_names(int hdir) {
        unsigned b = 0;
        struct stat sb;
        for (unsigned i = 0; hdir >= 0 && i < 4; i++)
                if (fstatat(hdir, GIT_DIR_NAMES[i], &sb, AT_SYMLINK_NOFOLLOW) == 0)
                        b |= 1u << i;
        return b;
}

/* Whether the directory is a git dir on the host, or will be once applied: the upper's names
 * (v, n; a whiteout removes the host's) over the host's unless the upper's is opaque. */
static bool git_dir_here(int udir, int hdir, bool opaque, char **v, size_t n) {
        unsigned host = host_git_names(hdir), b = opaque ? 0 : host;
        for (size_t k = 0; k < n; k++)
                for (unsigned i = 0; i < 4; i++) {
                        struct ws_entry e;
                        if (strcasecmp(v[k], GIT_DIR_NAMES[i]))
                                continue;
                        if (ws_upper_entry(udir, v[k], &e) < 0 || e.type != WS_WHITEOUT)
                                b |= 1u << i;
                        else if (!strcmp(v[k], GIT_DIR_NAMES[i]))
                                b &= ~(1u << i);
                }
        return git_dir_bits(host) || git_dir_bits(b);
}

/* Why the host's subtree at name (a directory about to be deleted or replaced) may not go:
 * a protected entry or a change since the start below it. NULL when it may. */
static const char *subtree_refusal(struct apply *a, int hdir, const char *name, unsigned depth) {
        _cleanup_close_ int d = ws_open_dir(hdir, name);
        if (d < 0)
                return "its host directory cannot be read";
        if (depth > WS_DEPTH_MAX)
                return "its host directory is too deep";
        if (git_dir_bits(host_git_names(d)) && !allowed(a, a->p.buf))
                return "it is or holds a git dir, whose configuration names programs git runs";
        char **v = NULL;
        size_t n = 0;
        if (ws_read_names(d, &a->p, &v, &n) < 0)
                return "its host directory cannot be read";
        const char *why = NULL;
        for (size_t i = 0; !why && i < n; i++) {
                int prev = ws_path_push(&a->p, v[i]);
                struct stat sb;
                const struct rt_hostrun *h = prev < 0 ? NULL : protected(a, a->p.buf);
                if (prev < 0)
                        why = "a path below it is too long";
                else if (h || git_protected(a, a->p.buf, true))
                        why = "it holds a file host programs run by themselves";
                else if (fstatat(d, v[i], &sb, AT_SYMLINK_NOFOLLOW) < 0)
                        why = "its host directory cannot be read";
                else if (S_ISDIR(sb.st_mode))
                        why = subtree_refusal(a, d, v[i], depth + 1);
                else if (ws_host_changed(a->st, a->p.buf, &sb) && !forced(a, a->p.buf))
                        why = "conflict: a file below it changed on the host since the sandbox "
                              "started";
                if (prev >= 0)
                        ws_path_pop(&a->p, prev);
        }
        ws_free_names(v, n);
        return why;
}

/* Why the host entry at name (hst, or none) may not be replaced or deleted. */
static const char *host_refusal(struct apply *a, int hdir, const char *name, const struct stat *hst,
                                bool origin) {
        if (!hst)
                return origin && !forced(a, a->p.buf)
                               ? "conflict: deleted on the host since the sandbox started"
                               : NULL;
        if (S_ISDIR(hst->st_mode))
                return subtree_refusal(a, hdir, name, 0);
        if (ws_host_changed(a->st, a->p.buf, hst) && !forced(a, a->p.buf))
                return "conflict: changed on the host since the sandbox started";
        return NULL;
}

/* A symlink the agent makes is followed by host programs later, through whatever the tree
 * holds then: so its target is resolved here as the kernel would resolve it in the tree as
 * it will be after applying, the upper over the host (the agent's new links in any order,
 * the host's own links, a directory the agent replaced by a link), component by component.
 * Every link met is followed; one that leaves, is absolute, passes a mount point of the host
 * (which the agent saw as the directory below it) or makes a chain longer than the kernel
 * follows refuses the link. A name the tree does not hold is taken as a directory, as if
 * made later, so ".." past it is counted. */
#define LINKS_MAX 40 /* the kernel's MAXSYMLINKS: a longer chain never resolves */

enum future { FUT_NONE, FUT_DIR, FUT_LINK, FUT_OTHER };

/* What name below the future tree's directory path (link-free, "" for the top) is:
 * ret_target holds a link's target; *host_dir says the host's entry is a directory the
 * host's contents below stay visible through. -EXDEV: a mount point on the host. */
static int future_entry(const struct apply *a, const char *path, bool host_vis, const char *name,
                        char *ret_target, size_t size, bool *host_dir) {
        const char *rel = *path ? path : ".";
        _cleanup_close_ int u = ws_open_dir(a->upper_root, rel);
        struct ws_entry e;
        struct stat sb;
        int r = u < 0 ? -ENOENT : ws_upper_entry(u, name, &e);
        int fd = u;
        *host_dir = false;
        _cleanup_close_ int h = -1;
        if (host_vis) {
                h = ws_open_dir(a->host_root, rel);
                if (h == -EXDEV)
                        return -EXDEV;
                if (h >= 0 && fstatat(h, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
                        *host_dir = S_ISDIR(sb.st_mode);
                        if (*host_dir && sb.st_dev != a->host_dev)
                                return -EXDEV;
                }
        }
        if (r == 0) {
                *host_dir = *host_dir && e.type == WS_DIR && !e.opaque;
                if (e.type == WS_WHITEOUT)
                        return FUT_NONE;
                if (e.type == WS_DIR)
                        return FUT_DIR;
                if (e.type != WS_LNK)
                        return FUT_OTHER;
        } else if (r != -ENOENT) {
                return r;
        } else if (h < 0 || fstatat(h, name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
                return FUT_NONE;
        } else if (!S_ISLNK(sb.st_mode)) {
                return S_ISDIR(sb.st_mode) ? FUT_DIR : FUT_OTHER;
        } else {
                fd = h;
        }
        ssize_t n = readlinkat(fd, name, ret_target, size);
        if (n < 0 || (size_t)n >= size)
                return n < 0 ? -errno : -ENAMETOOLONG;
        ret_target[n] = '\0';
        return FUT_LINK;
}

/* Why the link at a->p with target may not be written: it leaves the workspace, through
 * anything, or lands on a protected name. NULL when it may go. */
static const char *link_refusal(struct apply *a, const char *target) {
        if (!*target)
                return "an empty symlink";
        if (target[0] == '/')
                return "a symlink to an absolute path: on the host it would point outside the "
                       "workspace";
        char res[WS_PATH_MAX], rest[2 * WS_PATH_MAX + 2], lt[WS_PATH_MAX];
        bool vis[WS_PATH_MAX / 2 + 1]; /* vis[k]: the host is seen below the k-th directory */
        size_t len = 0, depth = 0;
        int links = 1;
        const char *slash = strrchr(a->p.buf, '/');
        int m = snprintf(rest, sizeof rest, "%.*s/%s", slash ? (int)(slash - a->p.buf) : 0,
                         a->p.buf, target);
        if (m < 0 || (size_t)m >= sizeof rest)
                return "a symlink target too long";
        res[0] = '\0';
        vis[0] = true;
        for (char *s = rest; *s;) {
                size_t n = strcspn(s, "/");
                char *next = s + n + strspn(s + n, "/");
                if (n == 2 && s[0] == '.' && s[1] == '.') {
                        if (depth == 0)
                                return "a symlink that leaves the workspace";
                        char *up = memrchr(res, '/', len);
                        len = up ? (size_t)(up - res) : 0;
                        res[len] = '\0';
                        depth--;
                        s = next;
                        continue;
                }
                if (n == 0 || (n == 1 && s[0] == '.')) {
                        s = next;
                        continue;
                }
                char name[256];
                if (n >= sizeof name || len + n + 2 > sizeof res || depth + 1 >= sizeof vis)
                        return "a symlink target too long";
                memcpy(name, s, n);
                name[n] = '\0';
                bool host_dir = false;
                int t = future_entry(a, res, vis[depth], name, lt, sizeof lt, &host_dir);
                if (t == -EXDEV)
                        return "a symlink through a mount point on the host";
                if (t < 0)
                        return "a symlink that cannot be resolved";
                if (t == FUT_LINK) {
                        if (++links > LINKS_MAX)
                                return "a chain of symlinks too long to follow";
                        if (lt[0] == '/')
                                return "a symlink that leaves the workspace through a symlink to "
                                       "an absolute path";
                        size_t tl = strlen(lt), nl = strlen(next);
                        if (tl + 1 + nl + 1 > sizeof rest)
                                return "a symlink target too long";
                        memmove(rest + tl + 1, next, nl + 1);
                        memcpy(rest, lt, tl);
                        rest[tl] = '/';
                        s = rest;
                        continue;
                }
                if (len)
                        res[len++] = '/';
                memcpy(res + len, name, n + 1);
                len += n;
                depth++;
                vis[depth] = t == FUT_DIR && vis[depth - 1] && host_dir;
                s = next;
        }
        const struct rt_hostrun *h = protected(a, res);
        const char *git = git_protected(a, res, true);
        if (!h && git)
                snprintf(a->why, sizeof a->why, "a symlink into a protected path: %s", git);
        if (!h)
                return git ? a->why : NULL;
        snprintf(a->why, sizeof a->why, "a symlink into %s, which is protected: %s", h->name,
                 h->why);
        return a->why;
}

/* ---- host writes ------------------------------------------------------------------------ */

/* rm -rf of name below dir, on the host, without following anything. */
static int rm_host(int dir, const char *name, unsigned depth) {
        struct stat sb;
        if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(sb.st_mode))
                return unlinkat(dir, name, 0) < 0 ? -errno : 0;
        if (depth > WS_DEPTH_MAX)
                return -ELOOP;
        _cleanup_close_ int d = ws_open_dir(dir, name);
        if (d < 0)
                return d;
        struct ws_path p = {0};
        char **v = NULL;
        size_t n = 0;
        int r = ws_read_names(d, &p, &v, &n);
        for (size_t i = 0; r == 0 && i < n; i++)
                r = rm_host(d, v[i], depth + 1);
        ws_free_names(v, n);
        if (r == 0 && unlinkat(dir, name, AT_REMOVEDIR) < 0)
                r = -errno;
        return r;
}

/* A temp name in hdir, made by mk (an exclusive create); *ret_fd its fd when mk gives one. */
static int make_temp(struct apply *a, int hdir, char tmp[64], const char *link, int *ret_fd) {
        for (int i = 0; i < 32; i++) {
                snprintf(tmp, 64, ".rtn-apply.%d.%u", (int)getpid(), a->tmpn++);
                int fd = 0;
                if (link)
                        fd = symlinkat(link, hdir, tmp);
                else
                        fd = openat(hdir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                    0600);
                if (fd >= 0) {
                        if (ret_fd)
                                *ret_fd = fd;
                        return 0;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

static int copy_range(int in, int out, off_t off, off_t end) {
        char buf[65536];
        while (off < end) {
                size_t want = end - off < (off_t)sizeof buf ? (size_t)(end - off) : sizeof buf;
                ssize_t n = pread(in, buf, want, off);
                if (n == 0)
                        return 0;
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (ssize_t done = 0; done < n;) {
                        ssize_t w = pwrite(out, buf + done, (size_t)(n - done), off + done);
                        if (w < 0 && errno != EINTR)
                                return -errno;
                        done += w > 0 ? w : 0;
                }
                off += n;
        }
        return 0;
}

/* The file's data only, its holes left holes (SEEK_DATA/SEEK_HOLE): a sparse file of the
 * agent's costs the upper nothing and must not fill the host's disk with zeros. */
static int copy_fd(int in, int out) {
        struct stat sb;
        if (fstat(in, &sb) < 0)
                return -errno;
        for (off_t off = 0; off < sb.st_size;) {
                off_t data = lseek(in, off, SEEK_DATA), hole;
                if (data < 0 && errno == ENXIO)
                        break; /* a hole to the end */
                if (data < 0)
                        data = off; /* no SEEK_DATA here: all of it is data */
                hole = lseek(in, data, SEEK_HOLE);
                if (hole < 0 || hole > sb.st_size)
                        hole = sb.st_size;
                int r = copy_range(in, out, data, hole);
                if (r < 0)
                        return r;
                off = hole > data ? hole : sb.st_size;
        }
        return ftruncate(out, sb.st_size) < 0 ? -errno : 0;
}

/* The upper's regular file name, opened for reading: O_PATH first, then re-opened through
 * /proc/self/fd once fstat has said it is the regular file that was looked at. */
static int open_upper_file(int udir, const char *name, const struct stat *seen) {
        _cleanup_close_ int p = openat(udir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        if (p < 0)
                return -errno;
        if (fstat(p, &sb) < 0)
                return -errno;
        if (!S_ISREG(sb.st_mode) || sb.st_ino != seen->st_ino || sb.st_dev != seen->st_dev)
                return -ESTALE;
        char path[32];
        snprintf(path, sizeof path, "/proc/self/fd/%d", p);
        int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* Moves tmp over name: over a file or symlink (a directory there was removed first),
 * or, where there was nothing, only if nothing appeared meanwhile. */
static int put_in_place(int hdir, const char *tmp, const char *name, const struct stat *hst) {
        int r = 0;
        if (hst && S_ISDIR(hst->st_mode))
                r = rm_host(hdir, name, 0);
        bool replace = hst && !S_ISDIR(hst->st_mode);
        if (r == 0 && renameat2(hdir, tmp, hdir, name, replace ? 0 : RENAME_NOREPLACE) < 0)
                r = -errno;
        if (r < 0)
                (void)unlinkat(hdir, tmp, 0);
        return r;
}

static int write_file(struct apply *a, int udir, int hdir, const char *name,
                      const struct ws_entry *e, const struct stat *hst) {
        _cleanup_close_ int in = open_upper_file(udir, name, &e->st);
        if (in < 0)
                return in;
        char tmp[64];
        _cleanup_close_ int out = -1;
        int r = make_temp(a, hdir, tmp, NULL, &out);
        if (r < 0)
                return r;
        if ((r = copy_fd(in, out)) == 0) {
                if (a->own)
                        r = fchown(out, hst ? hst->st_uid : a->uid, hst ? hst->st_gid : a->gid);
                else if (hst)
                        (void)!fchown(out, hst->st_uid, hst->st_gid); /* where the caller may */
                if (r == 0 && fchmod(out, new_mode(a, e->st.st_mode, hst)) < 0)
                        r = -1;
                if (r < 0)
                        r = -errno;
        }
        if (r < 0) {
                (void)unlinkat(hdir, tmp, 0);
                return r;
        }
        return put_in_place(hdir, tmp, name, hst);
}

/* The symlink is given its owner through an O_PATH fd of it, never by its name
 * again: the directory is the workspace owner's, who could swap the name for a hard link to
 * a file rtn run as root must not chown (fs.protected_hardlinks may be off). */
static int write_link(struct apply *a, int hdir, const char *name, const char *target,
                      const struct stat *hst) {
        char tmp[64];
        int r = make_temp(a, hdir, tmp, target, NULL);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = openat(hdir, tmp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISLNK(sb.st_mode) || sb.st_uid != geteuid()) {
                r = fd < 0 ? -errno : -ESTALE;
        } else if (a->own &&
                   fchownat(fd, "", hst ? hst->st_uid : a->uid, hst ? hst->st_gid : a->gid,
                            AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
        }
        if (r < 0) {
                (void)unlinkat(hdir, tmp, 0);
                return r;
        }
        return put_in_place(hdir, tmp, name, hst);
}

/* A new host directory: made 0700, opened again without following anything, then given its
 * owner and mode (and the setgid bit its parent passed on, as mkdir does). */
static int make_dir(struct apply *a, int hdir, const char *name, const struct stat *hst,
                    mode_t upper_mode) {
        int r = hst ? rm_host(hdir, name, 0) : 0;
        if (r < 0)
                return r;
        if (mkdirat(hdir, name, 0700) < 0)
                return -errno;
        _cleanup_close_ int d = ws_open_dir(hdir, name);
        struct stat sb;
        if (d < 0)
                return d;
        if (fstat(d, &sb) < 0 || (a->own && fchown(d, a->uid, a->gid) < 0) ||
            fchmod(d, new_mode(a, upper_mode, NULL) | (sb.st_mode & S_ISGID)) < 0)
                return -errno;
        return 0;
}

/* ---- the walk --------------------------------------------------------------------------- */

static int apply_dir(struct apply *a, int udir, int hdir, bool opaque, unsigned depth);

/* What was written leaves the upper, unless an opaque directory above it stays pending
 * (rtn apply PATH below it): there the upper's copy is what the overlay shows. */
static void drop_upper(const struct apply *a, int udir, const char *name, bool dir) {
        if (a->keep_upper)
                return;
        (void)unlinkat(udir, name, dir ? AT_REMOVEDIR : 0); /* left pending if it fails */
}

static const char *type_refusal(enum ws_type t) {
        switch (t) {
        case WS_FIFO:
                return "a FIFO: not written to the host";
        case WS_SOCK:
                return "a socket: not written to the host";
        case WS_DEV:
                return "a device node: not written to the host";
        case WS_WHITEOUT:
        case WS_DIR:
        case WS_REG:
        case WS_LNK:
                break;
        }
        return NULL;
}

/* A host entry an opaque directory hides, or a whiteout's: deleted after the checks. */
static int apply_delete(struct apply *a, int hdir, const char *name, const struct stat *hst) {
        const struct rt_hostrun *h = protected(a, a->p.buf);
        const char *git = git_protected(a, a->p.buf, false);
        if (a->in_git_dir && !allowed(a, a->p.buf))
                return refuse(a, RT_WS_DELETED, "%s", GIT_DIR_WHY);
        if (h)
                return refuse(a, RT_WS_DELETED, "protected (%s): %s", h->name, h->why);
        if (git)
                return refuse(a, RT_WS_DELETED, "protected: %s", git);
        const char *why = host_refusal(a, hdir, name, hst, false);
        if (why)
                return refuse(a, RT_WS_DELETED, "%s", why);
        int r = a->dry ? 0 : rm_host(hdir, name, 0);
        if (r < 0)
                return refuse(a, RT_WS_DELETED, "cannot delete it on the host: %s", strerror(-r));
        a->changed |= !a->dry;
        applied(a, RT_WS_DELETED);
        return 0;
}

/* A directory of the upper. On the way to a named path (way), only the directory itself is
 * made where the host lacks it: its mode and an opaque one's deletions stay pending. */
static int apply_subdir(struct apply *a, int udir, int hdir, const char *name,
                        const struct ws_entry *e, const struct stat *hst, unsigned depth,
                        bool way) {
        bool hdir_ok = hst && S_ISDIR(hst->st_mode);
        enum rt_ws_change what = !hst ? RT_WS_ADDED : RT_WS_MODIFIED;
        bool mode_changed = hdir_ok && (e->st.st_mode & 07777) != (hst->st_mode & 07777);
        if (e->feature)
                return refuse(a, what, "an overlay redirect rtn does not write back");
        if (hst && !hdir_ok) {
                const char *why = host_refusal(a, hdir, name, hst, false);
                if (why)
                        return refuse(a, what, "%s", why);
        }
        if (!hdir_ok && !a->dry) {
                int r = make_dir(a, hdir, name, hst, e->st.st_mode);
                if (r < 0)
                        return refuse(a, what, "cannot make it on the host: %s", strerror(-r));
                a->changed = true;
        }
        if (!hdir_ok)
                applied(a, what);
        _cleanup_close_ int u = ws_open_dir(udir, name);
        _cleanup_close_ int h = hdir_ok || !a->dry ? ws_open_dir(hdir, name) : -1;
        if (u < 0 || (h < 0 && (hdir_ok || !a->dry)))
                return refuse(a, what, "its directory cannot be opened: %s",
                              strerror(u < 0 ? -u : -h));
        bool keep = way && e->opaque && hdir_ok;
        a->keep_upper += keep;
        int r = apply_dir(a, u, h, e->opaque && hdir_ok, depth + 1);
        a->keep_upper -= keep;
        if (r != 0)
                return r; /* refusals below: the directory stays pending, mode included */
        if (way) {
                if (!a->dry && !mode_changed && !(e->opaque && hdir_ok))
                        drop_upper(a, udir, name, true); /* empty and nothing of its own */
                return 0;
        }
        if (mode_changed) {
                if (!a->dry && fchmod(h, new_mode(a, e->st.st_mode, hst)) < 0)
                        return refuse(a, RT_WS_MODIFIED, "cannot set its mode: %s",
                                      strerror(errno));
                a->changed |= !a->dry;
                applied(a, RT_WS_MODIFIED);
        }
        if (!a->dry)
                drop_upper(a, udir, name, true);
        return 0;
}

static int apply_file(struct apply *a, int udir, int hdir, const char *name,
                      const struct ws_entry *e, const struct stat *hst) {
        enum rt_ws_change what = hst ? RT_WS_MODIFIED : RT_WS_ADDED;
        char target[WS_PATH_MAX];
        if (e->type == WS_REG && (e->st.st_mode & (S_ISUID | S_ISGID)))
                return refuse(a, what, "setuid/setgid bits (mode %04o): not written to the host",
                              (unsigned)(e->st.st_mode & 07777));
        if (e->feature)
                return refuse(a, what, "an overlay metacopy or redirect rtn does not write back");
        if (e->type == WS_LNK) {
                ssize_t n = readlinkat(udir, name, target, sizeof target);
                if (n < 0 || (size_t)n >= sizeof target)
                        return refuse(a, what, "its symlink cannot be read");
                target[n] = '\0';
                if (memchr(target, '\0', (size_t)n))
                        return refuse(a, what, "its symlink cannot be read");
                const char *why = link_refusal(a, target);
                if (why)
                        return refuse(a, what, "%s", why);
        }
        const char *why = host_refusal(a, hdir, name, hst, e->origin);
        if (why)
                return refuse(a, what, "%s", why);
        int r = 0;
        if (!a->dry)
                r = e->type == WS_LNK ? write_link(a, hdir, name, target, hst)
                                      : write_file(a, udir, hdir, name, e, hst);
        if (r == -ESTALE)
                return refuse(a, what, "it changed while it was applied");
        if (r == -EEXIST)
                return refuse(a, what, "conflict: it appeared on the host while it was applied");
        if (r < 0)
                return refuse(a, what, "cannot write it: %s", strerror(-r));
        if (!a->dry) {
                record(a, hdir, name);
                drop_upper(a, udir, name, false);
        }
        applied(a, what);
        return 0;
}

static int apply_one(struct apply *a, int udir, int hdir, const char *name, unsigned depth,
                     bool way) {
        struct ws_entry e;
        struct stat hst;
        int r = ws_upper_entry(udir, name, &e);
        if (r < 0)
                return refuse(a, RT_WS_MODIFIED, "cannot read it: %s", strerror(-r));
        if (way && e.type != WS_DIR)
                return 0; /* nothing of the upper below it: the named path has no change */
        bool host = ws_host_stat(hdir, name, &hst) == 0;
        enum rt_ws_change what = e.type == WS_WHITEOUT ? RT_WS_DELETED
                                 : host                ? RT_WS_MODIFIED
                                                       : RT_WS_ADDED;
        if (e.type == WS_WHITEOUT && !host) {
                if (!a->dry)
                        drop_upper(a, udir, name, false); /* the host lost it already */
                return 0;
        }
        if (ws_name_bad(name))
                return refuse(a, what, "a control character in its name");
        if (a->in_git_dir && !allowed(a, a->p.buf))
                return refuse(a, what, "%s", GIT_DIR_WHY);
        const struct rt_hostrun *h = protected(a, a->p.buf);
        if (h)
                return refuse(a, what, "protected (%s): %s", h->name, h->why);
        const char *git = git_protected(a, a->p.buf, e.type == WS_DIR);
        if (git)
                return refuse(a, what, "protected: %s", git);
        if (e.type == WS_LNK && (h = on_way(a)))
                return refuse(a, what, "a symlink where %s is looked up, which is protected: %s",
                              h->name, h->why);
        const char *t = type_refusal(e.type);
        if (t)
                return refuse(a, what, "%s", t);
        if (e.type == WS_WHITEOUT) {
                r = apply_delete(a, hdir, name, &hst);
                if (r == 0 && !a->dry)
                        drop_upper(a, udir, name, false);
                return r;
        }
        if (e.type == WS_DIR)
                return apply_subdir(a, udir, hdir, name, &e, host ? &hst : NULL, depth, way);
        return apply_file(a, udir, hdir, name, &e, host ? &hst : NULL);
}

static bool has_name(char **v, size_t n, const char *name) {
        for (size_t lo = 0, hi = n; lo < hi;) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(v[mid], name);
                if (c == 0)
                        return true;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

/* Returns the refusals in the directory (0: all of it applied), or -errno. */
static int apply_dir(struct apply *a, int udir, int hdir, bool opaque, unsigned depth) {
        if (depth > WS_DEPTH_MAX)
                return refuse(a, RT_WS_MODIFIED, "too deep");
        char **v = NULL, **hv = NULL;
        size_t n = 0, hn = 0;
        int r = ws_read_names(udir, &a->p, &v, &n);
        if (r == 0 && opaque)
                r = ws_read_names(hdir, &a->p, &hv, &hn);
        if (r < 0) {
                ws_free_names(v, n);
                return r;
        }
        int refused = 0;
        bool outer = a->in_git_dir;
        a->in_git_dir = r == 0 && git_dir_here(udir, hdir, opaque, v, n);
        for (size_t i = 0; r >= 0 && i < hn; i++) {
                if (has_name(v, n, hv[i]))
                        continue;
                struct stat hst;
                int prev = ws_path_push(&a->p, hv[i]);
                if (prev < 0 || scope(a, a->p.buf) != IN || ws_host_stat(hdir, hv[i], &hst) < 0) {
                        r = prev < 0 ? prev : 0;
                        if (prev >= 0)
                                ws_path_pop(&a->p, prev);
                        continue;
                }
                if (ws_name_bad(hv[i]))
                        refused += refuse(a, RT_WS_DELETED, "a control character in its name");
                else
                        refused += apply_delete(a, hdir, hv[i], &hst);
                ws_path_pop(&a->p, prev);
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                int prev = ws_path_push(&a->p, v[i]);
                if (prev < 0) {
                        r = prev;
                        break;
                }
                enum scope sc = scope(a, a->p.buf);
                r = sc == OUT ? 0 : apply_one(a, udir, hdir, v[i], depth, sc == ON_WAY);
                refused += r > 0 ? r : 0;
                ws_path_pop(&a->p, prev);
        }
        a->in_git_dir = outer;
        ws_free_names(v, n);
        ws_free_names(hv, hn);
        return r < 0 ? r : refused;
}

/* The first pass of rtn apply PATH...: which named paths have a change, at them or below
 * them, or a refusal above them that says why they are not written. */
static int mark_hit(enum rt_ws_change what, const char *path, const char *reason, void *ud) {
        (void)what;
        struct apply *a = ud;
        size_t l = strlen(path);
        for (size_t i = 0; i < a->nonly; i++)
                if (named(&a->only[i], 1, path) ||
                    (reason && !strncmp(a->only[i], path, l) && a->only[i][l] == '/'))
                        a->hit[i] = true;
        return 0;
}

/* With named paths, a dry run first: a path without a pending change is an error before
 * anything is written. */
static int check_named(struct apply *a, int upper, int host, struct rtn_error *err) {
        if (!a->nonly)
                return 0;
        if (!(a->hit = calloc(a->nonly, sizeof *a->hit)))
                return rtn_errx(err, ENOMEM, "apply the workspace's changes");
        bool dry = a->dry;
        rt_ws_apply_fn fn = a->fn;
        void *ud = a->ud;
        a->dry = true;
        a->fn = mark_hit;
        a->ud = a;
        int r = apply_dir(a, upper, host, false, 0);
        a->dry = dry;
        a->fn = fn;
        a->ud = ud;
        a->refused = 0;
        if (r < 0)
                return rtn_err(err, -r, "apply the workspace's changes");
        for (size_t i = 0; i < a->nonly; i++)
                if (!a->hit[i])
                        return rtn_errx(err, ENOENT, "/workspace/%s: no pending change",
                                        a->only[i]);
        return 0;
}

int rt_ws_apply(const char *dir, const char *root, bool dry_run, rt_ws_apply_fn fn, void *ud,
                struct rtn_error *err) {
        return rt_ws_apply_allow(dir, root, dry_run, &(struct rt_ws_apply_named){0}, fn, ud, err);
}

int rt_ws_apply_allow(const char *dir, const char *root, bool dry_run,
                      const struct rt_ws_apply_named *names, rt_ws_apply_fn fn, void *ud,
                      struct rtn_error *err) {
        struct rt_ws_state st = {0};
        int host, upper;
        int r = ws_open(dir, root, &st, &host, &upper, err);
        if (r < 0 || upper < 0)
                return r;
        struct apply *a = calloc(1, sizeof *a);
        struct stat top;
        if (!a || fstat(host, &top) < 0) {
                r = rtn_err(err, a ? errno : ENOMEM, "apply the workspace's changes");
                goto out;
        }
        a->st = &st;
        a->dry = dry_run;
        a->umask = umask(022);
        umask(a->umask);
        a->own = geteuid() == 0;
        a->uid = top.st_uid;
        a->gid = top.st_gid;
        a->fn = fn;
        a->ud = ud;
        a->allow = names->allow;
        a->nallow = names->nallow;
        a->force = names->force;
        a->nforce = names->nforce;
        a->only = names->only;
        a->nonly = names->nonly;
        if ((r = ws_git_paths(dir, st.host, upper, &a->git, err)) < 0) {
                rtn_err_wrap(err, "apply the workspace's changes");
                goto out;
        }
        a->host_root = host;
        a->upper_root = upper;
        a->host_dev = top.st_dev;
        if ((r = check_named(a, upper, host, err)) < 0)
                goto out;
        r = apply_dir(a, upper, host, false, 0);
        if (r < 0)
                rtn_err(err, r, "apply the workspace's changes to %s", st.host);
        if (a->changed) {
                (void)syncfs(host);
                struct rtn_error e2 = {0};
                int q = rt_ws_state_write(dir, &st, &e2);
                if (q < 0 && r >= 0) {
                        *err = e2;
                        r = q;
                }
        }
        if (r >= 0)
                r = a->refused;
out:
        if (a) {
                rt_pathlist_free(&a->git);
                free(a->hit);
        }
        free(a);
        close(host);
        close(upper);
        rt_ws_state_free(&st);
        return r;
}
