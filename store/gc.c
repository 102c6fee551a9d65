/* Garbage collection and verification. gc marks every commit and layer reachable from an
 * environment's tip or from a tip its reflog keeps, and removes the rest, except a layer a
 * live sandbox holds (hold.c); a layer is first renamed into tmp/ and only then deleted, so a
 * gc killed half-way leaves whole layers or tmp/ leftovers, which the next open removes. gc
 * refuses to delete anything if any environment's history is broken. verify rehashes
 * everything against its name. */
#include "store/internal.h"

#include <dirent.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"

struct idset {
        char (*ids)[STORE_ID_SIZE];
        size_t n, cap;
};

static int idset_add(struct idset *set, const char *id) {
        if (set->n == set->cap) {
                size_t cap = set->cap ? set->cap * 2 : 64;
                void *p = realloc(set->ids, cap * STORE_ID_SIZE);
                if (!p)
                        return -ENOMEM;
                set->ids = p;
                set->cap = cap;
        }
        memcpy(set->ids[set->n++], id, STORE_ID_SIZE);
        return 0;
}

static bool idset_has(const struct idset *set, const char *id) {
        for (size_t i = 0; i < set->n; i++)
                if (!memcmp(set->ids[i], id, STORE_ID_LEN))
                        return true;
        return false;
}

/* Reads the names in a directory; the caller frees each and the array. */
static int list_dir(int fd, char ***ret, size_t *ret_n) {
        DIR *d = store_opendir_at(fd);
        if (!d)
                return negative_errno();
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        int r = 0;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                char **nn = realloc(names, (n + 1) * sizeof *nn);
                if (!nn || !(nn[n] = strdup(de->d_name))) {
                        names = nn ? nn : names;
                        r = -ENOMEM;
                        break;
                }
                names = nn;
                n++;
        }
        closedir(d);
        *ret = names;
        *ret_n = n;
        return r;
}

static void free_list(char **names, size_t n) {
        store_free_paths(names, n);
}

/* Marks the chain from commit id down (stopping at what is marked already). */
static int mark_chain(struct store *s, const char *id, struct idset *commits, struct idset *layers,
                      struct rtn_error *err) {
        char cur[STORE_ID_SIZE];
        int r = 0;
        snprintf(cur, sizeof cur, "%s", id);
        while (r >= 0 && cur[0] && !idset_has(commits, cur)) {
                struct store_commit_info c;
                if ((r = store_commit_read(s, cur, &c, NULL, 0, err)) < 0)
                        break;
                if ((r = idset_add(commits, cur)) < 0 ||
                    (!idset_has(layers, c.layer) && (r = idset_add(layers, c.layer)) < 0))
                        return rtn_err(err, r, "gc");
                memcpy(cur, c.parent, STORE_ID_SIZE);
        }
        return r;
}

struct mark_ctx {
        struct store *s;
        struct idset *commits, *layers;
        struct rtn_error *err;
};

static int mark_tip(const struct store_reflog_entry *e, void *ud) {
        struct mark_ctx *m = ud;
        int r = mark_chain(m->s, e->id, m->commits, m->layers, m->err);
        return r < 0 ? r : 0;
}

/* Env's tip and the tips its reflog keeps at this expiry; the reflog is first rewritten
 * without the entries that expired, so that none is left naming a commit gc removes. */
static int mark_env(struct store *s, const char *env, int64_t expire, struct mark_ctx *m) {
        char tip[STORE_ID_SIZE] = "";
        struct store_reflog log;
        int64_t now = (int64_t)time(NULL);
        int r = store_env_get(s, env, tip);
        if (r < 0 && r != -ENOENT)
                return rtn_err(m->err, r, "read environment '%s'", env);
        if ((r = store_reflog_prune(s, env, tip, now, expire)) < 0 ||
            (r = store_reflog_read(s, env, &log)) < 0)
                return rtn_err(m->err, r, "read the reflog of '%s'", env);
        r = store_reflog_live(&log, tip, now, expire, mark_tip, m);
        store_reflog_free(&log);
        return r < 0 ? rtn_err_wrap(m->err, "history of '%s'", env) : 0;
}

static int mark(struct store *s, int64_t expire, struct idset *commits, struct idset *layers,
                struct rtn_error *err) {
        char **envs = NULL;
        size_t n = 0;
        struct mark_ctx m = {s, commits, layers, err};
        int r = list_dir(s->envsfd, &envs, &n);
        if (r < 0)
                r = rtn_err(err, r, "list environments");
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (!store_env_meta_name(envs[i]))
                        r = mark_env(s, envs[i], expire, &m);
        /* Pruning rewrote reflogs: durable before anything they no longer name goes. */
        if (r >= 0 && (r = store_fsync_dir(s->envsfd)) < 0)
                r = rtn_err(err, r, "sync %s/envs", s->dir);
        free_list(envs, n);
        return r;
}

/* Removes layers/<name> unless a live sandbox holds it (then 0 and *held counts it). */
static int remove_layer(struct store *s, const char *name, size_t *held) {
        _cleanup_close_ int lock = -1;
        if (store_id_valid(name)) {
                int r = store_layer_claim(s, name, &lock);
                if (r <= 0) {
                        *held += r == 0;
                        return r;
                }
        }
        char tmp[128];
        store_tmp_name(tmp, sizeof tmp, "gc");
        /* Renamed while the lock is ours: a sandbox that opens the lock file from now on finds
         * it gone, or the layer gone (hold.c). */
        if (renameat(s->layersfd, name, s->tmpfd, tmp) < 0)
                return negative_errno();
        if (lock >= 0)
                (void)unlinkat(s->locksfd, name, 0);
        int r = store_rm_rf_at(s->tmpfd, tmp);
        return r < 0 ? r : 1;
}

static int sweep_layers(struct store *s, const struct idset *keep, struct store_gc_stats *st) {
        char **names;
        size_t n;
        int r = list_dir(s->layersfd, &names, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (idset_has(keep, names[i]) && store_id_valid(names[i]))
                        continue;
                if ((r = remove_layer(s, names[i], &st->held)) > 0)
                        st->layers++;
        }
        free_list(names, n);
        return r < 0 ? r : 0;
}

/* Lock files whose layer is gone (a gc killed between the two removals), unless held. */
static int sweep_locks(struct store *s) {
        char **names;
        size_t n;
        int r = list_dir(s->locksfd, &names, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                struct stat st;
                _cleanup_close_ int lock = -1;
                if (fstatat(s->layersfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
                        continue;
                if (store_id_valid(names[i]) && store_layer_claim(s, names[i], &lock) <= 0)
                        continue;
                if (unlinkat(s->locksfd, names[i], 0) < 0 && errno != ENOENT)
                        r = negative_errno();
        }
        free_list(names, n);
        return r;
}

static int sweep_commits(struct store *s, const struct idset *keep, size_t *count) {
        char **names;
        size_t n;
        int r = list_dir(s->commitsfd, &names, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (idset_has(keep, names[i]) && store_id_valid(names[i]))
                        continue;
                if (unlinkat(s->commitsfd, names[i], 0) < 0 && errno != ENOENT)
                        r = negative_errno();
                (*count)++;
        }
        free_list(names, n);
        return r;
}

/* A session dir is live while its creator holds the flock on its lock file. */
static int sweep_sessions(struct store *s, size_t *count) {
        char **names;
        size_t n;
        int r = list_dir(s->sessionsfd, &names, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                char p[NAME_MAX + 8];
                snprintf(p, sizeof p, "%s/lock", names[i]);
                _cleanup_close_ int fd = openat(s->sessionsfd, p, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
                if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
                        continue; /* held: live */
                r = store_rm_rf_at(s->sessionsfd, names[i]);
                (*count)++;
        }
        free_list(names, n);
        return r;
}

static int sweep_tmp(struct store *s, size_t *count) {
        char **names;
        size_t n;
        int r = list_dir(s->tmpfd, &names, &n);
        for (size_t i = 0; r >= 0 && i < n; i++, (*count)++)
                r = store_rm_rf_at(s->tmpfd, names[i]);
        free_list(names, n);
        return r;
}

int store_gc_expire(struct store *s, int64_t expire_sec, struct store_gc_stats *ret_stats,
                    struct rtn_error *err) {
        struct idset commits = {0}, layers = {0};
        struct store_gc_stats st = {0};
        int r = store_lock(s, true);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        if ((r = mark(s, expire_sec, &commits, &layers, err)) < 0)
                goto out;
        if ((r = sweep_commits(s, &commits, &st.commits)) < 0 ||
            (r = store_fsync_dir(s->commitsfd)) < 0) {
                r = rtn_err(err, r, "remove unreachable commits");
                goto out;
        }
        if ((r = sweep_layers(s, &layers, &st)) < 0 || (r = store_fsync_dir(s->layersfd)) < 0 ||
            (r = sweep_locks(s)) < 0) {
                r = rtn_err(err, r, "remove unreachable layers");
                goto out;
        }
        if ((r = sweep_tmp(s, &st.leftovers)) < 0 || (r = sweep_sessions(s, &st.leftovers)) < 0) {
                r = rtn_err(err, r, "remove leftovers");
                goto out;
        }
        if (ret_stats)
                *ret_stats = st;
out:
        store_unlock(s);
        free(commits.ids);
        free(layers.ids);
        return r;
}

int store_gc(struct store *s, struct store_gc_stats *ret_stats, struct rtn_error *err) {
        return store_gc_expire(s, STORE_REFLOG_EXPIRE_SEC, ret_stats, err);
}

/* ---- verify ---------------------------------------------------------------------------- */

struct vstate {
        struct store_verify_stats st;
        struct rtn_error *err;
        struct store *s; /* and env: the reflog being checked (verify_meta) */
        const char *env;
};

static void __attribute__((format(printf, 2, 3))) bad(struct vstate *v, const char *fmt, ...) {
        if (v->st.bad++ != 0 || !v->err)
                return;
        char msg[RTN_ERROR_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        rtn_errx(v->err, EUCLEAN, "%s", msg);
}

static void verify_layer(struct store *s, struct vstate *v, const char *name) {
        struct rtn_error e;
        char id[STORE_ID_SIZE];
        _cleanup_close_ int fd =
                openat(s->layersfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        v->st.layers++;
        if (!store_id_valid(name) || fd < 0) {
                bad(v, "layers/%s: not a layer", name);
                return;
        }
        if (store_layer_hash(fd, id, &e) < 0) {
                bad(v, "layers/%s: %s", name, e.msg);
                return;
        }
        if (strcmp(id, name))
                bad(v, "layers/%s: content hashes to %s", name, id);
}

static void verify_commit(struct store *s, struct vstate *v, const char *name) {
        struct rtn_error e;
        struct store_commit_info c;
        struct stat st;
        v->st.commits++;
        if (store_commit_read(s, name, &c, NULL, 0, &e) < 0) {
                bad(v, "commits/%s: %s", name, e.msg);
                return;
        }
        if (fstatat(s->layersfd, c.layer, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                bad(v, "commit %s: layer %s missing", name, c.layer);
                return;
        }
        if (c.parent[0] && fstatat(s->commitsfd, c.parent, &st, AT_SYMLINK_NOFOLLOW) < 0)
                bad(v, "commit %s: parent %s missing", name, c.parent);
}

static int verify_live(const struct store_reflog_entry *e, void *ud) {
        struct vstate *v = ud;
        if (!v->s || fstatat(v->s->commitsfd, e->id, &(struct stat){0}, AT_SYMLINK_NOFOLLOW) < 0)
                bad(v, "reflog of '%s': commit %s missing", v->env, e->id);
        return 0;
}

/* envs/.<env>.reflog and envs/.<env>.base: well-formed, and every tip the reflog keeps is
 * there. */
static void verify_meta(struct store *s, struct vstate *v, const char *name) {
        char env[STORE_ENV_MAX + 1], tip[STORE_ID_SIZE] = "";
        const char *dot = strrchr(name, '.');
        size_t len = dot ? (size_t)(dot - name - 1) : 0;
        if (!dot || len == 0 || len > STORE_ENV_MAX) {
                bad(v, "envs/%s: not an environment's", name);
                return;
        }
        memcpy(env, name + 1, len);
        env[len] = '\0';
        if (store_env_valid(env) < 0 || (strcmp(dot, ".reflog") && strcmp(dot, ".base"))) {
                bad(v, "envs/%s: not an environment's", name);
                return;
        }
        struct store_base b;
        if (!strcmp(dot, ".base")) {
                if (store_base_get(s, env, &b, NULL) < 0)
                        bad(v, "envs/%s: malformed base record", name);
                return;
        }
        struct store_reflog log;
        if (store_reflog_read(s, env, &log) < 0) {
                bad(v, "envs/%s: malformed reflog", name);
                return;
        }
        (void)store_env_get(s, env, tip);
        v->s = s;
        v->env = env;
        (void)store_reflog_live(&log, tip, (int64_t)time(NULL), STORE_REFLOG_EXPIRE_SEC,
                                verify_live, v);
        v->s = NULL;
        store_reflog_free(&log);
}

static void verify_env(struct store *s, struct vstate *v, const char *name) {
        char tip[STORE_ID_SIZE];
        struct stat st;
        if (store_env_meta_name(name)) {
                verify_meta(s, v, name);
                return;
        }
        v->st.envs++;
        if (store_env_valid(name) < 0 || store_env_get(s, name, tip) < 0) {
                bad(v, "envs/%s: unreadable tip", name);
                return;
        }
        if (fstatat(s->commitsfd, tip, &st, AT_SYMLINK_NOFOLLOW) < 0)
                bad(v, "environment '%s': tip %s missing", name, tip);
}

static int verify_each(struct store *s, struct vstate *v, int dirfd,
                       void (*fn)(struct store *, struct vstate *, const char *)) {
        char **names;
        size_t n;
        int r = list_dir(dirfd, &names, &n);
        for (size_t i = 0; r >= 0 && i < n; i++)
                fn(s, v, names[i]);
        free_list(names, n);
        return r;
}

int store_verify(struct store *s, struct store_verify_stats *ret_stats, struct rtn_error *err) {
        struct vstate v = {.err = err};
        rtn_err_clear(err);
        int r = store_lock(s, false);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        if ((r = verify_each(s, &v, s->layersfd, verify_layer)) >= 0 &&
            (r = verify_each(s, &v, s->commitsfd, verify_commit)) >= 0)
                r = verify_each(s, &v, s->envsfd, verify_env);
        store_unlock(s);
        if (r < 0)
                return rtn_err(err, r, "list %s", s->dir);
        if (ret_stats)
                *ret_stats = v.st;
        return v.st.bad ? -EUCLEAN : 0;
}
