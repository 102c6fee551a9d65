/* Making rootfses (rt_rootfs_make, for `rtn rootfs bootstrap|import`, cli/rootfs.c):
 * bootstrapped (mmdebstrap, else debootstrap) or imported (a tar, optionally zstd). The tree must
 * end up owned by the host ids the sandbox maps to root and the system users inside
 * (runtime/sandbox/idmap.c):
 * - rtn as root: built as real root, then shifted by the subordinate base (uid u -> sub+u),
 *   restoring the setuid/setgid bits and file capabilities that chown(2) clears, the latter
 *   rewritten as v3 capabilities whose root is sub (capabilities(7), "Namespaced file
 *   capabilities"), or the kernel would ignore them inside;
 * - unprivileged with a subordinate range: built inside a user namespace mapping 0..65535 to
 *   that range (mmdebstrap --mode=unshare; `unshare --map-auto` for tar), which is how the
 *   sandbox maps everything but its agent uid 1000;
 * - unprivileged without one (single mapping): root inside is the caller, so the caller owns
 *   the tree; ownership recorded in a tar is dropped. mmdebstrap cannot bootstrap here.
 * Work happens in <data>/rootfs/.NAME.tmp and is renamed into place when complete. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/log.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/rootfs/internal.h"
#include "runtime/runtime.h"
#include "runtime/session/session.h"
#include "store/store.h"

#define VFS_CAP_REVISION_2 0x02000000
#define VFS_CAP_REVISION_3 0x03000000
#define XATTR_CAPS "security.capability"

/* Tells the caller (and the debug log) that a step begins. */
static void phase(const struct rt_rootfs_make *a, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void phase(const struct rt_rootfs_make *a, const char *fmt, ...) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        log_debug("rootfs %s: %s", a->name, what);
        if (a->phase)
                a->phase(a->phase_ud, what);
}

/* Runs argv, its output going to our stderr, stdin from in_fd (-1: ours) and dir_fd (-1:
 * none) as fd 3; returns the exit code or -errno. */
static int run(char *const argv[], int in_fd, int dir_fd, struct rtn_error *err) {
        pid_t pid = fork();
        if (pid < 0)
                return rtn_err(err, errno, "fork");
        if (pid == 0) {
                dup2(STDERR_FILENO, STDOUT_FILENO);
                if (in_fd >= 0)
                        dup2(in_fd, STDIN_FILENO);
                if (dir_fd >= 0)
                        dup2(dir_fd, 3); /* clears O_CLOEXEC on the copy */
                execvp(argv[0], argv);
                _exit(127);
        }
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return rtn_err(err, errno, "wait for %s", argv[0]);
        return rt_exit_code(st);
}

static bool have(const char *prog) {
        char path[256];
        const char *dirs[] = {"/usr/bin", "/usr/sbin", "/bin", "/sbin"};
        for (size_t i = 0; i < 4; i++) {
                snprintf(path, sizeof path, "%s/%s", dirs[i], prog);
                if (access(path, X_OK) == 0)
                        return true;
        }
        return false;
}

/* File capabilities after a shift: a v3 header whose rootid is the new root. */
static void fix_caps(int fd, const char *buf, ssize_t n, uint32_t root) {
        uint32_t v[6] = {0};
        if (n < 20 || n > (ssize_t)sizeof v)
                return;
        memcpy(v, buf, (size_t)n);
        v[0] = (v[0] & ~0xff000000u) | VFS_CAP_REVISION_3;
        v[5] = root;
        (void)fsetxattr(fd, XATTR_CAPS, v, sizeof v, 0);
}

static int shift_entry(int dirfd, const char *name, const struct stat *st, uint32_t su, uint32_t sg,
                       struct rtn_error *err) {
        /* A hard link of a file already shifted under another name. */
        if (!S_ISDIR(st->st_mode) && st->st_nlink > 1 && st->st_uid >= su &&
            st->st_uid - su < 65536 && st->st_gid >= sg && st->st_gid - sg < 65536)
                return 0;
        if (st->st_uid >= 65536 || st->st_gid >= 65536)
                return rtn_errx(err, ERANGE, "%s: owner %u:%u outside 0..65535", name, st->st_uid,
                                st->st_gid);
        char caps[64];
        ssize_t ncaps = -1;
        _cleanup_close_ int fd = -1;
        if (S_ISREG(st->st_mode)) {
                /* The tree is what the bootstrap's packages wrote: never block on a FIFO. */
                struct stat fst;
                fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd >= 0 && (fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode)))
                        fd = rtn_safe_close(fd);
                if (fd >= 0)
                        ncaps = fgetxattr(fd, XATTR_CAPS, caps, sizeof caps);
        }
        if (fchownat(dirfd, name, su + st->st_uid, sg + st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return rtn_err(err, errno, "chown %s", name);
        if (fd >= 0 && (st->st_mode & (S_ISUID | S_ISGID)) && fchmod(fd, st->st_mode & 07777) < 0)
                return rtn_err(err, errno, "chmod %s", name);
        if (fd >= 0 && ncaps > 0)
                fix_caps(fd, caps, ncaps, su);
        return 0;
}

static int shift_tree(int dirfd, const char *name, uint32_t su, uint32_t sg, unsigned depth,
                      struct rtn_error *err) {
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return rtn_err(err, errno, "stat %s", name);
        if (depth > 256)
                return rtn_errx(err, ELOOP, "tree too deep at %s", name);
        if (S_ISDIR(st.st_mode)) {
                _cleanup_close_ int fd =
                        openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                DIR *d = fd < 0 ? NULL : fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 3));
                if (!d)
                        return rtn_err(err, errno, "open %s", name);
                struct dirent *de;
                int r = 0;
                while (r == 0 && (de = readdir(d)))
                        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                                r = shift_tree(fd, de->d_name, su, sg, depth + 1, err);
                closedir(d);
                if (r < 0)
                        return r;
        }
        return shift_entry(dirfd, name, &st, su, sg, err);
}

/* After building as real root: hand the tree to the sandbox's root. */
static int own_tree(const struct rt_rootfs_make *a, const char *tmp, const struct rt_idmap *m,
                    struct rtn_error *err) {
        if (m->mode != RT_IDMAP_ROOT)
                return 0;
        phase(a, "give the tree to the sandbox's ids (uid %u and up)", m->sub_uid);
        _cleanup_close_ int d = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d < 0)
                return rtn_err(err, errno, "open %s", tmp);
        return shift_tree(d, "root", m->sub_uid, m->sub_gid, 0, err);
}

/* Extracts file into tmp/root, without the device nodes under /dev: the sandbox mounts
 * its own /dev, and only real root could make them. tar reads the archive on stdin and writes
 * through /proc/self/fd/3, so it needs no access to the (private, caller-owned) paths leading
 * there: in the subordinate-range case it runs as a root that is not the caller. */
static int import_tree(const struct rt_rootfs_make *a, const char *tmp, const char *file,
                       const struct rt_idmap *m, struct rtn_error *err) {
        _cleanup_close_ int in = open(file, O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return rtn_err(err, errno, "open %s", file);
        _cleanup_close_ int dir = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return rtn_err(err, errno, "open %s", tmp);
        /* tar cannot sniff compression on a pipe: pick the filter from the magic. */
        unsigned char magic[6] = {0};
        char *z = "--no-auto-compress";
        if (pread(in, magic, sizeof magic, 0) == (ssize_t)sizeof magic) {
                if (!memcmp(magic, "\x28\xb5\x2f\xfd", 4))
                        z = "--zstd";
                else if (!memcmp(magic, "\x1f\x8b", 2))
                        z = "--gzip";
                else if (!memcmp(magic,
                                 "\xfd"
                                 "7zXZ",
                                 6))
                        z = "--xz";
        }
        int r;
        phase(a, "unpack %s", file);
        if (m->mode == RT_IDMAP_SUBID) {
                /* Root of the range makes root/ itself (so it owns it) and everything below;
                 * let it into tmp, a private dir under the 0700 rootfs dir, meanwhile. */
                char script[] = "mkdir -m 0755 /proc/self/fd/3/root && exec tar \"$@\"";
                char *argv[] = {"unshare",
                                "--map-auto",
                                "--setuid=0",
                                "--setgid=0",
                                "--",
                                "sh",
                                "-c",
                                script,
                                "sh",
                                z,
                                "--anchored",
                                "--exclude=./dev/*",
                                "--exclude=dev/*",
                                "--numeric-owner",
                                "--same-owner",
                                "-xpf",
                                "-",
                                "-C",
                                "/proc/self/fd/3/root",
                                NULL};
                if (fchmod(dir, 0777) < 0)
                        return rtn_err(err, errno, "chmod %s", tmp);
                r = run(argv, in, dir, err);
                (void)fchmod(dir, 0700);
        } else {
                if (mkdirat(dir, "root", 0755) < 0)
                        return rtn_err(err, errno, "create %s/root", tmp);
                _cleanup_close_ int root = openat(dir, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (root < 0)
                        return rtn_err(err, errno, "open %s/root", tmp);
                char *argv[] = {"tar",
                                z,
                                "--anchored",
                                "--exclude=./dev/*",
                                "--exclude=dev/*",
                                m->mode == RT_IDMAP_ROOT ? "--same-owner" : "--no-same-owner",
                                "--numeric-owner",
                                "-xpf",
                                "-",
                                "-C",
                                "/proc/self/fd/3",
                                NULL};
                r = run(argv, in, root, err);
        }
        if (r < 0)
                return r;
        if (r != 0)
                return rtn_errx(err, EIO, "tar exited %d extracting %s", r, file);
        return own_tree(a, tmp, m, err);
}

/* mmdebstrap's hook that makes /bin, /sbin and /lib links into /usr before the first package,
 * as debootstrap does, for a suite that has a usr-is-merged package (bookworm and later).
 * Without it bookworm's init-system-helpers pulls in usrmerge, which brings perl and its
 * modules (50 of the 170 MB of a minbase) and then converts the tree file by file: more to
 * download, unpack, shift and store for the same merged /usr. */
#define MERGED_USR_HOOKS "/usr/share/mmdebstrap/hooks/maybe-merged-usr"

/* dpkg syncs every file it unpacks before renaming it into place, so that a crash leaves
 * each file either old or new. A bootstrapped tree is made from nothing in a work dir that
 * a failure throws away whole (rt_rootfs_make), so those syncs buy nothing and cost a good
 * part of the bootstrap's system time: force-unsafe-io for the bootstrap's dpkg runs, from
 * a file that a customize hook, which runs after the last package, removes again, so that
 * no dpkg run inside the finished tree (pkg_install, whose layer is kept) goes without. */
#define UNSAFE_IO_CFG "\"$1/etc/dpkg/dpkg.cfg.d/zz-rtn-bootstrap-unsafe-io\""
#define UNSAFE_IO_ON                                                                               \
        "--setup-hook=mkdir -p \"$1/etc/dpkg/dpkg.cfg.d\" && echo force-unsafe-io >" UNSAFE_IO_CFG
#define UNSAFE_IO_OFF "--customize-hook=rm -f " UNSAFE_IO_CFG

/* mmdebstrap writes a tarball (as real root, or inside a user namespace on the caller's
 * range), which import_tree then unpacks with the right owners. */
static int bootstrap_tree(const struct rt_rootfs_make *a, const char *tmp, const struct rt_idmap *m,
                          struct rtn_error *err) {
        char target[4096], var[64];
        const char *suite = a->suite, *mirror = a->mirror;
        snprintf(var, sizeof var, "--variant=%s", a->variant);
        int r;
        if (m->mode == RT_IDMAP_SINGLE)
                return rtn_errx(err, EPERM,
                                "bootstrapping needs root or a subordinate id range "
                                "(/etc/subuid and newuidmap): a Debian tree has files owned by "
                                "several users, and a single-uid mapping has only one. Import "
                                "a tarball instead (rtn rootfs import FILE NAME)");
        if (have("mmdebstrap")) {
                snprintf(target, sizeof target, "%s/base.tar", tmp);
                char *argv[12] = {"mmdebstrap",
                                  m->mode == RT_IDMAP_ROOT ? "--mode=root" : "--mode=unshare", var,
                                  UNSAFE_IO_ON, UNSAFE_IO_OFF};
                size_t k = 5;
                if (!a->tool_output) /* else its "I:" lines and, on a terminal, its bar */
                        argv[k++] = "--quiet";
                /* The hooks print apt's and dpkg's lines whatever --quiet says: silenced with
                 * it (a failing hook still fails mmdebstrap, which names it). */
                if (access(MERGED_USR_HOOKS "/setup00.sh", X_OK) == 0) {
                        argv[k++] = a->tool_output ? "--setup-hook=" MERGED_USR_HOOKS
                                                     "/setup00.sh \"$1\""
                                                   : "--setup-hook=" MERGED_USR_HOOKS
                                                     "/setup00.sh \"$1\" >/dev/null 2>&1";
                        argv[k++] = a->tool_output ? "--essential-hook=" MERGED_USR_HOOKS
                                                     "/essential00.sh \"$1\""
                                                   : "--essential-hook=" MERGED_USR_HOOKS
                                                     "/essential00.sh \"$1\" >/dev/null 2>&1";
                }
                argv[k++] = (char *)suite;
                argv[k++] = target;
                argv[k++] = (char *)mirror; /* NULL ends argv when there is none */
                phase(a, "download and unpack %s (%s) with mmdebstrap from %s", suite, a->variant,
                      mirror ? mirror : "its default mirror");
                /* In unshare mode mmdebstrap builds the tree under $TMPDIR as the range's
                 * root, a subordinate id that cannot enter a private TMPDIR (a 0700 dir of
                 * the caller's): use the world-writable, sticky /var/tmp instead. */
                char *saved = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
                if (m->mode != RT_IDMAP_ROOT)
                        setenv("TMPDIR", "/var/tmp", 1);
                r = run(argv, -1, -1, err);
                if (m->mode != RT_IDMAP_ROOT) {
                        if (saved)
                                setenv("TMPDIR", saved, 1);
                        else
                                unsetenv("TMPDIR");
                }
                free(saved);
                if (r == 0) {
                        r = import_tree(a, tmp, target, m, err);
                        unlink(target);
                        return r;
                }
        } else if (have("debootstrap") && m->mode == RT_IDMAP_ROOT) {
                snprintf(target, sizeof target, "%s/root", tmp);
                char *argv[] = {"debootstrap", var, (char *)suite, target, (char *)mirror, NULL};
                phase(a, "download and unpack %s (%s) with debootstrap from %s", suite, a->variant,
                      mirror ? mirror : "its default mirror");
                if ((r = run(argv, -1, -1, err)) == 0)
                        return own_tree(a, tmp, m, err);
        } else {
                return rtn_errx(err, ENOENT,
                                "neither mmdebstrap nor (as root) debootstrap is "
                                "installed (apt-get install mmdebstrap)");
        }
        if (r < 0)
                return r;
        return rtn_errx(err, EIO, "the bootstrap tool exited %d (its output is above)", r);
}

/* Removes tmp; a tree made on a subordinate range is removed from inside it. */
static void remove_tmp(const char *base, const char *tmpname, const struct rt_idmap *m) {
        _cleanup_close_ int d = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d < 0)
                return;
        if (m->mode == RT_IDMAP_SUBID) {
                _cleanup_close_ int t = openat(d, tmpname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                char *argv[] = {"unshare", "--map-auto", "--setuid=0",           "--setgid=0", "--",
                                "rm",      "-rf",        "/proc/self/fd/3/root", NULL};
                struct rtn_error ignored;
                if (t >= 0 && faccessat(t, "root", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
                    fchmod(t, 0777) == 0)
                        (void)run(argv, -1, t, &ignored);
        }
        (void)store_rm_rf_at(d, tmpname);
}

static int write_stamp(int dirfd, const char *stamp) {
        _cleanup_close_ int fd =
                openat(dirfd, "stamp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        int r = rtn_write_all(fd, stamp, strlen(stamp));
        return r < 0 ? r : (fsync(fd) < 0 ? negative_errno() : 0);
}

int rt_rootfs_make(const struct rt_rootfs_make *a, struct rtn_error *err) {
        struct rt_idmap m;
        _cleanup_free_ char *base = NULL, *tmp = NULL, *final = NULL, *stamp = NULL;
        char tmpname[96];
        int r;
        if (!rt_rootfs_name_valid(a->name))
                return rtn_errx(err, EINVAL, "invalid rootfs name '%s' (1-64 of A-Za-z0-9._-)",
                                a->name);
        if ((r = rt_idmap_choose(&m, err)) < 0 || (r = rt_rootfs_base(a->data_dir, &base, err)) < 0)
                return r;
        snprintf(tmpname, sizeof tmpname, ".%s.tmp", a->name);
        if (asprintf(&tmp, "%s/%s", base, tmpname) < 0 ||
            asprintf(&final, "%s/%s", base, a->name) < 0)
                return rtn_err(err, ENOMEM, "path");
        if (access(final, F_OK) == 0)
                return rtn_errx(err, EEXIST, "rootfs %s already exists (%s)", a->name, final);
        char *slash = strrchr(base, '/');
        *slash = '\0';
        r = store_make_dir(base, err);
        *slash = '/';
        if (r < 0)
                return r;
        if (mkdir(base, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", base);
        remove_tmp(base, tmpname, &m);
        if (mkdir(tmp, 0700) < 0)
                return rtn_err(err, errno, "create %s", tmp);
        r = a->how == RT_ROOTFS_BOOTSTRAP ? bootstrap_tree(a, tmp, &m, err)
                                          : import_tree(a, tmp, a->file, &m, err);
        _cleanup_close_ int t = r < 0 ? -1 : open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int root = t < 0 ? -1 : openat(t, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (r >= 0 && root < 0)
                r = rtn_err(err, errno, "open %s/root", tmp);
        if (r >= 0)
                phase(a, "record its stamp and move it into place");
        if (r >= 0 && (r = rt_rootfs_stamp(root, &stamp, err)) >= 0 &&
            (r = write_stamp(t, stamp)) < 0)
                rtn_err(err, r, "write %s/stamp", tmp);
        if (r >= 0 && (fsync(t) < 0 || rename(tmp, final) < 0))
                r = rtn_err(err, errno, "rename %s to %s", tmp, final);
        if (r < 0)
                remove_tmp(base, tmpname, &m);
        return r;
}

int rt_rootfs_remove(const char *data_dir, const char *name, struct rtn_error *err) {
        struct rt_idmap m;
        _cleanup_free_ char *base = NULL;
        char gone[96];
        int r;
        if (!rt_rootfs_name_valid(name))
                return rtn_errx(err, EINVAL, "invalid rootfs name '%s' (1-64 of A-Za-z0-9._-)",
                                name);
        if ((r = rt_rootfs_base(data_dir, &base, err)) < 0)
                return r;
        _cleanup_close_ int d = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (d < 0 && errno != ENOENT)
                return rtn_err(err, errno, "open %s", base);
        if (d < 0 || fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return rtn_errx(err, ENOENT, "no rootfs %s (rtn rootfs list)", name);
        if (!S_ISDIR(st.st_mode))
                return rtn_errx(err, ENOTDIR, "%s/%s is not a rootfs", base, name);
        if ((r = rt_idmap_choose(&m, err)) < 0)
                return r;
        /* Out of use by its name at once (a start now fails as for a missing one), then
         * removed as a failed bootstrap's work is: from inside the range that owns it. */
        snprintf(gone, sizeof gone, ".%s.rm", name);
        remove_tmp(base, gone, &m);
        if (renameat(d, name, d, gone) < 0)
                return rtn_err(err, errno, "rename %s/%s", base, name);
        remove_tmp(base, gone, &m);
        if (faccessat(d, gone, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return rtn_errx(err, EIO, "could not remove all of %s/%s", base, gone);
        return 0;
}
