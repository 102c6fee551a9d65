/* `rtn ps`: the sandboxes this user runs (rtn exec and rtn serve), from the registry rtn
 * keeps in its runtime dir (runtime/session/registry.h): rtn's pid (kill it to end one),
 * kind, start, environment and command. Those of the data dir in use unless --all (then the
 * data dir is a column too); stale entries a killed rtn left are dropped on the way. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/term.h"
#include "common/usage.h"
#include "runtime/session/registry.h"
#include "store/store.h"

static const char ps_usage[] =
        "usage: rtn ps [--all] [--data-dir DIR]\n"
        "\n"
        "List the running sandboxes of this user (rtn exec and rtn serve): rtn's pid, kind,\n"
        "start (UTC), environment and command; after an rtn serve, a line (kind sb) for each of\n"
        "its open sandboxes. The first column is the ID rtn enter takes: an rtn exec's PID, a\n"
        "serve sandbox's PID/sb-N.\n"
        "\n"
        "  --all                 those of every data dir (adds a DATA DIR column)\n"
        "  --data-dir DIR        those of DIR (default: $RTN_DATA_DIR, $XDG_DATA_HOME/rtn,\n"
        "                        ~/.local/share/rtn)\n"
        "  --help                this text\n";

struct ps_opts {
        bool all;
        char data_dir[PATH_MAX];
        size_t shown;
};

static void print_one(const struct rt_running *r, void *arg) {
        struct ps_opts *o = arg;
        if (!o->all && !rt_registry_same_dir(r->data_dir, o->data_dir))
                return;
        char when[32];
        time_t t = (time_t)r->since;
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        if (!o->shown++ && o->all)
                rtn_term_printf(stdout, "%-8s %-6s %-21s %-12s %-24s %s\n", "PID", "KIND", "SINCE",
                                "ENV", "DATA DIR", "COMMAND");
        else if (o->shown == 1)
                rtn_term_printf(stdout, "%-8s %-6s %-21s %-12s %s\n", "PID", "KIND", "SINCE", "ENV",
                                "COMMAND");
        /* The command is the user's own argv, but escaped all the same (invariant 19). */
        if (o->all)
                rtn_term_printf(stdout, "%-8d %-6s %-21s %-12s %-24s %s\n", r->pid, r->kind, when,
                                r->env, r->data_dir, r->command);
        else
                rtn_term_printf(stdout, "%-8d %-6s %-21s %-12s %s\n", r->pid, r->kind, when, r->env,
                                r->command);
        /* An rtn serve's sandboxes, a line each: PID/sb-N as rtn enter takes it. */
        char list[sizeof r->sandboxes], *save = NULL;
        snprintf(list, sizeof list, "%s", r->sandboxes);
        for (char *sb = strtok_r(list, " ", &save); sb; sb = strtok_r(NULL, " ", &save)) {
                char id[48], *eq = strchr(sb, '=');
                if (eq)
                        *eq = '\0';
                snprintf(id, sizeof id, "%d/%s", r->pid, sb);
                if (o->all)
                        rtn_term_printf(stdout,
                                        "%-8s %-6s %-21s %-12s %-24s sandbox %s of rtn serve %d\n",
                                        id, "sb", when, eq ? eq + 1 : "", r->data_dir, sb, r->pid);
                else
                        rtn_term_printf(stdout,
                                        "%-8s %-6s %-21s %-12s sandbox %s of rtn serve %d\n", id,
                                        "sb", when, eq ? eq + 1 : "", sb, r->pid);
        }
}

int cli_cmd_ps(int argc, char **argv) {
        static const struct option longopts[] = {{"all", no_argument, NULL, 'a'},
                                                 {"data-dir", required_argument, NULL, 'd'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {0}};
        struct ps_opts o = {0};
        struct rtn_error err = {0};
        const char *data_dir = NULL;
        int c;
        rtn_usage_prog(argv, "ps");
        optind = 1;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                if (c == 'a') {
                        o.all = true;
                } else if (c == 'd') {
                        data_dir = optarg;
                } else if (c == 'h') {
                        return rtn_usage_help(ps_usage);
                } else {
                        return rtn_usage_error("ps", NULL);
                }
        }
        if (optind != argc)
                return rtn_usage_error("ps", "unexpected operand '%s'", argv[optind]);
        if (data_dir)
                snprintf(o.data_dir, sizeof o.data_dir, "%s", data_dir);
        else if (!o.all && store_default_dir(o.data_dir, sizeof o.data_dir, &err) < 0) {
                rtn_term_printf(stderr, "rtn ps: %s\n", err.msg);
                return 1;
        }
        if (rt_registry_list(print_one, &o, &err) < 0) {
                rtn_term_printf(stderr, "rtn ps: %s\n", err.msg);
                return 1;
        }
        return 0;
}
