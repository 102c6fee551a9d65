/* Small filesystem helpers for the store: hex ids, crash-safe small-file writes (temp file,
 * fsync, rename, fsync of the directory: the sequence ext4 and xfs document as durable),
 * tree removal that copes with read-only directories, and the writer lock. */
#include "store/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/syscall.h"

void store_hex(const unsigned char *d, size_t n, char *out) {
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[d[i] >> 4];
                out[2 * i + 1] = digits[d[i] & 15];
        }
        out[2 * n] = '\0';
}

bool store_id_valid(const char *s) {
        size_t i = 0;
        for (; s[i]; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return i == STORE_ID_LEN;
}

DIR *store_opendir_at(int fd) {
        /* A fresh open file description: a dup() would share (and move) fd's offset. */
        int nfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (nfd < 0)
                return NULL;
        DIR *d = fdopendir(nfd);
        if (!d) {
                int e = errno;
                close(nfd);
                errno = e;
        }
        return d;
}

int store_dir_is_empty(int fd) {
        DIR *d = store_opendir_at(fd);
        if (!d)
                return negative_errno();
        struct dirent *de;
        int empty = 1;
        errno = 0;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                        empty = 0;
                        break;
                }
        if (empty && errno)
                empty = negative_errno();
        closedir(d);
        return empty;
}

/* Trees are removed with at most RM_DEPTH directories open at once: how deep a tree is, is
 * the agent's to choose when it is an upper, and one open directory per level ran out of
 * file descriptors at about a thousand levels (RLIMIT_NOFILE), leaving the tree behind. A
 * subtree found deeper is moved up to the root of the removal and taken in a later pass. */
#define RM_DEPTH 32

struct rm {
        int rootfd; /* the directory being emptied */
        unsigned moved, seq;
        int err; /* the first error; removal goes on past it */
};

/* Opens dirfd/name, a directory, for reading, and makes it ours to empty (0700; a layer holds
 * 0555 directories, overlayfs's work dir is 0000). O_NOFOLLOW: never a symlink swapped in. */
static int open_dir_rw(int dirfd, const char *name) {
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0 && errno == EACCES) {
                /* Unreadable: chmod through an O_PATH fd (fchmod refuses those), then open. */
                _cleanup_close_ int p =
                        openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                char proc[64];
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", p);
                if (p < 0 || chmod(proc, 0700) < 0)
                        return -EACCES;
                fd = openat(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        }
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, 0700) < 0 && errno != EPERM) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        return fd;
}

static void rm_note(struct rm *m, int r) {
        if (r < 0 && m->err == 0)
                m->err = r;
}

static void rm_children(struct rm *m, int fd, unsigned depth);

/* Removes fd's entry name: a file at once, a directory after its children, or, too deep,
 * moved up to the root for a later pass. */
static void rm_entry(struct rm *m, int fd, const char *name, unsigned depth) {
        if (unlinkat(fd, name, 0) == 0 || errno == ENOENT)
                return;
        if (errno != EISDIR) {
                rm_note(m, negative_errno());
                return;
        }
        if (depth >= RM_DEPTH) {
                /* Moving a directory rewrites its "..": without write permission on it, which a
                 * user (not root) needs, the rename fails with EACCES. */
                _cleanup_close_ int p =
                        openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                char proc[64];
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", p);
                if (p >= 0)
                        (void)chmod(proc, 0700);
                char up[64];
                snprintf(up, sizeof up, ".rtn-deep.%u", m->seq++);
                if (sys_renameat2(fd, name, m->rootfd, up, RENAME_NOREPLACE) == 0)
                        m->moved++;
                else if (errno != EEXIST)
                        rm_note(m, negative_errno());
                return; /* EEXIST: the next pass tries another name */
        }
        int sub = open_dir_rw(fd, name);
        if (sub < 0) {
                rm_note(m, sub);
                return;
        }
        rm_children(m, sub, depth + 1); /* closes sub */
        if (unlinkat(fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && errno != ENOTEMPTY)
                rm_note(m, negative_errno());
}

/* Removes what is inside fd, which it consumes. */
static void rm_children(struct rm *m, int fd, unsigned depth) {
        DIR *d = fdopendir(fd);
        if (!d) {
                rm_note(m, negative_errno());
                close(fd);
                return;
        }
        struct dirent *de;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        rm_entry(m, dirfd(d), de->d_name, depth);
        closedir(d);
}

/* Empties rootfd, pass after pass while subtrees were moved up into it. */
static int rm_all(int rootfd) {
        struct rm m = {.rootfd = rootfd};
        unsigned before;
        do {
                before = m.moved;
                int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                rm_children(&m, fd, 1);
        } while (m.moved != before);
        if (m.err == 0 && store_dir_is_empty(rootfd) == 0)
                m.err = -ENOTEMPTY;
        return m.err;
}

int store_rm_children_at(int fd) {
        return rm_all(fd);
}

int store_rm_rf_at(int dirfd, const char *name) {
        if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR)
                return negative_errno();
        _cleanup_close_ int fd = open_dir_rw(dirfd, name);
        if (fd < 0)
                return fd;
        int r = rm_all(fd);
        if (r < 0)
                return r;
        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

int store_fsync_dir(int dirfd) {
        return fsync(dirfd) < 0 ? negative_errno() : 0;
}

void store_tmp_name(char *buf, size_t len, const char *prefix) {
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
                rnd = (uint64_t)(uintptr_t)buf ^ (uint64_t)getpid() << 32;
        snprintf(buf, len, "%s.%d.%016llx", prefix, (int)getpid(), (unsigned long long)rnd);
}

/* Creates tmp/<name> holding data; returns its open fd, or -errno with nothing left. */
static int write_tmp(struct store *s, const void *data, size_t len, char *name, size_t size) {
        store_tmp_name(name, size, "w");
        int fd = openat(s->tmpfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return negative_errno();
        int r = rtn_write_all(fd, data, len);
        if (r < 0) {
                (void)unlinkat(s->tmpfd, name, 0);
                rtn_safe_close(fd);
                return r;
        }
        return fd;
}

int store_write_tmp(struct store *s, const void *data, size_t len, char *ret_name, size_t size) {
        return store_write_tmp_synced(s, data, len, false, ret_name, size);
}

int store_write_tmp_synced(struct store *s, const void *data, size_t len, bool sync, char *ret_name,
                           size_t size) {
        _cleanup_close_ int fd = write_tmp(s, data, len, ret_name, size);
        if (fd < 0) {
                ret_name[0] = '\0'; /* nothing to drop */
                return fd;
        }
        if (sync && fsync(fd) < 0) {
                int r = negative_errno();
                (void)unlinkat(s->tmpfd, ret_name, 0);
                ret_name[0] = '\0';
                return r;
        }
        return 0;
}

int store_read_small(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        _cleanup_free_ char *buf = malloc(max + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n = rtn_read_full(fd, buf, max + 1);
        if (n < 0)
                return (int)n;
        if ((size_t)n > max)
                return -EFBIG;
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = (size_t)n;
        return 0;
}

int store_lock(struct store *s, bool exclusive) {
        while (flock(s->lockfd, exclusive ? LOCK_EX : LOCK_SH) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return 0;
}

void store_unlock(struct store *s) {
        (void)flock(s->lockfd, LOCK_UN);
}
