/* `fswrite [-r] FILE DIR`: every way to change a system file or directory from inside a sandbox:
 * open for writing, O_TRUNC, create, rename away and over, hard link, symlink, truncate,
 * chmod, chown, utimes, xattrs (user. and trusted.), unlink, mkdir, rmdir, and reopening an
 * O_PATH fd for writing through /proc/self/fd. FILE is an existing file and DIR an existing
 * directory the agent must not change. Each must fail with the errno named below; output
 * and exit status as in escape.c ("blocked"/"ESCAPED", 0 only when all were blocked).
 * -r: FILE is a read-only bind of its own (the sandbox's /etc/hostname and /etc/hosts), which
 * the kernel checks before the owner (EROFS) and which no link may cross (EXDEV). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int failures;
static const char *file, *dir;
static int ro_mount;

static void check(const char *name, int r, int want, int alt) {
        int e = errno;
        if (r == -1 && (e == want || (alt && e == alt) || (ro_mount && e == EROFS))) {
                printf("blocked %s: %s\n", name, strerror(e));
                return;
        }
        failures++;
        if (r == -1)
                printf("ESCAPED %s: failed with %s, expected %s\n", name, strerror(e),
                       strerror(want));
        else
                printf("ESCAPED %s: succeeded\n", name);
}

static int open_close(const char *p, int flags) {
        int fd = open(p, flags | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
        return fd < 0 ? -1 : 0;
}

static char *in_dir(const char *name) {
        static char buf[8][4096];
        static int n;
        char *b = buf[n++ % 8];
        snprintf(b, 4096, "%s/%s", dir, name);
        return b;
}

int main(int argc, char **argv) {
        if (argc == 4 && strcmp(argv[1], "-r") == 0) {
                ro_mount = 1;
                argv++;
                argc--;
        }
        if (argc != 3) {
                fprintf(stderr, "usage: fswrite [-r] FILE DIR\n");
                return 2;
        }
        file = argv[1];
        dir = argv[2];
        /* Landlock (WRITE_FILE, MAKE_*, REMOVE_*, REFER, TRUNCATE) answers EACCES before the
         * owner checks; what Landlock does not cover (chmod, chown, utimes, xattrs) is
         * refused by ownership: EPERM, or EACCES where write permission is the test. */
        errno = 0;
        check("open_write", open_close(file, O_WRONLY), EACCES, 0);
        check("open_trunc", open_close(file, O_WRONLY | O_TRUNC), EACCES, 0);
        check("open_append", open_close(file, O_WRONLY | O_APPEND), EACCES, 0);
        check("create", open_close(in_dir("rtn-new"), O_WRONLY | O_CREAT | O_EXCL), EACCES, 0);
        check("rename_away", rename(file, in_dir("rtn-renamed")), EACCES, 0);
        /* a file of ours (the cwd is the writable workspace) moved over the system file */
        int src = open("rtn-fswrite-src", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (src >= 0)
                close(src);
        check("rename_over", rename("rtn-fswrite-src", file), EACCES, EXDEV);
        unlink("rtn-fswrite-src");
        check("link", link(file, in_dir("rtn-link")), EACCES, ro_mount ? EXDEV : EPERM);
        check("symlink", symlink("/workspace", in_dir("rtn-symlink")), EACCES, 0);
        check("mkdir", mkdir(in_dir("rtn-dir"), 0755), EACCES, 0);
        check("mkfifo", mkfifo(in_dir("rtn-fifo"), 0644), EACCES, 0);
        check("unlink", unlink(file), EACCES, 0);
        check("rmdir", rmdir(dir), EACCES, EBUSY);
        check("truncate", truncate(file, 0), EACCES, 0);
        check("chmod", chmod(file, 0777), EPERM, 0);
        check("chmod_dir", chmod(dir, 0777), EPERM, 0);
        check("chown", chown(file, getuid(), getgid()), EPERM, 0);
        struct timespec ts[2] = {{.tv_sec = 1}, {.tv_sec = 1}};
        check("utimes", utimensat(AT_FDCWD, file, ts, 0), EPERM, 0);
        check("utimes_now", utimensat(AT_FDCWD, file, NULL, 0), EACCES, 0);
        check("setxattr_user", setxattr(file, "user.rtn", "x", 1, 0), EACCES, EPERM);
        check("setxattr_trusted", setxattr(file, "trusted.overlay.opaque", "y", 1, 0), EPERM, 0);
        /* a well-formed file capability (v2: effective, CAP_SYS_ADMIN permitted) */
        struct {
                unsigned magic_etc;
                struct {
                        unsigned permitted, inheritable;
                } data[2];
        } cap = {.magic_etc = 0x02000000u | 1u, .data = {{1u << 21, 0}, {0, 0}}};
        check("setxattr_security", setxattr(file, "security.capability", &cap, sizeof cap, 0),
              EPERM, 0);
        check("removexattr", removexattr(file, "user.rtn"), EACCES, EPERM);
        int p = open(file, O_PATH | O_CLOEXEC);
        char via[64];
        snprintf(via, sizeof via, "/proc/self/fd/%d", p);
        check("reopen_opath", open_close(via, O_WRONLY), EACCES, 0);
        close(p);
        return failures ? 1 : 0;
}
