/* Opening the data dir and reading it: where the data dir is, its layout (layers/ commits/
 * envs/ tmp/ sessions/ locks/ and the lock file), recovery of a writer killed half-way, the
 * read-only queries (tips, short ids, history and the layer stack a sandbox mounts), and
 * rollback. */
#include "store/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"

int store_default_dir(char *buf, size_t len, struct rtn_error *err) {
        const char *e = getenv("RTN_DATA_DIR");
        int n;
        if (e && *e)
                n = snprintf(buf, len, "%s", e);
        else if ((e = getenv("XDG_DATA_HOME")) && *e == '/')
                n = snprintf(buf, len, "%s/rtn", e);
        else if ((e = getenv("HOME")) && *e == '/')
                n = snprintf(buf, len, "%s/.local/share/rtn", e);
        else
                return rtn_errx(err, ENOENT, "no data dir: set RTN_DATA_DIR or HOME");
        if (n < 0 || (size_t)n >= len)
                return rtn_errx(err, ENAMETOOLONG, "data dir path too long");
        return 0;
}

static int mkdir_p(const char *path) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *q = p + 1; *q; q++) {
                if (*q != '/')
                        continue;
                *q = '\0';
                if (mkdir(p, 0700) < 0 && errno != EEXIST)
                        return negative_errno();
                *q = '/';
        }
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

int store_make_dir(const char *data_dir, struct rtn_error *err) {
        /* Only when it is missing: one stat, not a mkdir per component. */
        struct stat st;
        int r = stat(data_dir, &st) < 0 && errno == ENOENT ? mkdir_p(data_dir) : 0;
        return r < 0 ? rtn_err(err, r, "create data dir %s", data_dir) : 0;
}

/* Opens dirfd/name, creating it first only when it is missing: once the data dir exists,
 * which is every open but the first, that is one openat instead of a mkdirat and an openat. */
static int open_sub(int dirfd, const char *name) {
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT)
                return fd < 0 ? negative_errno() : fd;
        if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* A writer killed mid-way leaves only names under tmp/: every other change is one rename
 * of a complete, fsynced object (docs/store.md, "Crash safety"). Writers hold the lock
 * exclusively while they have names there, so once a shared lock is granted no writer is at
 * work and an empty tmp/, the common case, means there is nothing to recover: the open
 * neither scans nor queues behind other opens, verify or export for the exclusive lock.
 * Only when something is left is the lock taken exclusively and tmp/ emptied. */
static int recover(struct store *s) {
        int r = store_lock(s, false);
        if (r < 0)
                return r;
        r = store_dir_is_empty(s->tmpfd);
        store_unlock(s);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = store_lock(s, true)) < 0)
                return r;
        r = store_rm_children_at(s->tmpfd);
        store_unlock(s);
        return r;
}

void store_close(struct store *s) {
        if (!s)
                return;
        int *fds[] = {&s->dirfd, &s->layersfd,   &s->commitsfd, &s->envsfd,
                      &s->tmpfd, &s->sessionsfd, &s->locksfd,   &s->lockfd};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                *fds[i] = rtn_safe_close(*fds[i]);
        free(s->dir);
        free(s);
}

/* Opens the parts of an existing data dir without creating or changing anything. */
static int open_parts_ro(struct store *s) {
        int *fds[] = {&s->layersfd, &s->commitsfd,  &s->envsfd,
                      &s->tmpfd,    &s->sessionsfd, &s->locksfd};
        const char *names[] = {"layers", "commits", "envs", "tmp", "sessions", "locks"};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                if ((*fds[i] = openat(s->dirfd, names[i],
                                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                        return negative_errno();
        s->lockfd = openat(s->dirfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        return s->lockfd < 0 ? negative_errno() : 0;
}

static int open_parts(struct store *s) {
        struct {
                int *fd;
                const char *name;
        } parts[] = {
                {&s->layersfd, "layers"}, {&s->commitsfd, "commits"},   {&s->envsfd, "envs"},
                {&s->tmpfd, "tmp"},       {&s->sessionsfd, "sessions"}, {&s->locksfd, "locks"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
                int fd = open_sub(s->dirfd, parts[i].name);
                if (fd < 0)
                        return fd;
                *parts[i].fd = fd;
        }
        s->lockfd = openat(s->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        return s->lockfd < 0 ? negative_errno() : 0;
}

/* Whether store_open made a store in data_dir: its lock file is the last part it makes. */
static bool store_made(const char *data_dir) {
        char lock[PATH_MAX];
        int n = snprintf(lock, sizeof lock, "%s/lock", data_dir);
        return n < 0 || (size_t)n >= sizeof lock || access(lock, F_OK) == 0 || errno != ENOENT;
}

static int open_store(const char *data_dir, bool ro, struct store **ret, struct rtn_error *err) {
        char def[PATH_MAX];
        if (!data_dir) {
                int r = store_default_dir(def, sizeof def, err);
                if (r < 0)
                        return r;
                data_dir = def;
        }
        int r = 0;
        if (ro && !store_made(data_dir)) {
                *ret = NULL; /* no store yet: an empty one, which nothing had to create */
                return 0;
        }
        if (!ro && (r = store_make_dir(data_dir, err)) < 0)
                return r;
        struct store *s = calloc(1, sizeof *s);
        if (!s)
                return rtn_err(err, ENOMEM, "open store");
        s->dirfd = s->layersfd = s->commitsfd = s->envsfd = s->tmpfd = s->sessionsfd = s->locksfd =
                s->lockfd = -1;
        s->dir = realpath(data_dir, NULL);
        if (!s->dir) {
                r = rtn_err(err, errno, "resolve data dir %s", data_dir);
                goto fail;
        }
        s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dirfd < 0 || (r = ro ? open_parts_ro(s) : open_parts(s)) < 0) {
                r = rtn_err(err, s->dirfd < 0 ? errno : -r, "open data dir %s", s->dir);
                goto fail;
        }
        if (ro) { /* a leftover under tmp/ is no name a reader follows: the next writer's */
                *ret = s;
                return 0;
        }
        if ((r = recover(s)) < 0) {
                r = rtn_err(err, r, "recover %s/tmp", s->dir);
                goto fail;
        }
        *ret = s;
        return 0;
fail:
        store_close(s);
        return r;
}

int store_open(const char *data_dir, struct store **ret, struct rtn_error *err) {
        return open_store(data_dir, false, ret, err);
}

int store_open_ro(const char *data_dir, struct store **ret, struct rtn_error *err) {
        return open_store(data_dir, true, ret, err);
}

const char *store_data_dir(const struct store *s) {
        return s->dir;
}

int store_tip(struct store *s, const char *env, char ret_id[STORE_ID_SIZE], struct rtn_error *err) {
        if (store_env_valid(env) < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        int r = store_env_get(s, env, ret_id);
        if (r == -ENOENT)
                return rtn_errx(err, ENOENT, "environment '%s' has no commits", env);
        if (r < 0)
                return rtn_err(err, r, "read environment '%s'", env);
        return 0;
}

static bool is_hex_prefix(const char *p) {
        size_t n = strlen(p);
        if (n < STORE_MIN_PREFIX || n > STORE_ID_LEN)
                return false;
        return strspn(p, "0123456789abcdef") == n;
}

int store_resolve(struct store *s, const char *env, const char *name, char ret_id[STORE_ID_SIZE],
                  struct rtn_error *err) {
        if (!name || !strcmp(name, "HEAD"))
                return store_tip(s, env, ret_id, err);
        if (!*name) /* not a spelling of HEAD: a caller that lost its argument */
                return rtn_errx(err, EINVAL, "empty commit id");
        if (!is_hex_prefix(name))
                return rtn_errx(err, EINVAL, "'%s' is not a commit id (at least %d hex digits)",
                                name, STORE_MIN_PREFIX);
        DIR *d = store_opendir_at(s->commitsfd);
        if (!d)
                return rtn_err(err, errno, "list commits");
        size_t n = strlen(name), found = 0;
        char match[STORE_ID_SIZE] = "";
        struct dirent *de;
        while ((de = readdir(d)))
                if (store_id_valid(de->d_name) && !strncmp(de->d_name, name, n)) {
                        found++;
                        memcpy(match, de->d_name, STORE_ID_SIZE);
                }
        closedir(d);
        if (found == 0)
                return rtn_errx(err, ENOENT, "no commit %s", name);
        if (found > 1)
                return rtn_errx(err, ENOTUNIQ, "commit id %s is ambiguous (%zu matches)", name,
                                found);
        memcpy(ret_id, match, STORE_ID_SIZE);
        return 0;
}

int store_log(struct store *s, const char *env, store_log_cb cb, void *userdata,
              struct rtn_error *err) {
        char cur[STORE_ID_SIZE];
        int r = store_tip(s, env, cur, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        _cleanup_free_ char *msg = malloc(STORE_MSG_MAX + 1);
        if (!msg)
                return rtn_err(err, ENOMEM, "log");
        while (cur[0]) {
                struct store_commit_info c;
                r = store_commit_read(s, cur, &c, msg, STORE_MSG_MAX + 1, err);
                if (r < 0)
                        return r;
                r = cb(&c, userdata);
                if (r != 0)
                        return r;
                memcpy(cur, c.parent, STORE_ID_SIZE);
        }
        return 0;
}

void store_free_paths(char **paths, size_t n) {
        for (size_t i = 0; paths && i < n; i++)
                free(paths[i]);
        free(paths);
}

static bool seen_layer(char **paths, size_t n, const char *p) {
        for (size_t i = 0; i < n; i++)
                if (!strcmp(paths[i], p))
                        return true;
        return false;
}

int store_layers_of(struct store *s, const char *tip, char ***ret_paths, size_t *ret_n,
                    struct rtn_error *err) {
        char cur[STORE_ID_SIZE];
        char **paths = NULL;
        size_t n = 0;
        int r;
        snprintf(cur, sizeof cur, "%s", tip);
        while (cur[0]) {
                struct store_commit_info c;
                if ((r = store_commit_read(s, cur, &c, NULL, 0, err)) < 0)
                        goto fail;
                char *p;
                if (asprintf(&p, "%s/layers/%s", s->dir, c.layer) < 0) {
                        r = rtn_err(err, ENOMEM, "layer stack");
                        goto fail;
                }
                /* A layer repeated lower down adds nothing the upper copy does not already
                 * show, and overlayfs refuses the same lowerdir twice (ELOOP). */
                if (seen_layer(paths, n, p)) {
                        free(p);
                } else {
                        char **np = realloc(paths, (n + 1) * sizeof *np);
                        if (!np) {
                                free(p);
                                r = rtn_err(err, ENOMEM, "layer stack");
                                goto fail;
                        }
                        paths = np;
                        paths[n++] = p;
                }
                memcpy(cur, c.parent, STORE_ID_SIZE);
        }
        *ret_paths = paths;
        *ret_n = n;
        return 0;
fail:
        store_free_paths(paths, n);
        return r;
}

int store_layer_stack(struct store *s, const char *env, char ***ret_paths, size_t *ret_n,
                      struct rtn_error *err) {
        char tip[STORE_ID_SIZE];
        int r = store_tip(s, env, tip, err);
        if (r == -ENOENT) {
                *ret_paths = NULL;
                *ret_n = 0;
                return 0;
        }
        return r < 0 ? r : store_layers_of(s, tip, ret_paths, ret_n, err);
}

struct reach_ctx {
        struct store *s;
        const char *target;
};

static int reaches(const struct store_reflog_entry *e, void *ud) {
        const struct reach_ctx *c = ud;
        return store_is_ancestor(c->s, c->target, e->id);
}

/* 1 when target is in the history of env's tip or of a tip its reflog keeps. */
static int rollback_reachable(struct store *s, const char *env, const char *tip,
                              const char *target) {
        struct store_reflog log;
        int r = store_reflog_read(s, env, &log);
        if (r < 0)
                return r;
        struct reach_ctx c = {s, target};
        r = store_reflog_live(&log, tip, (int64_t)time(NULL), STORE_REFLOG_EXPIRE_SEC, reaches, &c);
        store_reflog_free(&log);
        return r;
}

int store_rollback(struct store *s, const char *env, const char *id, char ret_id[STORE_ID_SIZE],
                   struct rtn_error *err) {
        char target[STORE_ID_SIZE], tip[STORE_ID_SIZE];
        int r = store_lock(s, true);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        if ((r = store_tip(s, env, tip, err)) < 0 ||
            (r = store_resolve(s, env, id, target, err)) < 0)
                goto out;
        r = rollback_reachable(s, env, tip, target);
        if (r == 0) {
                r = rtn_errx(err, ENOENT,
                             "commit %s is not in the history of '%s' nor of a tip its reflog "
                             "keeps (rtn reflog)",
                             target, env);
                goto out;
        }
        if (r < 0) {
                r = rtn_err(err, r, "walk history of '%s'", env);
                goto out;
        }
        if (strcmp(target, tip) && (r = store_env_move(s, env, target, "rollback")) < 0) {
                r = rtn_err(err, r, "set tip of '%s'", env);
                goto out;
        }
        r = 0;
        memcpy(ret_id, target, STORE_ID_SIZE);
out:
        store_unlock(s);
        return r;
}

int store_session_new(struct store *s, char **ret_dir, int *ret_lockfd, struct rtn_error *err) {
        char name[128];
        store_tmp_name(name, sizeof name, "s");
        if (mkdirat(s->sessionsfd, name, 0700) < 0)
                return rtn_err(err, errno, "create session dir %s/sessions/%s", s->dir, name);
        _cleanup_close_ int dfd = openat(s->sessionsfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int lfd = -1;
        if (dfd >= 0)
                lfd = openat(dfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0 || mkdirat(dfd, "upper", 0755) < 0 ||
            mkdirat(dfd, "work", 0700) < 0) {
                int r = rtn_err(err, errno, "set up session dir %s/sessions/%s", s->dir, name);
                (void)store_rm_rf_at(s->sessionsfd, name);
                return r;
        }
        char *p;
        if (asprintf(&p, "%s/sessions/%s", s->dir, name) < 0)
                return rtn_err(err, ENOMEM, "session dir");
        *ret_dir = p;
        *ret_lockfd = TAKE_FD(lfd);
        return 0;
}
