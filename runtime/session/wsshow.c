/* rt_ws_show (runtime/session/wsover.h): the two sides of the pending changes at one path of an
 * overlay workspace, for the user to read before writing a refused one (rtn diff PATH). The
 * same care as the walk (runtime/session/wswalk.h): nothing is followed, only a regular file is
 * opened (O_PATH first, then re-opened through /proc/self/fd once fstat says so), and every
 * directory on the way is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/session/wswalk.h"

struct show {
        struct ws_path p;
        rt_ws_show_fn fn;
        void *ud;
        struct rtn_error *err;
};

/* The regular file name below dir, opened for reading; -1 if it is none. */
static int open_regular(int dir, const char *name) {
        _cleanup_close_ int p = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        if (p < 0 || fstat(p, &sb) < 0 || !S_ISREG(sb.st_mode))
                return -1;
        char path[32];
        snprintf(path, sizeof path, "/proc/self/fd/%d", p);
        return open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
}

/* One side of an entry that is not a directory: a regular file's fd, a symlink's target, or
 * what else it is. */
static void side_of(int dir, const char *name, const struct stat *st, struct rt_ws_side *ret) {
        *ret = (struct rt_ws_side){.fd = -1};
        switch (st->st_mode & S_IFMT) {
        case S_IFREG:
                ret->fd = open_regular(dir, name);
                if (ret->fd < 0)
                        snprintf(ret->text, sizeof ret->text, "(a file that cannot be read)");
                return;
        case S_IFLNK: {
                char t[sizeof ret->text - 16];
                ssize_t n = readlinkat(dir, name, t, sizeof t - 1);
                t[n < 0 ? 0 : n] = '\0';
                snprintf(ret->text, sizeof ret->text, "(a symlink to) %s", t);
                return;
        }
        case S_IFDIR:
                snprintf(ret->text, sizeof ret->text, "(a directory)");
                return;
        default:
                snprintf(ret->text, sizeof ret->text, "(a special file, mode %o)",
                         (unsigned)st->st_mode);
        }
}

static int show_entry(struct show *s, int udir, int hdir, const char *name, unsigned depth);

static int show_dir(struct show *s, int udir, int hdir, const char *name, bool opaque,
                    unsigned depth) {
        if (depth > WS_DEPTH_MAX)
                return rtn_errx(s->err, ELOOP, "too deep below %s", s->p.buf);
        _cleanup_close_ int u = ws_open_dir(udir, name);
        _cleanup_close_ int h = hdir >= 0 && !opaque ? ws_open_dir(hdir, name) : -1;
        if (u < 0)
                return rtn_errx(s->err, -u, "cannot open %s: %s", s->p.buf, strerror(-u));
        char **v = NULL;
        size_t n = 0;
        int r = ws_read_names(u, &s->p, &v, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                int prev = ws_path_push(&s->p, v[i]);
                if (prev < 0) {
                        r = rtn_errx(s->err, ENAMETOOLONG, "a path below %s is too long", s->p.buf);
                        break;
                }
                r = show_entry(s, u, h, v[i], depth + 1);
                ws_path_pop(&s->p, prev);
        }
        ws_free_names(v, n);
        return r;
}

static int show_entry(struct show *s, int udir, int hdir, const char *name, unsigned depth) {
        struct ws_entry e;
        struct stat hst;
        int r = ws_upper_entry(udir, name, &e);
        if (r < 0)
                return rtn_errx(s->err, -r, "no pending change at /workspace/%s", s->p.buf);
        bool host = ws_host_stat(hdir, name, &hst) == 0;
        if (e.type == WS_DIR && (!host || S_ISDIR(hst.st_mode)))
                return show_dir(s, udir, hdir, name, e.opaque, depth);
        struct rt_ws_side hs = {.fd = -1}, us = {.fd = -1};
        if (host)
                side_of(hdir, name, &hst, &hs);
        if (e.type != WS_WHITEOUT)
                side_of(udir, name, &e.st, &us);
        enum rt_ws_change what = e.type == WS_WHITEOUT ? RT_WS_DELETED
                                 : host                ? RT_WS_MODIFIED
                                                       : RT_WS_ADDED;
        r = e.type == WS_WHITEOUT && !host ? 0
                                           : s->fn(what, s->p.buf, host ? &hs : NULL,
                                                   e.type == WS_WHITEOUT ? NULL : &us, s->ud);
        rtn_safe_close(hs.fd);
        rtn_safe_close(us.fd);
        return r < 0 ? rtn_errx(s->err, -r, "show /workspace/%s", s->p.buf) : 0;
}

int rt_ws_show(const char *dir, const char *root, const char *path, rt_ws_show_fn fn, void *ud,
               struct rtn_error *err) {
        struct rt_ws_state st = {0};
        int host, upper;
        int r = ws_open(dir, root, &st, &host, &upper, err);
        if (r < 0)
                return r;
        if (upper < 0)
                return rtn_errx(err, ENOENT, "no pending workspace changes");
        struct show *s = calloc(1, sizeof *s);
        if (!s) {
                r = rtn_err(err, ENOMEM, "show %s", path);
                goto out;
        }
        *s = (struct show){.fn = fn, .ud = ud, .err = err};
        /* Down to the last component, the upper's directories and the host's beside them. */
        int u = dup(upper), h = dup(host);
        const char *p = path;
        for (;;) {
                p += strspn(p, "/");
                size_t len = strcspn(p, "/");
                char name[256];
                if (len == 1 && p[0] == '.' && p[1]) {
                        p++;
                        continue;
                }
                if (len == 0 || len >= sizeof name || (len <= 2 && !strncmp(p, "..", len))) {
                        r = rtn_errx(err, EINVAL, "%s: not a path in the workspace", path);
                        break;
                }
                memcpy(name, p, len);
                name[len] = '\0';
                if (ws_path_push(&s->p, name) < 0) {
                        r = rtn_errx(err, ENAMETOOLONG, "%s: too long", path);
                        break;
                }
                p += len;
                if (!p[strspn(p, "/")]) {
                        r = show_entry(s, u, h, name, 0);
                        break;
                }
                struct ws_entry e;
                int nu = ws_upper_entry(u, name, &e) == 0 && e.type == WS_DIR ? ws_open_dir(u, name)
                                                                              : -1;
                int nh = h >= 0 && nu >= 0 && !e.opaque ? ws_open_dir(h, name) : -1;
                rtn_safe_close(u);
                rtn_safe_close(h);
                u = nu;
                h = nh < 0 ? -1 : nh;
                if (u < 0) {
                        r = rtn_errx(err, ENOENT, "no pending change at /workspace/%s", s->p.buf);
                        break;
                }
        }
        rtn_safe_close(u);
        rtn_safe_close(h);
out:
        free(s);
        close(host);
        close(upper);
        rt_ws_state_free(&st);
        return r < 0 ? r : 0;
}
