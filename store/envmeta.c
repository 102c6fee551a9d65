/* What the store keeps about an environment beside its tip: the reflog, every tip it had
 * (envs/.<env>.reflog), and the base its layers were made on (envs/.<env>.base). Both are
 * small text files, parsed strictly (they must re-encode to the same bytes, as commit
 * records do) and replaced whole through tmp/ and rename(2), in envs/ itself so that the one
 * fsync of envs/ that makes a new tip durable covers them as well (docs/store.md). */
#include "store/internal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"

#define REFLOG_MAGIC "rtn-reflog 1\n"
/* "<time> <id> <op>\n": 19 digits of an int64, the id, the longest op name. */
#define REFLOG_LINE_MAX (19 + 1 + STORE_ID_LEN + 1 + 8 + 1)
#define REFLOG_FILE_MAX (sizeof REFLOG_MAGIC + (size_t)STORE_REFLOG_MAX * REFLOG_LINE_MAX)
#define BASE_FILE_MAX 512

static const char *const reflog_ops[] = {"commit", "rollback", "import", "found"};

bool store_env_meta_name(const char *name) {
        return name[0] == '.';
}

static int meta_name(char *buf, size_t len, const char *env, const char *kind) {
        int n = snprintf(buf, len, ".%s.%s", env, kind);
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- reflog ---------------------------------------------------------------------------- */

static const char *reflog_op(const char *p, size_t n) {
        for (size_t i = 0; i < ARRAY_SIZE(reflog_ops); i++)
                if (strlen(reflog_ops[i]) == n && !memcmp(reflog_ops[i], p, n))
                        return reflog_ops[i];
        return NULL;
}

static int reflog_encode(const struct store_reflog *r, char **ret, size_t *ret_len) {
        size_t cap = sizeof REFLOG_MAGIC + r->n * REFLOG_LINE_MAX, len;
        char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        len = (size_t)snprintf(buf, cap, "%s", REFLOG_MAGIC);
        for (size_t i = 0; i < r->n; i++)
                len += (size_t)snprintf(buf + len, cap - len, "%" PRId64 " %s %s\n", r->e[i].time,
                                        r->e[i].id, r->e[i].op);
        *ret = buf;
        *ret_len = len;
        return 0;
}

/* One "<time> <id> <op>\n" line at p; the canonical spelling is checked by re-encoding. */
static int reflog_parse_line(const char *p, const char *end, struct store_reflog_entry *e,
                             const char **ret_next) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || nl - p >= REFLOG_LINE_MAX)
                return -EBADMSG;
        char line[REFLOG_LINE_MAX + 1], *sp1, *sp2, *tail;
        memcpy(line, p, (size_t)(nl - p));
        line[nl - p] = '\0';
        if (!(sp1 = strchr(line, ' ')) || !(sp2 = strchr(sp1 + 1, ' ')) ||
            sp2 - sp1 - 1 != STORE_ID_LEN)
                return -EBADMSG;
        *sp1 = *sp2 = '\0';
        errno = 0;
        long long t = strtoll(line, &tail, 10);
        if (errno || *tail || tail == line || t < 0)
                return -EBADMSG;
        memcpy(e->id, sp1 + 1, STORE_ID_SIZE);
        if (!store_id_valid(e->id) || !(e->op = reflog_op(sp2 + 1, strlen(sp2 + 1))))
                return -EBADMSG;
        e->time = t;
        *ret_next = nl + 1;
        return 0;
}

static int reflog_parse(const char *buf, size_t len, struct store_reflog *ret) {
        const char *p = buf, *end = buf + len;
        struct store_reflog r = {0};
        if (len < sizeof REFLOG_MAGIC - 1 || memcmp(p, REFLOG_MAGIC, sizeof REFLOG_MAGIC - 1))
                return -EBADMSG;
        p += sizeof REFLOG_MAGIC - 1;
        size_t cap = 0;
        int rr = 0;
        while (rr == 0 && p < end) {
                if (r.n == STORE_REFLOG_MAX) {
                        rr = -EBADMSG;
                        break;
                }
                if (r.n == cap) {
                        cap = cap ? cap * 2 : 16;
                        void *np = realloc(r.e, cap * sizeof *r.e);
                        if (!np) {
                                rr = -ENOMEM;
                                break;
                        }
                        r.e = np;
                }
                rr = reflog_parse_line(p, end, &r.e[r.n], &p);
                r.n += rr == 0;
        }
        _cleanup_free_ char *again = NULL;
        size_t alen;
        if (rr == 0 && (rr = reflog_encode(&r, &again, &alen)) == 0 &&
            (alen != len || memcmp(again, buf, len)))
                rr = -EBADMSG; /* a second spelling of the same entries */
        if (rr < 0) {
                free(r.e);
                return rr;
        }
        *ret = r;
        return 0;
}

int store_reflog_read(struct store *s, const char *env, struct store_reflog *ret) {
        char name[STORE_ENV_MAX + 16];
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = meta_name(name, sizeof name, env, "reflog");
        if (r < 0)
                return r;
        r = store_read_small(s->envsfd, name, REFLOG_FILE_MAX, &buf, &len);
        if (r == -ENOENT) {
                *ret = (struct store_reflog){0};
                return 0;
        }
        return r < 0 ? r : reflog_parse(buf, len, ret);
}

void store_reflog_free(struct store_reflog *r) {
        free(r->e);
        *r = (struct store_reflog){0};
}

/* An entry was left when the next one was made. The last one is the tip, which never
 * expires, or (a writer killed between the reflog's rename and the tip's) a tip that never
 * was, kept as if left now. */
static bool entry_live(const struct store_reflog *r, size_t i, bool last_is_tip, int64_t now,
                       int64_t expire) {
        int64_t left = i + 1 < r->n ? r->e[i + 1].time : now;
        return (i + 1 == r->n && last_is_tip) || now - left < expire;
}

static bool ends_with_tip(const struct store_reflog *r, const char *tip) {
        return r->n > 0 && tip[0] && !strcmp(r->e[r->n - 1].id, tip);
}

int store_reflog_live(const struct store_reflog *r, const char *tip, int64_t now, int64_t expire,
                      store_reflog_cb cb, void *userdata) {
        int x;
        bool last_is_tip = ends_with_tip(r, tip);
        if (tip[0] && !last_is_tip) {
                /* A tip without its entry yet: what store_reflog_stage will write. */
                struct store_reflog_entry cur = {.time = now, .op = "found"};
                memcpy(cur.id, tip, STORE_ID_SIZE);
                if ((x = cb(&cur, userdata)) != 0)
                        return x;
        }
        for (size_t i = r->n; i-- > 0;)
                if (entry_live(r, i, last_is_tip, now, expire) && (x = cb(&r->e[i], userdata)) != 0)
                        return x;
        return 0;
}

int store_reflog_prune(struct store *s, const char *env, const char *tip, int64_t now,
                       int64_t expire) {
        struct store_reflog r;
        int x = store_reflog_read(s, env, &r);
        if (x < 0)
                return x;
        size_t before = r.n;
        /* A kept entry's left time is the next kept entry's: dropping one can change it
         * only when the clock went back between entries, so this loops at most that often. */
        for (size_t n = r.n + 1; n != r.n;) {
                bool last_is_tip = ends_with_tip(&r, tip);
                n = r.n;
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                        if (entry_live(&r, i, last_is_tip, now, expire))
                                r.e[k++] = r.e[i];
                r.n = k;
        }
        char tmp[128] = "";
        _cleanup_free_ char *buf = NULL;
        size_t len;
        if (r.n < before && (x = reflog_encode(&r, &buf, &len)) == 0 &&
            (x = store_write_tmp_synced(s, buf, len, true, tmp, sizeof tmp)) == 0 &&
            (x = store_env_meta_publish(s, env, "reflog", tmp)) == 0)
                tmp[0] = '\0';
        if (tmp[0])
                (void)unlinkat(s->tmpfd, tmp, 0);
        store_reflog_free(&r);
        return x;
}

struct keep_ctx {
        struct store_reflog *out;
};

static int keep_entry(const struct store_reflog_entry *e, void *ud) {
        struct keep_ctx *k = ud;
        k->out->e[k->out->n++] = *e;
        return 0;
}

/* The entries to write: the live ones, oldest first, at most STORE_REFLOG_MAX - 1 so that
 * the new entry fits. */
static int reflog_next(const struct store_reflog *old, const char *tip, int64_t now,
                       struct store_reflog *ret) {
        struct store_reflog live = {.e = calloc(old->n + 2, sizeof *live.e)};
        if (!live.e)
                return -ENOMEM;
        struct keep_ctx k = {&live};
        (void)store_reflog_live(old, tip, now, STORE_REFLOG_EXPIRE_SEC, keep_entry, &k);
        /* Newest first from store_reflog_live: reverse, and keep the newest entries. */
        for (size_t i = 0; i < live.n / 2; i++) {
                struct store_reflog_entry t = live.e[i];
                live.e[i] = live.e[live.n - 1 - i];
                live.e[live.n - 1 - i] = t;
        }
        if (live.n > STORE_REFLOG_MAX - 1) {
                size_t drop = live.n - (STORE_REFLOG_MAX - 1);
                memmove(live.e, live.e + drop, (live.n - drop) * sizeof *live.e);
                live.n -= drop;
        }
        *ret = live;
        return 0;
}

int store_reflog_stage(struct store *s, const char *env, const char *tip, const char *id,
                       const char *op, bool sync, char *ret_tmp, size_t size) {
        struct store_reflog old = {0}, next = {0};
        int64_t now = (int64_t)time(NULL);
        int r = store_reflog_read(s, env, &old);
        if (r == 0)
                r = reflog_next(&old, tip, now, &next);
        store_reflog_free(&old);
        if (r < 0)
                return r;
        struct store_reflog_entry *e = &next.e[next.n++];
        e->time = now;
        memcpy(e->id, id, STORE_ID_SIZE);
        e->op = reflog_op(op, strlen(op));
        _cleanup_free_ char *buf = NULL;
        size_t len;
        if (!e->op)
                r = -EINVAL;
        else if ((r = reflog_encode(&next, &buf, &len)) == 0)
                r = store_write_tmp_synced(s, buf, len, sync, ret_tmp, size);
        store_reflog_free(&next);
        return r;
}

int store_env_meta_publish(struct store *s, const char *env, const char *kind, const char *tmp) {
        char name[STORE_ENV_MAX + 16];
        int r = meta_name(name, sizeof name, env, kind);
        if (r < 0)
                return r;
        return renameat(s->tmpfd, tmp, s->envsfd, name) < 0 ? negative_errno() : 0;
}

int store_env_move(struct store *s, const char *env, const char *id, const char *op) {
        char tip[STORE_ID_SIZE] = "", log_tmp[128] = "", tip_tmp[128] = "";
        int r = store_env_get(s, env, tip);
        if (r < 0 && r != -ENOENT)
                return r;
        char line[STORE_ID_SIZE + 1];
        store_env_line(id, line);
        if ((r = store_reflog_stage(s, env, tip, id, op, true, log_tmp, sizeof log_tmp)) < 0 ||
            (r = store_write_tmp_synced(s, line, strlen(line), true, tip_tmp, sizeof tip_tmp)) < 0)
                goto out;
        /* The reflog first: a tip never becomes visible without its entry, and an entry
         * whose tip rename was lost names a commit that exists (store_reflog_live). */
        if ((r = store_env_meta_publish(s, env, "reflog", log_tmp)) < 0)
                goto out;
        log_tmp[0] = '\0';
        if (renameat(s->tmpfd, tip_tmp, s->envsfd, env) < 0) {
                r = negative_errno();
                goto out;
        }
        tip_tmp[0] = '\0';
        r = store_fsync_dir(s->envsfd);
out:
        if (log_tmp[0])
                (void)unlinkat(s->tmpfd, log_tmp, 0);
        if (tip_tmp[0])
                (void)unlinkat(s->tmpfd, tip_tmp, 0);
        return r;
}

struct list_ctx {
        store_reflog_cb cb;
        void *userdata;
};

int store_reflog(struct store *s, const char *env, store_reflog_cb cb, void *userdata,
                 struct rtn_error *err) {
        if (store_env_valid(env) < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        char tip[STORE_ID_SIZE] = "";
        struct store_reflog log = {0};
        int r = store_env_get(s, env, tip);
        if (r < 0 && r != -ENOENT)
                return rtn_err(err, r, "read environment '%s'", env);
        if ((r = store_reflog_read(s, env, &log)) < 0)
                return rtn_err(err, r, "read the reflog of '%s'", env);
        r = store_reflog_live(&log, tip, (int64_t)time(NULL), STORE_REFLOG_EXPIRE_SEC, cb,
                              userdata);
        store_reflog_free(&log);
        return r;
}

/* ---- base ------------------------------------------------------------------------------ */

bool store_base_valid(const struct store_base *b) {
        size_t n = strnlen(b->id, sizeof b->id), l = strnlen(b->label, sizeof b->label);
        if (n == 0 || n > STORE_BASE_ID_MAX || l == 0 || l > STORE_BASE_LABEL_MAX ||
            strspn(b->id, "abcdefghijklmnopqrstuvwxyz0123456789:._-") != n)
                return false;
        for (size_t i = 0; i < l; i++)
                if (b->label[i] < 0x20 || b->label[i] > 0x7e)
                        return false;
        return true;
}

static int base_encode(const struct store_base *b, char *buf, size_t len) {
        int n = snprintf(buf, len, "rtn-base 1\nid %s\nlabel %s\n", b->id, b->label);
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

static int base_parse(const char *buf, size_t len, struct store_base *ret) {
        struct store_base b = {0};
        const char *id = "rtn-base 1\nid ", *nl;
        size_t il = strlen(id);
        if (len < il || memcmp(buf, id, il) || !(nl = memchr(buf + il, '\n', len - il)) ||
            (size_t)(nl - buf - il) > STORE_BASE_ID_MAX)
                return -EBADMSG;
        memcpy(b.id, buf + il, (size_t)(nl - buf) - il);
        const char *lab = nl + 1, *end = buf + len;
        if (end - lab < 7 || memcmp(lab, "label ", 6) || end[-1] != '\n' ||
            (size_t)(end - lab - 7) > STORE_BASE_LABEL_MAX)
                return -EBADMSG;
        memcpy(b.label, lab + 6, (size_t)(end - lab - 7));
        char again[BASE_FILE_MAX];
        int n = base_encode(&b, again, sizeof again);
        if (!store_base_valid(&b) || n < 0 || (size_t)n != len || memcmp(again, buf, len))
                return -EBADMSG;
        *ret = b;
        return 0;
}

static int base_read(struct store *s, const char *env, struct store_base *ret) {
        char name[STORE_ENV_MAX + 16];
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = meta_name(name, sizeof name, env, "base");
        if (r < 0 || (r = store_read_small(s->envsfd, name, BASE_FILE_MAX, &buf, &len)) < 0)
                return r;
        return base_parse(buf, len, ret);
}

int store_base_stage(struct store *s, const struct store_base *b, bool sync, char *ret_tmp,
                     size_t size) {
        char buf[BASE_FILE_MAX];
        int n = base_encode(b, buf, sizeof buf);
        if (n < 0 || !store_base_valid(b))
                return -EINVAL;
        return store_write_tmp_synced(s, buf, (size_t)n, sync, ret_tmp, size);
}

int store_base_refuse(struct rtn_error *err, const char *env, const struct store_base *have,
                      const struct store_base *want) {
        return rtn_errx(err, EMEDIUMTYPE,
                        "environment '%s' was made on %s [%s]; this run's base is %s [%s]: run "
                        "it on %s, or use another environment (--env)",
                        env, have->label, have->id, want->label, want->id, have->label);
}

int store_base_get(struct store *s, const char *env, struct store_base *ret,
                   struct rtn_error *err) {
        if (store_env_valid(env) < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        int r = base_read(s, env, ret);
        if (r == -ENOENT)
                return rtn_errx(err, ENOENT, "environment '%s' records no base", env);
        return r < 0 ? rtn_err(err, r, "read the base of '%s'", env) : 0;
}

/* Records base for env under the writer lock, unless a record appeared meanwhile. */
static int base_adopt(struct store *s, const char *env, const struct store_base *base,
                      struct store_base *ret) {
        int r = store_lock(s, true);
        if (r < 0)
                return r;
        char tmp[128] = "";
        if ((r = base_read(s, env, ret)) == -ENOENT &&
            (r = store_base_stage(s, base, true, tmp, sizeof tmp)) == 0 &&
            (r = store_env_meta_publish(s, env, "base", tmp)) == 0) {
                tmp[0] = '\0';
                *ret = *base;
                r = store_fsync_dir(s->envsfd);
        }
        if (tmp[0])
                (void)unlinkat(s->tmpfd, tmp, 0);
        store_unlock(s);
        return r;
}

int store_base_check(struct store *s, const char *env, const struct store_base *base, bool record,
                     struct rtn_error *err) {
        if (store_env_valid(env) < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        if (!store_base_valid(base))
                return rtn_errx(err, EINVAL, "invalid base identity '%s'", base->id);
        struct store_base have;
        char tip[STORE_ID_SIZE];
        int r = base_read(s, env, &have);
        if (r == -ENOENT) {
                if ((r = store_env_get(s, env, tip)) == -ENOENT && !record)
                        return 0; /* no commits: the first one records the base */
                if (r == 0 || r == -ENOENT)
                        r = base_adopt(s, env, base, &have);
        }
        if (r < 0)
                return rtn_err(err, r, "read the base of '%s'", env);
        return strcmp(have.id, base->id) ? store_base_refuse(err, env, &have, base) : 0;
}

int store_base_forget(struct store *s, const char *env, struct rtn_error *err) {
        char name[STORE_ENV_MAX + 16], tip[STORE_ID_SIZE];
        if (store_env_valid(env) < 0 || meta_name(name, sizeof name, env, "base") < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        int r = store_lock(s, true);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        r = store_env_get(s, env, tip);
        if (r == -ENOENT) {
                r = unlinkat(s->envsfd, name, 0) < 0 && errno != ENOENT ? negative_errno() : 0;
                if (r == 0)
                        r = store_fsync_dir(s->envsfd);
        } else if (r == 0) {
                r = 0; /* commits were made on it: the record stays */
        }
        store_unlock(s);
        return r < 0 ? rtn_err(err, r, "forget the base of '%s'", env) : 0;
}

/* ---- the environments themselves ------------------------------------------------------- */

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int store_env_list(struct store *s, char ***ret_names, size_t *ret_n, struct rtn_error *err) {
        DIR *d = store_opendir_at(s->envsfd);
        if (!d)
                return rtn_err(err, errno, "list environments");
        char **v = NULL;
        size_t n = 0;
        int r = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                /* A tip names an environment; so does a base record alone (one whose only
                 * changes are pending, rtn exec --keep's). */
                char name[STORE_ENV_MAX + 1];
                const char *p = de->d_name;
                size_t len = strlen(p);
                if (store_env_valid(p) == 0) {
                        snprintf(name, sizeof name, "%s", p);
                } else if (p[0] == '.' && len > 6 && !strcmp(p + len - 5, ".base") &&
                           len - 6 <= STORE_ENV_MAX) {
                        memcpy(name, p + 1, len - 6);
                        name[len - 6] = '\0';
                        char tip[STORE_ID_SIZE];
                        if (store_env_valid(name) < 0 || store_env_get(s, name, tip) != -ENOENT)
                                continue; /* listed under its tip */
                } else {
                        continue;
                }
                char **nv = realloc(v, (n + 1) * sizeof *nv);
                if (!nv || !(nv[n] = strdup(name))) {
                        v = nv ? nv : v;
                        r = rtn_err(err, ENOMEM, "list environments");
                        break;
                }
                v = nv;
                n++;
        }
        closedir(d);
        if (r < 0) {
                store_free_paths(v, n);
                return r;
        }
        if (n > 1)
                qsort(v, n, sizeof *v, cmp_names);
        *ret_names = v;
        *ret_n = n;
        return 0;
}

int store_env_remove(struct store *s, const char *env, struct rtn_error *err) {
        char reflog[STORE_ENV_MAX + 16], base[STORE_ENV_MAX + 16], tip[STORE_ID_SIZE];
        if (store_env_valid(env) < 0 || meta_name(reflog, sizeof reflog, env, "reflog") < 0 ||
            meta_name(base, sizeof base, env, "base") < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        int r = store_lock(s, true);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        r = store_env_get(s, env, tip);
        if (r == -ENOENT)
                r = faccessat(s->envsfd, base, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -ENOENT;
        /* Reflog, then base, then tip: a crash between leaves a state the store already
         * knows (a tip without reflog entries, an environment without a base record). */
        const char *names[] = {reflog, base, env};
        for (size_t i = 0; r == 0 && i < ARRAY_SIZE(names); i++)
                if (unlinkat(s->envsfd, names[i], 0) < 0 && errno != ENOENT)
                        r = negative_errno();
        if (r == 0)
                r = store_fsync_dir(s->envsfd);
        store_unlock(s);
        if (r == -ENOENT)
                return rtn_errx(err, ENOENT, "no environment '%s'", env);
        if (r < 0)
                return rtn_err(err, r, "remove environment '%s'", env);
        return 0;
}
