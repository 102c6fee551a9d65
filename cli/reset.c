/* `rtn reset`: drops the pending changes. */
#include "cli/cli.h"

#include <unistd.h>

#include "runtime/session/pending.h"
#include "runtime/session/wsover.h"
#include "cli/storeopts.h"

static const struct cli_store_verb reset_verb = {
        .name = "reset",
        .shorts = "",
        .longopts = "",
        .usage = "usage: rtn reset [--data-dir DIR] [--env NAME]\n"
                 "Drops the pending changes.\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 0,
        .operand = "",
};

int cli_cmd_reset(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        struct rt_idmap m;
        int code = cli_store_parse(argc, argv, &reset_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        const struct rt_idmap *mp;
        int r = cli_store_idmap(&m, &mp, &err);
        char dir[4096];
        if (r == 0)
                r = rt_pending_reset(s, o.env, mp, &err);
        if (r == 0 && rt_pending_path(s, o.env, NULL, dir, sizeof dir) == 0 &&
            access(dir, F_OK) == 0)
                r = rt_ws_drop(dir, NULL, mp, &err);
        store_close(s);
        return r < 0 ? cli_store_fail(&o, &err) : 0;
}
