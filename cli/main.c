/* The rtn command line: dispatches a verb to its implementation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "common/term.h"
#include "cli/cli.h"
#include "common/term.h"
#include "common/usage.h"
#include "common/version.h"
#include "serve/serve.h"

/* The verbs: the one list rtn dispatches on and prints in its usage. The bash and zsh
 * completions and rtn(1) name the same verbs; tests/integration/cli_completion.sh and
 * cli_man.sh check them against this table (and `rtn help`). A new verb is a row here. */
struct verb {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *synopsis; /* after "rtn " in the usage; NULL: name */
        const char *summary; /* may continue on lines indented to VERB_COL */
};

static const struct verb verbs[] = {
        {"exec", cli_cmd_exec, "exec [OPTIONS] -- CMD...",
         "run one command in a fresh sandbox (rtn exec --help)"},
        {"serve", mcp_cmd_serve, "serve [OPTIONS]",
         "MCP server (stdio or --http), sandboxes by handle"},
        {"probe", cli_cmd_probe, "probe [--json]", "check what this kernel and host allow"},
        {"ps", cli_cmd_ps, "ps [--all]", "list the running sandboxes (rtn exec, rtn serve)"},
        {"enter", cli_cmd_enter, "enter [-t] ID -- CMD...",
         "run a command in a running sandbox (rtn enter --help)"},
        {"commit", cli_cmd_commit, "commit [-m MSG]",
         "commit the pending changes (rtn exec --keep) to the environment"},
        {"diff", cli_cmd_diff, NULL, "show the pending changes"},
        {"reset", cli_cmd_reset, NULL, "drop the pending changes"},
        {"undo", cli_cmd_undo, "undo [N] [--list]",
         "take back the last N rtn exec --keep runs (default 1)"},
        {"apply", cli_cmd_apply, "apply [--dry-run]",
         "write the pending /workspace changes (rtn exec --keep\n"
         "                             --workspace-mode overlay) to the workspace's host dir"},
        {"log", cli_cmd_log, NULL, "the environment's history"},
        {"rollback", cli_cmd_rollback, "rollback ID", "move the environment's tip to commit ID"},
        {"gc", cli_cmd_gc, NULL, "garbage-collect"},
        {"reflog", cli_cmd_reflog, NULL, "every tip the environment had (30 days)"},
        {"export", cli_cmd_export, "export ID -o FILE.tar.zst", "write a commit chain to a file"},
        {"import", cli_cmd_import, "import FILE", "read one into this store"},
        {"env", cli_cmd_env, "env list | env rm NAME...",
         "the environments; remove one with its history"},
        {"store", cli_cmd_store, "store verify", "recheck every layer and commit against its id"},
        {"rootfs", cli_cmd_rootfs, "rootfs bootstrap|import|list|rm",
         "Debian base filesystems for --rootfs NAME"},
        {"pkg", cli_cmd_pkg, "pkg install --rootfs NAME PKG...",
         "install packages through the gate and commit them"},
};
#define VERB_COL 29

static void usage(FILE *f) {
        fputs("usage: rtn COMMAND [ARGS]\n\n"
              "Sandboxes for AI agents, built from Linux namespaces, overlayfs, Landlock and "
              "seccomp.\n\nCommands:\n",
              f); /* rtn's own text */
        for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
                const char *syn = verbs[i].synopsis ? verbs[i].synopsis : verbs[i].name;
                int pad = VERB_COL - 2 - (int)strlen(syn);
                fprintf(f, "  %s%*s%s\n", syn, pad > 1 ? pad : 1, "",
                        verbs[i].summary); /* rtn's own text */
        }
        fputs("  help                       this text\n"
              "  version                    print the version\n"
              "\n"
              "Environment: RTN_LOG=debug|info|warn|error.\n",
              f); /* rtn's own text */
}

int main(int argc, char **argv) {
        if (rtn_log_init("rtn") < 0) {
                rtn_term_printf(stderr, "rtn: RTN_LOG=%s is not a log level; use one of %s\n",
                                getenv("RTN_LOG"), RTN_LOG_LEVELS);
                return RTN_EXIT_FAILURE; /* rtn's own failure, before any verb ran */
        }
        if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
            !strcmp(argv[1], "-h")) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? RTN_EXIT_FAILURE : 0;
        }
        if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
                rtn_term_printf(stdout, "rtn %s\n", RTN_VERSION);
                return 0;
        }
        for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
                if (!strcmp(argv[1], verbs[i].name))
                        return verbs[i].fn(argc - 1, argv + 1);
        if (argv[1][0] == '-') /* no global options: each verb takes its own */
                rtn_term_printf(stderr,
                                "rtn: unknown option '%s': options follow the verb (rtn VERB "
                                "[OPTIONS]); RTN_DATA_DIR and RTN_LOG apply to every verb\n",
                                argv[1]);
        else
                rtn_term_printf(stderr, "rtn: unknown command '%s'\n", argv[1]);
        fputs("Try 'rtn --help'.\n", stderr);
        return RTN_EXIT_FAILURE;
}
