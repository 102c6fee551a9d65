/* `rtn import [--max-bytes N] FILE.tar.zst`: a chain from rtn export, checked, into the
 * environment. */
#include "cli/cli.h"

#include <stdio.h>

#include "common/term.h"
#include "cli/storeopts.h"

static const struct cli_store_verb import_verb = {
        .name = "import",
        .shorts = "",
        .longopts = "max-bytes",
        .usage = "usage: rtn import [--data-dir DIR] [--env NAME] [--max-bytes N] FILE.tar.zst\n"
                 "Reads a file made by rtn export, checks it, makes its tip the environment's.\n"
                 "  --max-bytes N         refuse an archive larger than N bytes (default 16 "
                 "GiB)\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 1,
        .max_ops = 1,
        .operand = "the file to import (FILE.tar.zst)",
};

int cli_cmd_import(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &import_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        char tip[STORE_ID_SIZE];
        int r = store_import(s, o.env, argv[o.positional], o.max_bytes, tip, &err);
        store_close(s);
        if (r < 0)
                return cli_store_fail(&o, &err);
        rtn_term_printf(stdout, "%s\n", tip);
        return 0;
}
