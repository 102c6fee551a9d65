/* What the store keeps beside an environment's tip: the reflog (every tip it had, reachable
 * by rollback and kept by gc until it expires, parsed strictly) and the base its layers were
 * made on (recorded by the first commit, refused for another base, adopted by an old env). */
#include "tests/unit/store/helpers.h"

#include <criterion/parameterized.h>
#include <time.h>

TestSuite(store_reflog, .init = t_setup, .fini = t_teardown);
TestSuite(store_base, .init = t_setup, .fini = t_teardown);

#define DAY (24LL * 3600)

struct seen {
        char ids[16][STORE_ID_SIZE];
        const char *ops[16];
        int64_t times[16];
        int n;
};

static int collect(const struct store_reflog_entry *e, void *ud) {
        struct seen *s = ud;
        cr_assert_lt(s->n, 16);
        memcpy(s->ids[s->n], e->id, STORE_ID_SIZE);
        s->ops[s->n] = e->op;
        s->times[s->n++] = e->time;
        return 0;
}

static struct seen reflog_of(struct store *s, const char *env) {
        struct seen v = {0};
        struct rtn_error err = {0};
        cr_assert_eq(store_reflog(s, env, collect, &v, &err), 0, "%s", err.msg);
        return v;
}

static bool exists(const char *dir, const char *id) {
        char p[128];
        snprintf(p, sizeof p, "data/%s/%s", dir, id);
        return access(t_path(p), F_OK) == 0;
}

/* Writes data/envs/.<env>.reflog as given. */
static void plant_reflog(const char *env, const char *content) {
        char p[128];
        snprintf(p, sizeof p, "data/envs/.%s.reflog", env);
        t_write(p, content);
}

/* The issue's case: after rollback to A, B (the tip just left) can be rolled back to,
 * is listed, and survives gc. */
Test(store_reflog, a_rollback_can_be_undone) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "default", "b", b, (const char *[]){"f=b", NULL});
        cr_assert_eq(store_rollback(s, "default", a, got, &err), 0, "%s", err.msg);
        struct seen v = reflog_of(s, "default");
        cr_assert_eq(v.n, 3);
        cr_assert_str_eq(v.ids[0], a);
        cr_assert_str_eq(v.ops[0], "rollback");
        cr_assert_str_eq(v.ids[1], b);
        cr_assert_str_eq(v.ops[1], "commit");
        cr_assert_str_eq(v.ids[2], a);
        cr_assert_eq(store_gc(s, NULL, &err), 0, "%s", err.msg);
        cr_assert(exists("commits", b), "gc removed the tip just left");
        char pre[9];
        snprintf(pre, sizeof pre, "%.8s", b);
        cr_assert_eq(store_rollback(s, "default", pre, got, &err), 0, "%s", err.msg);
        cr_assert_str_eq(got, b);
        char **paths;
        size_t n;
        cr_assert_eq(store_layer_stack(s, "default", &paths, &n, &err), 0);
        cr_assert_eq(n, 2);
        store_free_paths(paths, n);
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), 0, "%s", err.msg);
        store_close(s);
}

Test(store_reflog, empty_id_is_an_error) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "default", "b", b, (const char *[]){"f=b", NULL});
        cr_assert_eq(store_rollback(s, "default", "", got, &err), -EINVAL);
        cr_assert(strstr(err.msg, "empty commit id"), "%s", err.msg);
        cr_assert_eq(store_resolve(s, "default", "", got, &err), -EINVAL);
        cr_assert_eq(store_resolve(s, "default", NULL, got, &err), 0);
        cr_assert_str_eq(got, b);
        store_close(s);
}

/* A tip left more than STORE_REFLOG_EXPIRE_SEC ago is neither listed nor reachable, and gc
 * removes it; one left just inside the window is kept. */
Test(store_reflog, expiry) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], c[STORE_ID_SIZE], x[STORE_ID_SIZE];
        char got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "other", "b", b, (const char *[]){"g=b", NULL});
        t_commit_files(s, "other", "c", c, (const char *[]){"g=c", NULL});
        t_commit_files(s, "xenv", "x", x, (const char *[]){"h=x", NULL});
        /* default: a, then x (left 40 days ago), then c (left 29 days ago), then a again. */
        int64_t now = (int64_t)time(NULL);
        char log[1024];
        snprintf(log, sizeof log,
                 "rtn-reflog 1\n%lld %s commit\n%lld %s import\n%lld %s import\n%lld %s rollback\n",
                 (long long)(now - 50 * DAY), a, (long long)(now - 45 * DAY), x,
                 (long long)(now - 40 * DAY), c, (long long)(now - 29 * DAY), a);
        plant_reflog("default", log);
        /* other's own reflog and tip keep c: move its tip to b and let c expire there. */
        cr_assert_eq(store_rollback(s, "other", b, got, &err), 0, "%s", err.msg);
        snprintf(log, sizeof log,
                 "rtn-reflog 1\n%lld %s commit\n%lld %s commit\n%lld %s rollback\n",
                 (long long)(now - 60 * DAY), b, (long long)(now - 59 * DAY), c,
                 (long long)(now - 58 * DAY), b);
        plant_reflog("other", log);
        struct seen v = reflog_of(s, "default");
        cr_assert_eq(v.n, 2, "listed %d", v.n); /* a (tip), c (left 29 days ago) */
        cr_assert_str_eq(v.ids[0], a);
        cr_assert_str_eq(v.ids[1], c);
        cr_assert_eq(store_rollback(s, "default", x, got, &err), -ENOENT);
        cr_assert(strstr(err.msg, "not in the history"), "%s", err.msg);
        struct store_gc_stats st;
        cr_assert_eq(store_gc(s, &st, &err), 0, "%s", err.msg);
        cr_assert_eq(st.commits, 0); /* x is xenv's tip, c in default's reflog */
        cr_assert(exists("commits", c), "gc removed a tip left 29 days ago");
        cr_assert_eq(store_rollback(s, "default", c, got, &err), 0, "%s", err.msg);
        cr_assert_eq(store_rollback(s, "default", a, got, &err), 0, "%s", err.msg);
        /* An expiry of 0 keeps tips only, and leaves no reflog entry naming what it removed. */
        cr_assert_eq(store_gc_expire(s, 0, &st, &err), 0, "%s", err.msg);
        cr_assert_eq(st.commits, 1);
        cr_assert(!exists("commits", c));
        v = reflog_of(s, "default");
        cr_assert_eq(v.n, 1);
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), 0, "%s", err.msg);
        store_close(s);
}

/* A store from before the reflog: the tip it finds is recorded ("found") when the tip next
 * moves, so the first rollback does not lose it. */
Test(store_reflog, old_store_tip_is_found) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "default", "b", b, (const char *[]){"f=b", NULL});
        cr_assert_eq(unlink(t_path("data/envs/.default.reflog")), 0);
        struct seen v = reflog_of(s, "default");
        cr_assert_eq(v.n, 1);
        cr_assert_str_eq(v.ops[0], "found");
        cr_assert_eq(store_rollback(s, "default", a, got, &err), 0, "%s", err.msg);
        v = reflog_of(s, "default");
        cr_assert_eq(v.n, 2);
        cr_assert_str_eq(v.ids[1], b);
        cr_assert_str_eq(v.ops[1], "found");
        cr_assert_eq(store_rollback(s, "default", b, got, &err), 0, "%s", err.msg);
        store_close(s);
}

/* Strict parsing: anything but the canonical spelling is refused, and then gc removes
 * nothing and verify names the file. */
/* "@" stands for a commit id, "#" for one hex digit short of one. */
static const char *const bad_reflogs[] = {
        "rtn-reflog 2\n",
        "rtn-reflog 1\n1 @ commit", /* no newline */
        "rtn-reflog 1\n01 @ commit\n", /* leading zero */
        "rtn-reflog 1\n+1 @ commit\n", /* sign */
        "rtn-reflog 1\n-1 @ commit\n", /* negative */
        "rtn-reflog 1\n1 @ commit \n", /* trailing space */
        "rtn-reflog 1\n1  @ commit\n", /* two spaces */
        "rtn-reflog 1\n1 @ merge\n", /* unknown op */
        "rtn-reflog 1\n1 # commit\n", /* short id */
        "rtn-reflog 1\n99999999999999999999 @ commit\n", /* past int64 */
        "rtn-reflog 1\n1 @ commit\n\n", /* empty line */
        "rtn-reflog 1\n1 @ commit\0\n", /* NUL (the length says so) */
};

/* Expands bad_reflogs[i] with id into buf; returns its length. */
static size_t expand(size_t i, const char *id, char *buf, size_t cap) {
        const char *t = bad_reflogs[i];
        size_t tl = i == 11 ? strlen(t) + 2 : strlen(t), n = 0;
        for (size_t k = 0; k < tl; k++) {
                size_t add = t[k] == '@' ? STORE_ID_LEN : t[k] == '#' ? STORE_ID_LEN - 1 : 1;
                cr_assert_lt(n + add, cap);
                memcpy(buf + n, t[k] == '@' || t[k] == '#' ? id : t + k, add);
                n += add;
        }
        return n;
}

/* Criterion runs each case in a fresh exec of the binary: pass indexes, not pointers. */
ParameterizedTestParameters(store_reflog, refuses_malformed) {
        static size_t idx[ARRAY_SIZE(bad_reflogs)];
        for (size_t i = 0; i < ARRAY_SIZE(bad_reflogs); i++)
                idx[i] = i;
        return cr_make_param_array(size_t, idx, ARRAY_SIZE(bad_reflogs));
}

ParameterizedTest(size_t *i, store_reflog, refuses_malformed) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "default", "b", b, (const char *[]){"f=b", NULL});
        char log[512];
        size_t n = expand(*i, a, log, sizeof log);
        int fd = open(t_path("data/envs/.default.reflog"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        cr_assert_eq(write(fd, log, n), (ssize_t)n);
        close(fd);
        cr_assert_lt(store_reflog(s, "default", collect, &(struct seen){0}, &err), 0,
                     "case %zu accepted", *i);
        cr_assert_lt(store_rollback(s, "default", a, got, &err), 0);
        cr_assert_lt(store_gc_expire(s, 0, NULL, &err), 0);
        cr_assert(exists("commits", a));
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), -EUCLEAN);
        cr_assert(strstr(err.msg, "malformed reflog"), "%s", err.msg);
        store_close(s);
}

/* Bounded: a flood of commits keeps the newest STORE_REFLOG_MAX entries. */
Test(store_reflog, bounded) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        size_t cap = 64 + (size_t)STORE_REFLOG_MAX * 100;
        char *log = malloc(cap);
        size_t len = (size_t)snprintf(log, cap, "rtn-reflog 1\n");
        for (int i = 0; i < STORE_REFLOG_MAX; i++)
                len += (size_t)snprintf(log + len, cap - len, "%lld %s rollback\n",
                                        (long long)time(NULL), a);
        int fd = open(t_path("data/envs/.default.reflog"), O_WRONLY | O_TRUNC, 0600);
        cr_assert_eq(write(fd, log, len), (ssize_t)len);
        close(fd);
        free(log);
        char b[STORE_ID_SIZE];
        t_commit_files(s, "default", "b", b, (const char *[]){"f=b", NULL});
        struct stat st;
        cr_assert_eq(stat(t_path("data/envs/.default.reflog"), &st), 0);
        cr_assert_leq(st.st_size, (off_t)(16 + STORE_REFLOG_MAX * 94));
        cr_assert_eq(store_rollback(s, "default", a, got, &err), 0, "%s", err.msg);
        store_close(s);
}

static const struct store_base host = {"host", "the host"};
static const struct store_base deb = {"rootfs:0123456789abcdef", "rootfs deb"};

static int commit_on(struct store *s, const char *env, const struct store_base *base,
                     const char *file, char id[STORE_ID_SIZE], struct rtn_error *err) {
        static int n;
        char up[32], f[64];
        snprintf(up, sizeof up, "bu%d", n++);
        t_mkdir(up);
        snprintf(f, sizeof f, "%s/%s", up, file);
        t_write(f, file);
        struct store_commit_opts o = {.msg = "m", .base = base, .upper_lock = -1};
        return store_commit_with(s, env, t_path(up), &o, id, err);
}

/* The issue's case: packages committed on a rootfs, then a run on the host base. */
Test(store_base, recorded_by_the_first_commit_and_refused_for_another) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE];
        struct rtn_error err = {0};
        struct store_base got;
        cr_assert_eq(store_base_check(s, "default", &host, false, &err), 0); /* no commits */
        cr_assert_eq(store_base_get(s, "default", &got, &err), -ENOENT);
        cr_assert_eq(commit_on(s, "default", &deb, "jq", id, &err), 0, "%s", err.msg);
        cr_assert_eq(store_base_get(s, "default", &got, &err), 0, "%s", err.msg);
        cr_assert_str_eq(got.id, deb.id);
        cr_assert_str_eq(got.label, deb.label);
        cr_assert_eq(store_base_check(s, "default", &deb, false, &err), 0, "%s", err.msg);
        cr_assert_eq(store_base_check(s, "default", &host, false, &err), -EMEDIUMTYPE);
        cr_assert(strstr(err.msg, "rootfs deb") && strstr(err.msg, "the host") &&
                          strstr(err.msg, deb.id),
                  "%s", err.msg);
        cr_assert_eq(commit_on(s, "default", &host, "x", id, &err), -EMEDIUMTYPE);
        cr_assert(exists("..", "bu1"), "a refused commit moved the upper");
        cr_assert_eq(commit_on(s, "other", &host, "x2", id, &err), 0, "%s", err.msg);
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), 0, "%s", err.msg);
        store_close(s);
}

/* An env with commits and no record (an older store, an import) takes the first run's base;
 * a kept run records at once; a record without commits is forgotten on request. */
Test(store_base, adopted_recorded_forgotten) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE];
        struct rtn_error err = {0};
        struct store_base got;
        t_commit_files(s, "default", "old", id, (const char *[]){"a=1", NULL});
        cr_assert_eq(store_base_get(s, "default", &got, &err), -ENOENT);
        cr_assert_eq(store_base_check(s, "default", &deb, false, &err), 0, "%s", err.msg);
        cr_assert_eq(store_base_get(s, "default", &got, &err), 0);
        cr_assert_str_eq(got.id, deb.id);
        cr_assert_eq(store_base_check(s, "default", &host, false, &err), -EMEDIUMTYPE);
        cr_assert_eq(store_base_forget(s, "default", &err), 0); /* has commits: stays */
        cr_assert_eq(store_base_get(s, "default", &got, &err), 0);
        cr_assert_eq(store_base_check(s, "kept", &deb, true, &err), 0, "%s", err.msg);
        cr_assert_eq(store_base_check(s, "kept", &host, false, &err), -EMEDIUMTYPE);
        cr_assert_eq(store_base_forget(s, "kept", &err), 0);
        cr_assert_eq(store_base_check(s, "kept", &host, false, &err), 0, "%s", err.msg);
        store_close(s);
}

static const char *const bad_bases[] = {
        "rtn-base 1\nid host\nlabel the host", /* no newline */
        "rtn-base 1\nid Host\nlabel the host\n", /* upper case */
        "rtn-base 1\nid \nlabel the host\n", /* empty id */
        "rtn-base 1\nid host\nlabel \n", /* empty label */
        "rtn-base 1\nid host\nlabel a\tb\n", /* control byte */
        "rtn-base 1\nid host\nlabel x\nlabel y\n", /* two labels */
        "rtn-base 2\nid host\nlabel the host\n",   "rtn-base 1\nlabel the host\nid host\n",
};

ParameterizedTestParameters(store_base, refuses_malformed) {
        static size_t idx[ARRAY_SIZE(bad_bases)];
        for (size_t i = 0; i < ARRAY_SIZE(bad_bases); i++)
                idx[i] = i;
        return cr_make_param_array(size_t, idx, ARRAY_SIZE(bad_bases));
}

ParameterizedTest(size_t *i, store_base, refuses_malformed) {
        struct store *s = t_open("data");
        char id[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", id, (const char *[]){"a=1", NULL});
        t_write("data/envs/.default.base", bad_bases[*i]);
        cr_assert_lt(store_base_check(s, "default", &host, false, &err), 0, "case %zu", *i);
        cr_assert_neq(err.code, EMEDIUMTYPE);
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), -EUCLEAN);
        cr_assert(strstr(err.msg, "malformed base"), "%s", err.msg);
        store_close(s);
}

TestSuite(store_envs, .init = t_setup, .fini = t_teardown);

/* Listed: every name with a tip or a base record alone, sorted, never a meta file; removed:
 * tip, reflog and base go, the name starts afresh, and gc then frees what only it held. */
Test(store_envs, listed_and_removed) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], tip[STORE_ID_SIZE];
        struct rtn_error err = {0};
        struct store_base got;
        char **names;
        size_t n;
        t_commit_files(s, "zeta", "z", a, (const char *[]){"z=1", NULL});
        t_commit_files(s, "alpha", "a", b, (const char *[]){"a=1", NULL});
        cr_assert_eq(store_base_check(s, "alpha", &deb, true, &err), 0, "%s", err.msg);
        cr_assert_eq(store_base_check(s, "kept", &deb, true, &err), 0, "%s", err.msg);
        cr_assert_eq(store_env_list(s, &names, &n, &err), 0, "%s", err.msg);
        cr_assert_eq(n, 3);
        cr_assert_str_eq(names[0], "alpha");
        cr_assert_str_eq(names[1], "kept");
        cr_assert_str_eq(names[2], "zeta");
        store_free_paths(names, n);

        cr_assert_eq(store_env_remove(s, "alpha", &err), 0, "%s", err.msg);
        cr_assert_eq(store_env_remove(s, "kept", &err), 0, "%s", err.msg);
        cr_assert_eq(store_tip(s, "alpha", tip, &err), -ENOENT);
        cr_assert_eq(store_base_get(s, "alpha", &got, &err), -ENOENT);
        cr_assert_eq(access(t_path("data/envs/.alpha.reflog"), F_OK), -1);
        cr_assert_eq(store_env_list(s, &names, &n, &err), 0, "%s", err.msg);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(names[0], "zeta");
        store_free_paths(names, n);
        struct store_gc_stats st;
        cr_assert_eq(store_gc(s, &st, &err), 0, "%s", err.msg);
        cr_assert_eq(st.commits, 1);
        cr_assert_eq(st.layers, 1);
        cr_assert(!exists("commits", b));
        cr_assert(exists("commits", a));
        /* the name starts afresh: another base is fine now */
        cr_assert_eq(store_base_check(s, "alpha", &host, true, &err), 0, "%s", err.msg);
        store_close(s);
}

Test(store_envs, refused) {
        struct store *s = t_open("data");
        struct rtn_error err = {0};
        cr_assert_eq(store_env_remove(s, "nope", &err), -ENOENT);
        cr_assert_str_eq(err.msg, "no environment 'nope'");
        cr_assert_eq(store_env_remove(s, "../x", &err), -EINVAL);
        cr_assert_eq(store_env_remove(s, ".x", &err), -EINVAL);
        /* a meta file's name is never an environment's */
        t_write("data/envs/.ghost.reflog", "rtn-reflog 1\n");
        char **names;
        size_t n;
        cr_assert_eq(store_env_list(s, &names, &n, &err), 0, "%s", err.msg);
        cr_assert_eq(n, 0);
        store_free_paths(names, n);
        store_close(s);
}
