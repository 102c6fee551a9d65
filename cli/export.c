/* `rtn export [ID] -o FILE.tar.zst`: a commit chain as a tar that plain `tar --zstd` reads. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/usage.h"
#include "cli/storeopts.h"

static const struct cli_store_verb export_verb = {
        .name = "export",
        .shorts = "o:",
        .longopts = "output",
        .usage = "usage: rtn export [--data-dir DIR] [--env NAME] [ID] -o FILE.tar.zst\n"
                 "Writes commit ID (default: the tip) and its ancestors to a tar.zst file.\n"
                 "  -o, --output FILE     the file to write; - for stdout\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 1,
        .operand = "",
};

int cli_cmd_export(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &export_verb, &o);
        if (code >= 0)
                return code;
        if (!o.out)
                return rtn_usage_error("export", "missing -o FILE.tar.zst");
        if (!strcmp(o.out, "-") && isatty(STDOUT_FILENO))
                return rtn_usage_error("export", "-o -: refusing to write an archive to a "
                                                 "terminal; redirect stdout");
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        const char *id = o.positional < argc ? argv[o.positional] : NULL;
        struct rt_idmap m;
        const struct rt_idmap *mp;
        int r = cli_store_idmap(&m, &mp, &err);
        if (r == 0)
                r = rt_store_export(mp, s, o.env, id, o.out, &err);
        store_close(s);
        return r < 0 ? cli_store_fail(&o, &err) : 0;
}
