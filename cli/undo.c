/* `rtn undo [N]`: the pending changes go back to before the last N `rtn exec --keep` runs
 * (runtime/session/pending.h, rt_pending_undo); `rtn undo --list` names the runs it can take
 * back, newest first. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/cleanup.h"
#include "common/term.h"
#include "common/usage.h"
#include "runtime/session/pending.h"
#include "runtime/session/session.h"
#include "cli/storeopts.h"

static const struct cli_store_verb undo_verb = {
        .name = "undo",
        .shorts = "l",
        .longopts = "list",
        .usage = "usage: rtn undo [--data-dir DIR] [--env NAME] [N]\n"
                 "       rtn undo [--data-dir DIR] [--env NAME] --list\n"
                 "Puts the pending changes back as they were before the last N rtn exec --keep\n"
                 "runs (default 1), and forgets those runs. Runs before the last rtn commit,\n"
                 "rtn reset or rtn apply cannot be undone.\n"
                 "  -l, --list            the runs rtn undo can take back, newest "
                 "first\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 1,
        .operand = "",
};

static void print_step(const char *prefix, const struct rt_pending_step *s) {
        rtn_term_printf(stdout, "%srun %u (%llu paths, %llu bytes): %s\n", prefix, s->num,
                        (unsigned long long)s->records, (unsigned long long)s->bytes, s->cmd);
}

static int list(struct store *s, const struct cli_store_opts *o, struct rtn_error *err) {
        _cleanup_free_ struct rt_pending_step *v = NULL;
        size_t n = 0;
        unsigned dropped = 0;
        int r = rt_pending_steps(s, o->env, &v, &n, &dropped, err);
        if (r < 0)
                return r;
        if (n)
                printf("RUN  ENDED                 PATHS  BYTES       COMMAND\n");
        for (size_t i = n; i-- > 0;) {
                char when[32];
                struct tm tm;
                time_t t = (time_t)v[i].when_sec;
                strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
                rtn_term_printf(stdout, "%-4u %-21s %-6llu %-11llu %s\n", v[i].num, when,
                                (unsigned long long)v[i].records, (unsigned long long)v[i].bytes,
                                v[i].cmd);
        }
        if (dropped)
                printf("(%u older runs dropped: --undo-depth, --undo-bytes)\n", dropped);
        return 0;
}

int cli_cmd_undo(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        struct rt_idmap m;
        int code = cli_store_parse(argc, argv, &undo_verb, &o);
        if (code >= 0)
                return code;
        unsigned long n = 1;
        if (o.positional < argc) {
                char *end;
                const char *a = argv[o.positional];
                errno = 0;
                n = strtoul(a, &end, 10);
                if (o.list)
                        return rtn_usage_error("undo", "--list takes no N");
                if (errno || *end || !*a || a[0] == '-' || n == 0 || n > RT_UNDO_DEPTH_MAX)
                        return rtn_usage_error("undo", "N is a number of runs, 1 to %d",
                                               RT_UNDO_DEPTH_MAX);
        }
        if (cli_store_open(&o, o.list, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        int r;
        if (o.list) {
                r = s ? list(s, &o, &err) : 0;
        } else {
                _cleanup_free_ struct rt_pending_step *done = NULL;
                /* the mapping the sandboxes had, whoever runs it: the checkpoints' helper
                 * works as their root (rt_ckpt_as_owner) */
                r = rt_idmap_choose(&m, &err);
                if (r == 0)
                        r = rt_pending_undo(s, o.env, &m, (unsigned)n, &done, &err);
                for (unsigned long i = 0; r == 0 && i < n; i++)
                        print_step("undid ", &done[i]);
        }
        if (s)
                store_close(s);
        return r < 0 ? cli_store_fail(&o, &err) : 0;
}
