/* `rtn log`: the environment's commits, newest first. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/term.h"
#include "cli/storeopts.h"

static int print_commit(const struct store_commit_info *c, void *userdata) {
        char when[32];
        time_t t = (time_t)c->time;
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        size_t first = strcspn(c->message, "\n");
        rtn_term_printf(stdout, "%s %s %.*s\n", c->id, when, (int)first, c->message);
        return 0;
}

static const struct cli_store_verb log_verb = {
        .name = "log",
        .shorts = "",
        .longopts = "",
        .usage = "usage: rtn log [--data-dir DIR] [--env NAME]\n"
                 "Lists the environment's commits, newest first: id, UTC time, "
                 "message.\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 0,
        .operand = "",
};

int cli_cmd_log(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &log_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, true, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        int r = cli_store_env_known(&o, s, &err);
        if (r == 0 && s)
                r = store_log(s, o.env, print_commit, NULL, &err);
        store_close(s);
        return r < 0 ? cli_store_fail(&o, &err) : 0;
}
