/* `rtn apply [--dry-run] [--force PATH]... [PATH...]` and `rtn apply --allow-protected
 * PATH...`: writes the overlay workspace's pending changes (or those at the PATHs) to its
 * host dir. Only here, on the user's command line, can a
 * file of the registry of host-run files be written (runtime/sandbox/hostrun.h), or a
 * conflict be written over: workspace_apply, which the agent calls, has no such argument. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/usage.h"
#include "common/term.h"
#include "runtime/session/pending.h"
#include "runtime/session/wsover.h"
#include "cli/storeopts.h"

struct apply_out {
        unsigned applied, refused, protected, conflicts;
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
        o->protected += !strncmp(reason, "protected (", 11) || strstr(reason, "protected:");
        o->conflicts += !strncmp(reason, "conflict: ", 10);
        printf("refused %c ", (char)what);
        if (cli_print_path("/workspace/", path) < 0)
                return -ENOMEM;
        rtn_term_printf(stdout, ": %s\n", reason);
        return 0;
}

static const struct cli_store_verb apply_verb = {
        .name = "apply",
        .shorts = "",
        .longopts = "dry-run allow-protected force",
        .usage = "usage: rtn apply [--data-dir DIR] [--env NAME] [--dry-run] [--force PATH]...\n"
                 "                 [PATH... | --allow-protected PATH...]\n"
                 "Writes the pending /workspace changes to the workspace's host dir; with\n"
                 "PATHs, only those (and what is below them): the rest stays pending.\n"
                 "  --dry-run             list what would be written, write nothing\n"
                 "  --force PATH          write PATH (and what is below it) over a conflict\n"
                 "                        rtn apply refused: a host change since the sandbox\n"
                 "                        started; review it first with rtn diff PATH\n"
                 "  --allow-protected PATH...\n"
                 "                        also write these files that host programs run\n"
                 "                        (refused as protected), and what is below them;\n"
                 "                        review them first with rtn diff "
                 "PATH\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 4096,
        .operand = "",
};

static int apply(const struct cli_store_opts *op, const struct rt_ws_apply_named *names);

static void free_paths(const char **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free((char *)v[i]);
        free(v);
}

/* The n arguments as paths in the workspace (cli_ws_path), in *ret: 0, else the usage
 * error's exit code (or 125 out of memory), printed. */
static int ws_paths(const char *const *args, size_t n, const char ***ret) {
        const char **v = calloc(n + 1, sizeof *v);
        if (!v) {
                fprintf(stderr, "rtn apply: out of memory\n");
                return RTN_EXIT_FAILURE;
        }
        for (size_t i = 0; i < n; i++)
                if (!(v[i] = cli_ws_path(args[i]))) {
                        free_paths(v, i);
                        return rtn_usage_error("apply", "'%s' is not a path in the workspace",
                                               args[i]);
                }
        *ret = v;
        return 0;
}

int cli_cmd_apply(int argc, char **argv) {
        struct cli_store_opts o;
        int code = cli_store_parse(argc, argv, &apply_verb, &o);
        if (code >= 0)
                return code;
        /* The operands: the paths to write, or with --allow-protected the protected files
         * to write besides everything else. */
        size_t nops = (size_t)(argc - o.positional);
        if (!nops && o.allow_protected)
                return rtn_usage_error("apply", "--allow-protected wants the paths to write");
        const char **ops = NULL, **force = NULL;
        if ((code = ws_paths((const char *const *)argv + o.positional, nops, &ops)) == 0 &&
            (code = ws_paths(o.force, o.nforce, &force)) == 0) {
                struct rt_ws_apply_named n = {.force = force, .nforce = o.nforce};
                if (o.allow_protected) {
                        n.allow = ops;
                        n.nallow = nops;
                } else {
                        n.only = ops;
                        n.nonly = nops;
                }
                code = apply(&o, &n);
        }
        free_paths(ops, ops ? nops : 0);
        free_paths(force, force ? o.nforce : 0);
        return code;
}

static int apply(const struct cli_store_opts *op, const struct rt_ws_apply_named *names) {
        struct cli_store_opts o = *op;
        struct rtn_error err = {0};
        struct store *s;
        if (cli_store_open(&o, false, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        /* The pending changes' lock: no rtn exec --keep has the overlay mounted meanwhile. */
        char dir[4096], host[4096] = "";
        int lock = -1;
        int r = rt_pending_open(s, o.env, dir, sizeof dir, &lock, &err);
        struct apply_out out = {.dry_run = o.dry_run};
        if (r == 0) {
                (void)rt_ws_host(dir, host, sizeof host);
                r = rt_ws_apply_allow(dir, NULL, o.dry_run, names, print_applied, &out, &err);
        }
        struct rt_idmap m;
        const struct rt_idmap *mp = NULL;
        /* What it wrote is pending no more: rtn undo goes back to here, not past it. */
        if (r == 0 && !o.dry_run && out.applied && cli_store_idmap(&m, &mp, &err) == 0)
                rt_pending_undo_clear(dir, mp);
        rtn_safe_close(lock);
        store_close(s);
        if (r < 0)
                return cli_store_fail(&o, &err);
        if (out.applied + out.refused == 0 && names->nonly) {
                /* paths named where nothing is pending: each is one without a change */
                for (size_t i = 0; i < names->nonly; i++)
                        rtn_term_printf(stderr, "rtn apply: /workspace/%s: no pending change\n",
                                        names->only[i]);
                return 1;
        }
        if (out.applied + out.refused == 0)
                fprintf(stderr, "rtn apply: no pending workspace changes\n");
        else
                rtn_term_printf(
                        stderr, "rtn apply: %s%u change%s %s %s; %u refused%s\n",
                        o.dry_run ? "dry run: " : "", out.applied, out.applied == 1 ? "" : "s",
                        o.dry_run ? "would be written to" : "written to", host, out.refused,
                        out.refused ? " (left pending: rtn diff lists them, rtn reset drops them)"
                                    : "");
        if (out.protected)
                fprintf(stderr,
                        "rtn apply: %u refused as protected: files host programs run by "
                        "themselves. Review one with rtn diff PATH; write it with "
                        "rtn apply --allow-protected PATH\n",
                        out.protected);
        if (out.conflicts)
                fprintf(stderr,
                        "rtn apply: %u refused as conflicts: changed on the host since the "
                        "sandbox started. Review one with rtn diff PATH; write it over the host's "
                        "with rtn apply --force PATH\n",
                        out.conflicts);
        return out.refused ? 1 : 0;
}
