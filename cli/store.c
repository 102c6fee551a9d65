/* `rtn store verify`: rechecks every layer and commit against its id. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/term.h"
#include "common/usage.h"
#include "cli/storeopts.h"

static const struct cli_store_verb store_verb = {
        .name = "store",
        .shorts = "",
        .longopts = "",
        .usage = "usage: rtn store verify [--data-dir DIR] [--env NAME]\n"
                 "Rechecks every layer and commit against its id.\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 1,
        .max_ops = 1,
        .operand = "the sub-command (verify)",
};

/* The same, named as what the user typed when the sub-command comes first. */
static const struct cli_store_verb verify_verb = {
        .name = "store verify",
        .shorts = "",
        .longopts = "",
        .usage = "usage: rtn store verify [--data-dir DIR] [--env NAME]\n"
                 "Rechecks every layer and commit against its id.\n" CLI_STORE_OPTS_USAGE,
};

int cli_cmd_store(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        bool sub = argc > 1 && argv[1][0] != '-';
        if (sub && strcmp(argv[1], "verify") != 0)
                return rtn_usage_error("store", "unknown sub-command '%s'", argv[1]);
        int code = sub ? cli_store_parse(argc - 1, argv + 1, &verify_verb, &o)
                       : cli_store_parse(argc, argv, &store_verb, &o);
        if (code >= 0)
                return code;
        if (!sub && strcmp(argv[o.positional], "verify") != 0)
                return rtn_usage_error("store", "unknown sub-command '%s'", argv[o.positional]);
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        struct store_verify_stats st = {0};
        struct rt_idmap m;
        const struct rt_idmap *mp;
        int r = cli_store_idmap(&m, &mp, &err);
        if (r == 0)
                r = rt_store_verify(mp, s, &st, &err);
        store_close(s);
        if (r < 0 && r != -EUCLEAN)
                return cli_store_fail(&o, &err);
        if (r == -EUCLEAN) {
                rtn_term_printf(stderr, "rtn store verify: %zu problems; first: %s\n", st.bad,
                                err.msg);
                return 1;
        }
        printf("ok: %zu layers, %zu commits, %zu environments\n", st.layers, st.commits, st.envs);
        return 0;
}
