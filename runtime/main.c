/* The rtn command line: dispatches a verb to its implementation. */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "runtime/cmd.h"

#ifndef RTN_VERSION
#define RTN_VERSION "0.1.0"
#endif

static const char usage[] =
        "usage: rtn COMMAND [ARGS]\n"
        "\n"
        "Sandboxes for AI agents, built from Linux namespaces, overlayfs, Landlock and seccomp.\n"
        "\n"
        "Commands:\n"
        "  exec [OPTIONS] -- CMD...   run one command in a fresh sandbox (rtn exec --help)\n"
        "  probe [--json]             check what this kernel and host allow\n"
        "  help                       this text\n"
        "  version                    print the version\n"
        "\n"
        "Environment: RTN_LOG=debug|info|warn|error.\n";

struct verb {
        const char *name;
        int (*fn)(int argc, char **argv);
};

static const struct verb verbs[] = {
        {"exec", rt_cmd_exec},
        {"probe", rt_cmd_probe},
};

int main(int argc, char **argv) {
        rtn_log_init("rtn");
        if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
            !strcmp(argv[1], "-h")) {
                fputs(usage, argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
                printf("rtn %s\n", RTN_VERSION);
                return 0;
        }
        for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
                if (!strcmp(argv[1], verbs[i].name))
                        return verbs[i].fn(argc - 1, argv + 1);
        fprintf(stderr, "rtn: unknown command '%s' (see 'rtn help')\n", argv[1]);
        return 2;
}
