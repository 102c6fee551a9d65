/* Pending changes: an environment's persistent upper, <data>/pending/<env>/{upper,work}, the
 * CLI's counterpart of a working tree. `rtn exec --keep` runs on the tip plus the pending
 * changes and adds to them (they are its top layer, and its tmpfs upper is laid over them at
 * the end: runtime/session/upper.h); `rtn diff` shows them, `rtn commit` turns them into a commit,
 * `rtn reset` drops them. One user at a time per environment (flock on pending/<env>/lock,
 * the session-dir shape of store_upper_claim): two runs would each lay their changes over
 * the same tree, and a commit or reset must not move or empty it under a running --keep
 * command. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "runtime/session/pending.h"
#include "runtime/session/session.h"
#include "runtime/session/upper.h"
#include "runtime/session/wsover.h"

int rt_pending_path(struct store *s, const char *env, const char *sub, char *buf, size_t len) {
        int n = snprintf(buf, len, "%s/pending/%s%s%s", store_data_dir(s), env, sub ? "/" : "",
                         sub ? sub : "");
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int mkdir_if(const char *path, mode_t mode, struct rtn_error *err) {
        if (mkdir(path, mode) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", path);
        return 0;
}

static int busy(struct rtn_error *err, const char *env) {
        return rtn_errx(err, EBUSY,
                        "the pending changes of environment %s are in use by a running rtn "
                        "exec --keep (or a commit or reset of them); try again once it has ended",
                        env);
}

/* How long claim waits for a holder: what only reads or checks the pending changes (rtn
 * undo and its --list, a commit or reset that finds nothing) holds the lock for a moment, and
 * an rtn exec --keep started in that moment is not refused for it; a running --keep run,
 * which holds it to its end, is refused once this has passed. */
#define CLAIM_WAIT_USEC (1 * RTN_USEC_PER_SEC)
#define CLAIM_PAUSE_USEC 10000u

/* flock(LOCK_EX) of lk, waiting at most CLAIM_WAIT_USEC: 0, or -errno (-EWOULDBLOCK: held). */
static int lock_briefly(int lk) {
        for (uint64_t waited = 0;; waited += CLAIM_PAUSE_USEC) {
                if (flock(lk, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                if (errno != EWOULDBLOCK || waited >= CLAIM_WAIT_USEC)
                        return negative_errno();
                nanosleep(
                        &(struct timespec){.tv_nsec = (long)(CLAIM_PAUSE_USEC * RTN_NSEC_PER_USEC)},
                        NULL);
        }
}

/* Takes pending/<env>/lock, waiting only for a short holder (created when create). */
static int claim(struct store *s, const char *env, bool create, int *ret_lock,
                 struct rtn_error *err) {
        char p[4096];
        if (rt_pending_path(s, env, "lock", p, sizeof p) < 0)
                return rtn_errx(err, ENAMETOOLONG, "data dir path too long");
        _cleanup_close_ int lk =
                open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
        if (lk < 0 && errno == ENOENT && !create) {
                *ret_lock = -1;
                return 0;
        }
        if (lk < 0)
                return rtn_err(err, errno, "open %s", p);
        int r = lock_briefly(lk);
        if (r < 0)
                return r == -EWOULDBLOCK ? busy(err, env) : rtn_err(err, -r, "lock %s", p);
        *ret_lock = TAKE_FD(lk);
        return 0;
}

int rt_pending_lock(struct store *s, const char *env, int *ret_lock, struct rtn_error *err) {
        return claim(s, env, false, ret_lock, err);
}

int rt_pending_open(struct store *s, const char *env, char *dir, size_t len, int *ret_lock,
                    struct rtn_error *err) {
        char p[4096];
        int r;
        static const char *const subs[] = {NULL, "upper"};
        snprintf(p, sizeof p, "%s/pending", store_data_dir(s));
        if ((r = mkdir_if(p, 0700, err)) < 0)
                return r;
        /* The upper's top is the sandbox's "/": it must be searchable by the agent. */
        static const mode_t modes[] = {0700, 0755};
        _cleanup_close_ int lk = -1;
        for (size_t i = 0; i < 2; i++) {
                if (rt_pending_path(s, env, subs[i], p, sizeof p) < 0)
                        return rtn_errx(err, ENAMETOOLONG, "data dir path too long");
                if ((r = mkdir_if(p, modes[i], err)) < 0)
                        return r;
                /* Locked before upper/ is made: a reset removing it holds it. */
                if (i == 0 && (r = claim(s, env, true, &lk, err)) < 0)
                        return r;
        }
        rt_pending_path(s, env, NULL, dir, len);
        *ret_lock = TAKE_FD(lk);
        return 0;
}

bool rt_pending_exists(struct store *s, const char *env) {
        char p[4096];
        return rt_pending_path(s, env, "upper", p, sizeof p) == 0 && access(p, F_OK) == 0;
}

/* Whether the tree at dir/name holds a change: anything but a directory, or an opaque one
 * (overlayfs's xattr). A directory it cannot read, or one deeper than it looks, counts as
 * one: the answer errs towards "pending". */
static bool holds_change(int dir, const char *name, unsigned depth) {
        char v[8];
        _cleanup_close_ int fd =
                openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return errno != ENOENT;
        if (depth > 32 || fgetxattr(fd, "user.overlay.opaque", v, sizeof v) >= 0 ||
            fgetxattr(fd, "trusted.overlay.opaque", v, sizeof v) >= 0)
                return true;
        int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = dup < 0 ? NULL : fdopendir(dup);
        if (!d) {
                if (dup >= 0)
                        close(dup);
                return true;
        }
        bool found = false;
        struct dirent *e;
        while (!found && (e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                struct stat st;
                found = fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                        !S_ISDIR(st.st_mode) || holds_change(fd, e->d_name, depth + 1);
        }
        closedir(d);
        return found;
}

bool rt_pending_any(struct store *s, const char *env) {
        char p[4096];
        if (rt_pending_path(s, env, NULL, p, sizeof p) < 0)
                return false;
        _cleanup_close_ int d = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0)
                return false;
        _cleanup_close_ int ws = openat(d, "ws", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return holds_change(d, "upper", 0) || (ws >= 0 && holds_change(ws, "upper", 0));
}

static int reset_held(struct store *s, const char *env, const struct rt_idmap *m,
                      struct rtn_error *err) {
        char dir[4096];
        if (rt_pending_path(s, env, NULL, dir, sizeof dir) < 0)
                return rtn_errx(err, ENAMETOOLONG, "data dir path too long");
        int r = 0;
        if (access(dir, F_OK) == 0) {
                /* work/ is what the pending upper's own overlay left, before it was a layer */
                r = rt_remove_tree(m, dir, "upper", err);
                if (r == 0)
                        r = rt_remove_tree(m, dir, "work", err);
                if (r == 0)
                        r = rt_remove_tree(m, dir, RT_PENDING_SIZE, err);
                if (r == 0) /* rtn undo goes back to here, not past it */
                        r = rt_remove_tree(m, dir, RT_UNDO_DIR, err);
        }
        /* Its pending changes gone, an env without commits is tied to no base any more. */
        return r < 0 ? r : store_base_forget(s, env, err);
}

int rt_pending_reset(struct store *s, const char *env, const struct rt_idmap *m,
                     struct rtn_error *err) {
        _cleanup_close_ int lk = -1;
        int r = claim(s, env, false, &lk, err);
        return r < 0 ? r : reset_held(s, env, m, err);
}

int rt_pending_remove(struct store *s, const char *env, const struct rt_idmap *m,
                      struct rtn_error *err) {
        _cleanup_close_ int lk = -1;
        char dir[4096], root[4096];
        int r = claim(s, env, false, &lk, err);
        if (r == 0)
                r = reset_held(s, env, m, err);
        if (r == 0 && rt_pending_path(s, env, NULL, dir, sizeof dir) == 0 &&
            access(dir, F_OK) == 0 && (r = rt_ws_drop(dir, NULL, m, err)) == 0) {
                /* The lock goes with the dir while held: nothing can claim it meanwhile. */
                snprintf(root, sizeof root, "%s/pending", store_data_dir(s));
                r = rt_remove_tree(m, root, env, err);
        }
        return r;
}

int rt_pending_commit(struct store *s, const char *env, const char *msg, const struct rt_idmap *m,
                      int lock, char ret_id[STORE_ID_SIZE], struct rtn_error *err) {
        char upper[4096];
        if (!rt_pending_exists(s, env)) {
                ret_id[0] = '\0';
                (void)store_tip(s, env, ret_id, NULL);
                return 1;
        }
        _cleanup_close_ int own = -1;
        int r = lock >= 0 ? 0 : claim(s, env, true, &own, err);
        if (r < 0)
                return r;
        rt_pending_path(s, env, "upper", upper, sizeof upper);
        rt_upper_prune(upper);
        /* No parent check: pending changes are the CLI's working tree, carried across tips. */
        struct store_commit_opts o = {.msg = msg, .upper_lock = lock >= 0 ? lock : own};
        r = rt_store_commit(m, s, env, upper, &o, ret_id, err);
        if (r < 0)
                return r;
        /* The upper was moved into the store (or held nothing new): start afresh. */
        int q = reset_held(s, env, m, err);
        return q < 0 ? q : r;
}
