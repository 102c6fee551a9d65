/* `rtn apply [--dry-run]`: writes the overlay workspace's pending changes to its host dir. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>

#include "common/cleanup.h"
#include "common/term.h"
#include "runtime/session/pending.h"
#include "runtime/session/wsover.h"
#include "cli/storeopts.h"

struct apply_out {
        unsigned applied, refused;
        bool dry_run;
};

static int print_applied(enum rt_ws_change what, const char *path, const char *reason, void *ud) {
        struct apply_out *o = ud;
        if (!reason) {
                o->applied++;
                printf("%c ", (char)what);
                if (cli_print_path("/workspace/", path) < 0)
                        return -ENOMEM;
                putchar('\n');
                return 0;
        }
        o->refused++;
        printf("refused %c ", (char)what);
        if (cli_print_path("/workspace/", path) < 0)
                return -ENOMEM;
        rtn_term_printf(stdout, ": %s\n", reason);
        return 0;
}

static const struct cli_store_verb apply_verb = {
        .name = "apply",
        .shorts = "",
        .longopts = "dry-run",
        .usage = "usage: rtn apply [--data-dir DIR] [--env NAME] [--dry-run]\n"
                 "Writes the pending /workspace changes to the workspace's host dir.\n"
                 "  --dry-run             list what would be written, write "
                 "nothing\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 0,
        .operand = "",
};

int rt_cmd_apply(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &apply_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        /* The pending changes' lock: no rtn exec --keep has the overlay mounted meanwhile. */
        char dir[4096], host[4096] = "";
        int lock = -1;
        int r = rt_pending_open(s, o.env, dir, sizeof dir, &lock, &err);
        struct apply_out out = {.dry_run = o.dry_run};
        if (r == 0) {
                (void)rt_ws_host(dir, host, sizeof host);
                r = rt_ws_apply(dir, NULL, o.dry_run, print_applied, &out, &err);
        }
        rtn_safe_close(lock);
        store_close(s);
        if (r < 0)
                return cli_store_fail(&o, &err);
        if (out.applied + out.refused == 0)
                fprintf(stderr, "rtn apply: no pending workspace changes\n");
        else
                rtn_term_printf(
                        stderr, "rtn apply: %s%u change%s %s %s; %u refused%s\n",
                        o.dry_run ? "dry run: " : "", out.applied, out.applied == 1 ? "" : "s",
                        o.dry_run ? "would be written to" : "written to", host, out.refused,
                        out.refused ? " (left pending: rtn diff lists them, rtn reset drops them)"
                                    : "");
        return out.refused ? 1 : 0;
}
