/* `rtn diff [--upper DIR] [PATH...]`: the pending changes, against the environment's tip and,
 * for the overlay workspace, against its host dir; with PATHs, what the overlay workspace's
 * changes at those paths hold, as diff(1) -u shows it, for the user to review before
 * writing one that rtn apply refused. */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/usage.h"
#include "common/term.h"

#include "runtime/session/pending.h"
#include "runtime/session/session.h"
#include "runtime/session/wsover.h"
#include "cli/storeopts.h"

static int print_change(enum store_change what, const char *path, void *userdata) {
        if (what == STORE_ADDED && rt_upper_is_skeleton(path))
                return 0; /* the sandbox's own mountpoints, not a change */
        printf("%c ", (char)what);
        if (cli_print_path("/", path) < 0)
                return -ENOMEM;
        putchar('\n');
        return 0;
}

static int print_ws_change(enum rt_ws_change what, const char *path, void *userdata) {
        printf("%c ", (char)what);
        if (cli_print_path("/workspace/", path) < 0)
                return -ENOMEM;
        putchar('\n');
        return 0;
}

struct diff_call {
        struct store *s;
        const char *env, *upper;
};

/* As the owner of what the agent wrote (rt_userns_as_owner): a directory it made unreadable
 * is listed too. */
static int do_diff(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        const struct diff_call *a = arg;
        int r = store_diff(a->s, a->env, a->upper, print_change, NULL, err);
        fflush(stdout);
        return r;
}

static const struct cli_store_verb diff_verb = {
        .name = "diff",
        .shorts = "p",
        .longopts = "upper patch",
        .usage = "usage: rtn diff [--data-dir DIR] [--env NAME] [--upper DIR] [-p] [PATH...]\n"
                 "Lists the pending changes: A added, M modified, D deleted, then the path.\n"
                 "With PATHs, shows the overlay workspace's changes there (a file, or all in a\n"
                 "directory) as diff -u does, host side first.\n"
                 "  -p, --patch           show every workspace change that way (binary files\n"
                 "                        named as such)\n"
                 "  --upper DIR           list the changes in the upper directory DIR "
                 "instead\n" CLI_STORE_OPTS_USAGE,
        .min_ops = 0,
        .max_ops = 4096,
        .operand = "",
};

/* A side as an fd diff(1) can read: the file, or a memfd holding the text (empty: none). */
static int side_fd(const struct rt_ws_side *sd) {
        if (sd && sd->fd >= 0)
                return dup(sd->fd);
        int fd = memfd_create("rtn-diff", MFD_CLOEXEC);
        if (fd >= 0 && sd && *sd->text &&
            (write(fd, sd->text, strlen(sd->text)) < 0 || write(fd, "\n", 1) < 0 ||
             lseek(fd, 0, SEEK_SET) < 0)) {
                close(fd);
                return -1;
        }
        return fd;
}

/* One line of diff's output: what the agent wrote is escaped (common/term.h), tabs kept; the
 * escaped text is rtn's own. */
static void print_line(const char *line, size_t n) {
        for (size_t i = 0; i <= n;) {
                const char *tab = memchr(line + i, '\t', n - i);
                size_t seg = tab ? (size_t)(tab - line) - i : n - i;
                char *buf = NULL;
                size_t cap = rtn_term_escape(line + i, seg, 0, NULL, 0) + 1;
                if ((buf = malloc(cap))) {
                        rtn_term_escape(line + i, seg, 0, buf, cap);
                        fputs(buf, stdout); /* rtn's own text */
                        free(buf);
                }
                i += seg + 1;
                if (i <= n)
                        putchar('\t');
        }
        putchar('\n');
}

/* diff -u of the two sides, its output escaped onto stdout. */
static int show_change(enum rt_ws_change what, const char *path, const struct rt_ws_side *host,
                       const struct rt_ws_side *upper, void *ud) {
        char la[4200], lb[4200];
        snprintf(la, sizeof la, "a/workspace/%s", path);
        snprintf(lb, sizeof lb, "b/workspace/%s", path);
        _cleanup_close_ int a = side_fd(host), b = side_fd(upper);
        int pipefd[2];
        if (a < 0 || b < 0 || pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                if (dup2(a, 100) < 0 || dup2(b, 101) < 0 || dup2(pipefd[1], 1) < 0)
                        _exit(127);
                execlp("diff", "diff", "-u", "--label", la, "--label", lb, "/dev/fd/100",
                       "/dev/fd/101", (char *)NULL);
                _exit(127);
        }
        close(pipefd[1]);
        if (pid < 0) {
                close(pipefd[0]);
                return -errno;
        }
        printf("%c ", (char)what);
        cli_print_path("/workspace/", path);
        putchar('\n');
        FILE *f = fdopen(pipefd[0], "r");
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while (f && (n = getline(&line, &cap, f)) > 0)
                print_line(line, (size_t)n - (line[n - 1] == '\n'));
        free(line);
        if (f)
                fclose(f);
        else
                close(pipefd[0]);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
                return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOEXEC : -EIO;
        return 0;
}

/* The overlay workspace's changed paths, outermost only (showing a directory shows what is
 * below it), for rtn diff -p. */
struct ws_paths {
        char **v;
        size_t n, cap;
};

static int collect_ws_path(enum rt_ws_change what, const char *path, void *ud) {
        struct ws_paths *w = ud;
        size_t l = w->n ? strlen(w->v[w->n - 1]) : 0;
        if (w->n && !strncmp(path, w->v[w->n - 1], l) && path[l] == '/')
                return 0;
        if (w->n == w->cap) {
                size_t cap = w->cap ? 2 * w->cap : 64;
                char **v = realloc(w->v, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                w->v = v;
                w->cap = cap;
        }
        if (!(w->v[w->n] = strdup(path)))
                return -ENOMEM;
        w->n++;
        return 0;
}

/* rtn diff -p: every change of the overlay workspace, shown whole. */
static int show_all(const char *pending, struct rtn_error *err) {
        struct ws_paths w = {0};
        int r = rt_ws_diff(pending, NULL, collect_ws_path, &w, err);
        for (size_t i = 0; r >= 0 && i < w.n; i++)
                if ((r = rt_ws_show(pending, NULL, w.v[i], show_change, NULL, err)) == -ENOEXEC ||
                    (r < 0 && err->code == ENOEXEC))
                        r = rtn_errx(err, ENOEXEC, "diff(1) could not run: is it installed?");
        for (size_t i = 0; i < w.n; i++)
                free(w.v[i]);
        free(w.v);
        return r;
}

/* rtn diff PATH...: each path's changes in the overlay workspace, shown whole. */
static int show_paths(struct store *s, const struct cli_store_opts *o, char **paths, int n,
                      struct rtn_error *err) {
        char pending[4096];
        if (!s || rt_pending_path(s, o->env, NULL, pending, sizeof pending) < 0)
                return rtn_errx(err, ENOENT, "no pending workspace changes");
        for (int i = 0; i < n; i++) {
                const char *p = cli_ws_path(paths[i]);
                if (!p)
                        return rtn_errx(err, EINVAL, "'%s' is not a path in the workspace",
                                        paths[i]);
                int r = rt_ws_show(pending, NULL, p, show_change, NULL, err);
                free((char *)p);
                if (r == -ENOEXEC || (r < 0 && err->code == ENOEXEC))
                        return rtn_errx(err, ENOEXEC, "diff(1) could not run: is it installed?");
                if (r < 0)
                        return r;
        }
        return 0;
}

int cli_cmd_diff(int argc, char **argv) {
        struct cli_store_opts o;
        struct rtn_error err = {0};
        struct store *s;
        int code = cli_store_parse(argc, argv, &diff_verb, &o);
        if (code >= 0)
                return code;
        if (cli_store_open(&o, true, &s, &err) < 0)
                return cli_store_fail(&o, &err);
        if (!s && o.upper) {
                rtn_errx(&err, ENOENT, "no store yet: nothing to compare %s with", o.upper);
                return cli_store_fail(&o, &err);
        }
        if (argc > o.positional) {
                if (o.upper)
                        return rtn_usage_error("diff", "--upper takes no PATH");
                if (o.patch)
                        return rtn_usage_error("diff", "-p shows every change: it takes no PATH");
                int r = show_paths(s, &o, argv + o.positional, argc - o.positional, &err);
                if (s)
                        store_close(s);
                return r < 0 ? cli_store_fail(&o, &err) : 0;
        }
        if (!s) /* no store, so nothing pending */
                return 0;
        char pending[4096];
        int r = 0;
        const char *upper = o.upper;
        if (!upper && rt_pending_exists(s, o.env)) {
                rt_pending_path(s, o.env, "upper", pending, sizeof pending);
                upper = pending;
        }
        struct rt_idmap m;
        const struct rt_idmap *mp = NULL;
        if (upper && (r = cli_store_idmap(&m, &mp, &err)) == 0)
                r = rt_userns_as_owner(mp, do_diff, &(struct diff_call){s, o.env, upper}, NULL, 0,
                                       &err);
        /* The overlay workspace's pending changes (rtn exec --keep --workspace-mode overlay),
         * against the host dir. */
        if (r == 0 && !o.upper && rt_pending_path(s, o.env, NULL, pending, sizeof pending) == 0)
                r = o.patch ? show_all(pending, &err)
                            : rt_ws_diff(pending, NULL, print_ws_change, NULL, &err);
        store_close(s);
        return r < 0 ? cli_store_fail(&o, &err) : 0;
}
