/* Live users of the store: what a running sandbox reads and writes is marked by flock(2)s
 * that its rtn holds for as long as the sandbox runs, which the kernel drops when that rtn
 * dies, however it dies (flock(2): the lock goes with the last descriptor of its open file
 * description). The store's mutators test them without waiting (docs/store.md, "Live
 * users"):
 *   - a layer a sandbox mounts: a shared lock on locks/<layer id>. gc takes it exclusively
 *     before removing an unreachable layer and keeps the layer when that fails. A lock file
 *     apart from the layer, not the layer directory itself: the agent owns the mode of its
 *     upper's root, which a commit makes the layer's root, and could make it unreadable to
 *     the rtn that must open it to lock it.
 *   - an upper a sandbox writes: an exclusive lock on the file `lock` beside it in its session
 *     dir (store_session_new; rtn exec --keep's pending dir has the same shape), held by the
 *     session's owner. A commit of someone else's upper takes it without waiting first. */
#include "store/internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"

/* A stack read again this many times, each time because gc removed one of its layers
 * between the read of the tip and the lock, means the tip is being moved in a loop. */
#define STACK_TRIES 16

static int flock_wait(int fd, int how) {
        while (flock(fd, how) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return 0;
}

static bool same_file(int fd, int dirfd, const char *name) {
        struct stat a, b;
        return fstat(fd, &a) == 0 && fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
               a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int open_lock(struct store *s, const char *id) {
        int fd = openat(s->locksfd, id, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        return fd < 0 ? negative_errno() : fd;
}

/* A shared lock on layer id, or -ESTALE when gc removed the layer before we held it: gc
 * renames a layer away while it holds the lock exclusively, and unlinks the lock file after.
 * Our lock, once granted, is on a lock file still named locks/<id> whose layer is still
 * there, or the layer is gone. The wait is for a gc removing this very layer, which holds
 * the lock only across one rename. */
static int hold_layer(struct store *s, const char *id) {
        _cleanup_close_ int fd = open_lock(s, id);
        if (fd < 0)
                return fd;
        int r = flock_wait(fd, LOCK_SH);
        if (r < 0)
                return r;
        struct stat st;
        if (!same_file(fd, s->locksfd, id) ||
            fstatat(s->layersfd, id, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -ESTALE;
        return TAKE_FD(fd);
}

int store_layer_claim(struct store *s, const char *id, int *ret_fd) {
        _cleanup_close_ int fd = open_lock(s, id);
        if (fd < 0)
                return fd;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? 0 : negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 1;
}

void store_stack_free(struct store_stack *st) {
        for (size_t i = 0; st->locks && i < st->n; i++)
                rtn_safe_close(st->locks[i]);
        free(st->locks);
        store_free_paths(st->paths, st->n);
        *st = (struct store_stack){0};
}

static int hold_all(struct store *s, struct store_stack *st) {
        if (!(st->locks = malloc((st->n + 1) * sizeof *st->locks)))
                return -ENOMEM;
        for (size_t i = 0; i < st->n; i++)
                st->locks[i] = -1;
        for (size_t i = 0; i < st->n; i++) {
                const char *id = strrchr(st->paths[i], '/') + 1;
                int fd = hold_layer(s, id);
                if (fd < 0)
                        return fd;
                st->locks[i] = fd;
        }
        return 0;
}

int store_stack_get(struct store *s, const char *env, struct store_stack *ret,
                    struct rtn_error *err) {
        for (int i = 0; i < STACK_TRIES; i++) {
                struct store_stack st = {0};
                int r = store_tip(s, env, st.tip, err);
                if (r == -ENOENT) {
                        st.tip[0] = '\0';
                        rtn_err_clear(err);
                } else if (r < 0) {
                        return r;
                }
                if (st.tip[0] && (r = store_layers_of(s, st.tip, &st.paths, &st.n, err)) < 0) {
                        /* A writer moved the tip and gc took the commit it named meanwhile:
                         * read the new tip. */
                        char now[STORE_ID_SIZE];
                        if (r == -ENOENT && store_tip(s, env, now, NULL) >= 0 &&
                            strcmp(now, st.tip) != 0) {
                                rtn_err_clear(err);
                                continue;
                        }
                        return r;
                }
                r = hold_all(s, &st);
                if (r == 0) {
                        *ret = st;
                        return 0;
                }
                store_stack_free(&st);
                if (r != -ESTALE)
                        return rtn_err(err, r, "hold the layers of '%s'", env);
        }
        return rtn_errx(err, EAGAIN, "the tip of '%s' keeps moving while its layers are read", env);
}

int store_stack_of(struct store *s, const char *id, struct store_stack *ret,
                   struct rtn_error *err) {
        struct store_stack st = {0};
        if (id[0]) {
                snprintf(st.tip, sizeof st.tip, "%s", id);
                int r = store_layers_of(s, st.tip, &st.paths, &st.n, err);
                if (r < 0)
                        return r;
                if ((r = hold_all(s, &st)) < 0) {
                        store_stack_free(&st);
                        return rtn_err(err, r, "hold the layers of %s", id);
                }
        }
        *ret = st;
        return 0;
}

int store_upper_claim(const char *upper_path, int *ret_fd, struct rtn_error *err) {
        char p[PATH_MAX];
        int n = snprintf(p, sizeof p, "%s/..", upper_path);
        if (n < 0 || (size_t)n >= sizeof p)
                return rtn_errx(err, ENAMETOOLONG, "upper dir path too long");
        _cleanup_close_ int dir = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return rtn_err(err, errno, "open the dir of %s", upper_path);
        /* O_NONBLOCK: whatever `lock` is, opening it must not wait (a FIFO would). */
        _cleanup_close_ int fd =
                openat(dir, "lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0 && errno != ENOENT && errno != ELOOP)
                return rtn_err(err, errno, "open %s/../lock", upper_path);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                *ret_fd = -1; /* not a session's upper: nobody to ask */
                return 0;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK
                               ? rtn_errx(err, EBUSY,
                                          "%s is in use: a running sandbox writes it (rtn exec "
                                          "--keep, rtn serve or another commit holds %s/../lock);"
                                          " try again once it has ended",
                                          upper_path, upper_path)
                               : rtn_err(err, errno, "lock %s/../lock", upper_path);
        *ret_fd = TAKE_FD(fd);
        return 0;
}
