/* Credential stores below $HOME (docs/architecture.md, "Host directory binds"; invariant 12):
 * hidden directories of $HOME are bound read-only, but never a credential store, a directory
 * below one, a directory holding one that is there, or another name of one. Names compare
 * component by component without regard to case, so `.SSH` on a case-insensitive filesystem
 * is `.ssh`; '..' and symlinks never reach here (rt_bind_path_clean, openat2 in
 * rt_hostpath_check). What a directory holds is looked up from its fd, never by a path. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/sandbox_dirs.h"
#include "common/syscall.h"
#include "runtime/sandbox/credstore.h"

static const char *const builtin[] = {RTN_HOME_CREDENTIAL_STORES(RTN_DIR_BARE)};

/* Relative, canonical: no leading '/', no empty, '.' or '..' component, no trailing '/'. */
static bool name_ok(const char *s) {
        if (!*s || s[0] == '/' || strlen(s) > 1024)
                return false;
        for (const char *c = s; *c;) {
                const char *e = strchrnul(c, '/');
                size_t n = (size_t)(e - c);
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                for (const char *k = c; k < e; k++)
                        if ((unsigned char)*k < 0x20)
                                return false;
                c = *e ? e + 1 : e;
                if (*e && !*c)
                        return false;
        }
        return true;
}

static int list_path(const char *home, char out[4200], struct rtn_error *err) {
        const char *x = getenv("XDG_CONFIG_HOME");
        int n = x && x[0] == '/' ? snprintf(out, 4200, "%s/rtn/credential-stores", x)
                                 : snprintf(out, 4200, "%s/.config/rtn/credential-stores", home);
        if (n < 0 || n >= 4200)
                return rtn_errx(err, ENAMETOOLONG, "the path of your credential-stores list");
        return 0;
}

static int load_user(const char *home, struct rt_credstores *cs, struct rtn_error *err) {
        char path[4200];
        int r = list_path(home, path, err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0
                                                           : rtn_err(err, errno, "open %s", path);
        ssize_t len = read(fd, cs->buf, RT_CREDSTORE_FILE_MAX + 1);
        if (len < 0)
                return rtn_err(err, errno, "read %s", path);
        if (len > RT_CREDSTORE_FILE_MAX)
                return rtn_errx(err, EFBIG, "%s: more than %d bytes", path, RT_CREDSTORE_FILE_MAX);
        cs->buf[len] = '\0';
        if (memchr(cs->buf, '\0', (size_t)len))
                return rtn_errx(err, EINVAL, "%s: not a text file", path);
        unsigned line = 0;
        for (char *s = cs->buf, *next; s; s = next) {
                line++;
                if ((next = strchr(s, '\n')))
                        *next++ = '\0';
                size_t n = strlen(s);
                while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                        s[--n] = '\0';
                while (*s == ' ' || *s == '\t')
                        s++;
                if (!*s || *s == '#')
                        continue;
                if (!name_ok(s))
                        return rtn_errx(err, EINVAL,
                                        "%s:%u: not a path relative to your home (such as "
                                        ".mytool or .config/mytool)",
                                        path, line);
                if (cs->n >= RT_CREDSTORE_MAX)
                        return rtn_errx(err, E2BIG, "%s: more than %d names", path,
                                        RT_CREDSTORE_MAX - (int)(sizeof builtin / sizeof *builtin));
                cs->names[cs->n++] = s;
        }
        return 0;
}

/* How far a is a prefix of b by whole components, case aside: the length of a when b is a
 * or below it, else 0. */
static size_t prefix_len(const char *a, const char *b) {
        size_t n = strlen(a);
        if (strncasecmp(a, b, n) || (b[n] != '\0' && b[n] != '/'))
                return 0;
        return n;
}

/* The XDG base directories a tool puts its stores in when the variable is set: a name below
 * the default moves with it. */
static const struct {
        const char *var, *dflt;
} xdg_dirs[] = {
        {"XDG_CONFIG_HOME", ".config"},
        {"XDG_DATA_HOME", ".local/share"},
        {"XDG_CACHE_HOME", ".cache"},
};

/* Each name below a default of xdg_dirs[], again below where the variable puts it, when
 * that is an absolute path below home (a store elsewhere is not home's to guard). */
static int add_moved(const char *home, struct rt_credstores *cs, struct rtn_error *err) {
        size_t used = 0, n = cs->n, hl = strlen(home);
        while (hl > 1 && home[hl - 1] == '/')
                hl--;
        for (size_t d = 0; d < sizeof xdg_dirs / sizeof xdg_dirs[0]; d++) {
                const char *x = getenv(xdg_dirs[d].var);
                if (!x || x[0] != '/' || strncmp(x, home, hl) || x[hl] != '/')
                        continue;
                char rel[1100];
                snprintf(rel, sizeof rel, "%s", x + hl + 1);
                for (size_t k = strlen(rel); k && rel[k - 1] == '/';)
                        rel[--k] = '\0';
                if (!name_ok(rel) || !strcmp(rel, xdg_dirs[d].dflt))
                        continue;
                for (size_t i = 0; i < n; i++) {
                        size_t p = prefix_len(xdg_dirs[d].dflt, cs->names[i]);
                        if (!p || !cs->names[i][p])
                                continue;
                        int k = snprintf(cs->moved + used, sizeof cs->moved - used, "%s/%s", rel,
                                         cs->names[i] + p + 1);
                        if (k < 0 || (size_t)k >= sizeof cs->moved - used ||
                            cs->n >= RT_CREDSTORE_MAX)
                                return rtn_errx(err, E2BIG,
                                                "too many credential stores below %s=%s",
                                                xdg_dirs[d].var, x);
                        cs->names[cs->n++] = cs->moved + used;
                        used += (size_t)k + 1;
                }
        }
        return 0;
}

int rt_credstores_load(const char *home, struct rt_credstores *ret, struct rtn_error *err) {
        ret->n = 0;
        for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
                ret->names[ret->n++] = builtin[i];
        if (!home)
                return 0;
        int r = load_user(home, ret, err);
        return r < 0 ? r : add_moved(home, ret, err);
}

int rt_credstores_named(const char *p, const char *rel, const struct rt_credstores *cs,
                        struct rtn_error *err) {
        for (size_t i = 0; i < cs->n; i++)
                if (prefix_len(cs->names[i], rel))
                        return rtn_errx(err, EPERM,
                                        "refusing to bind %s: a credential store (%s) never "
                                        "enters a sandbox",
                                        p, cs->names[i]);
        return 0;
}

int rt_credstores_held(int fd, const char *p, const char *rel, const struct rt_credstores *cs,
                       struct rtn_error *err) {
        for (size_t i = 0; i < cs->n; i++) {
                size_t n = prefix_len(rel, cs->names[i]);
                if (!n || !cs->names[i][n])
                        continue;
                const char *rest = cs->names[i] + n + 1;
                /* A symlink on the way leads, inside the sandbox, to its own files, not here. */
                struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                                       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                                  RESOLVE_NO_MAGICLINKS};
                _cleanup_close_ int s = sys_openat2(fd, rest, &how, sizeof how);
                if (s < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
                        continue;
                if (s < 0)
                        return rtn_err(err, errno,
                                       "refusing to bind %s: cannot tell whether it holds the "
                                       "credential store %s",
                                       p, cs->names[i]);
                return rtn_errx(err, EPERM,
                                "refusing to bind %s: it holds %s/%s, a credential store; bind "
                                "the directories you need below it",
                                p, p, rest);
        }
        return 0;
}

static bool same(const char *path, const struct stat *me) {
        struct stat st;
        return lstat(path, &st) == 0 && st.st_dev == me->st_dev && st.st_ino == me->st_ino;
}

/* me is home or a directory above it: -EPERM. */
static int above_home(const struct stat *me, const char *p, const char *home,
                      struct rtn_error *err) {
        struct stat st;
        char path[4200];
        snprintf(path, sizeof path, "%s", home);
        for (bool top = true;; top = false) {
                if (stat(path, &st) == 0 && st.st_dev == me->st_dev && st.st_ino == me->st_ino)
                        return rtn_errx(
                                err, EPERM, "refusing to bind %s: it is %s under another name, %s",
                                p, path,
                                top ? "your home directory" : "which holds your home directory");
                char *slash = strrchr(path, '/');
                if (!slash || !path[1])
                        break;
                slash[slash == path] = '\0'; /* "/x" becomes "/" */
        }
        return 0;
}

/* Another name of what the checks by path refuse (a bind mount of /home elsewhere, a hard
 * link): the home or a directory above it, a store, or a directory on the way to a store that
 * is there (~/.config holding gh/). */
int rt_credstores_alias(int fd, const char *p, const char *home, const struct rt_credstores *cs,
                        struct rtn_error *err) {
        struct stat me, st;
        if (fstat(fd, &me) < 0)
                return rtn_err(err, errno, "stat %s", p);
        char real[PATH_MAX];
        int r = above_home(&me, p, home, err);
        if (r == 0 && realpath(home, real))
                r = above_home(&me, p, real, err);
        if (r < 0)
                return r;
        char path[4200];
        for (size_t i = 0; i < cs->n; i++) {
                snprintf(path, sizeof path, "%s/%s", home, cs->names[i]);
                if (same(path, &me))
                        return rtn_errx(err, EPERM,
                                        "refusing to bind %s: it is %s, a credential store", p,
                                        path);
                if (lstat(path, &st) < 0)
                        continue;
                char up[4200];
                snprintf(up, sizeof up, "%s", path);
                for (char *slash;
                     (slash = strrchr(up, '/')) && (size_t)(slash - up) > strlen(home);) {
                        *slash = '\0';
                        if (same(up, &me))
                                return rtn_errx(err, EPERM,
                                                "refusing to bind %s: it is %s under another "
                                                "name, which holds %s, a credential store",
                                                p, up, path);
                }
        }
        return 0;
}
