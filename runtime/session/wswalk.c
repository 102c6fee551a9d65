/* Walking an overlay workspace's upper beside the host dir (runtime/session/wswalk.h), and the diff
 * built on it: what the upper holds, against what the host dir holds now. An entry of the
 * upper over a host entry is a modification, over nothing an addition; a whiteout over a
 * host entry is a deletion (over nothing, nothing: the host lost it already); an opaque
 * directory deletes every host entry below it that the upper does not hold again. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "common/term.h"
#include "runtime/session/wswalk.h"

int ws_path_push(struct ws_path *p, const char *name) {
        size_t n = strlen(name), prev = p->len;
        if (prev + n + 2 > sizeof p->buf)
                return -ENAMETOOLONG;
        if (prev)
                p->buf[p->len++] = '/';
        memcpy(p->buf + p->len, name, n + 1);
        p->len += n;
        return (int)prev;
}

void ws_path_pop(struct ws_path *p, int prev) {
        p->len = (size_t)prev;
        p->buf[p->len] = '\0';
}

bool ws_name_bad(const char *name) {
        return rtn_term_has_control(name, strlen(name));
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

void ws_free_names(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

int ws_read_names(int dirfd, struct ws_path *p, char ***ret, size_t *ret_n) {
        /* A description of its own: readdir moves the offset, and dirfd stays the caller's. */
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        char **v = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        struct dirent *de;
        errno = 0;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (++p->entries > WS_ENTRIES_MAX) {
                        r = -E2BIG;
                        break;
                }
                if (n == cap) {
                        cap = cap ? cap * 2 : 16;
                        char **nv = realloc(v, cap * sizeof *v);
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                }
                if (!(v[n] = strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        if (r == 0 && errno)
                r = -errno;
        closedir(d);
        if (r < 0) {
                ws_free_names(v, n);
                return r;
        }
        if (n)
                qsort(v, n, sizeof *v, cmp_names);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* lgetxattr of name under udir through /proc/self/fd: the last component is not followed,
 * and nothing is opened. 1 when the attribute is there (its first byte in *first), 0 when it
 * is not, -errno when it cannot be read: the entry is then refused rather than guessed at
 * (an unread metacopy mark would write an empty file, an unread whiteout mark a file for a
 * deletion). */
static int get_xattr(int udir, const char *name, const char *key, char *first) {
        char path[320], v[8];
        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", udir, name);
        ssize_t n = lgetxattr(path, key, v, sizeof v);
        if (n < 0 && (errno == ENODATA || errno == ENOTSUP))
                return 0;
        if (n < 0 && errno != ERANGE) /* ERANGE: there, longer than v */
                return -errno;
        if (first)
                *first = n > 0 ? v[0] : '\0';
        return 1;
}

static int entry_attrs(int udir, const char *name, struct ws_entry *e) {
        char c = 0;
        int r[3] = {0, 0, 0};
        switch (e->type) {
        case WS_DIR:
                r[0] = get_xattr(udir, name, "user.overlay.opaque", &c);
                r[1] = get_xattr(udir, name, "user.overlay.redirect", NULL);
                e->opaque = r[0] == 1 && c == 'y'; /* 'x': not opaque, holds xattr whiteouts */
                e->feature = r[1] == 1;
                break;
        case WS_REG:
                /* Overlayfs also knows whiteouts as empty files with this xattr (Linux 6.7,
                 * for lower layers made by tools); it never makes them in an upper, but an
                 * upper from elsewhere could hold one. */
                if (e->st.st_size == 0 &&
                    (r[0] = get_xattr(udir, name, "user.overlay.whiteout", NULL)) == 1) {
                        e->type = WS_WHITEOUT;
                        break;
                }
                r[1] = get_xattr(udir, name, "user.overlay.origin", NULL);
                e->origin = r[1] == 1;
                r[2] = get_xattr(udir, name, "user.overlay.metacopy", NULL);
                if (r[2] == 0)
                        r[2] = get_xattr(udir, name, "user.overlay.redirect", NULL);
                e->feature = r[2] == 1;
                break;
        case WS_WHITEOUT:
        case WS_LNK:
        case WS_FIFO:
        case WS_SOCK:
        case WS_DEV:
                break;
        }
        for (int i = 0; i < 3; i++)
                if (r[i] < 0)
                        return r[i];
        return 0;
}

int ws_upper_entry(int udir, const char *name, struct ws_entry *ret) {
        struct ws_entry e = {0};
        if (fstatat(udir, name, &e.st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        switch (e.st.st_mode & S_IFMT) {
        case S_IFDIR:
                e.type = WS_DIR;
                break;
        case S_IFREG:
                e.type = WS_REG;
                break;
        case S_IFLNK:
                e.type = WS_LNK;
                break;
        case S_IFIFO:
                e.type = WS_FIFO;
                break;
        case S_IFSOCK:
                e.type = WS_SOCK;
                break;
        case S_IFCHR:
                /* overlayfs's whiteout (Documentation/filesystems/overlayfs.rst) */
                e.type = e.st.st_rdev == 0 ? WS_WHITEOUT : WS_DEV;
                break;
        default:
                e.type = WS_DEV;
                break;
        }
        int r = entry_attrs(udir, name, &e);
        if (r < 0)
                return r;
        *ret = e;
        return 0;
}

int ws_host_stat(int hdir, const char *name, struct stat *ret) {
        if (hdir < 0)
                return -ENOENT;
        return fstatat(hdir, name, ret, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int ws_open_dir(int dirfd, const char *name) {
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
        int fd = sys_openat2(dirfd, name, &how, sizeof how);
        return fd < 0 ? -errno : fd;
}

static int ts_cmp(struct timespec a, struct timespec b) {
        if (a.tv_sec != b.tv_sec)
                return a.tv_sec < b.tv_sec ? -1 : 1;
        return a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec;
}

bool ws_host_changed(const struct rt_ws_state *st, const char *path, const struct stat *hst) {
        if (S_ISDIR(hst->st_mode) || ts_cmp(hst->st_ctim, st->since) < 0)
                return false;
        const struct rt_ws_record *rec = rt_ws_state_find(st, path);
        return !(rec && rec->ino == hst->st_ino && ts_cmp(rec->ctime, hst->st_ctim) == 0);
}

static bool upper_empty(int upper) {
        struct ws_path p = {0};
        char **v = NULL;
        size_t n = 0;
        if (ws_read_names(upper, &p, &v, &n) < 0)
                return false;
        ws_free_names(v, n);
        return n == 0;
}

int ws_open(const char *dir, const char *root, struct rt_ws_state *ret_st, int *ret_host,
            int *ret_upper, struct rtn_error *err) {
        char path[4200];
        *ret_host = *ret_upper = -1;
        snprintf(path, sizeof path, "%s/" RT_WS_DIR "/upper", root ? root : dir);
        _cleanup_close_ int upper = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (upper < 0 && errno == ENOENT)
                return 0;
        if (upper < 0)
                return rtn_err(err, errno, "open %s", path);
        int r = rt_ws_state_read(dir, ret_st);
        if (r == -ENOENT && upper_empty(upper))
                return 0;
        if (r < 0)
                return rtn_errx(err, r == -ENOENT ? ENOENT : EBADMSG,
                                "the pending workspace changes in %s/" RT_WS_DIR
                                " have no valid record; drop them (rtn reset, env_reset)",
                                dir);
        _cleanup_close_ int host = rt_ws_open_host(ret_st, err);
        if (host < 0) {
                rt_ws_state_free(ret_st);
                return host;
        }
        int fd = openat(host, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                r = rtn_err(err, errno, "open the workspace %s", ret_st->host);
                rt_ws_state_free(ret_st);
                return r;
        }
        *ret_host = fd;
        *ret_upper = TAKE_FD(upper);
        return 0;
}

/* ---- the diff ------------------------------------------------------------------------- */

struct diff {
        struct ws_path p;
        rt_ws_diff_fn fn;
        void *ud;
        bool stop;
};

static int emit(struct diff *d, enum rt_ws_change what) {
        if (!d->stop && d->fn(what, d->p.buf, d->ud) != 0)
                d->stop = true;
        return 0;
}

static bool has_name(char **v, size_t n, const char *name) {
        return bsearch(&name, v, n, sizeof *v, cmp_names) != NULL;
}

static int diff_dir(struct diff *d, int udir, int hdir, bool opaque, unsigned depth);

/* The host entries an opaque directory hides: deleted. */
static int diff_hidden(struct diff *d, int hdir, char **names, size_t n) {
        char **hv = NULL;
        size_t hn = 0;
        int r = ws_read_names(hdir, &d->p, &hv, &hn);
        for (size_t i = 0; r == 0 && i < hn && !d->stop; i++) {
                if (has_name(names, n, hv[i]))
                        continue;
                int prev = ws_path_push(&d->p, hv[i]);
                if (prev < 0) {
                        r = prev;
                        break;
                }
                emit(d, RT_WS_DELETED);
                ws_path_pop(&d->p, prev);
        }
        ws_free_names(hv, hn);
        return r;
}

static int diff_one(struct diff *d, int udir, int hdir, const char *name, unsigned depth) {
        struct ws_entry e;
        struct stat hst;
        bool host = ws_host_stat(hdir, name, &hst) == 0;
        if (ws_upper_entry(udir, name, &e) < 0) /* unreadable: a change, of a kind unknown */
                return emit(d, host ? RT_WS_MODIFIED : RT_WS_ADDED);
        if (e.type == WS_WHITEOUT)
                return host ? emit(d, RT_WS_DELETED) : 0;
        if (e.type != WS_DIR)
                return emit(d, host ? RT_WS_MODIFIED : RT_WS_ADDED);
        bool hdir_ok = host && S_ISDIR(hst.st_mode);
        if (!hdir_ok)
                emit(d, host ? RT_WS_MODIFIED : RT_WS_ADDED);
        else if ((e.st.st_mode & 07777) != (hst.st_mode & 07777))
                emit(d, RT_WS_MODIFIED);
        _cleanup_close_ int u = ws_open_dir(udir, name);
        _cleanup_close_ int h = hdir_ok ? ws_open_dir(hdir, name) : -1;
        if (u < 0)
                return u;
        return diff_dir(d, u, h, e.opaque && hdir_ok, depth + 1);
}

static int diff_dir(struct diff *d, int udir, int hdir, bool opaque, unsigned depth) {
        if (depth > WS_DEPTH_MAX)
                return -ELOOP;
        char **v = NULL;
        size_t n = 0;
        int r = ws_read_names(udir, &d->p, &v, &n);
        if (r == 0 && opaque && hdir >= 0)
                r = diff_hidden(d, hdir, v, n);
        for (size_t i = 0; r == 0 && i < n && !d->stop; i++) {
                int prev = ws_path_push(&d->p, v[i]);
                if (prev < 0) {
                        r = prev;
                        break;
                }
                r = diff_one(d, udir, hdir, v[i], depth);
                ws_path_pop(&d->p, prev);
        }
        ws_free_names(v, n);
        return r;
}

int rt_ws_diff(const char *dir, const char *root, rt_ws_diff_fn fn, void *ud,
               struct rtn_error *err) {
        struct rt_ws_state st = {0};
        int host, upper;
        int r = ws_open(dir, root, &st, &host, &upper, err);
        if (r < 0 || upper < 0)
                return r;
        struct diff *d = calloc(1, sizeof *d);
        if (!d)
                r = rtn_err(err, ENOMEM, "workspace diff");
        if (d) {
                d->fn = fn;
                d->ud = ud;
                if ((r = diff_dir(d, upper, host, false, 0)) < 0)
                        rtn_err(err, r, "compare the workspace's changes with %s", st.host);
                free(d);
        }
        close(host);
        close(upper);
        rt_ws_state_free(&st);
        return r < 0 ? r : 0;
}
