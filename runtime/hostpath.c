/* Which host directories may be bound into a sandbox (docs/architecture.md, "Host directory
 * binds"). User data only: a non-hidden directory below the caller's $HOME, or one the user
 * named on the command line (--workspace, --bind) and what lies below it. Refused whatever
 * asks: `/`, system directories, $HOME itself, every hidden subtree of $HOME (.ssh, .config,
 * .local ...), other users' homes, rtn's data dir (and any directory holding it), and any
 * path whose resolution crosses a symlink. The string is only the question: the answer is an
 * O_PATH fd opened with openat2(RESOLVE_NO_SYMLINKS) and the directory's identity, which the
 * sandbox child checks again when it opens the source for the mount (runtime/sandbox.c), so
 * no rename or symlink swap between the check and the mount can redirect it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "runtime/runtime.h"

static const char *const system_dirs[] = {"/bin",   "/boot",  "/dev",    "/etc",  "/lib",
                                          "/lib32", "/lib64", "/libx32", "/proc", "/run",
                                          "/sbin",  "/sys",   "/usr",    "/var",  "/snap"};

/* path equals dir or lies below it (both without trailing slashes). */
static bool is_under(const char *path, const char *dir) {
        size_t n = strlen(dir);
        while (n > 1 && dir[n - 1] == '/')
                n--;
        if (n == 1 && dir[0] == '/')
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A component below prefix (a directory path is_under) that starts with '.'. */
static bool hidden_below(const char *path, const char *prefix) {
        size_t n = strlen(prefix);
        while (n > 1 && prefix[n - 1] == '/')
                n--;
        for (const char *p = path + n; *p; p++)
                if (p[0] == '/' && p[1] == '.')
                        return true;
        return false;
}

/* Absolute, no empty, "." or ".." components, no trailing slash but for "/" itself. */
static int check_lexical(const char *p, struct rtn_error *err) {
        if (p[0] != '/')
                return rtn_errx(err, EINVAL, "host path must be absolute: %s", p);
        if (strlen(p) >= 4096)
                return rtn_errx(err, ENAMETOOLONG, "host path too long");
        for (const char *s = p; *s; s++) {
                if (s[0] != '/')
                        continue;
                if (s[1] == '/' || (s[1] == '\0' && s != p) ||
                    (s[1] == '.' && (s[2] == '/' || s[2] == '\0')) ||
                    (s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == '\0')))
                        return rtn_errx(err, EINVAL,
                                        "host path must be canonical (no '.', '..', "
                                        "'//' or trailing '/'): %s",
                                        p);
        }
        return 0;
}

static int check_policy(const char *p, const struct rt_hostpath_policy *pol,
                        struct rtn_error *err) {
        if (!strcmp(p, "/"))
                return rtn_errx(err, EPERM, "refusing to bind /");
        for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
                if (is_under(p, system_dirs[i]))
                        return rtn_errx(err, EPERM, "refusing to bind %s: a system directory", p);
        const char *home =
                pol->home && pol->home[0] == '/' && strcmp(pol->home, "/") ? pol->home : NULL;
        if (home && !strcmp(p, home))
                return rtn_errx(err, EPERM,
                                "refusing to bind your home directory itself; bind "
                                "a project directory below it");
        if (home && is_under(p, home) && hidden_below(p, home))
                return rtn_errx(err, EPERM,
                                "refusing to bind %s: hidden directories of your "
                                "home (.ssh, .config, ...) hold credentials and settings",
                                p);
        if ((is_under(p, "/home") && strcmp(p, "/home") && !(home && is_under(p, home))) ||
            (is_under(p, "/root") && !(home && is_under(p, home))) || !strcmp(p, "/home"))
                return rtn_errx(err, EPERM, "refusing to bind %s: another user's home", p);
        if (pol->data_dir && (is_under(p, pol->data_dir) || is_under(pol->data_dir, p)))
                return rtn_errx(err, EPERM, "refusing to bind %s: it holds rtn's data dir %s", p,
                                pol->data_dir);
        if (!pol->agent)
                return 0;
        for (size_t i = 0; i < pol->nroots; i++)
                if (pol->roots[i] && is_under(p, pol->roots[i]) && !hidden_below(p, pol->roots[i]))
                        return 0;
        if (home && is_under(p, home))
                return 0;
        return rtn_errx(err, EPERM,
                        "refusing to bind %s: only directories below your home, or "
                        "ones named with --bind/--workspace, may be bound",
                        p);
}

int rt_hostpath_check(const char *path, const struct rt_hostpath_policy *pol,
                      struct rt_hostpath *ret, struct rtn_error *err) {
        int r = check_lexical(path, err);
        if (r < 0 || (r = check_policy(path, pol, err)) < 0)
                return r;
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd = sys_openat2(AT_FDCWD, path, &how, sizeof how);
        if (fd < 0 && errno == ELOOP)
                return rtn_errx(err, ELOOP,
                                "refusing to bind %s: its path crosses a symlink "
                                "(name the real directory)",
                                path);
        if (fd < 0)
                return rtn_err(err, errno, "open %s", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return rtn_err(err, errno, "stat %s", path);
        ret->dev = st.st_dev;
        ret->ino = st.st_ino;
        ret->fd = TAKE_FD(fd);
        return 0;
}

int rt_mount_point_check(const char *dst, struct rtn_error *err) {
        if (dst[0] != '/' || strlen(dst) > 1024)
                return rtn_errx(err, EINVAL, "mount point must be an absolute path");
        for (const char *s = dst; *s; s++)
                if (*s == ',' || *s == ':' || (unsigned char)*s < 0x20 ||
                    (s[0] == '/' &&
                     (s[1] == '/' || (s[1] == '\0' && s != dst) ||
                      (s[1] == '.' && (s[2] == '/' || s[2] == '\0' ||
                                       (s[2] == '.' && (s[3] == '/' || s[3] == '\0')))))))
                        return rtn_errx(err, EINVAL,
                                        "mount point must be canonical, without ',' "
                                        "':' or control characters: %s",
                                        dst);
        bool ws = is_under(dst, "/workspace") && strcmp(dst, "/workspace");
        if (!ws && !is_under(dst, "/mnt"))
                return rtn_errx(err, EPERM,
                                "mount point %s: only below /workspace or under "
                                "/mnt",
                                dst);
        return 0;
}

int rt_binds_check(struct rt_spec *spec, const char *data_dir, struct rtn_error *err) {
        struct rt_hostpath_policy pol = {.home = getenv("HOME"), .data_dir = data_dir};
        for (size_t i = 0; i < spec->nbinds; i++) {
                struct rt_hostpath hp;
                int r = rt_hostpath_check(spec->binds[i].src, &pol, &hp, err);
                if (r < 0)
                        return rtn_err_wrap(err, "--bind %s", spec->binds[i].src);
                close(hp.fd);
                spec->binds[i].dev = hp.dev;
                spec->binds[i].ino = hp.ino;
        }
        return 0;
}
