/* `rtn rootfs bootstrap|import|list|rm`: options and printing over runtime/rootfs/
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
#include "common/exitcode.h"
#include "common/term.h"
#include "common/usage.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/session/registry.h"
#include "store/store.h"

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
                rtn_term_fputs(stdout, de->d_name, 0);
                putchar('\t');
                rtn_term_fputs(stdout, fp, 0);
                fputs(ok == 0 ? "\tok\t" : "\tCHANGED\t", stdout); /* rtn's own text */
                if (rt_rootfs_mirrors(resolved ? resolved : "/nonexistent", &hosts, &n) == 0)
                        for (size_t i = 0; i < n; i++) {
                                if (i)
                                        putchar(',');
                                rtn_term_fputs(stdout, hosts[i], 0);
                        }
                putchar('\n');
                rt_strv_free(hosts);
        }
        closedir(d);
        return 0;
}

static bool force; /* rootfs rm --force */

/* ---- rm -------------------------------------------------------------------------------- */

struct started_on {
        const char *data_dir, *name;
        int pid;
};

/* Whether a command line holds --rootfs NAME or --rootfs=NAME as words. */
static bool names_rootfs(const char *cmd, const char *name) {
        size_t n = strlen(name);
        for (const char *p = cmd; (p = strstr(p, "--rootfs")); p += 8) {
                if (p != cmd && p[-1] != ' ')
                        continue;
                const char *v = p + 8;
                if (*v != ' ' && *v != '=')
                        continue;
                v++;
                if (!strncmp(v, name, n) && (v[n] == ' ' || v[n] == '\0'))
                        return true;
        }
        return false;
}

static void find_started(const struct rt_running *r, void *arg) {
        struct started_on *u = arg;
        if (!u->pid && rt_registry_same_dir(r->data_dir, u->data_dir) &&
            names_rootfs(r->command, u->name))
                u->pid = r->pid;
}

/* What still uses rootfs NAME (at dir): a running sandbox started on it, environments made on
 * it. -EBUSY with the message, else 0. */
static int in_use(const char *data_dir, const char *name, const char *dir, struct rtn_error *err) {
        char fp[17], want[STORE_BASE_ID_MAX + 1], ddir[4096];
        struct rtn_error ignored = {0};
        if (data_dir)
                snprintf(ddir, sizeof ddir, "%s", data_dir);
        else if (store_default_dir(ddir, sizeof ddir, &ignored) < 0)
                ddir[0] = '\0';
        struct started_on u = {.data_dir = ddir, .name = name};
        (void)rt_registry_list(find_started, &u, &ignored);
        if (u.pid)
                return rtn_errx(err, EBUSY,
                                "rootfs %s: a running sandbox was started on it (pid %d, rtn ps); "
                                "stop it first, or use --force",
                                name, u.pid);
        if (rt_rootfs_fingerprint(dir, fp, &ignored) < 0)
                return 0; /* no stamp: no environment can have recorded it */
        snprintf(want, sizeof want, "rootfs:%s", fp);
        struct store *s = NULL;
        char **envs = NULL;
        size_t n = 0;
        if (store_open_ro(data_dir, &s, &ignored) < 0 || !s ||
            store_env_list(s, &envs, &n, &ignored) < 0) {
                if (s)
                        store_close(s);
                return 0;
        }
        char names[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < n; i++) {
                struct store_base b;
                if (store_base_get(s, envs[i], &b, &ignored) == 0 && !strcmp(b.id, want)) {
                        int w = snprintf(names + strlen(names), sizeof names - strlen(names),
                                         "%s'%s'", used ? ", " : "", envs[i]);
                        used++;
                        if (w < 0 || strlen(names) >= sizeof names - 1)
                                break;
                }
        }
        store_free_paths(envs, n);
        store_close(s);
        if (used)
                return rtn_errx(err, EBUSY,
                                "rootfs %s: environment%s %s %s made on it (rtn env rm %s "
                                "first, or use --force)",
                                name, used > 1 ? "s" : "", names, used > 1 ? "were" : "was",
                                used > 1 ? "them" : "it");
        return 0;
}

static int rm(const char *data_dir, char **names, int n) {
        _cleanup_free_ char *base = NULL;
        struct rtn_error err = {0};
        int ret = 0;
        if (rt_rootfs_base(data_dir, &base, &err) < 0) {
                rtn_term_printf(stderr, "rtn rootfs rm: %s\n", err.msg);
                return RTN_EXIT_FAILURE;
        }
        for (int i = 0; i < n; i++) {
                char dir[4096];
                err = (struct rtn_error){0};
                snprintf(dir, sizeof dir, "%s/%s", base, names[i]);
                if ((force || in_use(data_dir, names[i], dir, &err) == 0) &&
                    rt_rootfs_remove(data_dir, names[i], &err) == 0) {
                        rtn_term_printf(stdout, "%s\n", names[i]);
                        continue;
                }
                rtn_term_printf(stderr, "rtn rootfs rm: %s\n", err.msg);
                bool user = err.code == EINVAL || err.code == ENOENT || err.code == EBUSY ||
                            err.code == ENOTDIR;
                if (!ret)
                        ret = user ? 1 : RTN_EXIT_FAILURE;
        }
        return ret;
}

static const char rootfs_usage[] =
        "usage: rtn rootfs bootstrap [--suite SUITE] [--variant VARIANT] [--mirror URL] NAME\n"
        "       rtn rootfs import FILE.tar[.zst] NAME\n"
        "       rtn rootfs list\n"
        "       rtn rootfs rm [--force] NAME...\n"
        "  --data-dir DIR   data dir (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
        "~/.local/share/rtn)\n"
        "  --force          rm: remove it even when environments were made on it or a\n"
        "                   running sandbox was started on it\n"
        "Rootfses live in DATA/rootfs/NAME; use them with --rootfs NAME on exec and serve.\n"
        "On a terminal (or with RTN_LOG=info) bootstrap and import print each step and the\n"
        "bootstrap tool's own progress on stderr; otherwise only errors.\n";

/* The sub-verb's options; -1 to go on, else the exit code to stop with. */
static int parse_rootfs(int argc, char **argv, const char *name, struct rt_rootfs_make *a) {
        static const struct option longopts[] = {{"suite", required_argument, NULL, 's'},
                                                 {"variant", required_argument, NULL, 'v'},
                                                 {"mirror", required_argument, NULL, 'm'},
                                                 {"data-dir", required_argument, NULL, 'd'},
                                                 {"force", no_argument, NULL, 'f'},
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
                case 'f':
                        if (strcmp(name, "rootfs rm") != 0)
                                return rtn_usage_error(name, "--force is an option of rootfs rm");
                        force = true;
                        break;
                case 'h':
                        return rtn_usage_help(rootfs_usage);
                default:
                        return rtn_usage_error(name, NULL);
                }
        }
        return -1;
}

int cli_cmd_rootfs(int argc, char **argv) {
        struct cli_progress prog;
        cli_progress_init(&prog, "rtn rootfs");
        struct rt_rootfs_make a = {.suite = "bookworm",
                                   .variant = "minbase",
                                   .phase = cli_progress_phase,
                                   .phase_ud = &prog,
                                   .tool_output = prog.on};
        struct rtn_error err = {0};
        const char *verb = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
        if (verb && strcmp(verb, "list") && strcmp(verb, "bootstrap") && strcmp(verb, "import") &&
            strcmp(verb, "rm"))
                return rtn_usage_error("rootfs", "unknown sub-command '%s'", verb);
        char name[32];
        snprintf(name, sizeof name, "rootfs%s%s", verb ? " " : "", verb ? verb : "");
        int r = parse_rootfs(argc - !!verb, argv + !!verb, name, &a);
        if (r >= 0)
                return r;
        if (!verb)
                return rtn_usage_error("rootfs",
                                       "missing sub-command (bootstrap, import, list or rm)");
        char **ops = argv + 1 + optind;
        int nops = argc - 1 - optind;
        if (!strcmp(verb, "list")) {
                if (nops > 0)
                        return rtn_usage_error(name, "unexpected operand '%s'", ops[0]);
                r = list(a.data_dir, &err);
        } else if (!strcmp(verb, "rm")) {
                if (nops < 1)
                        return rtn_usage_error(name, "wants the NAME of a rootfs");
                return rm(a.data_dir, ops, nops);
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
                return err.code == EINVAL || err.code == EEXIST || err.code == EPERM
                               ? 1
                               : RTN_EXIT_FAILURE;
        }
        if (strcmp(verb, "list") != 0) {
                cli_progress_line(&prog, "rootfs %s is ready", a.name);
                rtn_term_printf(stdout, "%s\n", a.name);
        }
        return 0;
}
