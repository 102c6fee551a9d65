/* The overlay workspace's record, made before a sandbox starts on it
 * (runtime/sandbox/wsprep.h). Dropping it, diffing and applying the changes are the
 * session's (runtime/session/wsover.c, wswalk.c, wsapply.c). */
#include "runtime/sandbox/wsprep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "runtime/sandbox/gitconf.h"
#include "runtime/sandbox/wsstate.h"

const char *rt_ws_root(char buf[32], int upper_fs) {
        if (upper_fs < 0)
                return NULL;
        snprintf(buf, 32, "/proc/self/fd/%d", upper_fs);
        return buf;
}

bool rt_ws_pending(const char *dir) {
        char path[4200];
        if (!dir)
                return false;
        snprintf(path, sizeof path, "%s/" RT_WS_DIR "/upper", dir);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return false;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return false;
        }
        bool any = false;
        struct dirent *de;
        while (!any && (de = readdir(d)))
                any = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return any;
}

/* The start of a record: the first value of the coarse clock at or past the fine-grained
 * now. Inode times come from the coarse clock or, on filesystems with multigrain timestamps
 * (Linux 6.13 on), from a finer clock that runs ahead of it, but never below it; the coarse
 * clock lags the real time by up to a tick. So a host change made before this call, however
 * fine its ctime, is below the value, and one made after it returns is at or past it. Costs
 * up to a tick (1-10 ms) at each fresh start; bounded, should the clock be stepped back. */
static struct timespec coarse_past_now(void) {
        struct timespec now, t;
        clock_gettime(CLOCK_REALTIME, &now);
        for (int i = 0; i < 200; i++) {
                clock_gettime(CLOCK_REALTIME_COARSE, &t);
                if (t.tv_sec > now.tv_sec || (t.tv_sec == now.tv_sec && t.tv_nsec >= now.tv_nsec))
                        return t;
                nanosleep(&(struct timespec){.tv_nsec = 250 * 1000}, NULL);
        }
        return now;
}

/* A fresh record whose time is now (coarse_past_now), with what an earlier run left in dir/ws/
 * (an empty upper, a work dir) removed. */
static int fresh(const char *dir, const char *host, const struct stat *hs, const struct rt_idmap *m,
                 struct rtn_error *err) {
        char ws[4200];
        snprintf(ws, sizeof ws, "%s/" RT_WS_DIR, dir);
        int r = rt_remove_tree(m, ws, "upper", err);
        if (r == 0)
                r = rt_remove_tree(m, ws, "work", err);
        if (r < 0)
                return r;
        struct rt_ws_state st = {.dev = hs->st_dev, .ino = hs->st_ino};
        /* Absolute, for `rtn apply` from anywhere: the path has no symlink (it was opened
         * with RESOLVE_NO_SYMLINKS), so this only prefixes the cwd and drops dots. */
        _cleanup_free_ char *abs = realpath(host, NULL);
        if (!abs)
                return rtn_err(err, errno, "resolve the workspace %s", host);
        if (strlen(abs) >= sizeof st.host)
                return rtn_errx(err, ENAMETOOLONG, "workspace path too long");
        strcpy(st.host, abs);
        st.since = coarse_past_now();
        return rt_ws_state_write(dir, &st, err);
}

int rt_ws_prepare(const char *dir, const char *root, const char *host, const struct rt_idmap *m,
                  struct rtn_error *err) {
        char ws[4200];
        snprintf(ws, sizeof ws, "%s/" RT_WS_DIR, dir);
        if (mkdir(ws, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", ws);
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int h = sys_openat2(AT_FDCWD, host, &how, sizeof how);
        struct stat hs;
        if (h < 0 || fstat(h, &hs) < 0)
                return rtn_err(err, errno, "open the workspace %s%s", host,
                               errno == ELOOP ? " (its path crosses a symlink)" : "");
        if (!rt_ws_pending(dir) && !rt_ws_pending(root))
                return fresh(dir, host, &hs, m, err);
        struct rt_ws_state st;
        int r = rt_ws_state_read(dir, &st);
        if (r < 0)
                return rtn_errx(err, EBADMSG,
                                "the pending workspace changes in %s have no valid record; "
                                "drop them (rtn reset)",
                                ws);
        bool same = st.dev == (uint64_t)hs.st_dev && st.ino == (uint64_t)hs.st_ino;
        r = same ? 0
                 : rtn_errx(err, EBUSY,
                            "the pending workspace changes belong to %s, not %s: write them "
                            "there (rtn apply) or drop them (rtn reset) first",
                            st.host, host);
        rt_ws_state_free(&st);
        return r;
}

int rt_ws_protect_save(const char *dir, const char *host, const char *const *paths, size_t n,
                       struct rtn_error *err) {
        struct rt_pathlist l = {0};
        char file[4200], *old = NULL;
        size_t len = 0;
        snprintf(file, sizeof file, "%s/" RT_WS_PROTECT, dir);
        int r = rt_gitconf_user_paths(host, "/workspace", paths, n, &l, err);
        if (r <= 0) {
                rt_pathlist_free(&l);
                return r;
        }
        /* the paths of earlier runs stay: their changes are pending too */
        if (rt_gitconf_read_file(file, &old, &len) == 0) {
                for (char *line = strtok(old, "\n"); line; line = strtok(NULL, "\n"))
                        if ((r = rt_pathlist_add(&l, line, "--protect names it", RT_MAKE_DIR)) < 0)
                                break;
                free(old);
        }
        _cleanup_fclose_ FILE *f = r < 0 ? NULL : fopen(file, "we");
        if (!f)
                r = rtn_err(err, r < 0 ? -r : errno, "record --protect in %s", file);
        size_t off = 0;
        const char *rel, *why;
        while (r >= 0 && rt_pathlist_next(&l, &off, &rel, &why))
                fprintf(f, "%s\n", rel);
        if (r >= 0 && fflush(f) != 0)
                r = rtn_err(err, errno, "record --protect in %s", file);
        rt_pathlist_free(&l);
        return r < 0 ? r : 0;
}
