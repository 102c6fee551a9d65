/* Committing an overlay upper dir and comparing one against an environment's tip. A commit
 * checks that nobody else's sandbox writes the upper, that the tip is still the one the
 * upper was made on and that the base is the environment's; hashes the upper in place;
 * writes the commit record, the new tip and reflog under tmp/, flushes all of it with one
 * syncfs(2) (one call instead of an fsync per file), renames the upper to layers/<id> and the
 * record into commits/, and only then the reflog and the tip into envs/, so a crash at any
 * point leaves either the old tip or the new one, never a tip whose record or layer is
 * missing. */
#include "store/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"

static int open_upper(struct store *s, const char *upper_path, struct rtn_error *err) {
        _cleanup_close_ int fd = open(upper_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return rtn_err(err, errno, "open upper dir %s", upper_path);
        struct stat a, b;
        if (fstat(fd, &a) < 0 || fstat(s->layersfd, &b) < 0)
                return rtn_err(err, errno, "stat %s", upper_path);
        if (a.st_dev != b.st_dev)
                return rtn_errx(err, EXDEV, "upper dir %s is not on the filesystem of %s",
                                upper_path, s->dir);
        return TAKE_FD(fd);
}

/* The commit being published: its record, env's new tip and reflog (and base record, on
 * the first commit that knows it), and their temp names under tmp/. */
struct publish {
        const char *env, *upper_path, *layer;
        const struct store_base *base; /* to record, or NULL */
        bool layer_exists; /* layers/<layer> is there already: the upper is not moved */
        char id[STORE_ID_SIZE];
        char rec_tmp[128], tip_tmp[128], log_tmp[128], base_tmp[128];
};

static void drop_tmp(struct store *s, struct publish *p) {
        char *names[] = {p->rec_tmp, p->tip_tmp, p->log_tmp, p->base_tmp};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (names[i][0])
                        (void)unlinkat(s->tmpfd, names[i], 0);
}

/* Makes the layer, the record and the tip durable and visible in an order that never lets a
 * visible name point at something missing (docs/store.md, "Crash safety"). The record, the
 * tip and the reflog are written under tmp/ first so that one syncfs(2) flushes them
 * together with the upper's files; then the layer and the record get their names, and both
 * directories are fsynced, before the reflog and then the tip are renamed into envs/ and
 * envs/ is fsynced, which makes both durable. That is one syncfs and three directory
 * fsyncs, where writing each object on its own took a syncfs and five fsyncs, each a
 * journal commit and a cache flush on ext4. */
static int publish(struct store *s, struct publish *p, struct rtn_error *err) {
        if (syncfs(s->dirfd) < 0)
                return rtn_err(err, errno, "sync %s", s->dir);
        if (!p->layer_exists && renameat(AT_FDCWD, p->upper_path, s->layersfd, p->layer) < 0)
                return rtn_err(err, errno, "move %s into layers/%s", p->upper_path, p->layer);
        if (renameat(s->tmpfd, p->rec_tmp, s->commitsfd, p->id) < 0)
                return rtn_err(err, errno, "write commit %s", p->id);
        p->rec_tmp[0] = '\0';
        int r = p->layer_exists ? 0 : store_fsync_dir(s->layersfd);
        if (r < 0 || (r = store_fsync_dir(s->commitsfd)) < 0)
                return rtn_err(err, r, "sync %s", s->dir);
        if (p->base_tmp[0] && (r = store_env_meta_publish(s, p->env, "base", p->base_tmp)) < 0)
                return rtn_err(err, r, "record the base of '%s'", p->env);
        p->base_tmp[0] = '\0';
        if ((r = store_env_meta_publish(s, p->env, "reflog", p->log_tmp)) < 0)
                return rtn_err(err, r, "write the reflog of '%s'", p->env);
        p->log_tmp[0] = '\0';
        if (renameat(s->tmpfd, p->tip_tmp, s->envsfd, p->env) < 0)
                return rtn_err(err, errno, "set tip of '%s'", p->env);
        p->tip_tmp[0] = '\0';
        r = store_fsync_dir(s->envsfd);
        return r < 0 ? rtn_err(err, r, "sync %s/envs", s->dir) : 0;
}

/* Writes the commit record of layer on top of parent and makes it env's tip. */
static int write_commit(struct store *s, struct publish *p, const char *parent, const char *msg,
                        struct rtn_error *err) {
        struct store_commit_info c = {.time = (int64_t)time(NULL)};
        snprintf(c.parent, sizeof c.parent, "%s", parent);
        snprintf(c.layer, sizeof c.layer, "%s", p->layer);
        _cleanup_free_ char *rec = NULL;
        size_t len;
        int r = store_record_encode(&c, msg ? msg : "", &rec, &len);
        if (r < 0 || (r = store_id_of(rec, len, p->id)) < 0)
                return rtn_err(err, r, "encode commit");
        char line[STORE_ID_SIZE + 1];
        store_env_line(p->id, line);
        if ((r = store_write_tmp(s, rec, len, p->rec_tmp, sizeof p->rec_tmp)) < 0 ||
            (r = store_write_tmp(s, line, strlen(line), p->tip_tmp, sizeof p->tip_tmp)) < 0 ||
            (r = store_reflog_stage(s, p->env, parent, p->id, "commit", false, p->log_tmp,
                                    sizeof p->log_tmp)) < 0 ||
            (p->base &&
             (r = store_base_stage(s, p->base, false, p->base_tmp, sizeof p->base_tmp)) < 0)) {
                drop_tmp(s, p);
                return rtn_err(err, r, "write commit %s", p->id);
        }
        r = publish(s, p, err);
        drop_tmp(s, p);
        return r;
}

static int drop_upper(struct store *s, const char *upper_path) {
        char tmp[128];
        store_tmp_name(tmp, sizeof tmp, "drop");
        if (renameat(AT_FDCWD, upper_path, s->tmpfd, tmp) < 0)
                return negative_errno();
        return store_rm_rf_at(s->tmpfd, tmp);
}

static const char *short_id(const char *id) {
        return id[0] ? id : "(none)";
}

/* What must hold before anything is hashed or written: the tip is the one the upper was made
 * on, and the base is env's. Sets *ret_record when the base is to be recorded. */
static int commit_checks(struct store *s, const char *env, const char *tip,
                         const struct store_commit_opts *o, bool *ret_record,
                         struct rtn_error *err) {
        *ret_record = false;
        if (o->parent && strcmp(o->parent, tip))
                return rtn_errx(err, ESTALE,
                                "environment '%s' moved from %.12s to %.12s since this sandbox "
                                "started (another rtn committed, rolled back or imported): "
                                "nothing was committed",
                                env, short_id(o->parent), short_id(tip));
        if (!o->base)
                return 0;
        struct store_base have;
        int r = store_base_get(s, env, &have, err);
        if (r == -ENOENT) {
                *ret_record = true;
                rtn_err_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        return strcmp(have.id, o->base->id) ? store_base_refuse(err, env, &have, o->base) : 0;
}

static int commit_locked(struct store *s, const char *env, int upperfd, const char *upper_path,
                         const struct store_commit_opts *o, char ret[STORE_ID_SIZE],
                         struct rtn_error *err) {
        char id[STORE_ID_SIZE], tip[STORE_ID_SIZE] = "";
        bool record;
        int r = store_env_get(s, env, tip);
        if (r < 0 && r != -ENOENT)
                return rtn_err(err, r, "read tip of '%s'", env);
        if ((r = commit_checks(s, env, tip, o, &record, err)) < 0)
                return r;
        if ((r = store_layer_hash(upperfd, id, err)) < 0)
                return rtn_err_wrap(err, "%s", upper_path);
        if (tip[0]) {
                struct store_commit_info c;
                if ((r = store_commit_read(s, tip, &c, NULL, 0, err)) < 0)
                        return r;
                if (!strcmp(c.layer, id)) { /* same tree as the tip: nothing changes */
                        memcpy(ret, tip, STORE_ID_SIZE);
                        return 1;
                }
        }
        struct stat st;
        struct publish p = {
                .env = env, .upper_path = upper_path, .layer = id, .base = record ? o->base : NULL};
        p.layer_exists = fstatat(s->layersfd, id, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if ((r = write_commit(s, &p, tip, o->msg, err)) < 0)
                return r;
        memcpy(ret, p.id, STORE_ID_SIZE);
        if (p.layer_exists)
                (void)drop_upper(s, upper_path); /* leftovers are removed by recovery/gc */
        return 0;
}

static int commit_claimed(struct store *s, const char *env, int fd, const char *upper_path,
                          const struct store_commit_opts *o, char ret_commit[STORE_ID_SIZE],
                          struct rtn_error *err) {
        int r = store_lock(s, true);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        char out[STORE_ID_SIZE] = "";
        r = store_dir_is_empty(fd);
        if (r == 1) {
                int t = store_env_get(s, env, out);
                if (t < 0 && t != -ENOENT)
                        r = rtn_err(err, t, "read tip of '%s'", env);
                else if (t == -ENOENT)
                        out[0] = '\0';
        } else if (r == 0) {
                r = commit_locked(s, env, fd, upper_path, o, out, err);
        } else {
                r = rtn_err(err, r, "read %s", upper_path);
        }
        store_unlock(s);
        if (r >= 0)
                memcpy(ret_commit, out, STORE_ID_SIZE);
        return r;
}

int store_commit_with(struct store *s, const char *env, const char *upper_path,
                      const struct store_commit_opts *o, char ret_commit[STORE_ID_SIZE],
                      struct rtn_error *err) {
        if (store_env_valid(env) < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        if (o->msg && strlen(o->msg) > STORE_MSG_MAX)
                return rtn_errx(err, EMSGSIZE, "commit message longer than %d bytes",
                                STORE_MSG_MAX);
        if (o->base && !store_base_valid(o->base))
                return rtn_errx(err, EINVAL, "invalid base identity '%s'", o->base->id);
        _cleanup_close_ int fd = open_upper(s, upper_path, err);
        if (fd < 0)
                return fd;
        /* Nobody else's sandbox may be writing it while it is hashed and moved. */
        _cleanup_close_ int claim = -1;
        int r = o->upper_lock >= 0 ? 0 : store_upper_claim(upper_path, &claim, err);
        return r < 0 ? r : commit_claimed(s, env, fd, upper_path, o, ret_commit, err);
}

int store_commit(struct store *s, const char *env, const char *upper_path, const char *msg,
                 char ret_commit[STORE_ID_SIZE], struct rtn_error *err) {
        struct store_commit_opts o = {.msg = msg, .upper_lock = -1};
        return store_commit_with(s, env, upper_path, &o, ret_commit, err);
}

/* ---- diff ------------------------------------------------------------------------------ */

enum lookup { L_CONTINUE, L_PRESENT, L_HIDDEN };

static bool is_opaque(int layerfd, const char *path) {
        char p[PATH_MAX + 64], v[4];
        snprintf(p, sizeof p, "/proc/self/fd/%d/%s", layerfd, path);
        ssize_t n = lgetxattr(p, "user.overlay.opaque", v, sizeof v);
        return n == 1 && v[0] == 'y';
}

/* What one lowerdir says about path, checked one component at a time so no symlink inside
 * the layer is followed, with overlayfs's rules: a whiteout or a non-directory hides what
 * is below it, an opaque directory hides the lower layers' contents of that directory. */
static enum lookup layer_lookup(int layerfd, const char *path) {
        char buf[PATH_MAX];
        snprintf(buf, sizeof buf, "%s", path);
        bool opaque = false;
        for (char *q = buf;; q++) {
                bool last = (*q == '\0');
                if (*q != '/' && !last)
                        continue;
                char saved = *q;
                *q = '\0';
                struct stat st;
                if (fstatat(layerfd, buf, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return opaque ? L_HIDDEN : L_CONTINUE;
                bool whiteout = S_ISCHR(st.st_mode) && st.st_rdev == 0;
                if (last)
                        return whiteout ? L_HIDDEN : L_PRESENT;
                if (!S_ISDIR(st.st_mode))
                        return L_HIDDEN;
                opaque = opaque || is_opaque(layerfd, buf);
                *q = saved;
        }
}

struct diff_ctx {
        int *fds;
        size_t n;
        store_diff_cb cb;
        void *userdata;
};

static bool present_below(const struct diff_ctx *d, const char *path) {
        for (size_t i = 0; i < d->n; i++) {
                enum lookup l = layer_lookup(d->fds[i], path);
                if (l != L_CONTINUE)
                        return l == L_PRESENT;
        }
        return false;
}

static int diff_entry(const struct store_entry *e, void *userdata) {
        const struct diff_ctx *d = userdata;
        if (!strcmp(e->path, "."))
                return 0;
        bool below = present_below(d, e->path);
        if (e->kind == STORE_K_WHITEOUT)
                return below ? d->cb(STORE_DELETED, e->path, d->userdata) : 0;
        if (!below)
                return d->cb(STORE_ADDED, e->path, d->userdata);
        if (e->kind != STORE_K_DIR)
                return d->cb(STORE_MODIFIED, e->path, d->userdata);
        /* A merged directory is copied up whenever anything in it changes: only an opaque
         * one (its lower contents replaced) is a change of its own. */
        for (size_t i = 0; i < e->nxattrs; i++)
                if (!strcmp(e->xattrs[i].name, "user.overlay.opaque") && e->xattrs[i].len == 1 &&
                    *(const char *)e->xattrs[i].value == 'y')
                        return d->cb(STORE_MODIFIED, e->path, d->userdata);
        return 0;
}

int store_diff_layers(char *const *layers, size_t n, const char *upper_path, store_diff_cb cb,
                      void *userdata, struct rtn_error *err) {
        struct diff_ctx d = {
                .fds = calloc(n + 1, sizeof(int)), .n = 0, .cb = cb, .userdata = userdata};
        _cleanup_close_ int upper = -1;
        int r;
        if (!d.fds) {
                r = rtn_err(err, ENOMEM, "diff");
                goto out;
        }
        for (; d.n < n; d.n++)
                if ((d.fds[d.n] = open(layers[d.n], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                        r = rtn_err(err, errno, "open layer %s", layers[d.n]);
                        goto out;
                }
        upper = open(upper_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (upper < 0) {
                r = rtn_err(err, errno, "open upper dir %s", upper_path);
                goto out;
        }
        r = store_walk(upper, diff_entry, &d, err);
out:
        for (size_t i = 0; d.fds && i < d.n; i++)
                close(d.fds[i]);
        free(d.fds);
        return r;
}

int store_diff(struct store *s, const char *env, const char *upper_path, store_diff_cb cb,
               void *userdata, struct rtn_error *err) {
        char **paths = NULL;
        size_t n = 0;
        int r = store_layer_stack(s, env, &paths, &n, err);
        if (r < 0)
                return r;
        r = store_diff_layers(paths, n, upper_path, cb, userdata, err);
        store_free_paths(paths, n);
        return r;
}
