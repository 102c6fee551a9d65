/* `rtn commit [-m MSG] [--upper DIR]`: commits the pending changes (rtn exec --keep), or
 * an upper directory, to the environment. */
#include "cli/cli.h"

#include <stdio.h>

#include "common/term.h"
#include "runtime/session/pending.h"
#include "cli/storeopts.h"

static const struct cli_store_verb commit_verb = {
        .name = "commit",
        .shorts = "m:",
        .longopts = "message upper",
        .usage = "usage: rtn commit [--data-dir DIR] [--env NAME] [-m MSG] [--upper DIR]\n"
                 "Commits the pending changes (rtn exec --keep) and prints the new id.\n"
                 "  -m, --message MSG     the commit message\n"
                 "  --upper DIR           commit the upper directory DIR "
                 "instead\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 0,
        .operand = "",
};

int cli_cmd_commit(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &commit_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        char id[STORE_ID_SIZE];
        int r;
        if (o.upper) {
                struct rt_idmap m;
                const struct rt_idmap *mp;
                /* Someone else's upper: refused while a live sandbox writes it. */
                struct store_commit_opts co = {.msg = o.msg ? o.msg : "", .upper_lock = -1};
                r = cli_store_idmap(&m, &mp, &err);
                if (r == 0)
                        r = rt_store_commit(mp, s, o.env, o.upper, &co, id, &err);
        } else {
                /* The environment's pending changes (rtn exec --keep). */
                struct rt_idmap m;
                const struct rt_idmap *mp;
                r = cli_store_idmap(&m, &mp, &err);
                if (r == 0)
                        r = rt_pending_commit(s, o.env, o.msg ? o.msg : "", mp, -1, id, &err);
        }
        store_close(s);
        if (r < 0)
                return cli_store_fail(&o, &err);
        if (r == 1)
                rtn_term_printf(stdout, "nothing to commit%s%s\n", id[0] ? ", tip " : "", id);
        else
                rtn_term_printf(stdout, "%s\n", id);
        return 0;
}
