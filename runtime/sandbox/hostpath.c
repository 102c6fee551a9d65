/* Which host directories may be bound into a sandbox (docs/architecture.md, "Host directory
 * binds"): one policy for --workspace, --bind and bind_host_dir, with the same messages.
 * User data only: a non-hidden directory below the caller's $HOME, or one the user named on
 * the command line (--workspace, --bind) and what lies below it. Refused whatever asks,
 * root included: `/`, system directories, $HOME itself and any directory holding it, every
 * hidden subtree of $HOME (.ssh, .config, .local ...), other users' homes and any directory
 * holding one, rtn's data dir and any directory holding it, and any path whose resolution
 * crosses a symlink. The string is only the question: the answer is an O_PATH fd opened with
 * openat2(RESOLVE_NO_SYMLINKS) and the directory's identity, which the sandbox child checks
 * again when it opens the source for the mount (runtime/sandbox/sandbox.c), so no rename or symlink
 * swap between the check and the mount can redirect it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/sandbox_dirs.h"
#include "common/syscall.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/credstore.h"
#include "runtime/sandbox/rundir.h"

static const char *const system_dirs[] = {RTN_HOST_SYSTEM_DIRS(RTN_DIR_ABS)};
static const char *const own_paths[] = {RTN_SANDBOX_OWN_PATHS(RTN_DIR_ABS)};

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

/* realpath(p), or "" when it cannot be had: a home or data dir reached through a symlink is
 * compared by both names, or `--workspace .` from a symlinked $HOME would not be $HOME. */
static void real_of(const char *p, char out[PATH_MAX]) {
        out[0] = '\0';
        if (p && !realpath(p, out))
                out[0] = '\0';
}

/* Another login user's home (root's, or uid >= 1000 but nobody's) from /etc/passwd: p is in
 * it or holds it. /home and /root are refused by name above, so this adds homes elsewhere
 * (/srv/alice). System users' homes (/var/lib/..., /nonexistent) are left out: they are
 * system dirs or nothing, and a system user whose home were /tmp must not close /tmp. Read
 * with fgetpwent, not NSS: the local file is what a user's home on this machine is. */
static int check_passwd_homes(const char *p, const char *home, const char *home_real,
                              struct rtn_error *err) {
        _cleanup_fclose_ FILE *f = fopen("/etc/passwd", "re");
        struct passwd *pw;
        while (f && (pw = fgetpwent(f))) {
                const char *h = pw->pw_dir;
                if ((pw->pw_uid != 0 && (pw->pw_uid < 1000 || pw->pw_uid == 65534)) ||
                    pw->pw_uid == geteuid() || !h || h[0] != '/' || !strcmp(h, "/") ||
                    (home && !strcmp(h, home)) || (home_real[0] && !strcmp(h, home_real)))
                        continue;
                if (is_under(p, h))
                        return rtn_errx(err, EPERM, "refusing to bind %s: another user's home (%s)",
                                        p, h);
                if (is_under(h, p))
                        return rtn_errx(err, EPERM,
                                        "refusing to bind %s: it holds another user's home %s", p,
                                        h);
        }
        return 0;
}

/* p below home without "home/". */
static const char *below(const char *p, const char *home) {
        size_t n = strlen(home);
        while (n > 1 && home[n - 1] == '/')
                n--;
        return p[n] ? p + n + 1 : p + n;
}

/* The home itself is refused; a hidden directory below it is the user's to bind read-only
 * (*ret_hidden), unless it is a credential store or below one, and never the agent's. */
static int check_home(const char *p, const char *home, const struct rt_hostpath_policy *pol,
                      const struct rt_credstores *cs, bool *ret_hidden, struct rtn_error *err) {
        if (!strcmp(p, home))
                return rtn_errx(err, EPERM,
                                "refusing to bind %s: it is your home directory, whose hidden "
                                "files hold your credentials and settings; pass the project's "
                                "directory instead",
                                p);
        if (!is_under(p, home) || !hidden_below(p, home))
                return 0;
        if (pol->agent)
                return rtn_errx(err, EPERM,
                                "refusing to bind %s: hidden directories of your "
                                "home (.ssh, .config, ...) hold credentials and settings",
                                p);
        int r = rt_credstores_named(p, below(p, home), cs, err);
        if (r < 0)
                return r;
        *ret_hidden = true;
        return 0;
}

static int check_holds_home(const char *p, const char *home, struct rtn_error *err) {
        if (is_under(home, p))
                return rtn_errx(err, EPERM,
                                "refusing to bind %s: it holds your home directory %s; pass the "
                                "project's directory instead",
                                p, home);
        return 0;
}

static int check_data_dir(const char *p, const char *data_dir, struct rtn_error *err) {
        char real[PATH_MAX];
        real_of(data_dir, real);
        const char *names[] = {data_dir, real[0] ? real : NULL};
        for (size_t i = 0; i < 2; i++)
                if (names[i] && names[i][0] == '/' &&
                    (is_under(p, names[i]) || is_under(names[i], p)))
                        return rtn_errx(err, EPERM,
                                        "refusing to bind %s: it holds rtn's data dir %s", p,
                                        names[i]);
        return 0;
}

/* p resolved as far as it exists, the rest of it appended by name: the registry's path may
 * not exist yet, and its name may hold a symlink or a "//" ($XDG_RUNTIME_DIR as the user set
 * it). "" when nothing of it resolves. */
static void real_of_existing(const char *p, char out[PATH_MAX]) {
        char head[PATH_MAX];
        out[0] = '\0';
        if (p[0] != '/' || snprintf(head, sizeof head, "%s", p) >= (int)sizeof head)
                return;
        char *cut = head + strlen(head); /* what is past it is appended by name */
        while (!realpath(head, out)) {
                char *slash = strrchr(head, '/');
                if (!slash || slash == head) {
                        out[0] = '\0';
                        return;
                }
                *slash = '\0';
                cut = slash;
        }
        size_t l = strcmp(out, "/") ? strlen(out) : 0;
        for (const char *c = p + (cut - head); *c;) { /* its components, one '/' each */
                while (*c == '/')
                        c++;
                size_t k = strcspn(c, "/");
                if (!k)
                        break;
                if (l + 1 + k >= PATH_MAX) {
                        out[0] = '\0';
                        return;
                }
                out[l++] = '/';
                memcpy(out + l, c, k);
                out[l += k] = '\0';
                c += k;
        }
        if (!l)
                snprintf(out, PATH_MAX, "/");
}

/* Whether the directory st is path or one of path's existing ancestors but /, by identity
 * (device and inode): a bind mount of it elsewhere, which no resolving of names shows. */
static bool id_at_or_above(const char *path, const struct stat *st) {
        char cur[PATH_MAX];
        if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
                return false;
        for (char *slash; cur[0] == '/' && cur[1];) {
                struct stat a;
                if (stat(cur, &a) == 0 && a.st_dev == st->st_dev && a.st_ino == st->st_ino)
                        return true;
                if (!(slash = strrchr(cur, '/')) || slash == cur)
                        break;
                *slash = '\0';
        }
        return false;
}

/* The registry of running sandboxes (runtime/session/registry.h) is what `rtn ps` shows and
 * where `rtn enter` finds a sandbox's socket: a sandbox that could write it could list what
 * is not running, remove another's socket or plant one of its own. Both places it may be
 * ($XDG_RUNTIME_DIR's and the one used without it), each by name, resolved, and by identity
 * (p, or the registry, a directory the other holds under another mount). */
static int check_registry(const char *p, struct rtn_error *err) {
        char regs[2][600], real[PATH_MAX];
        struct stat ps, rs;
        bool p_ok = stat(p, &ps) == 0;
        rt_registry_path(regs[0], sizeof regs[0]);
        rt_registry_fallback_path(regs[1], sizeof regs[1]);
        for (size_t i = 0; i < 4; i++) {
                const char *reg = regs[i / 2];
                if (i % 2) {
                        real_of_existing(regs[i / 2], real);
                        reg = real;
                }
                if (reg[0] != '/')
                        continue;
                if (is_under(p, reg) || is_under(reg, p) ||
                    (i % 2 && p_ok &&
                     (id_at_or_above(reg, &ps) || (stat(reg, &rs) == 0 && id_at_or_above(p, &rs)))))
                        return rtn_errx(err, EPERM,
                                        "refusing to bind %s: it holds rtn's registry of running "
                                        "sandboxes %s",
                                        p, regs[i / 2]);
        }
        return 0;
}

static bool below_home(const char *p, const char *home, const char *home_real) {
        return (home && is_under(p, home)) || (home_real[0] && is_under(p, home_real));
}

static int check_policy(const char *p, const struct rt_hostpath_policy *pol,
                        const struct rt_credstores *cs, bool *ret_hidden, struct rtn_error *err) {
        if (!strcmp(p, "/"))
                return rtn_errx(err, EPERM, "refusing to bind /: it holds the whole system");
        for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
                if (is_under(p, system_dirs[i]))
                        return rtn_errx(err, EPERM, "refusing to bind %s: a system directory", p);
        const char *home =
                pol->home && pol->home[0] == '/' && strcmp(pol->home, "/") ? pol->home : NULL;
        char home_real[PATH_MAX];
        real_of(home, home_real);
        if (!strcmp(home_real, "/"))
                home_real[0] = '\0';
        int r;
        if ((home && (r = check_home(p, home, pol, cs, ret_hidden, err)) < 0) ||
            (home_real[0] && (r = check_home(p, home_real, pol, cs, ret_hidden, err)) < 0))
                return r;
        bool mine = below_home(p, home, home_real);
        if ((is_under(p, "/home") && strcmp(p, "/home") && !mine) ||
            (is_under(p, "/root") && !mine) || !strcmp(p, "/home"))
                return rtn_errx(err, EPERM, "refusing to bind %s: another user's home", p);
        if ((r = check_passwd_homes(p, home, home_real, err)) < 0 ||
            (r = check_data_dir(p, pol->data_dir, err)) < 0 || (r = check_registry(p, err)) < 0 ||
            (home && (r = check_holds_home(p, home, err)) < 0) ||
            (home_real[0] && (r = check_holds_home(p, home_real, err)) < 0))
                return r;
        if (!pol->agent)
                return 0;
        for (size_t i = 0; i < pol->nroots; i++)
                if (pol->roots[i] && is_under(p, pol->roots[i]) && !hidden_below(p, pol->roots[i]))
                        return 0;
        if (mine)
                return 0;
        return rtn_errx(err, EPERM,
                        "refusing to bind %s: only directories below your home, or "
                        "ones named with --bind/--workspace, may be bound",
                        p);
}

/* What the opened fd holds, or is under another name: a credential store of home. */
static int check_stores(int fd, const char *p, const struct rt_hostpath_policy *pol,
                        const struct rt_credstores *cs, bool hidden, struct rtn_error *err) {
        const char *home =
                pol->home && pol->home[0] == '/' && strcmp(pol->home, "/") ? pol->home : NULL;
        if (!home)
                return 0;
        char home_real[PATH_MAX];
        real_of(home, home_real);
        const char *names[] = {home, home_real[0] ? home_real : NULL};
        int r;
        for (size_t i = 0; i < 2; i++)
                if (hidden && names[i] && is_under(p, names[i]) &&
                    (r = rt_credstores_held(fd, p, below(p, names[i]), cs, err)) < 0)
                        return r;
        return rt_credstores_alias(fd, p, home, cs, err);
}

int rt_hostpath_check(const char *path, const struct rt_hostpath_policy *pol,
                      struct rt_hostpath *ret, struct rtn_error *err) {
        _cleanup_free_ struct rt_credstores *cs = malloc(sizeof *cs);
        if (!cs)
                return rtn_err(err, ENOMEM, "check %s", path);
        bool hidden = false;
        int r = check_lexical(path, err);
        if (r < 0 ||
            (r = rt_credstores_load(pol->home && pol->home[0] == '/' ? pol->home : NULL, cs, err)) <
                    0 ||
            (r = check_policy(path, pol, cs, &hidden, err)) < 0)
                return r;
        struct open_how how = {.flags = O_PATH | O_CLOEXEC,
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
        /* A device, FIFO or socket bound in would reach the host's kernel objects. */
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return rtn_errx(err, EINVAL,
                                "refusing to bind %s: neither a directory nor a regular file",
                                path);
        if ((r = check_stores(fd, path, pol, cs, hidden, err)) < 0)
                return r;
        ret->file = S_ISREG(st.st_mode);
        ret->hidden = hidden;
        ret->dev = st.st_dev;
        ret->ino = st.st_ino;
        ret->fd = TAKE_FD(fd);
        return 0;
}

/* The user's mount point: anywhere but on, below or above what rtn makes the sandbox. */
static int check_own_paths(const char *dst, struct rtn_error *err) {
        if (!strcmp(dst, "/workspace"))
                return rtn_errx(err, EPERM,
                                "mount point /workspace: the workspace itself (name it with "
                                "--workspace)");
        for (size_t i = 0; i < sizeof own_paths / sizeof own_paths[0]; i++) {
                if (is_under(dst, own_paths[i]))
                        return rtn_errx(err, EPERM,
                                        "mount point %s: %s is the sandbox's own (rtn makes it)",
                                        dst, own_paths[i]);
                if (is_under(own_paths[i], dst))
                        return rtn_errx(err, EPERM,
                                        "mount point %s: it holds %s, the sandbox's own (rtn "
                                        "makes it)",
                                        dst, own_paths[i]);
        }
        return 0;
}

int rt_mount_point_check(const char *dst, bool agent, struct rtn_error *err) {
        if (dst[0] != '/' || strlen(dst) > 1024)
                return rtn_errx(err, EINVAL, "mount point must be an absolute path");
        for (const char *s = dst; *s; s++)
                if (*s == ',' || (unsigned char)*s < 0x20 ||
                    (s[0] == '/' &&
                     (s[1] == '/' || (s[1] == '\0' && s != dst) ||
                      (s[1] == '.' && (s[2] == '/' || s[2] == '\0' ||
                                       (s[2] == '.' && (s[3] == '/' || s[3] == '\0')))))))
                        return rtn_errx(err, EINVAL,
                                        "mount point must be canonical, without ',' "
                                        "or control characters: %s",
                                        dst);
        if (!agent)
                return check_own_paths(dst, err);
        bool ws = is_under(dst, "/workspace") && strcmp(dst, "/workspace");
        if (!ws && !is_under(dst, "/mnt"))
                return rtn_errx(err, EPERM,
                                "mount point %s: only below /workspace or under "
                                "/mnt",
                                dst);
        return 0;
}

int rt_bind_mode(struct rt_bind *b, const struct rt_hostpath *hp, struct rtn_error *err) {
        b->file = hp->file;
        /* A toolchain's hidden directory of $HOME is read, not written: what it holds is
         * what the host's shells and editors run (docs/architecture.md). */
        if (hp->hidden && b->rw && b->mode_given)
                return rtn_errx(err, EPERM,
                                "refusing to bind %s read-write: hidden directories of your "
                                "home are bound read-only",
                                b->src);
        if (hp->hidden)
                b->rw = false;
        if (!hp->file)
                return 0;
        /* The agent owns what the caller owns: a writable file bind would let it chmod the
         * host file, and nothing in a sandbox could stop that (Landlock has no right for
         * it). Read-only, the mount refuses every change (EROFS) and, a mount point, it
         * cannot be renamed over or removed (EBUSY). */
        if (b->rw && b->mode_given)
                return rtn_errx(err, EPERM,
                                "refusing to bind the file %s read-write: a file is bound "
                                "read-only (bind its directory to let the sandbox write it)",
                                b->src);
        b->rw = false;
        return 0;
}

int rt_bind_path_clean(char *path, size_t cap, bool rel_ok, const char *what,
                       struct rtn_error *err) {
        char buf[4096], cwd[4096];
        if (!path[0])
                return rtn_errx(err, EINVAL, "%s is empty", what);
        if (path[0] != '/') {
                if (!rel_ok)
                        return rtn_errx(err, EINVAL, "%s must be an absolute path: %s", what, path);
                if (!getcwd(cwd, sizeof cwd))
                        return rtn_err(err, errno, "%s %s: the current directory", what, path);
        } else {
                cwd[0] = '\0';
        }
        if ((size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= sizeof buf)
                return rtn_errx(err, ENAMETOOLONG, "%s too long", what);
        char out[4096];
        size_t o = 0;
        for (char *c = buf, *next; c; c = next) {
                next = strchr(c, '/');
                if (next)
                        *next++ = '\0';
                if (!*c || !strcmp(c, "."))
                        continue;
                if (!strcmp(c, ".."))
                        return rtn_errx(
                                err, EINVAL,
                                "%s %s: not canonical, '..' is not taken (name the directory "
                                "without it)",
                                what, path);
                size_t n = strlen(c);
                if (o + n + 2 > cap || o + n + 2 > sizeof out)
                        return rtn_errx(err, ENAMETOOLONG, "%s too long", what);
                out[o++] = '/';
                memcpy(out + o, c, n);
                o += n;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = '\0';
        memcpy(path, out, o + 1);
        return 0;
}

const char *rt_hostpath_home(void) {
        const char *h = getenv("HOME");
        if (h && h[0] == '/')
                return h;
        struct passwd *pw = getpwuid(geteuid());
        return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

int rt_binds_check(struct rt_spec *spec, const char *data_dir, struct rtn_error *err) {
        struct rt_hostpath_policy pol = {.home = rt_hostpath_home(), .data_dir = data_dir};
        struct rt_hostpath hp;
        int r;
        if (spec->workspace) {
                if ((r = rt_hostpath_check(spec->workspace, &pol, &hp, err)) < 0)
                        return rtn_err_wrap(err, "--workspace %s", spec->workspace);
                close(hp.fd);
                if (hp.file)
                        return rtn_errx(err, ENOTDIR, "--workspace %s: not a directory",
                                        spec->workspace);
                if (hp.hidden)
                        return rtn_errx(err, EPERM,
                                        "--workspace %s: refusing to bind %s: hidden directories "
                                        "of your home (.ssh, .config, ...) hold credentials and "
                                        "settings; a workspace is written, and they are bound "
                                        "read-only (--bind SRC:DST:ro)",
                                        spec->workspace, spec->workspace);
                spec->workspace_dev = hp.dev;
                spec->workspace_ino = hp.ino;
        }
        for (size_t i = 0; i < spec->nbinds; i++) {
                struct rt_bind *b = &spec->binds[i];
                if ((r = rt_mount_point_check(b->dst, false, err)) < 0)
                        return rtn_err_wrap(err, "--bind %s", b->src);
                if ((r = rt_hostpath_check(b->src, &pol, &hp, err)) < 0)
                        return rtn_err_wrap(err, "--bind %s", b->src);
                close(hp.fd);
                if ((r = rt_bind_mode(b, &hp, err)) < 0)
                        return rtn_err_wrap(err, "--bind %s", b->src);
                b->dev = hp.dev;
                b->ino = hp.ino;
        }
        return 0;
}
