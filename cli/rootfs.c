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
#include "common/cleanup.h"
#include "common/term.h"
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
        "Rootfses live in DATA/rootfs/NAME; use them with --rootfs NAME on exec and serve.\n";

int rt_cmd_rootfs(int argc, char **argv) {
        static const struct option longopts[] = {{"suite", required_argument, NULL, 's'},
                                                 {"variant", required_argument, NULL, 'v'},
                                                 {"mirror", required_argument, NULL, 'm'},
                                                 {"data-dir", required_argument, NULL, 'd'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {0}};
        struct rt_rootfs_make a = {.suite = "bookworm", .variant = "minbase"};
        struct rtn_error err = {0};
        int c, r;
        if (argc < 2) {
                fputs(rootfs_usage, stderr);
                return 2;
        }
        const char *verb = argv[1];
        optind = 1;
        while ((c = getopt_long(argc - 1, argv + 1, "h", longopts, NULL)) != -1) {
                switch (c) {
                case 's':
                        a.suite = optarg;
                        break;
                case 'v':
                        a.variant = optarg;
                        break;
                case 'm':
                        a.mirror = optarg;
                        break;
                case 'd':
                        a.data_dir = optarg;
                        break;
                case 'h':
                        fputs(rootfs_usage, stdout);
                        return 0;
                default:
                        fputs(rootfs_usage, stderr);
                        return 2;
                }
        }
        char **ops = argv + 1 + optind;
        int nops = argc - 1 - optind;
        bool valid = strspn(a.suite, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(a.suite) &&
                     strspn(a.variant, "abcdefghijklmnopqrstuvwxyz-") == strlen(a.variant) &&
                     (!a.mirror || strncmp(a.mirror, "http", 4) == 0);
        if (!strcmp(verb, "list") && nops == 0) {
                r = list(a.data_dir, &err);
        } else if (!strcmp(verb, "bootstrap") && nops == 1 && valid) {
                a.how = RT_ROOTFS_BOOTSTRAP;
                a.name = ops[0];
                r = rt_rootfs_make(&a, &err);
        } else if (!strcmp(verb, "import") && nops == 2) {
                a.how = RT_ROOTFS_IMPORT;
                a.file = ops[0];
                a.name = ops[1];
                r = rt_rootfs_make(&a, &err);
        } else {
                fputs(rootfs_usage, stderr);
                return 2;
        }
        if (r < 0) {
                rtn_term_printf(stderr, "rtn rootfs %s: %s\n", verb, err.msg);
                return err.code == EINVAL || err.code == EEXIST || err.code == EPERM ? 1 : 125;
        }
        if (strcmp(verb, "list") != 0)
                printf("%s\n", a.name);
        return 0;
}
