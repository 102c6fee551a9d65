/* `rtn env list|rm`: the environments of a data dir, and removing one (docs/store.md). */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/term.h"
#include "common/usage.h"
#include "runtime/session/pending.h"
#include "runtime/session/registry.h"
#include "cli/storeopts.h"

#define ENV_USAGE                                                                                  \
        "usage: rtn env list [--data-dir DIR]\n"                                                   \
        "       rtn env rm [--data-dir DIR] NAME...\n"                                             \
        "list: every environment: its name, tip, base, when the tip was made (UTC) and\n"          \
        "whether a change is still pending (rtn exec --keep; not after rtn apply wrote all).\n"    \
        "rm: removes environments, their history and pending changes; refused while a running\n"   \
        "sandbox uses one (rtn ps). Their layers are freed by the next rtn gc.\n"                  \
        "  --data-dir DIR        the store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn,\n"          \
        "                        ~/.local/share/rtn)\n"

static const struct cli_store_verb env_verb = {
        .name = "env",
        .usage = ENV_USAGE,
        .shorts = "",
        .longopts = "",
        .min_ops = 1,
        .max_ops = 1 << 20,
        .operand = "the sub-command (list or rm)",
};
static const struct cli_store_verb list_verb = {
        .name = "env list",
        .usage = ENV_USAGE,
        .shorts = "",
        .longopts = "",
};
static const struct cli_store_verb rm_verb = {
        .name = "env rm",
        .usage = ENV_USAGE,
        .shorts = "",
        .longopts = "",
        .min_ops = 1,
        .max_ops = 1 << 20,
        .operand = "the NAME of an environment",
};

static int list(struct store *s, struct rtn_error *err) {
        char **names = NULL;
        size_t n = 0;
        if (!s) /* no store yet: no environments */
                return 0;
        _cleanup_free_ char *msg = malloc(STORE_MSG_MAX + 1);
        if (!msg)
                return rtn_err(err, ENOMEM, "list environments");
        int r = store_env_list(s, &names, &n, err);
        if (r < 0)
                return r;
        if (n)
                rtn_term_printf(stdout, "%-24s %-12s %-20s %-21s %s\n", "NAME", "TIP", "BASE",
                                "CHANGED", "PENDING");
        for (size_t i = 0; i < n; i++) {
                char tip[STORE_ID_SIZE], when[32] = "-", short_id[13] = "-";
                struct store_commit_info c;
                struct store_base b;
                struct rtn_error ignored = {0};
                if (store_tip(s, names[i], tip, &ignored) == 0) {
                        snprintf(short_id, sizeof short_id, "%.12s", tip);
                        if (store_commit_read(s, tip, &c, msg, STORE_MSG_MAX + 1, &ignored) == 0) {
                                time_t t = (time_t)c.time;
                                struct tm tm;
                                strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ",
                                         gmtime_r(&t, &tm));
                        }
                }
                if (store_base_get(s, names[i], &b, &ignored) < 0)
                        snprintf(b.label, sizeof b.label, "-");
                /* Names and labels are checked text (store_env_valid, printable ASCII). */
                rtn_term_printf(stdout, "%-24s %-12s %-20s %-21s %s\n", names[i], short_id, b.label,
                                when, rt_pending_any(s, names[i]) ? "yes" : "no");
        }
        store_free_paths(names, n);
        return 0;
}

struct in_use {
        const char *data_dir, *env;
        int pid;
        char kind[8];
};

static void find_user(const struct rt_running *r, void *arg) {
        struct in_use *u = arg;
        if (!u->pid && !strcmp(r->env, u->env) && rt_registry_same_dir(r->data_dir, u->data_dir)) {
                u->pid = r->pid;
                snprintf(u->kind, sizeof u->kind, "%s", r->kind);
        }
}

static int rm_one(struct store *s, const char *env, const struct rt_idmap *m,
                  struct rtn_error *err) {
        struct in_use u = {.data_dir = store_data_dir(s), .env = env};
        struct rtn_error ignored = {0};
        if (store_env_check(env, err) < 0)
                return -1;
        (void)rt_registry_list(find_user, &u, &ignored);
        if (u.pid)
                return rtn_errx(err, EBUSY,
                                "environment '%s' is in use by rtn %s (pid %d): stop it first", env,
                                u.kind, u.pid);
        /* Pending changes first: a running rtn exec --keep holds them (EBUSY), and then the
         * environment stays whole. */
        char dir[4096], tip[STORE_ID_SIZE];
        struct store_base b;
        bool pending =
                rt_pending_path(s, env, NULL, dir, sizeof dir) == 0 && access(dir, F_OK) == 0;
        if (!pending && store_tip(s, env, tip, &ignored) < 0 &&
            store_base_get(s, env, &b, &ignored) < 0)
                return rtn_errx(err, ENOENT, "no environment '%s' (rtn env list)", env);
        int r = pending ? rt_pending_remove(s, env, m, err) : 0;
        /* Dropping the pending changes of an environment without commits forgets it whole. */
        if (r == 0 && (r = store_env_remove(s, env, err)) == -ENOENT)
                r = 0;
        return r;
}

int cli_cmd_env(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s = NULL;
        const char *sub = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
        if (sub && strcmp(sub, "list") && strcmp(sub, "rm"))
                return rtn_usage_error("env", "unknown sub-command '%s' (list or rm)", sub);
        int code = !sub                   ? cli_store_parse(argc, argv, &env_verb, &o)
                   : !strcmp(sub, "list") ? cli_store_parse(argc - 1, argv + 1, &list_verb, &o)
                                          : cli_store_parse(argc - 1, argv + 1, &rm_verb, &o);
        if (code >= 0)
                return code;
        if (!sub) /* options came first: the sub-command is the first operand */
                return rtn_usage_error("env", "put the sub-command first: rtn env %s ...",
                                       argv[o.positional]);
        if (!strcmp(sub, "list")) {
                if (cli_store_open(&o, true, &s, &err) < 0 || list(s, &err) < 0) {
                        if (s)
                                store_close(s);
                        return cli_store_fail(&o, &err);
                }
                if (s)
                        store_close(s);
                return 0;
        }
        struct rt_idmap m;
        const struct rt_idmap *mp;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        if (cli_store_idmap(&m, &mp, &err) < 0) {
                store_close(s);
                return cli_store_fail(&o, &err);
        }
        int ret = 0;
        for (int i = o.positional + 1; i < argc; i++) {
                struct rtn_error e = {0};
                if (rm_one(s, argv[i], mp, &e) < 0) {
                        int c = cli_store_fail(&o, &e);
                        ret = ret ? ret : c;
                        continue;
                }
                rtn_term_printf(stdout, "%s\n", argv[i]);
        }
        store_close(s);
        return ret;
}
