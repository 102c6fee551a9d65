/* What git's configuration names in an overlay workspace as it will be once its changes are
 * applied (runtime/session/wsgit.h): the configuration files inside the workspace are read
 * from the upper where the agent changed them (a whiteout hides the host's), from the host
 * where it did not. The git dirs themselves are read from the host: rt_ws_apply refuses every
 * change to them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/sandbox/hostrun.h"
#include "runtime/session/wsgit.h"
#include "runtime/session/wswalk.h"

struct view {
        char top[PATH_MAX];
        size_t len;
        int upper;
};

static int read_view(void *arg, const char *path, char **ret, size_t *ret_len) {
        struct view *v = arg;
        if (strncmp(path, v->top, v->len) || path[v->len] != '/')
                return rt_gitconf_read_file(path, ret, ret_len);
        const char *rel = path + v->len + 1;
        if (rt_hostrun_match(rel))
                return rt_gitconf_read_file(path, ret, ret_len);
        char dir[PATH_MAX];
        const char *slash = strrchr(rel, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
        _cleanup_close_ int udir = ws_open_dir(v->upper, dir);
        struct ws_entry e;
        if (udir < 0 || ws_upper_entry(udir, slash ? slash + 1 : rel, &e) < 0)
                return rt_gitconf_read_file(path, ret, ret_len); /* not changed: the host's */
        if (e.type == WS_WHITEOUT || e.type == WS_DIR)
                return -ENOENT;
        if (e.type != WS_REG)
                return rt_gitconf_read_file(path, ret, ret_len);
        char fdp[64];
        _cleanup_close_ int fd = openat(udir, slash ? slash + 1 : rel,
                                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        snprintf(fdp, sizeof fdp, "/proc/self/fd/%d", fd);
        return rt_gitconf_read_file(fdp, ret, ret_len);
}

/* The --protect paths recorded for the pending changes of dir. */
static int saved_paths(const char *dir, struct rt_pathlist *ret, struct rtn_error *err) {
        char file[4200], *buf = NULL;
        size_t len = 0;
        snprintf(file, sizeof file, "%s/" RT_WS_PROTECT, dir);
        int r = rt_gitconf_read_file(file, &buf, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return rtn_err(err, -r, "read %s", file);
        for (char *line = strtok(buf, "\n"); r >= 0 && line; line = strtok(NULL, "\n"))
                if (rt_pathlist_add(ret, line, "--protect names it", RT_MAKE_DIR) < 0)
                        r = rtn_err(err, ENOMEM, "read %s", file);
        free(buf);
        return r;
}

int ws_git_paths(const char *dir, const char *host, int upper, struct rt_pathlist *ret,
                 struct rtn_error *err) {
        int r = saved_paths(dir, ret, err);
        if (r < 0)
                return r;
        struct view *v = calloc(1, sizeof *v);
        if (!v)
                return rtn_err(err, ENOMEM, "read git's configuration");
        if (!realpath(host, v->top)) {
                free(v);
                return rtn_err(err, errno, "resolve %s", host);
        }
        v->len = strlen(v->top);
        v->upper = upper;
        struct rt_gitconf_reader rd = {.read = read_view, .arg = v};
        r = rt_gitconf_paths(v->top, &rd, ret, err);
        free(v);
        return r;
}
