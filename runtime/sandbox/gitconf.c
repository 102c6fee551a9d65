/* What git's configuration names (runtime/sandbox/gitconf.h). For each repository in a bound
 * directory (the git dirs and `.git` entries the protect walk finds) and the one whose work
 * tree holds it, rtn reads the configuration git would: the system file ($GIT_CONFIG_SYSTEM or
 * /etc/gitconfig, unless GIT_CONFIG_NOSYSTEM), the global ones ($GIT_CONFIG_GLOBAL, or
 * $XDG_CONFIG_HOME/git/config and ~/.gitconfig), the repository's config (and its commondir's,
 * for a worktree) and config.worktree, following include.path and includeIf.*.path up to git's
 * depth of 10. Decisions, all toward protecting more:
 *
 * - includeIf's condition is not evaluated: every file an includeIf names is read, as if it
 *   applied, and protected (gitdir:, onbranch: and hasconfig: may change with what the agent
 *   does; a file read for nothing protects a little more).
 * - config.worktree is read whether or not extensions.worktreeConfig is set.
 * - An included file is protected whatever it holds: it is configuration. A relative include
 *   path is relative to the including file's directory, `~/` is $HOME, as git resolves them.
 * - A key that names a path (core.hooksPath, core.attributesFile, init.templateDir) is one path;
 *   relative to the work tree's top, where git runs hooks (a bare repository's: its git dir).
 * - A key that names a command (KEYS below: core.fsmonitor, core.pager, filter.*.clean,
 *   alias.*, ...) is split into words at blanks, quotes, shell operators and '='; every word
 *   with a '/' is a path (relative ones to the work tree's top, where git runs aliases,
 *   filters and hooks; a pager or editor git starts in a subdirectory resolves `./p` there,
 *   which rtn does not follow), and a word after the first that names an existing file at the
 *   top is one too (`sh x.sh`). A first word without '/' is looked up in PATH, not in the
 *   work tree; a word holding `$`, a glob or "://" is not a path rtn can resolve.
 * - Data only, not protected: core.excludesFile, blame.ignoreRevsFile, http.cookieFile,
 *   commit.template, the ssh allowed signers file. They change what git shows, not what it
 *   runs.
 *
 * A path is protected when, made absolute and normalised, it lies in the bound directory: its
 * text, and where an existing symlink lies on the way, what it resolves to as well. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/internal.h"
#include "runtime/sandbox/gitconf.h"
#include "runtime/sandbox/hostrun.h"

#define REPOS_MAX 1024

enum kind { K_CONFIG, K_DIR, K_FILE, K_CMD }; /* K_DIR, K_FILE: a path of that kind */

struct key {
        const char *section;
        const char *sub; /* NULL: no subsection; "*": any subsection */
        const char *name; /* "*": any name */
        enum kind kind;
};

/* Every key git-config(1) documents as a program it runs, a path of hooks or attributes, or
 * more configuration. */
static const struct key KEYS[] = {
        {"include", NULL, "path", K_CONFIG},
        {"includeif", "*", "path", K_CONFIG},
        {"core", NULL, "hookspath", K_DIR},
        {"core", NULL, "attributesfile", K_FILE},
        {"init", NULL, "templatedir", K_DIR},
        {"core", NULL, "fsmonitor", K_CMD},
        {"core", NULL, "sshcommand", K_CMD},
        {"core", NULL, "editor", K_CMD},
        {"core", NULL, "pager", K_CMD},
        {"core", NULL, "askpass", K_CMD},
        {"core", NULL, "gitproxy", K_CMD},
        {"core", NULL, "alternaterefscommand", K_CMD},
        {"sequence", NULL, "editor", K_CMD},
        {"diff", NULL, "external", K_CMD},
        {"diff", "*", "command", K_CMD},
        {"diff", "*", "textconv", K_CMD},
        {"filter", "*", "clean", K_CMD},
        {"filter", "*", "smudge", K_CMD},
        {"filter", "*", "process", K_CMD},
        {"merge", "*", "driver", K_CMD},
        {"credential", NULL, "helper", K_CMD},
        {"credential", "*", "helper", K_CMD},
        {"gpg", NULL, "program", K_CMD},
        {"gpg", "*", "program", K_CMD},
        {"gpg", "*", "defaultkeycommand", K_CMD},
        {"alias", NULL, "*", K_CMD},
        {"pager", NULL, "*", K_CMD},
        {"uploadpack", NULL, "packobjectshook", K_CMD},
        {"interactive", NULL, "difffilter", K_CMD},
        {"difftool", "*", "cmd", K_CMD},
        {"difftool", "*", "path", K_CMD},
        {"mergetool", "*", "cmd", K_CMD},
        {"mergetool", "*", "path", K_CMD},
        {"man", "*", "cmd", K_CMD},
        {"man", "*", "path", K_CMD},
        {"browser", "*", "cmd", K_CMD},
        {"browser", "*", "path", K_CMD},
        {"guitool", "*", "cmd", K_CMD},
        {"instaweb", NULL, "httpd", K_CMD},
        {"imap", NULL, "tunnel", K_CMD},
        {"sendemail", NULL, "smtpserver", K_CMD},
        {"sendemail", "*", "smtpserver", K_CMD},
        {"sendemail", NULL, "tocmd", K_CMD},
        {"sendemail", NULL, "cccmd", K_CMD},
        {"sendemail", NULL, "headercmd", K_CMD},
        {"sendemail", NULL, "sendmailcmd", K_CMD},
        {"sendemail", "*", "tocmd", K_CMD},
        {"sendemail", "*", "cccmd", K_CMD},
        {"sendemail", "*", "sendmailcmd", K_CMD},
        {"trailer", "*", "command", K_CMD},
        {"trailer", "*", "cmd", K_CMD},
        {"remote", "*", "uploadpack", K_CMD},
        {"remote", "*", "receivepack", K_CMD},
        {"submodule", "*", "update", K_CMD},
        {"hook", "*", "command", K_CMD},
};

static const struct key *key_of(const char *section, const char *sub, const char *name) {
        for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
                const struct key *k = &KEYS[i];
                if (strcmp(k->section, section) || (!k->sub) != (!sub) ||
                    (strcmp(k->name, "*") && strcmp(k->name, name)))
                        continue;
                return k;
        }
        return NULL;
}

/* ---- paths ----------------------------------------------------------------------------- */

int rt_path_normalise(const char *path, char out[PATH_MAX]) {
        size_t len = 0;
        for (const char *s = path; *s;) {
                size_t n = strcspn(s, "/");
                if (n == 2 && s[0] == '.' && s[1] == '.') {
                        while (len > 0 && out[--len] != '/')
                                ;
                } else if (n > 0 && !(n == 1 && s[0] == '.')) {
                        if (len + n + 2 > PATH_MAX)
                                return -ENAMETOOLONG;
                        out[len++] = '/';
                        memcpy(out + len, s, n);
                        len += n;
                }
                s += n;
                s += strspn(s, "/");
        }
        if (!len)
                out[len++] = '/';
        out[len] = '\0';
        return 0;
}

/* value made absolute: `~/` is $HOME, a relative one is below base. */
static int absolute(const char *value, const char *base, char out[PATH_MAX]) {
        char tmp[2 * PATH_MAX];
        const char *home = getenv("HOME");
        if (!strncmp(value, "~/", 2) && home)
                snprintf(tmp, sizeof tmp, "%s/%s", home, value + 2);
        else if (value[0] == '/')
                snprintf(tmp, sizeof tmp, "%s", value);
        else if (base && value[0] != '~')
                snprintf(tmp, sizeof tmp, "%s/%s", base, value);
        else
                return -ENOENT;
        return rt_path_normalise(tmp, out);
}

struct ctx {
        const char *top; /* the bound directory, canonical */
        size_t top_len;
        const struct rt_gitconf_reader *rd;
        struct rt_pathlist *list;
        struct rtn_error *err;
        const char *worktree; /* the repository's: relative paths of hooks and commands */
        const char *file; /* the config file being read */
        unsigned depth;
};

/* abs, if it lies in the bound directory and the registry's walk does not protect it
 * already, into the list. */
static int add_inside(struct ctx *c, const char *abs, const char *why, enum rt_make make) {
        if (strncmp(abs, c->top, c->top_len) ||
            (abs[c->top_len] != '/' && abs[c->top_len] != '\0' && c->top_len > 1))
                return 0;
        const char *rel = abs + c->top_len;
        while (*rel == '/')
                rel++;
        if (rt_pathlist_covered(c->list, c->top, rel))
                return 0; /* an existing git dir or registry entry: protected already */
        if (!*rel)
                return rtn_errx(c->err, EINVAL,
                                "%s names %s itself as a program or config of git's: rtn would "
                                "have to protect all of it; bind a directory below it",
                                c->file, c->top);
        return rt_pathlist_add(c->list, rel, why, make) < 0
                       ? rtn_err(c->err, ENOMEM, "protect %s", rel)
                       : 0;
}

/* abs and, where a symlink lies on its way, what its longest existing part resolves to. */
static int add_path(struct ctx *c, const char *abs, const char *why, enum rt_make make) {
        int r = add_inside(c, abs, why, make);
        char part[PATH_MAX], real[PATH_MAX], joined[2 * PATH_MAX + 2], norm[PATH_MAX];
        snprintf(part, sizeof part, "%s", abs);
        for (size_t cut = strlen(part); r >= 0;) {
                part[cut] = '\0';
                if (realpath(part, real)) {
                        snprintf(joined, sizeof joined, "%s%s", real, abs + cut);
                        if (rt_path_normalise(joined, norm) == 0 && strcmp(norm, abs))
                                r = add_inside(c, norm, why, make);
                        break;
                }
                char *slash = strrchr(part, '/');
                if (!slash || slash == part)
                        break;
                cut = (size_t)(slash - part);
        }
        return r;
}

static int read_config(struct ctx *c, const char *path);

/* Whether a word of a command is a path rtn protects: see the head of this file. */
static bool command_path(const char *w, bool first, const char *worktree, char abs[PATH_MAX]) {
        bool slash = strchr(w, '/') != NULL;
        if (!*w || strpbrk(w, "$*?[{\\") || strstr(w, "://") || w[0] == '-')
                return false;
        if ((first && !slash) || absolute(w, worktree, abs) < 0)
                return false; /* a program without '/' is looked up in PATH */
        struct stat st;
        if (stat(abs, &st) == 0)
                return !S_ISDIR(st.st_mode); /* a program is a file; `git add src` names data */
        if (!slash)
                return false;
        if (first || w[0] == '.' || w[0] == '/' || w[0] == '~')
                return true;
        /* `log origin/main` names a ref, `sh scripts/x` a file: a first component that is
         * a directory at the top tells them apart */
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%.*s", worktree ? worktree : "", (int)strcspn(w, "/"), w);
        return worktree && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A command: every word that is a path. */
static int add_command(struct ctx *c, const char *value, const char *why) {
        char word[PATH_MAX], abs[PATH_MAX];
        bool first = true;
        for (const char *s = value; *s;) {
                size_t n = strcspn(s, " \t\n\"'`;&|()<>=");
                if (n == 0 || n >= sizeof word) {
                        s += n ? n : 1;
                        continue;
                }
                memcpy(word, s, n);
                word[n] = '\0';
                s += n;
                const char *w = word[0] == '!' ? word + 1 : word;
                if (command_path(w, first, c->worktree, abs)) {
                        int r = add_path(c, abs, why, RT_MAKE_FILE); /* a program */
                        if (r < 0)
                                return r;
                }
                first = first && !*w;
        }
        return 0;
}

static int on_key(void *arg, const char *section, const char *sub, const char *name,
                  const char *value) {
        struct ctx *c = arg;
        const struct key *k = key_of(section, sub, name);
        if (!k || !value || !*value)
                return 0;
        char why[256], abs[PATH_MAX], dir[PATH_MAX];
        snprintf(why, sizeof why, "git's %s%s%s.%s in %s names it", section, sub ? "." : "",
                 sub ? sub : "", name, c->file);
        switch (k->kind) {
        case K_CONFIG: {
                snprintf(dir, sizeof dir, "%s", c->file);
                char *slash = strrchr(dir, '/');
                if (slash)
                        *slash = '\0';
                if (absolute(value, dir, abs) < 0)
                        return 0;
                int r = add_path(c, abs, why, RT_MAKE_FILE);
                if (r < 0)
                        return r;
                if (c->depth >= RT_GITCONF_INCLUDE_DEPTH)
                        return rtn_errx(c->err, ELOOP,
                                        "%s: includes nested deeper than git's %d levels", c->file,
                                        RT_GITCONF_INCLUDE_DEPTH);
                const char *saved = c->file;
                c->depth++;
                r = read_config(c, abs);
                c->depth--;
                c->file = saved;
                return r;
        }
        case K_DIR:
        case K_FILE:
                if (absolute(value, c->worktree, abs) < 0)
                        return 0;
                return add_path(c, abs, why, k->kind == K_FILE ? RT_MAKE_FILE : RT_MAKE_DIR);
        case K_CMD:
                return add_command(c, value, why);
        }
        return 0;
}

/* Links are followed, as git follows them (a dotfiles manager's ~/.gitconfig), but only a
 * regular file is opened: an O_PATH fd first, reopened through /proc/self/fd once fstat says
 * so. The agent names these files (a new repository's config in a live bind, its
 * include.path); opening a device or a FIFO can act on it (a watchdog armed, a writer let
 * through). */
int rt_gitconf_read_file(const char *path, char **ret, size_t *ret_len) {
        _cleanup_close_ int p = open(path, O_PATH | O_CLOEXEC);
        struct stat st;
        if (p < 0)
                return -errno;
        if (fstat(p, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOENT; /* git reads no FIFO or device as config either */
        char fdp[32];
        snprintf(fdp, sizeof fdp, "/proc/self/fd/%d", p);
        _cleanup_close_ int fd = open(fdp, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (st.st_size > RT_GITCONF_FILE_MAX)
                return -EFBIG;
        char *buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
        if (n < 0) {
                free(buf);
                return -errno;
        }
        buf[n] = '\0';
        *ret = buf;
        *ret_len = (size_t)n;
        return 0;
}

static int read_config(struct ctx *c, const char *path) {
        char *buf = NULL;
        size_t len = 0;
        int r = c->rd ? c->rd->read(c->rd->arg, path, &buf, &len)
                      : rt_gitconf_read_file(path, &buf, &len);
        if (r == -ENOENT || r == -EACCES || r == -ENOTDIR || r == -EISDIR || r == -ELOOP)
                return 0; /* git skips a missing include; rtn could not read it either */
        if (r == -EFBIG)
                return rtn_errx(c->err, EFBIG,
                                "git config %s is larger than %u bytes: rtn reads no more, "
                                "so it cannot say what it names",
                                path, RT_GITCONF_FILE_MAX);
        if (r < 0)
                return rtn_err(c->err, -r, "read git config %s", path);
        c->file = path;
        r = rt_gitconf_parse(buf, len, on_key, c);
        free(buf);
        if (r == -EINVAL)
                return 0; /* git refuses the file and runs nothing; the keys before count */
        return r == -ENOMEM ? rtn_err(c->err, ENOMEM, "read git config %s", path) : r;
}

/* ---- repositories ---------------------------------------------------------------------- */

/* Every configuration file git reads for the repository at gitdir. */
static int read_repo(struct ctx *c, const char *gitdir, const char *worktree) {
        char path[PATH_MAX + 32], common[PATH_MAX], *buf = NULL;
        size_t len;
        int r = 0;
        c->worktree = worktree ? worktree : gitdir;
        const char *env = getenv("GIT_CONFIG_NOSYSTEM");
        if (!env || !*env || !strcmp(env, "0") || !strcasecmp(env, "false")) {
                env = getenv("GIT_CONFIG_SYSTEM");
                r = read_config(c, env && *env ? env : "/etc/gitconfig");
        }
        const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
        env = getenv("GIT_CONFIG_GLOBAL");
        if (r >= 0 && env && *env) {
                r = read_config(c, env);
        } else if (r >= 0) {
                char g[PATH_MAX + 32];
                if (xdg && *xdg)
                        snprintf(g, sizeof g, "%s/git/config", xdg);
                else if (home)
                        snprintf(g, sizeof g, "%s/.config/git/config", home);
                else
                        g[0] = '\0';
                if (g[0])
                        r = read_config(c, g);
                snprintf(g, sizeof g, "%s/.gitconfig", home ? home : "");
                if (r >= 0 && home)
                        r = read_config(c, g);
        }
        snprintf(path, sizeof path, "%s/commondir", gitdir);
        if (r >= 0 && rt_gitconf_read_file(path, &buf, &len) == 0) {
                buf[strcspn(buf, "\r\n")] = '\0';
                if (absolute(buf, gitdir, common) == 0) {
                        snprintf(path, sizeof path, "%s/config", common);
                        r = read_config(c, path);
                }
                free(buf);
        }
        snprintf(path, sizeof path, "%s/config", gitdir);
        if (r >= 0)
                r = read_config(c, path);
        snprintf(path, sizeof path, "%s/config.worktree", gitdir);
        if (r >= 0)
                r = read_config(c, path);
        return r;
}

/* A repository with its `.git` at dir/.git (a directory, or a gitfile naming its git dir). */
static int read_dotgit(struct ctx *c, const char *dir) {
        char dotgit[PATH_MAX + 8], gitdir[PATH_MAX], *buf = NULL;
        size_t len;
        struct stat st;
        snprintf(dotgit, sizeof dotgit, "%s/.git", dir);
        if (stat(dotgit, &st) < 0)
                return 0;
        if (S_ISDIR(st.st_mode))
                return read_repo(c, dotgit, dir);
        if (rt_gitconf_read_file(dotgit, &buf, &len) < 0)
                return 0;
        buf[strcspn(buf, "\r\n")] = '\0';
        int r = 0;
        if (!strncmp(buf, "gitdir: ", 8) && absolute(buf + 8, dir, gitdir) == 0)
                r = read_repo(c, gitdir, dir);
        free(buf);
        return r;
}

struct found {
        char *rel[REPOS_MAX];
        size_t n;
};

static int found_cb(void *arg, const char *rel, enum rt_protect_kind kind, struct rtn_error *err) {
        struct found *f = arg;
        if (kind != RT_PROTECT_RO && kind != RT_PROTECT_LINK)
                return 0;
        if (f->n >= REPOS_MAX)
                return rtn_errx(err, E2BIG, "more than %d git dirs and host-run files to read",
                                REPOS_MAX);
        if (!(f->rel[f->n] = strdup(rel)))
                return rtn_err(err, ENOMEM, "read git's configuration");
        f->n++;
        return 0;
}

/* The repository whose work tree holds top, if top is not the top of one itself: the first
 * directory above it with a `.git`, as git's discovery finds it. */
static int read_enclosing(struct ctx *c) {
        char dir[PATH_MAX], dotgit[PATH_MAX + 8];
        struct stat st;
        snprintf(dir, sizeof dir, "%s", c->top);
        while (strcmp(dir, "/")) {
                char *slash = strrchr(dir, '/');
                if (!slash)
                        break;
                slash[slash == dir] = '\0';
                const char *d = strcmp(dir, "/") ? dir : "";
                snprintf(dotgit, sizeof dotgit, "%s/.git", d);
                if (lstat(dotgit, &st) == 0)
                        return read_dotgit(c, d);
        }
        return 0;
}

int rt_gitconf_paths(const char *top, const struct rt_gitconf_reader *rd, struct rt_pathlist *list,
                     struct rtn_error *err) {
        struct ctx c = {.top = top, .top_len = strlen(top), .rd = rd, .list = list, .err = err};
        _cleanup_close_ int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return rtn_err(err, errno, "open %s", top);
        struct found *f = calloc(1, sizeof *f);
        if (!f)
                return rtn_err(err, ENOMEM, "read git's configuration");
        bool whole = false;
        int r = rt_protect_walk(fd, top, found_cb, f, &whole, err);
        char path[2 * PATH_MAX];
        /* a bind that is a git dir itself is read-only whole: nothing more to name */
        if (r >= 0 && !whole)
                r = read_enclosing(&c);
        for (size_t i = 0; r >= 0 && !whole && i < f->n; i++) {
                const char *base = strrchr(f->rel[i], '/');
                base = base ? base + 1 : f->rel[i];
                snprintf(path, sizeof path, "%s/%s", top, f->rel[i]);
                if (!strcasecmp(base, ".git")) {
                        path[strlen(path) - 5] = '\0';
                        r = read_dotgit(&c, path);
                } else {
                        char head[sizeof path + 8];
                        struct stat st;
                        snprintf(head, sizeof head, "%s/HEAD", path);
                        if (stat(head, &st) == 0)
                                r = read_repo(&c, path, NULL); /* a bare or separate git dir */
                }
        }
        for (size_t i = 0; i < f->n; i++)
                free(f->rel[i]);
        free(f);
        return r;
}
