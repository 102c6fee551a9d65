/* CLI front ends of the store (see cmd_store.h): option parsing and printing only; every
 * decision is the store library's. */
#include "runtime/cmd_store.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/term.h"
#include "runtime/pending.h"
#include "runtime/session.h"
#include "runtime/wsover.h"
#include "store/store.h"

struct opts {
        const char *data_dir, *env, *msg, *upper, *out;
        unsigned long long max_bytes;
        bool dry_run;
        int64_t reflog_expire; /* seconds */
        int positional; /* index of the first operand in argv */
};

enum { OPT_DATA_DIR = 256, OPT_ENV, OPT_UPPER, OPT_MAX_BYTES, OPT_DRY_RUN, OPT_REFLOG_DAYS };

#define REFLOG_DAYS_MAX 36500

static int usage(const char *verb, const char *text) {
        fprintf(stderr, "rtn: usage: rtn %s [--data-dir DIR] [--env NAME] %s\n", verb, text);
        return 1;
}

/* Parses the common options plus -m/--upper/-o/--max-bytes where the verb allows them
 * (shorts lists which). Returns -1 after printing an error. */
static int parse(int argc, char **argv, const char *shorts, struct opts *o) {
        static const struct option longs[] = {
                {"data-dir", required_argument, NULL, OPT_DATA_DIR},
                {"env", required_argument, NULL, OPT_ENV},
                {"message", required_argument, NULL, 'm'},
                {"upper", required_argument, NULL, OPT_UPPER},
                {"output", required_argument, NULL, 'o'},
                {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
                {"dry-run", no_argument, NULL, OPT_DRY_RUN},
                {"reflog-days", required_argument, NULL, OPT_REFLOG_DAYS},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        *o = (struct opts){.env = STORE_DEFAULT_ENV, .reflog_expire = -1};
        char *end;
        optind = 0; /* glibc: reinitialise, each verb parses afresh */
        opterr = 1;
        int c;
        while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
                switch (c) {
                case OPT_DATA_DIR:
                        o->data_dir = optarg;
                        break;
                case OPT_ENV:
                        o->env = optarg;
                        break;
                case 'm':
                        o->msg = optarg;
                        break;
                case OPT_UPPER:
                        o->upper = optarg;
                        break;
                case 'o':
                        o->out = optarg;
                        break;
                case OPT_MAX_BYTES:
                        o->max_bytes = strtoull(optarg, NULL, 10);
                        break;
                case OPT_DRY_RUN:
                        o->dry_run = true;
                        break;
                case OPT_REFLOG_DAYS: {
                        long d = strtol(optarg, &end, 10);
                        if (*end || end == optarg || d < 0 || d > REFLOG_DAYS_MAX) {
                                fprintf(stderr, "rtn: --reflog-days wants 0..%d\n",
                                        REFLOG_DAYS_MAX);
                                return -1;
                        }
                        o->reflog_expire = (int64_t)d * 24 * 3600;
                        break;
                }
                default:
                        return -1;
                }
        }
        o->positional = optind;
        return 0;
}

/* 1 for what the user can fix, 125 for what rtn failed at. */
static int fail(const struct rtn_error *err) {
        rtn_term_printf(stderr, "rtn: %s\n", err->msg);
        switch (err->code) {
        case EINVAL:
        case ENOENT:
        case ENOTUNIQ:
        case EEXIST:
        case EPERM:
        case EFBIG:
        case EBADMSG:
        case EXDEV:
        case ENOTDIR:
        case EMSGSIZE:
        case EUCLEAN:
        case EACCES:
        case EBUSY: /* a live sandbox uses what the verb would change */
        case ESTALE:
        case EMEDIUMTYPE:
                return 1;
        default:
                return 125;
        }
}

static int open_store(const struct opts *o, struct store **s, struct rtn_error *err) {
        if (store_env_valid(o->env) < 0) {
                rtn_errx(err, EINVAL, "invalid environment name '%s'", o->env);
                return -1;
        }
        return store_open(o->data_dir, s, err) < 0 ? -1 : 0;
}

/* The id map the store calls run under (runtime/userns.c, rt_remove_tree): only a caller
 * with subordinate ids needs a user namespace for files owned by them; root reaches
 * everything, and choosing its map would cost NSS and /etc/subuid lookups for nothing
 * (*ret NULL, which those calls take as "no user namespace"). */
static int store_idmap(struct rt_idmap *m, const struct rt_idmap **ret, struct rtn_error *err) {
        *ret = NULL;
        if (geteuid() == 0)
                return 0;
        int r = rt_idmap_choose(m, err);
        if (r == 0)
                *ret = m;
        return r;
}

int rt_cmd_commit(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "m:", &o) < 0 || o.positional != argc)
                return usage("commit", "[-m MSG] [--upper DIR]");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        char id[STORE_ID_SIZE];
        int r;
        if (o.upper) {
                struct rt_idmap m;
                const struct rt_idmap *mp;
                /* Someone else's upper: refused while a live sandbox writes it. */
                struct store_commit_opts co = {.msg = o.msg ? o.msg : "", .upper_lock = -1};
                r = store_idmap(&m, &mp, &err);
                if (r == 0)
                        r = rt_store_commit(mp, s, o.env, o.upper, &co, id, &err);
        } else {
                /* The environment's pending changes (rtn exec --keep). */
                struct rt_idmap m;
                const struct rt_idmap *mp;
                r = store_idmap(&m, &mp, &err);
                if (r == 0)
                        r = rt_pending_commit(s, o.env, o.msg ? o.msg : "", mp, -1, id, &err);
        }
        store_close(s);
        if (r < 0)
                return fail(&err);
        if (r == 1)
                printf("nothing to commit%s%s\n", id[0] ? ", tip " : "", id);
        else
                printf("%s\n", id);
        return 0;
}

static int print_commit(const struct store_commit_info *c, void *userdata) {
        char when[32];
        time_t t = (time_t)c->time;
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        size_t first = strcspn(c->message, "\n");
        rtn_term_printf(stdout, "%s %s %.*s\n", c->id, when, (int)first, c->message);
        return 0;
}

int rt_cmd_log(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc)
                return usage("log", "");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        int r = store_log(s, o.env, print_commit, NULL, &err);
        store_close(s);
        return r < 0 ? fail(&err) : 0;
}

static int print_reflog(const struct store_reflog_entry *e, void *userdata) {
        char when[32];
        time_t t = (time_t)e->time;
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        printf("%s %s %s\n", e->id, when, e->op);
        return 0;
}

int rt_cmd_reflog(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc)
                return usage("reflog", "");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        int r = store_reflog(s, o.env, print_reflog, NULL, &err);
        store_close(s);
        return r < 0 ? fail(&err) : 0;
}

int rt_cmd_rollback(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc - 1)
                return usage("rollback", "ID");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        char id[STORE_ID_SIZE];
        int r = store_rollback(s, o.env, argv[o.positional], id, &err);
        store_close(s);
        if (r < 0)
                return fail(&err);
        printf("%s\n", id);
        return 0;
}

/* A path the agent named, after prefix, printed so that no byte of it can forge a line or
 * drive the terminal: quoted and escaped where it holds anything but text. */
static int print_path(const char *prefix, const char *path) {
        _cleanup_free_ char *abs = NULL;
        if (asprintf(&abs, "%s%s", prefix, path) < 0)
                return -ENOMEM;
        rtn_term_fputs(stdout, abs, RTN_TERM_QUOTE);
        return 0;
}

static int print_change(enum store_change what, const char *path, void *userdata) {
        if (what == STORE_ADDED && rt_upper_is_skeleton(path))
                return 0; /* the sandbox's own mountpoints, not a change */
        printf("%c ", (char)what);
        if (print_path("/", path) < 0)
                return -ENOMEM;
        putchar('\n');
        return 0;
}

static int print_ws_change(enum rt_ws_change what, const char *path, void *userdata) {
        printf("%c ", (char)what);
        if (print_path("/workspace/", path) < 0)
                return -ENOMEM;
        putchar('\n');
        return 0;
}

int rt_cmd_diff(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc)
                return usage("diff", "[--upper DIR]");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        char pending[4096];
        int r = 0;
        const char *upper = o.upper;
        if (!upper && rt_pending_exists(s, o.env)) {
                rt_pending_path(s, o.env, "upper", pending, sizeof pending);
                upper = pending;
        }
        if (upper)
                r = store_diff(s, o.env, upper, print_change, NULL, &err);
        /* The overlay workspace's pending changes (rtn exec --keep --workspace-mode overlay),
         * against the host dir. */
        if (r == 0 && !o.upper && rt_pending_path(s, o.env, NULL, pending, sizeof pending) == 0)
                r = rt_ws_diff(pending, NULL, print_ws_change, NULL, &err);
        store_close(s);
        return r < 0 ? fail(&err) : 0;
}

int rt_cmd_reset(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        struct rt_idmap m;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc)
                return usage("reset", "");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        const struct rt_idmap *mp;
        int r = store_idmap(&m, &mp, &err);
        char dir[4096];
        if (r == 0)
                r = rt_pending_reset(s, o.env, mp, &err);
        if (r == 0 && rt_pending_path(s, o.env, NULL, dir, sizeof dir) == 0 &&
            access(dir, F_OK) == 0)
                r = rt_ws_drop(dir, NULL, mp, &err);
        store_close(s);
        return r < 0 ? fail(&err) : 0;
}

struct apply_out {
        unsigned applied, refused;
        bool dry_run;
};

static int print_applied(enum rt_ws_change what, const char *path, const char *reason, void *ud) {
        struct apply_out *o = ud;
        if (!reason) {
                o->applied++;
                printf("%c ", (char)what);
                if (print_path("/workspace/", path) < 0)
                        return -ENOMEM;
                putchar('\n');
                return 0;
        }
        o->refused++;
        printf("refused %c ", (char)what);
        if (print_path("/workspace/", path) < 0)
                return -ENOMEM;
        printf(": %s\n", reason);
        return 0;
}

int rt_cmd_apply(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc)
                return usage("apply", "[--dry-run]");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        /* The pending changes' lock: no rtn exec --keep has the overlay mounted meanwhile. */
        char dir[4096], host[4096] = "";
        int lock = -1;
        int r = rt_pending_open(s, o.env, dir, sizeof dir, &lock, &err);
        struct apply_out out = {.dry_run = o.dry_run};
        if (r == 0) {
                (void)rt_ws_host(dir, host, sizeof host);
                r = rt_ws_apply(dir, NULL, o.dry_run, print_applied, &out, &err);
        }
        rtn_safe_close(lock);
        store_close(s);
        if (r < 0)
                return fail(&err);
        if (out.applied + out.refused == 0)
                fprintf(stderr, "rtn: no pending workspace changes\n");
        else
                fprintf(stderr, "rtn: %s%u change%s %s %s; %u refused%s\n",
                        o.dry_run ? "dry run: " : "", out.applied, out.applied == 1 ? "" : "s",
                        o.dry_run ? "would be written to" : "written to", host, out.refused,
                        out.refused ? " (left pending: rtn diff lists them, rtn reset drops them)"
                                    : "");
        return out.refused ? 1 : 0;
}

int rt_cmd_gc(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc)
                return usage("gc", "[--reflog-days N]");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        struct store_gc_stats st;
        struct rt_idmap m;
        const struct rt_idmap *mp;
        int r = store_idmap(&m, &mp, &err);
        if (r == 0)
                r = rt_store_gc(mp, s,
                                o.reflog_expire >= 0 ? o.reflog_expire : STORE_REFLOG_EXPIRE_SEC,
                                &st, &err);
        store_close(s);
        if (r < 0)
                return fail(&err);
        printf("removed %zu commits, %zu layers, %zu leftovers", st.commits, st.layers,
               st.leftovers);
        if (st.held)
                printf("; kept %zu unreachable layers running sandboxes use", st.held);
        printf("\n");
        return 0;
}

int rt_cmd_export(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "o:", &o) < 0 || o.positional < argc - 1 || !o.out)
                return usage("export", "[ID] -o FILE.tar.zst");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        const char *id = o.positional < argc ? argv[o.positional] : NULL;
        struct rt_idmap m;
        const struct rt_idmap *mp;
        int r = store_idmap(&m, &mp, &err);
        if (r == 0)
                r = rt_store_export(mp, s, o.env, id, o.out, &err);
        store_close(s);
        return r < 0 ? fail(&err) : 0;
}

int rt_cmd_import(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc - 1)
                return usage("import", "[--max-bytes N] FILE.tar.zst");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        char tip[STORE_ID_SIZE];
        int r = store_import(s, o.env, argv[o.positional], o.max_bytes, tip, &err);
        store_close(s);
        if (r < 0)
                return fail(&err);
        printf("%s\n", tip);
        return 0;
}

int rt_cmd_store(int argc, char **argv) {
        struct opts o;
        struct rtn_error err = {0};
        struct store *s;
        if (parse(argc, argv, "", &o) < 0 || o.positional != argc - 1 ||
            strcmp(argv[o.positional], "verify"))
                return usage("store", "verify");
        if (open_store(&o, &s, &err) < 0)
                return fail(&err);
        struct store_verify_stats st = {0};
        struct rt_idmap m;
        const struct rt_idmap *mp;
        int r = store_idmap(&m, &mp, &err);
        if (r == 0)
                r = rt_store_verify(mp, s, &st, &err);
        store_close(s);
        if (r < 0 && r != -EUCLEAN)
                return fail(&err);
        if (r == -EUCLEAN) {
                rtn_term_printf(stderr, "rtn: store verify: %zu problems; first: %s\n", st.bad,
                                err.msg);
                return 1;
        }
        printf("ok: %zu layers, %zu commits, %zu environments\n", st.layers, st.commits, st.envs);
        return 0;
}
