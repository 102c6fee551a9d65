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
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"

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

static int rm_children(int fd) {
        DIR *d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        struct dirent *de;
        int r = 0;
        while (r == 0 && (de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                r = store_rm_rf_at(dirfd(d), de->d_name);
        }
        closedir(d);
        return r;
}

int store_rm_children_at(int fd) {
        /* A fresh open file description, as store_opendir_at: rm_children consumes it. */
        int nfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return nfd < 0 ? negative_errno() : rm_children(nfd);
}

int store_rm_rf_at(int dirfd, const char *name) {
        if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR)
                return negative_errno();
        /* Children of a 0555 directory cannot be unlinked until it is writable again. */
        if (fchmodat(dirfd, name, 0700, 0) < 0 && errno != EPERM)
                return negative_errno();
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        int r = rm_children(fd);
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
