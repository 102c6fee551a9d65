/* `setid DIR`: every way a process can ask for a setuid or setgid file in DIR, a host
 * directory bound into the sandbox: chmod, fchmod, fchmodat, fchmodat2 (on a file and, g+s,
 * on a directory), creat, open and openat with O_CREAT, O_TMPFILE then linkat, mknod and
 * mknodat of a regular file, openat2 (whose mode seccomp cannot read), and a file capability
 * (security.capability, what setcap writes). Each call must fail with the errno named below
 * and leave no set-id bit or capability behind; output and exit status as in escape.c
 * ("blocked"/"ESCAPED", 0 only when all were blocked). */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static int failures, dirfd_;

/* A call must have failed with want, and name (in DIR) must not be set-id afterwards. */
static void check(const char *what, long r, int want, const char *name) {
        int e = errno;
        struct stat st;
        bool setid = name && fstatat(dirfd_, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                     (st.st_mode & (S_ISUID | S_ISGID));
        if (r == -1 && e == want && !setid) {
                printf("blocked %s: %s\n", what, strerror(e));
                return;
        }
        failures++;
        if (setid)
                printf("ESCAPED %s: %s is mode %o\n", what, name, (unsigned)st.st_mode);
        else if (r == -1)
                printf("ESCAPED %s: failed with %s, expected %s\n", what, strerror(e),
                       strerror(want));
        else
                printf("ESCAPED %s: succeeded\n", what);
}

static int create(const char *name) {
        int fd = openat(dirfd_, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
        if (fd >= 0)
                (void)!write(fd, "#!/bin/sh\nid\n", 13);
        return fd;
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: setid DIR\n");
                return 2;
        }
        dirfd_ = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd_ < 0 || fchdir(dirfd_) < 0) {
                perror(argv[1]);
                return 2;
        }
        int fd = create("f");
        mkdirat(dirfd_, "d", 0755);
        if (fd < 0) {
                perror("create f");
                return 2;
        }
        check("chmod_4755", chmod("f", 04755), EPERM, "f");
        check("chmod_g+s", chmod("f", 02755), EPERM, "f");
        check("chmod_dir_g+s", chmod("d", 02755), EPERM, "d");
        check("fchmod_6755", fchmod(fd, 06755), EPERM, "f");
        check("fchmod_high_junk", syscall(SYS_fchmod, fd, (0xdeadUL << 32) | 04755), EPERM, "f");
        check("fchmodat", fchmodat(dirfd_, "f", 04755, 0), EPERM, "f");
        check("fchmodat2", syscall(SYS_fchmodat2, dirfd_, "f", 02755, 0), EPERM, "f");
        check("creat", creat("c", 04755), EPERM, "c");
        check("open_creat", syscall(SYS_open, "o", O_CREAT | O_WRONLY, 06755), EPERM, "o");
        check("openat_creat", openat(dirfd_, "oa", O_CREAT | O_WRONLY, 04755), EPERM, "oa");
        check("openat_excl", openat(dirfd_, "ox", O_CREAT | O_EXCL | O_RDWR, 02711), EPERM, "ox");
        check("open_tmpfile", openat(dirfd_, ".", O_TMPFILE | O_WRONLY, 04755), EPERM, NULL);
        check("mknod_reg", mknod("n", S_IFREG | 04755, 0), EPERM, "n");
        check("mknodat_reg", mknodat(dirfd_, "na", S_IFREG | 02755, 0), EPERM, "na");
        struct open_how how = {.flags = O_CREAT | O_WRONLY | O_CLOEXEC, .mode = 04755};
        check("openat2", syscall(SYS_openat2, dirfd_, "o2", &how, sizeof how), ENOSYS, "o2");
        /* setcap's xattr, version 2 (a user namespace's root would get version 3): no
         * capability to set it, whatever the version. */
        struct vfs_cap_data cap = {.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE};
        cap.data[0].permitted = 1u << CAP_SETUID;
        check("setcap", fsetxattr(fd, "security.capability", &cap, XATTR_CAPS_SZ_2, 0), EPERM, "f");
        ssize_t n = fgetxattr(fd, "security.capability", &cap, sizeof cap);
        if (n >= 0) {
                printf("ESCAPED setcap: f carries a capability\n");
                failures++;
        }
        return failures ? 1 : 0;
}
