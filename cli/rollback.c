/* `rtn rollback ID`: moves the environment's tip to an earlier commit. */
#include "cli/cli.h"

#include <stdio.h>

#include "common/term.h"
#include "cli/storeopts.h"

static const struct cli_store_verb rollback_verb = {
        .name = "rollback",
        .shorts = "",
        .longopts = "",
        .usage = "usage: rtn rollback [--data-dir DIR] [--env NAME] ID\n"
                 "Moves the environment's tip to commit ID (a unique prefix is "
                 "enough).\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 1,
        .max_ops = 1,
        .operand = "the commit ID",
};

int cli_cmd_rollback(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &rollback_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        char id[STORE_ID_SIZE];
        int r = store_rollback(s, o.env, argv[o.positional], id, &err);
        store_close(s);
        if (r < 0)
                return cli_store_fail(&o, &err);
        rtn_term_printf(stdout, "%s\n", id);
        return 0;
}
