/* Room in the data dir for what a commit is about to write (docs/store.md, "Room"). An agent
 * that commits in a loop would otherwise fill the data dir's filesystem: every tip an
 * environment leaves stays in its reflog, and so reachable and kept by gc, for
 * STORE_REFLOG_EXPIRE_SEC. So the filesystem keeps a reserve (store_reserve_bytes) whatever
 * the store holds, and a store given a budget (store_set_max, --store-max) stays within it,
 * counted as the data dir's whole use on disk: layers no environment reaches any more but gc
 * still keeps, pending changes and sessions included. A commit that would pass either is
 * refused before anything is written. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "store/internal.h"

#define USAGE_DEPTH_MAX 4096

void store_set_max(struct store *s, uint64_t max_bytes) {
        s->max_bytes = max_bytes;
}

uint64_t store_reserve_bytes(uint64_t fs_bytes) {
        uint64_t r = fs_bytes / 20;
        if (r < STORE_RESERVE_MIN)
                r = STORE_RESERVE_MIN;
        return r > fs_bytes / 4 ? fs_bytes / 4 : r;
}

/* What the tree below dir takes on disk: allocated blocks, a file of n links counted 1/n (its
 * other names are in the data dir too), on dir's filesystem only. What cannot be read (an
 * entry of a subordinate id's) is not counted. */
static void usage_at(int dir, dev_t dev, unsigned depth, uint64_t *sum) {
        int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own offset */
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat sb;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
                    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || sb.st_dev != dev)
                        continue;
                *sum += (uint64_t)sb.st_blocks * 512 /
                        (sb.st_nlink > 1 && !S_ISDIR(sb.st_mode) ? (uint64_t)sb.st_nlink : 1);
                if (!S_ISDIR(sb.st_mode) || depth >= USAGE_DEPTH_MAX)
                        continue;
                int sub = openat(dirfd(d), de->d_name,
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) {
                        usage_at(sub, dev, depth + 1, sum);
                        close(sub);
                }
        }
        closedir(d);
}

int store_usage(struct store *s, uint64_t *ret_bytes) {
        struct stat sb;
        if (fstat(s->dirfd, &sb) < 0)
                return -errno;
        uint64_t sum = (uint64_t)sb.st_blocks * 512;
        usage_at(s->dirfd, sb.st_dev, 0, &sum);
        *ret_bytes = sum;
        return 0;
}

static unsigned long long mib(uint64_t b) {
        return (unsigned long long)((b + (1u << 20) - 1) >> 20);
}

#define ROOM_HOW                                                                                   \
        "nothing was written and the changes are kept: rtn gc (env_gc) removes what no "           \
        "environment reaches, and a tip an environment left stays in its reflog, kept, for 30 "    \
        "days unless rtn gc --reflog-days N expires it sooner"

int store_room(struct store *s, uint64_t need, struct rtn_error *err) {
        struct statvfs v;
        if (fstatvfs(s->dirfd, &v) < 0)
                return rtn_err(err, errno, "statvfs %s", s->dir);
        uint64_t avail = (uint64_t)v.f_bavail * v.f_frsize;
        uint64_t reserve = store_reserve_bytes((uint64_t)v.f_blocks * v.f_frsize);
        if (need > avail || avail - need < reserve)
                return rtn_errx(err, ENOSPC,
                                "the data dir's filesystem has %llu MiB free and keeps %llu MiB of "
                                "them free (5%% of it, at least 1 GiB, at most a quarter); the "
                                "changes may need %llu MiB: " ROOM_HOW,
                                mib(avail), mib(reserve), mib(need));
        if (!s->max_bytes)
                return 0;
        uint64_t used = 0;
        int r = store_usage(s, &used);
        if (r < 0)
                return rtn_err(err, -r, "measure the store %s", s->dir);
        if (used + need > s->max_bytes)
                return rtn_errx(err, ENOSPC,
                                "the store holds %llu MiB and the changes may need %llu MiB more, "
                                "past --store-max %llu MiB: " ROOM_HOW,
                                mib(used), mib(need), mib(s->max_bytes));
        return 0;
}
