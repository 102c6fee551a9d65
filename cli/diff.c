/* `rtn diff [--upper DIR]`: the pending changes, against the environment's tip and, for the
 * overlay workspace, against its host dir. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>

#include "runtime/session/pending.h"
#include "runtime/session/session.h"
#include "runtime/session/wsover.h"
#include "cli/storeopts.h"

static int print_change(enum store_change what, const char *path, void *userdata) {
        if (what == STORE_ADDED && rt_upper_is_skeleton(path))
                return 0; /* the sandbox's own mountpoints, not a change */
        printf("%c ", (char)what);
        if (cli_print_path("/", path) < 0)
                return -ENOMEM;
        putchar('\n');
        return 0;
}

static int print_ws_change(enum rt_ws_change what, const char *path, void *userdata) {
        printf("%c ", (char)what);
        if (cli_print_path("/workspace/", path) < 0)
                return -ENOMEM;
        putchar('\n');
        return 0;
}

struct diff_call {
        struct store *s;
        const char *env, *upper;
};

/* As the owner of what the agent wrote (rt_userns_as_owner): a directory it made unreadable
 * is listed too. */
static int do_diff(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        const struct diff_call *a = arg;
        int r = store_diff(a->s, a->env, a->upper, print_change, NULL, err);
        fflush(stdout);
        return r;
}

static const struct cli_store_verb diff_verb = {
        .name = "diff",
        .shorts = "",
        .longopts = "upper",
        .usage = "usage: rtn diff [--data-dir DIR] [--env NAME] [--upper DIR]\n"
                 "Lists the pending changes: A added, M modified, D deleted, then the path.\n"
                 "  --upper DIR           list the changes in the upper directory DIR "
                 "instead\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 0,
        .operand = "",
};

int rt_cmd_diff(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &diff_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, true, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        if (!s && o.upper) {
                rtn_errx(&err, ENOENT, "no store yet: nothing to compare %s with", o.upper);
                return cli_store_fail(&o, &err);
        }
        if (!s) /* no store, so nothing pending */
                return 0;
        char pending[4096];
        int r = 0;
        const char *upper = o.upper;
        if (!upper && rt_pending_exists(s, o.env)) {
                rt_pending_path(s, o.env, "upper", pending, sizeof pending);
                upper = pending;
        }
        struct rt_idmap m;
        const struct rt_idmap *mp = NULL;
        if (upper && (r = cli_store_idmap(&m, &mp, &err)) == 0)
                r = rt_userns_as_owner(mp, do_diff, &(struct diff_call){s, o.env, upper}, NULL, 0,
                                       &err);
        /* The overlay workspace's pending changes (rtn exec --keep --workspace-mode overlay),
         * against the host dir. */
        if (r == 0 && !o.upper && rt_pending_path(s, o.env, NULL, pending, sizeof pending) == 0)
                r = rt_ws_diff(pending, NULL, print_ws_change, NULL, &err);
        store_close(s);
        return r < 0 ? cli_store_fail(&o, &err) : 0;
}
