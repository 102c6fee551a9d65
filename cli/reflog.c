/* `rtn reflog`: every tip the environment had. */
#include "cli/cli.h"

#include <stdio.h>
#include <time.h>

#include "common/term.h"
#include "cli/storeopts.h"

static int print_reflog(const struct store_reflog_entry *e, void *userdata) {
        char when[32];
        time_t t = (time_t)e->time;
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        rtn_term_printf(stdout, "%s %s %s\n", e->id, when, e->op);
        return 0;
}

static const struct cli_store_verb reflog_verb = {
        .name = "reflog",
        .shorts = "",
        .longopts = "",
        .usage = "usage: rtn reflog [--data-dir DIR] [--env NAME]\n"
                 "Lists every tip the environment had (kept 30 days).\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 0,
        .operand = "",
};

int cli_cmd_reflog(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &reflog_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, true, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        int r = cli_store_env_known(&o, s, &err);
        if (r == 0 && s)
                r = store_reflog(s, o.env, print_reflog, NULL, &err);
        store_close(s);
        return r < 0 ? cli_store_fail(&o, &err) : 0;
}
