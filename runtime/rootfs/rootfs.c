/* `rtn rootfs list|import` and --rootfs resolution (see rootfs.h); bootstrap and the
 * ownership shift are in rootfs_boot.c. The stamp is the cheap change detector: stat(2) of a
 * dozen paths that any package operation or edit of the base touches (the dpkg database, the
 * top directories, apt's sources). ctime cannot be set back by a user, so a write, chmod or
 * chown of those paths is always seen; a change deep in the tree that leaves them alone is
 * not, which is the price of not hashing gigabytes at each start (docs/bootstrap.md). */
#include "runtime/rootfs/rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/syscall.h"
#include "runtime/rootfs/internal.h"
#include "store/store.h"

static const char *const stamp_paths[] = {
        ".",
        "bin",
        "etc",
        "etc/apt",
        "etc/apt/sources.list",
        "etc/apt/sources.list.d",
        "etc/passwd",
        "lib",
        "sbin",
        "usr",
        "usr/bin",
        "usr/lib",
        "usr/sbin",
        "var/lib/dpkg",
        "var/lib/dpkg/status",
};

bool rt_rootfs_name_valid(const char *n) {
        size_t l = strlen(n);
        return l > 0 && l <= 64 && n[0] != '.' && n[0] != '-' &&
               strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == l;
}

int rt_rootfs_base(const char *data_dir, char **ret, struct rtn_error *err) {
        char buf[4096];
        if (!data_dir) {
                int r = store_default_dir(buf, sizeof buf, err);
                if (r < 0)
                        return r;
                data_dir = buf;
        }
        if (asprintf(ret, "%s/rootfs", data_dir) < 0)
                return rtn_err(err, ENOMEM, "rootfs path");
        return 0;
}

int rt_rootfs_stamp(int rootfd, char **ret, struct rtn_error *err) {
        size_t cap = 4096, len = 0;
        char *s = malloc(cap);
        if (!s)
                return rtn_err(err, ENOMEM, "stamp");
        len = (size_t)snprintf(s, cap, "rtn-rootfs-stamp 1\n");
        for (size_t i = 0; i < sizeof stamp_paths / sizeof stamp_paths[0]; i++) {
                struct stat st;
                int n;
                if (fstatat(rootfd, stamp_paths[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
                        n = snprintf(s + len, cap - len, "%s -\n", stamp_paths[i]);
                else
                        n = snprintf(s + len, cap - len, "%s %lu %lu %lld.%09ld %lld.%09ld %lld\n",
                                     stamp_paths[i], (unsigned long)st.st_dev,
                                     (unsigned long)st.st_ino, (long long)st.st_mtim.tv_sec,
                                     st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
                                     st.st_ctim.tv_nsec, (long long)st.st_size);
                if (n < 0 || (size_t)n >= cap - len) {
                        free(s);
                        return rtn_errx(err, E2BIG, "stamp too long");
                }
                len += (size_t)n;
        }
        *ret = s;
        return 0;
}

/* FNV-1a: an identity for the stamp, not a content hash (nothing to defend against: whoever
 * can rewrite the stamp can rewrite the tree). */
static void fingerprint_of(const char *buf, size_t n, char ret[17]) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (size_t i = 0; i < n; i++)
                h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ULL;
        snprintf(ret, 17, "%016llx", (unsigned long long)h);
}

int rt_rootfs_fingerprint(const char *dir, char ret[17], struct rtn_error *err) {
        char buf[4096], path[4096];
        snprintf(path, sizeof path, "%s/stamp", dir);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -errno : rtn_read_full(fd, buf, sizeof buf);
        if (n < 0)
                return rtn_err(err, (int)n, "read %s", path);
        fingerprint_of(buf, (size_t)n, ret);
        return 0;
}

/* "rootfs NAME" for <data>/rootfs/NAME/root, else "rootfs DIR", in printable ASCII. */
static void base_label(const char *root, char *buf, size_t len) {
        size_t l = strlen(root);
        const char *name = NULL;
        if (l > 5 && !strcmp(root + l - 5, "/root")) {
                const char *p = root + l - 5;
                while (p > root && p[-1] != '/')
                        p--;
                if (p - root >= 8 && !strncmp(p - 8, "/rootfs/", 8))
                        name = p;
        }
        int n = name ? snprintf(buf, len, "rootfs %.*s", (int)(root + l - 5 - name), name)
                     : snprintf(buf, len, "rootfs %s", root);
        for (int i = 0; i < n && (size_t)i < len - 1; i++)
                if (buf[i] < 0x20 || buf[i] > 0x7e)
                        buf[i] = '?';
}

int rt_rootfs_identity(const char *rootfs, struct store_base *ret, struct rtn_error *err) {
        struct store_base b = {0};
        if (!rootfs) {
                snprintf(b.id, sizeof b.id, "host");
                snprintf(b.label, sizeof b.label, "the host");
                *ret = b;
                return 0;
        }
        /* The stamp of the tree as it is now: for a NAME it is the recorded one (resolve
         * refuses a changed tree), and a DIR gets the same identity as that NAME. */
        _cleanup_close_ int root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return rtn_err(err, errno, "open rootfs %s", rootfs);
        _cleanup_free_ char *stamp = NULL;
        int r = rt_rootfs_stamp(root, &stamp, err);
        if (r < 0)
                return r;
        char fp[17];
        fingerprint_of(stamp, strlen(stamp), fp);
        snprintf(b.id, sizeof b.id, "rootfs:%s", fp);
        base_label(rootfs, b.label, sizeof b.label);
        *ret = b;
        return 0;
}

int rt_env_stack(struct store *s, const char *env, const char *rootfs, bool keep,
                 struct store_base *ret_base, struct store_stack *ret, struct rtn_error *err) {
        int r = rt_rootfs_identity(rootfs, ret_base, err);
        if (r == 0)
                r = store_base_check(s, env, ret_base, keep, err);
        return r < 0 ? r : store_stack_get(s, env, ret, err);
}

int rt_env_rootfs(const char *data_dir, const char *env, char **ret_path, struct rtn_error *err) {
        struct store *s = NULL;
        int r = store_env_valid(env) < 0 ? 0 : store_open_ro(data_dir, &s, err);
        if (r < 0)
                return r;
        r = rt_env_rootfs_in(s, data_dir, env, ret_path, err);
        if (s)
                store_close(s);
        return r;
}

int rt_env_rootfs_in(struct store *s, const char *data_dir, const char *env, char **ret_path,
                     struct rtn_error *err) {
        struct store_base b, now;
        struct rtn_error none = {0};
        int r = s && store_env_valid(env) == 0 ? store_base_get(s, env, &b, &none) : -ENOENT;
        if (r < 0 || !strcmp(b.id, "host")) { /* a bad record is the base check's to report */
                *ret_path = NULL;
                return 0;
        }
        const char *what = strncmp(b.label, "rootfs ", 7) ? "" : b.label + 7;
        _cleanup_free_ char *path = NULL;
        struct rtn_error why = {0};
        if (!*what || rt_rootfs_resolve(data_dir, what, &path, &why) < 0)
                return rtn_errx(err, ENOENT,
                                "environment '%s' was made on %s [%s], which cannot be had now "
                                "(%s): give --rootfs, or use another environment (--env)",
                                env, b.label, b.id, why.msg[0] ? why.msg : "no name in the record");
        if ((r = rt_rootfs_identity(path, &now, err)) < 0)
                return r;
        if (strcmp(now.id, b.id) != 0)
                return rtn_errx(err, EMEDIUMTYPE,
                                "environment '%s' was made on %s [%s], which is %s [%s] now: "
                                "give --rootfs, or use another environment (--env)",
                                env, b.label, b.id, now.label, now.id);
        *ret_path = path;
        path = NULL;
        return 0;
}

/* First differing line of two stamps, for the message. */
static void first_diff(const char *a, const char *b, char *out, size_t len) {
        while (*a && *b) {
                size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
                if (la != lb || memcmp(a, b, la) != 0) {
                        snprintf(out, len, "%.*s", (int)strcspn(a, " \n"), a);
                        return;
                }
                a += la + (a[la] == '\n');
                b += lb + (b[lb] == '\n');
        }
        snprintf(out, len, "?");
}

static int check_stamp(const char *dir, const char *name, struct rtn_error *err) {
        char path[4096], want[4096], what[256];
        snprintf(path, sizeof path, "%s/stamp", dir);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -errno : rtn_read_full(fd, want, sizeof want - 1);
        if (n < 0)
                return rtn_err(err, (int)n, "rootfs %s: read %s", name, path);
        want[n] = '\0';
        snprintf(path, sizeof path, "%s/root", dir);
        _cleanup_close_ int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return rtn_err(err, errno, "rootfs %s: open %s", name, path);
        _cleanup_free_ char *now = NULL;
        int r = rt_rootfs_stamp(root, &now, err);
        if (r < 0)
                return r;
        if (strcmp(now, want) != 0) {
                first_diff(want, now, what, sizeof what);
                return rtn_errx(err, ESTALE,
                                "rootfs %s changed since it was made (%s/root/%s); "
                                "its commits may no longer fit it: bootstrap or import it "
                                "again under a new name",
                                name, dir, what);
        }
        return 0;
}

int rt_rootfs_resolve(const char *data_dir, const char *arg, char **ret_path,
                      struct rtn_error *err) {
        if (!arg || !strcmp(arg, "host")) {
                *ret_path = NULL;
                return 0;
        }
        if (strchr(arg, '/') || !strcmp(arg, ".") || !strcmp(arg, "..")) {
                char *p = realpath(arg, NULL);
                if (!p)
                        return rtn_err(err, errno, "--rootfs %s", arg);
                *ret_path = p;
                return 0;
        }
        if (!rt_rootfs_name_valid(arg))
                return rtn_errx(err, EINVAL, "invalid rootfs name '%s'", arg);
        _cleanup_free_ char *base = NULL, *dir = NULL;
        int r = rt_rootfs_base(data_dir, &base, err);
        if (r < 0)
                return r;
        if (asprintf(&dir, "%s/%s", base, arg) < 0)
                return rtn_err(err, ENOMEM, "rootfs path");
        if (access(dir, F_OK) < 0)
                return rtn_errx(err, ENOENT,
                                "no rootfs named '%s' in %s (rtn rootfs list; "
                                "rtn rootfs bootstrap %s)",
                                arg, base, arg);
        if ((r = check_stamp(dir, arg, err)) < 0)
                return r;
        if (asprintf(ret_path, "%s/root", dir) < 0)
                return rtn_err(err, ENOMEM, "rootfs path");
        return 0;
}

void rt_strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

static int add_host(char ***v, size_t *n, const char *uri) {
        const char *p = strstr(uri, "://");
        if (!p || (strncmp(uri, "http", 4) != 0))
                return 0; /* file:, cdrom:, mirror+file: ... need no gate */
        p += 3;
        size_t l = strcspn(p, "/:]\"' \t\n");
        if (p[0] == '[' || l == 0 || l > 253)
                return 0;
        if (strchr(p, '@') && strchr(p, '@') < p + strcspn(p, "/"))
                return 0;
        for (size_t i = 0; i < *n; i++)
                if (strlen((*v)[i]) == l && !strncasecmp((*v)[i], p, l))
                        return 0;
        char **nv = realloc(*v, (*n + 2) * sizeof *nv);
        if (!nv)
                return -ENOMEM;
        *v = nv;
        if (!(nv[*n] = strndup(p, l)))
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}

int rt_rootfs_scan_sources(FILE *f, char ***v, size_t *n) {
        char line[4096];
        int r = 0;
        while (r == 0 && ftell(f) < RT_SOURCES_MAX && fgets(line, sizeof line, f)) {
                char *s = line + strspn(line, " \t");
                if (*s == '#')
                        continue;
                for (char *w = strstr(s, "http"); w && r == 0; w = strstr(w + 4, "http"))
                        if (w == s || strchr(" \t[=", w[-1]))
                                r = add_host(v, n, w);
        }
        return r;
}

/* The base's files are read, not trusted: opened without blocking (a FIFO would hang the
 * open) and used only when regular (a device may never end), and at most RT_SOURCES_MAX
 * bytes of each are scanned. */
static int scan_file(int dirfd, const char *name, char ***v, size_t *n) {
        _cleanup_close_ int fd =
                openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        _cleanup_fclose_ FILE *f = fdopen(TAKE_FD(fd), "re");
        return f ? rt_rootfs_scan_sources(f, v, n) : 0;
}

int rt_rootfs_mirrors(const char *rootfs, char ***ret_hosts, size_t *ret_n) {
        char **v = calloc(1, sizeof *v);
        size_t n = 0;
        if (!v)
                return -ENOMEM;
        /* Resolved inside the rootfs, as apt in it would: a symlink there never leads out. */
        _cleanup_close_ int root = open(rootfs ? rootfs : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int apt = root < 0 ? -1 : sys_openat2(root, "etc/apt", &how, sizeof how);
        int r = apt < 0 ? 0 : scan_file(apt, "sources.list", &v, &n);
        _cleanup_close_ int d = apt < 0 ? -1
                                        : openat(apt, "sources.list.d",
                                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *dir = d < 0 ? NULL : fdopendir(TAKE_FD(d));
        struct dirent *de;
        while (r == 0 && dir && (de = readdir(dir))) {
                size_t l = strlen(de->d_name);
                if ((l > 5 && !strcmp(de->d_name + l - 5, ".list")) ||
                    (l > 8 && !strcmp(de->d_name + l - 8, ".sources")))
                        r = scan_file(dirfd(dir), de->d_name, &v, &n);
        }
        if (dir)
                closedir(dir);
        if (r < 0) {
                rt_strv_free(v);
                return r;
        }
        *ret_hosts = v;
        *ret_n = n;
        return 0;
}
