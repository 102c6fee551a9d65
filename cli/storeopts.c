/* What the store's verbs share (cli/commit.c, log.c, reflog.c, rollback.c, diff.c, reset.c,
 * apply.c, undo.c, gc.c, export.c, import.c, store.c): their options, the store they open, the id
 * map they run under, and how they report. Option parsing and printing only; every decision is the
 * store library's. */
#include "cli/storeopts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/term.h"
#include "common/usage.h"

#define REFLOG_DAYS_MAX 36500

enum {
        OPT_DATA_DIR = 256,
        OPT_ENV,
        OPT_UPPER,
        OPT_MAX_BYTES,
        OPT_DRY_RUN,
        OPT_REFLOG_DAYS,
        OPT_ALLOW_PROTECTED,
        OPT_FORCE
};

/* The options every store verb takes, then the verb's own (cli_store_verb.longopts). */
static const struct option common_longopts[] = {
        {"data-dir", required_argument, NULL, OPT_DATA_DIR},
        {"env", required_argument, NULL, OPT_ENV},
        {"help", no_argument, NULL, 'h'},
};
static const struct option verb_longopts[] = {
        {"message", required_argument, NULL, 'm'},
        {"upper", required_argument, NULL, OPT_UPPER},
        {"output", required_argument, NULL, 'o'},
        {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"reflog-days", required_argument, NULL, OPT_REFLOG_DAYS},
        {"allow-protected", no_argument, NULL, OPT_ALLOW_PROTECTED},
        {"patch", no_argument, NULL, 'p'},
        {"force", required_argument, NULL, OPT_FORCE},
        {"list", no_argument, NULL, 'l'},
};

#define NCOMMON (sizeof common_longopts / sizeof common_longopts[0])
#define NVERB (sizeof verb_longopts / sizeof verb_longopts[0])

/* The getopt table of verb v: the common options and those of its own it names. */
static void verb_table(const struct cli_store_verb *v, struct option *tab) {
        size_t n = 0;
        for (size_t i = 0; i < NCOMMON; i++)
                tab[n++] = common_longopts[i];
        for (size_t i = 0; i < NVERB; i++) {
                const char *name = verb_longopts[i].name, *at = v->longopts;
                size_t len = strlen(name);
                while (at && (at = strstr(at, name)) &&
                       !((at == v->longopts || at[-1] == ' ') && (!at[len] || at[len] == ' ')))
                        at += len;
                if (at)
                        tab[n++] = verb_longopts[i];
        }
        tab[n] = (struct option){0};
}

/* Takes option c: -1 to go on, else the exit code to stop with (0 after --help). */
static int set_opt(const struct cli_store_verb *v, int c, struct cli_store_opts *o) {
        char *end;
        errno = 0;
        switch (c) {
        case OPT_DATA_DIR:
                o->data_dir = optarg;
                return -1;
        case OPT_ENV:
                o->env = optarg;
                return -1;
        case 'm':
                if (strlen(optarg) > STORE_MSG_MAX)
                        return rtn_usage_error(v->name, "-m: a message of %zu bytes, at most %d",
                                               strlen(optarg), STORE_MSG_MAX);
                o->msg = optarg;
                return -1;
        case OPT_UPPER:
                o->upper = optarg;
                return -1;
        case 'o':
                o->out = optarg;
                return -1;
        case OPT_MAX_BYTES:
                o->max_bytes = strtoull(optarg, &end, 10);
                if (errno || *end || end == optarg || optarg[0] == '-')
                        return rtn_usage_error(v->name, "--max-bytes wants a number of bytes");
                return -1;
        case OPT_DRY_RUN:
                o->dry_run = true;
                return -1;
        case OPT_ALLOW_PROTECTED:
                o->allow_protected = true;
                return -1;
        case 'p':
                o->patch = true;
                return -1;
        case 'l':
                o->list = true;
                return -1;
        case OPT_FORCE:
                if (o->nforce == CLI_FORCE_MAX)
                        return rtn_usage_error(v->name, "--force: at most %d paths", CLI_FORCE_MAX);
                o->force[o->nforce++] = optarg;
                return -1;
        case OPT_REFLOG_DAYS: {
                long d = strtol(optarg, &end, 10);
                if (errno || *end || end == optarg || d < 0 || d > REFLOG_DAYS_MAX)
                        return rtn_usage_error(v->name, "--reflog-days wants 0..%d",
                                               REFLOG_DAYS_MAX);
                o->reflog_expire = (int64_t)d * 24 * 3600;
                return -1;
        }
        case 'h':
                return rtn_usage_help(v->usage);
        default: /* getopt said what */
                return rtn_usage_error(v->name, NULL);
        }
}

int cli_store_parse(int argc, char **argv, const struct cli_store_verb *v,
                    struct cli_store_opts *o) {
        struct option longopts[NCOMMON + NVERB + 1];
        char shorts[16];
        verb_table(v, longopts);
        snprintf(shorts, sizeof shorts, "h%s", v->shorts);
        *o = (struct cli_store_opts){
                .verb = v->name, .env = STORE_DEFAULT_ENV, .reflog_expire = -1};
        rtn_usage_prog(argv, v->name);
        optind = 0; /* glibc: reinitialise, each verb parses afresh */
        opterr = 1;
        int c, r;
        while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1)
                if ((r = set_opt(v, c, o)) >= 0)
                        return r;
        int nops = argc - optind;
        if (nops > v->max_ops)
                return rtn_usage_error(v->name, "unexpected operand '%s'",
                                       argv[optind + v->max_ops]);
        if (nops < v->min_ops)
                return rtn_usage_error(v->name, "missing %s", v->operand);
        o->positional = optind;
        return -1;
}

/* 1 for what the user can fix, 125 for what rtn failed at. */
int cli_store_fail(const struct cli_store_opts *o, const struct rtn_error *err) {
        rtn_term_printf(stderr, "rtn %s: %s\n", o->verb, err->msg);
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
                return RTN_EXIT_FAILURE;
        }
}

int cli_store_open(const struct cli_store_opts *o, bool ro, struct store **s,
                   struct rtn_error *err) {
        if (store_env_check(o->env, err) < 0)
                return -1;
        return (ro ? store_open_ro(o->data_dir, s, err) : store_open(o->data_dir, s, err)) < 0 ? -1
                                                                                               : 0;
}

int cli_store_env_known(const struct cli_store_opts *o, struct store *s, struct rtn_error *err) {
        char tip[STORE_ID_SIZE];
        if (!strcmp(o->env, STORE_DEFAULT_ENV))
                return 0;
        if (!s)
                return rtn_errx(err, ENOENT, "environment '%s' has no commits (the store is empty)",
                                o->env);
        return store_tip(s, o->env, tip, err);
}

/* The id map the store calls run under (runtime/sandbox/userns.c, rt_remove_tree): only a caller
 * with subordinate ids needs a user namespace for files owned by them; root reaches
 * everything, and choosing its map would cost NSS and /etc/subuid lookups for nothing
 * (*ret NULL, which those calls take as "no user namespace"). */
int cli_store_idmap(struct rt_idmap *m, const struct rt_idmap **ret, struct rtn_error *err) {
        *ret = NULL;
        if (geteuid() == 0)
                return 0;
        int r = rt_idmap_choose(m, err);
        if (r == 0)
                *ret = m;
        return r;
}

/* A path the agent named, after prefix, printed so that no byte of it can forge a line or
 * drive the terminal: quoted and escaped where it holds anything but text. */
int cli_print_path(const char *prefix, const char *path) {
        _cleanup_free_ char *abs = NULL;
        if (asprintf(&abs, "%s%s", prefix, path) < 0)
                return -ENOMEM;
        rtn_term_fputs(stdout, abs, RTN_TERM_QUOTE);
        return 0;
}

const char *cli_ws_path(const char *arg) {
        static const char top[] = "/workspace";
        const char *p = arg;
        if (!strncmp(p, top, sizeof top - 1) && (!p[sizeof top - 1] || p[sizeof top - 1] == '/'))
                p += sizeof top - 1;
        size_t n = 0;
        for (const char *c = p; *c;) {
                c += strspn(c, "/");
                size_t len = strcspn(c, "/");
                if (len == 2 && !strncmp(c, "..", 2))
                        return NULL;
                n += len && !(len == 1 && *c == '.');
                c += len;
        }
        if (!n)
                return NULL;
        char *out = strdup(p), *w = out;
        if (!out)
                return NULL;
        for (const char *c = p; *c;) {
                c += strspn(c, "/");
                size_t len = strcspn(c, "/");
                if (len && !(len == 1 && *c == '.')) {
                        if (w != out)
                                *w++ = '/';
                        memmove(w, c, len);
                        w += len;
                }
                c += len;
        }
        *w = '\0';
        return out;
}
