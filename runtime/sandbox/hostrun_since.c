/* rt_hostrun_since (runtime/sandbox/hostrun.h): the registry's files a command made or changed
 * in a live host directory while it ran. The walk at a sandbox's start makes read-only only
 * what exists (runtime/sandbox/protect.c); a file the agent creates where there was none
 * reaches the host, and this says so afterwards. The same walk, run in rtn: its records of
 * protected entries and git dirs, each judged by its ctime, which no user can set. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/internal.h"
#include "runtime/sandbox/hostrun.h"

static const struct rt_hostrun git_dir = {"(a git dir)", "git", "git runs its hooks and config"};
static const struct rt_hostrun unreadable = {"(a directory rtn cannot read)", "?",
                                             "what host programs run may be inside, unlisted"};

struct since {
        int top;
        struct rt_hostrun_mark since;
        rt_hostrun_found_fn fn;
        void *ud;
};

static bool at_or_after(const struct timespec *a, const struct timespec *b) {
        return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

static bool listed_at_start(const struct rt_hostrun_mark *m, const char *rel) {
        const char *p = m->listed;
        for (uint32_t i = 0; p && i < m->nlisted; i++, p += strlen(p) + 1)
                if (!strcmp(p, rel))
                        return true;
        return false;
}

/* Whether st changed at or after the start: a file on another file system (a mount inside
 * dir) against the coarse clock, cut to an even second. */
static bool changed_since(const struct rt_hostrun_mark *m, const struct stat *st) {
        bool own = m->has_fs && st->st_dev == m->dev;
        return at_or_after(&st->st_ctim, own ? &m->fs : &m->coarse);
}

/* Whether a directory on the way to rel changed at or after the start: renamed into place,
 * or an entry made or removed in it. */
static bool way_changed(int top, const struct rt_hostrun_mark *m, const char *rel) {
        char dir[PATH_MAX];
        struct stat st;
        for (const char *p = strchr(rel, '/'); p; p = strchr(p + 1, '/')) {
                snprintf(dir, sizeof dir, "%.*s", (int)(p - rel), rel);
                if (fstatat(top, dir, &st, AT_SYMLINK_NOFOLLOW) == 0 && changed_since(m, &st))
                        return true;
        }
        return false;
}

static int found(void *arg, const char *rel, enum rt_protect_kind kind, struct rtn_error *err) {
        struct since *s = arg;
        struct stat st;
        (void)err;
        if (kind == RT_PROTECT_PIN)
                return 0;
        if (fstatat(s->top, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        /* A directory rtn cannot list (a user's walk: made so with chmod, whose ctime tells) */
        if (kind == RT_PROTECT_UNREADABLE)
                return changed_since(&s->since, &st) ? s->fn(rel, &unreadable, s->ud) : 0;
        /* Its own ctime; else, when it was not protected at the start, a directory on the way
         * that changed: one renamed into a registry name keeps the ctimes below it. What the
         * start protected could not move, nor what holds it. */
        bool changed = changed_since(&s->since, &st);
        if (!changed && s->since.listed && !listed_at_start(&s->since, rel))
                changed = way_changed(s->top, &s->since, rel);
        if (!changed)
                return 0;
        const struct rt_hostrun *h = rt_hostrun_match(rel);
        /* A symlink where a longer pattern is on its way (.cargo, of .cargo/config*) */
        const char *slash = strrchr(rel, '/');
        size_t dlen = slash ? (size_t)(slash - rel) : 0;
        const char *name = slash ? slash + 1 : rel;
        if (!h && kind == RT_PROTECT_LINK)
                h = rt_hostrun_on_way(rel, dlen, name, strlen(name));
        return s->fn(rel, h ? h : &git_dir, s->ud);
}

/* The ctime of a change to an unnamed file made in dir, when dir is on file system dev. */
static bool mark_in(const char *dir, dev_t dev, struct rt_hostrun_mark *ret) {
        _cleanup_close_ int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        struct stat st;
        /* Queried, then changed: since Linux 6.13 a multigrain file system stamps that change
         * finely and never stamps a later one earlier; elsewhere this is its coarse clock. */
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != dev || fchmod(fd, 0400) < 0 ||
            fstat(fd, &st) < 0)
                return false;
        ret->fs = st.st_ctim;
        ret->dev = st.st_dev;
        ret->has_fs = true;
        return true;
}

void rt_hostrun_now(const char *dir, struct rt_hostrun_mark *ret) {
        *ret = (struct rt_hostrun_mark){0};
        clock_gettime(CLOCK_REALTIME_COARSE, &ret->coarse);
        /* Another file system may keep whole seconds, or two (FAT): its stamps are cut below
         * the coarse clock's reading */
        ret->coarse.tv_sec -= ret->coarse.tv_sec % 2;
        ret->coarse.tv_nsec = 0;
        struct stat ws;
        char parent[PATH_MAX];
        if (stat(dir, &ws) < 0)
                return;
        /* In the workspace's parent where that is the same file system: a watcher of the
         * workspace (a build's, an editor's) sees nothing of it */
        if ((size_t)snprintf(parent, sizeof parent, "%s/..", dir) < sizeof parent &&
            mark_in(parent, ws.st_dev, ret))
                return;
        (void)mark_in(dir, ws.st_dev, ret);
}

int rt_hostrun_since(const char *dir, const struct rt_hostrun_mark *since, rt_hostrun_found_fn fn,
                     void *ud, struct rtn_error *err) {
        _cleanup_close_ int top = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (top < 0)
                return rtn_err(err, errno, "open %s", dir);
        struct since s = {.top = top, .since = *since, .fn = fn, .ud = ud};
        bool whole = false;
        int r = rt_protect_walk(top, dir, found, &s, &whole, err);
        /* A workspace the command made look like a git dir (HEAD and commondir, or objects/
         * and refs/): the walk stops at such a top, and what was made inside is named too */
        if (r == 0 && whole && since->listed) {
                r = fn("", &git_dir, ud);
                if (r == 0 && lseek(top, 0, SEEK_SET) < 0) /* the listing read from the start */
                        r = rtn_err(err, errno, "read %s again", dir);
                if (r == 0)
                        r = rt_protect_walk_through(top, dir, found, &s, err);
        }
        return r;
}
