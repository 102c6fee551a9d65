/* The overlay workspace's dir, DIR/ws/ (runtime/session/wsover.h): made and recorded before a
 * sandbox starts on it, dropped by a reset, moved from a session to an environment's pending
 * changes. The diff and the write-back are in runtime/session/wswalk.c and
 * runtime/session/wsapply.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "runtime/session/wsover.h"
#include "runtime/session/wsstate.h"

/* Whether DIR/ws/upper holds anything: a change is pending. */
static bool pending(const char *dir) {
        char path[4200];
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

/* A fresh upper and work dir, and a record whose time is now. CLOCK_REALTIME_COARSE is the
 * clock inode times are taken from (current_time(); a fine-grained ctime is never below it),
 * so a host change made after this call has a ctime at or past it. */
static int fresh(const char *dir, const char *host, const struct stat *hs, const struct rt_idmap *m,
                 struct rtn_error *err) {
        char ws[4200];
        snprintf(ws, sizeof ws, "%s/" RT_WS_DIR, dir);
        int r = rt_remove_tree(m, ws, "upper", err);
        if (r == 0)
                r = rt_remove_tree(m, ws, "work", err);
        if (r < 0)
                return r;
        _cleanup_close_ int d = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0 || mkdirat(d, "upper", 0700) < 0 || mkdirat(d, "work", 0700) < 0 ||
            fchmodat(d, "upper", hs->st_mode & 0777, 0) < 0)
                return rtn_err(err, errno, "create %s/{upper,work}", ws);
        /* The upper's top is the overlay's root, /workspace itself: the agent's. Root's agent
         * is a subordinate id, and so is the overlay's mounter, who writes the work dir. */
        if (m && m->mode == RT_IDMAP_ROOT &&
            (fchownat(d, "upper", m->sub_uid + m->agent_uid, m->sub_gid + m->agent_gid,
                      AT_SYMLINK_NOFOLLOW) < 0 ||
             fchownat(d, "work", m->sub_uid, m->sub_gid, AT_SYMLINK_NOFOLLOW) < 0))
                return rtn_err(err, errno, "hand %s/{upper,work} to the sandbox", ws);
        struct rt_ws_state st = {.dev = hs->st_dev, .ino = hs->st_ino};
        /* Absolute, for `rtn apply` from anywhere: the path has no symlink (it was opened
         * with RESOLVE_NO_SYMLINKS), so this only prefixes the cwd and drops dots. */
        _cleanup_free_ char *abs = realpath(host, NULL);
        if (!abs)
                return rtn_err(err, errno, "resolve the workspace %s", host);
        if (strlen(abs) >= sizeof st.host)
                return rtn_errx(err, ENAMETOOLONG, "workspace path too long");
        strcpy(st.host, abs);
        clock_gettime(CLOCK_REALTIME_COARSE, &st.since);
        return rt_ws_state_write(dir, &st, err);
}

int rt_ws_prepare(const char *dir, const char *host, const struct rt_idmap *m,
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
        if (!pending(dir))
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

int rt_ws_drop(const char *dir, const struct rt_idmap *m, struct rtn_error *err) {
        return rt_remove_tree(m, dir, RT_WS_DIR, err);
}

int rt_ws_host(const char *dir, char *buf, size_t len) {
        struct rt_ws_state st;
        int r = rt_ws_state_read(dir, &st);
        if (r < 0)
                return r;
        r = (size_t)snprintf(buf, len, "%s", st.host) < len ? 0 : -ENAMETOOLONG;
        rt_ws_state_free(&st);
        return r;
}

int rt_ws_move(const char *from, const char *to, struct rtn_error *err) {
        if (!pending(from))
                return 0;
        if (pending(to))
                return rtn_errx(err, EBUSY, "%s already holds pending workspace changes", to);
        char src[4200], dst[4200];
        snprintf(src, sizeof src, "%s/" RT_WS_DIR, from);
        snprintf(dst, sizeof dst, "%s/" RT_WS_DIR, to);
        int r = rt_remove_tree(NULL, to, RT_WS_DIR, err);
        if (r < 0)
                return r;
        if (rename(src, dst) < 0)
                return rtn_err(err, errno, "move %s to %s", src, dst);
        return 1;
}
