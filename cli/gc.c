/* `rtn gc [--reflog-days N]`: removes what no environment reaches. */
#include "cli/cli.h"

#include <stdio.h>

#include "cli/storeopts.h"

static const struct cli_store_verb gc_verb = {
        .name = "gc",
        .shorts = "",
        .longopts = "reflog-days",
        .usage = "usage: rtn gc [--data-dir DIR] [--env NAME] [--reflog-days N]\n"
                 "Removes what no environment's tip or kept reflog entry reaches.\n"
                 "  --reflog-days N       expire reflog entries older than N days first "
                 "(0..36500)\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 0,
        .operand = "",
};

int cli_cmd_gc(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &gc_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        struct store_gc_stats st;
        struct rt_idmap m;
        const struct rt_idmap *mp;
        int r = cli_store_idmap(&m, &mp, &err);
        if (r == 0)
                r = rt_store_gc(mp, s,
                                o.reflog_expire >= 0 ? o.reflog_expire : STORE_REFLOG_EXPIRE_SEC,
                                &st, &err);
        store_close(s);
        if (r < 0)
                return cli_store_fail(&o, &err);
        printf("removed %zu commits, %zu layers, %zu leftovers", st.commits, st.layers,
               st.leftovers);
        if (st.held)
                printf("; kept %zu unreachable layers running sandboxes use", st.held);
        printf("\n");
        return 0;
}
