/* `rtn rootfs bootstrap|import|list`: options and printing over runtime/rootfs/
 * (docs/bootstrap.md). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "common/cleanup.h"
#include "common/term.h"
#include "common/usage.h"
#include "runtime/rootfs/rootfs.h"

static int list(const char *data_dir, struct rtn_error *err) {
        _cleanup_free_ char *base = NULL;
        int r = rt_rootfs_base(data_dir, &base, err);
        if (r < 0)
                return r;
        DIR *d = opendir(base);
        if (!d)
                return errno == ENOENT ? 0 : rtn_err(err, errno, "open %s", base);
        struct dirent *de;
        while ((de = readdir(d))) {
                char fp[17] = "-", path[4096];
                struct rtn_error e2 = {0};
                _cleanup_free_ char *resolved = NULL;
                char **hosts = NULL;
                size_t n = 0;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof path, "%s/%s", base, de->d_name);
                (void)rt_rootfs_fingerprint(path, fp, &e2);
                int ok = rt_rootfs_resolve(data_dir, de->d_name, &resolved, &e2);
                printf("%s\t%s\t%s\t", de->d_name, fp, ok == 0 ? "ok" : "CHANGED");
                if (rt_rootfs_mirrors(resolved ? resolved : "/nonexistent", &hosts, &n) == 0)
                        for (size_t i = 0; i < n; i++)
                                printf("%s%s", i ? "," : "", hosts[i]);
                printf("\n");
                rt_strv_free(hosts);
        }
        closedir(d);
        return 0;
}

static const char rootfs_usage[] =
        "usage: rtn rootfs bootstrap [--suite SUITE] [--variant VARIANT] [--mirror URL] NAME\n"
        "       rtn rootfs import FILE.tar[.zst] NAME\n"
        "       rtn rootfs list\n"
        "  --data-dir DIR   data dir (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
        "~/.local/share/rtn)\n"
        "Rootfses live in DATA/rootfs/NAME; use them with --rootfs NAME on exec and serve.\n"
        "On a terminal (or with RTN_LOG=info) bootstrap and import print each step and the\n"
        "bootstrap tool's own progress on stderr; otherwise only errors.\n";

/* The sub-verb's options; -1 to go on, else the exit code to stop with. */
static int parse_rootfs(int argc, char **argv, const char *name, struct rt_rootfs_make *a) {
        static const struct option longopts[] = {{"suite", required_argument, NULL, 's'},
                                                 {"variant", required_argument, NULL, 'v'},
                                                 {"mirror", required_argument, NULL, 'm'},
                                                 {"data-dir", required_argument, NULL, 'd'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {0}};
        int c;
        rtn_usage_prog(argv, name);
        optind = 0;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 's':
                        if (strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
                            strlen(optarg))
                                return rtn_usage_error(name, "bad --suite '%s'", optarg);
                        a->suite = optarg;
                        break;
                case 'v':
                        if (strspn(optarg, "abcdefghijklmnopqrstuvwxyz-") != strlen(optarg))
                                return rtn_usage_error(name, "bad --variant '%s'", optarg);
                        a->variant = optarg;
                        break;
                case 'm':
                        if (strncmp(optarg, "http", 4) != 0)
                                return rtn_usage_error(name, "--mirror wants an http(s) URL");
                        a->mirror = optarg;
                        break;
                case 'd':
                        a->data_dir = optarg;
                        break;
                case 'h':
                        return rtn_usage_help(rootfs_usage);
                default:
                        return rtn_usage_error(name, NULL);
                }
        }
        return -1;
}

int rt_cmd_rootfs(int argc, char **argv) {
        struct cli_progress prog;
        cli_progress_init(&prog, "rtn rootfs");
        struct rt_rootfs_make a = {.suite = "bookworm",
                                   .variant = "minbase",
                                   .phase = cli_progress_phase,
                                   .phase_ud = &prog,
                                   .tool_output = prog.on};
        struct rtn_error err = {0};
        const char *verb = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
        if (verb && strcmp(verb, "list") && strcmp(verb, "bootstrap") && strcmp(verb, "import"))
                return rtn_usage_error("rootfs", "unknown sub-command '%s'", verb);
        char name[32];
        snprintf(name, sizeof name, "rootfs%s%s", verb ? " " : "", verb ? verb : "");
        int r = parse_rootfs(argc - !!verb, argv + !!verb, name, &a);
        if (r >= 0)
                return r;
        if (!verb)
                return rtn_usage_error("rootfs", "missing sub-command (bootstrap, import or list)");
        char **ops = argv + 1 + optind;
        int nops = argc - 1 - optind;
        if (!strcmp(verb, "list")) {
                if (nops > 0)
                        return rtn_usage_error(name, "unexpected operand '%s'", ops[0]);
                r = list(a.data_dir, &err);
        } else if (!strcmp(verb, "bootstrap")) {
                if (nops != 1)
                        return rtn_usage_error(name, "wants one NAME, got %d operands", nops);
                a.how = RT_ROOTFS_BOOTSTRAP;
                a.name = ops[0];
                r = rt_rootfs_make(&a, &err);
        } else {
                if (nops != 2)
                        return rtn_usage_error(name, "wants FILE.tar[.zst] NAME, got %d operands",
                                               nops);
                a.how = RT_ROOTFS_IMPORT;
                a.file = ops[0];
                a.name = ops[1];
                r = rt_rootfs_make(&a, &err);
        }
        if (r < 0) {
                rtn_term_printf(stderr, "rtn rootfs %s: %s\n", verb, err.msg);
                return err.code == EINVAL || err.code == EEXIST || err.code == EPERM ? 1 : 125;
        }
        if (strcmp(verb, "list") != 0) {
                cli_progress_line(&prog, "rootfs %s is ready", a.name);
                printf("%s\n", a.name);
        }
        return 0;
}
