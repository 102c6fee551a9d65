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

static const char usage[] =
        "usage: rtn COMMAND [ARGS]\n"
        "\n"
        "Sandboxes for AI agents, built from Linux namespaces, overlayfs, Landlock and seccomp.\n"
        "\n"
        "Commands:\n"
        "  exec [OPTIONS] -- CMD...   run one command in a fresh sandbox (rtn exec --help)\n"
        "  serve [OPTIONS]            MCP server (stdio or --http), sandboxes by handle\n"
        "  probe [--json]             check what this kernel and host allow\n"
        "  ps [--all]                 list the running sandboxes (rtn exec, rtn serve)\n"
        "  commit [-m MSG]            commit the pending changes (rtn exec --keep) to the "
        "environment\n"
        "  diff | reset               show | drop the pending changes\n"
        "  apply [--dry-run]          write the pending /workspace changes (rtn exec --keep\n"
        "                             --workspace-mode overlay) to the workspace's host dir\n"
        "  log | rollback ID | gc     history, move the tip, garbage-collect\n"
        "  reflog                     every tip the environment had (30 days)\n"
        "  export ID -o FILE.tar.zst | import FILE   move commit chains between stores\n"
        "  env list | env rm NAME...  the environments; remove one with its history\n"
        "  store verify               recheck every layer and commit against its id\n"
        "  rootfs bootstrap|import|list|rm   Debian base filesystems for --rootfs NAME\n"
        "  pkg install --rootfs NAME PKG...  install packages through the gate and commit them\n"
        "  help                       this text\n"
        "  version                    print the version\n"
        "\n"
        "Environment: RTN_LOG=debug|info|warn|error.\n";

struct verb {
        const char *name;
        int (*fn)(int argc, char **argv);
};

static const struct verb verbs[] = {
        {"exec", rt_cmd_exec},     {"probe", rt_cmd_probe},   {"serve", mcp_cmd_serve},
        {"commit", rt_cmd_commit}, {"log", rt_cmd_log},       {"rollback", rt_cmd_rollback},
        {"reflog", rt_cmd_reflog}, {"diff", rt_cmd_diff},     {"reset", rt_cmd_reset},
        {"gc", rt_cmd_gc},         {"export", rt_cmd_export}, {"import", rt_cmd_import},
        {"store", rt_cmd_store},   {"rootfs", rt_cmd_rootfs}, {"pkg", rt_cmd_pkg},
        {"apply", rt_cmd_apply},   {"ps", rt_cmd_ps},         {"env", rt_cmd_env},
};

int main(int argc, char **argv) {
        if (rtn_log_init("rtn") < 0) {
                rtn_term_printf(stderr, "rtn: RTN_LOG=%s is not a log level; use one of %s\n",
                                getenv("RTN_LOG"), RTN_LOG_LEVELS);
                return RTN_EXIT_FAILURE; /* rtn's own failure, before any verb ran */
        }
        if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
            !strcmp(argv[1], "-h")) {
                fputs(usage, argc < 2 ? stderr : stdout); /* rtn's own text */
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
