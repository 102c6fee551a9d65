/* The overlay workspace's record and uppers (runtime/session/wsover.h): dropped by a reset,
 * kept from a session as an environment's pending changes. The record is made before a
 * sandbox starts, by the sandbox (runtime/sandbox/wsprep.c); the diff and the write-back are
 * in runtime/session/wswalk.c and runtime/session/wsapply.c. */
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
#include "runtime/sandbox/wsstate.h"
#include "runtime/session/upper.h"
#include "runtime/session/wsover.h"

int rt_ws_drop(const char *dir, const char *root, const struct rt_idmap *m, struct rtn_error *err) {
        int r = root ? rt_remove_tree(m, root, RT_WS_DIR, err) : 0;
        return r < 0 || !dir ? r : rt_remove_tree(m, dir, RT_WS_DIR, err);
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

int rt_ws_move(const char *from, int upper_fs, const char *to, const struct rt_idmap *m,
               struct rtn_error *err) {
        char buf[32];
        if (!rt_ws_pending(rt_ws_root(buf, upper_fs)))
                return 0;
        if (rt_ws_pending(to))
                return rtn_errx(err, EBUSY, "%s already holds pending workspace changes", to);
        char src[4200], dst[4200];
        snprintf(src, sizeof src, "%s/" RT_WS_DIR "/state", from);
        snprintf(dst, sizeof dst, "%s/" RT_WS_DIR, to);
        int r = rt_remove_tree(m, to, RT_WS_DIR, err);
        if (r < 0)
                return r;
        if (mkdir(dst, 0700) < 0)
                return rtn_err(err, errno, "create %s", dst);
        if ((r = rt_upper_keep_ws(m, upper_fs, to, err)) < 0) {
                (void)rt_remove_tree(m, to, RT_WS_DIR, NULL);
                return r;
        }
        snprintf(dst, sizeof dst, "%s/" RT_WS_DIR "/state", to);
        if (rename(src, dst) < 0) {
                r = rtn_err(err, errno, "move %s to %s", src, dst);
                (void)rt_remove_tree(m, to, RT_WS_DIR, NULL);
                return r;
        }
        return 1;
}
