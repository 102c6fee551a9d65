/* The list of paths a live bind protects beyond the name list, and an overlay's apply refuses
 * (runtime/sandbox/gitconf.h): what git's configuration names and the user's --protect, made
 * before clone3 and read by the child without allocating. */
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
#include "common/io.h"
#include "runtime/internal.h"
#include "runtime/sandbox/gitconf.h"
#include "runtime/sandbox/hostrun.h"

/* ---- the list -------------------------------------------------------------------------- */

int rt_pathlist_add(struct rt_pathlist *l, const char *rel, const char *why, enum rt_make make) {
        size_t off = 0;
        const char *r, *w;
        while (rt_pathlist_next(l, &off, &r, &w))
                if (!strcmp(r, rel))
                        return 0;
        size_t a = strlen(rel) + 1, b = 1 + strlen(why) + 1;
        if (l->len + a + b > l->cap) {
                size_t cap = (l->cap ? 2 * l->cap : 1024) + a + b;
                char *n = realloc(l->buf, cap);
                if (!n)
                        return -ENOMEM;
                l->buf = n;
                l->cap = cap;
        }
        memcpy(l->buf + l->len, rel, a);
        l->buf[l->len + a] = (char)make;
        memcpy(l->buf + l->len + a + 1, why, b - 1);
        l->len += a + b;
        l->n++;
        return 0;
}

void rt_pathlist_free(struct rt_pathlist *l) {
        free(l->buf);
        *l = (struct rt_pathlist){0};
}

bool rt_pathlist_next(const struct rt_pathlist *l, size_t *off, const char **ret_rel,
                      const char **ret_why) {
        if (!l || *off >= l->len)
                return false;
        *ret_rel = l->buf + *off;
        *ret_why = *ret_rel + strlen(*ret_rel) + 2; /* past the RT_MAKE_* byte */
        *off = (size_t)(*ret_why - l->buf) + strlen(*ret_why) + 1;
        return true;
}

enum rt_make rt_pathlist_make(const char *why) {
        return why[-1] == RT_MAKE_FILE || why[-1] == RT_MAKE_SELF ? (enum rt_make)why[-1]
                                                                  : RT_MAKE_DIR;
}

/* Whether a, of n bytes, is b or an ancestor of b (component-wise), without regard to ASCII
 * case as the name list (on a casefold filesystem `.GitHooks` is `.githooks`). */
static bool is_prefix(const char *a, size_t n, const char *b) {
        return !strncasecmp(a, b, n) && (b[n] == '\0' || b[n] == '/' || n == 0);
}

const char *rt_pathlist_match(const struct rt_pathlist *l, const char *rel, bool dir) {
        size_t off = 0;
        const char *r, *w;
        while (*rel == '/')
                rel++;
        while (rt_pathlist_next(l, &off, &r, &w)) {
                if (is_prefix(r, strlen(r), rel))
                        return w;
                if (!dir && is_prefix(rel, strlen(rel), r))
                        return w;
        }
        return NULL;
}

bool rt_pathlist_covered(const struct rt_pathlist *l, const char *top, const char *rel) {
        char path[2 * PATH_MAX];
        struct stat st;
        /* with --workspace-git rw the top's .git is pinned, not read-only: nothing below it is
         * covered, so what the configuration names there is listed */
        if (l && l->git_rw && !strncmp(rel, ".git", 4) && (rel[4] == '/' || !rel[4]))
                return false;
        int n = snprintf(path, sizeof path, "%s/", top);
        if (n < 0 || (size_t)n >= sizeof path)
                return false;
        /* the walk protects the first matching component that exists, and all below it */
        for (const char *p = rel; *p;) {
                size_t len = strcspn(p, "/");
                if ((size_t)n + (size_t)(p - rel) + len >= sizeof path)
                        return false;
                memcpy(path + n, rel, (size_t)(p - rel) + len);
                path[n + (p - rel) + len] = '\0';
                if (rt_hostrun_match(path + n))
                        return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
                p += len;
                p += strspn(p, "/");
        }
        return false;
}

/* ---- the user's paths, and what the child needs ---------------------------------------- */

int rt_gitconf_user_paths(const char *top, const char *inside, const char *const *paths, size_t n,
                          struct rt_pathlist *list, struct rtn_error *err) {
        size_t top_len = strlen(top), in_len = strlen(inside);
        int matched = 0;
        for (size_t i = 0; i < n; i++) {
                char buf[2 * PATH_MAX], norm[PATH_MAX];
                if (paths[i][0] == '/')
                        snprintf(buf, sizeof buf, "%s", paths[i]);
                else if (!strcmp(inside, "/workspace"))
                        snprintf(buf, sizeof buf, "%s/%s", inside, paths[i]);
                else
                        continue;
                if (rt_path_normalise(buf, norm) < 0)
                        return rtn_errx(err, ENAMETOOLONG, "--protect %s: too long", paths[i]);
                const char *rel = NULL;
                if (!strncmp(norm, top, top_len) && (norm[top_len] == '/' || !norm[top_len]))
                        rel = norm + top_len;
                else if (!strncmp(norm, inside, in_len) && (norm[in_len] == '/' || !norm[in_len]))
                        rel = norm + in_len;
                if (!rel)
                        continue;
                while (*rel == '/')
                        rel++;
                if (!*rel)
                        return rtn_errx(err, EINVAL,
                                        "--protect %s: that is all of %s; bind it read-only "
                                        "instead",
                                        paths[i], inside);
                matched++;
                if (!rt_pathlist_covered(list, top, rel) &&
                    rt_pathlist_add(list, rel, "--protect names it", RT_MAKE_DIR) < 0)
                        return rtn_err(err, ENOMEM, "--protect %s", paths[i]);
        }
        return matched;
}

/* The first missing component of rel below top, made an empty directory (an empty file when
 * it is the last and make says so): its length in *ret_len (the whole of rel when nothing was
 * missing or a symlink ends the part that is there). -errno when it could not be made, with
 * the length of the part that is there. */
static int make_missing(int top, const char *rel, enum rt_make make, size_t *ret_len) {
        _cleanup_close_ int dir = fcntl(top, F_DUPFD_CLOEXEC, 3);
        if (dir < 0)
                return -errno;
        for (const char *p = rel; *p;) {
                size_t n = strcspn(p, "/");
                char name[NAME_MAX + 1];
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, p, n);
                name[n] = '\0';
                struct stat st;
                if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        *ret_len = p > rel ? (size_t)(p - rel) - 1 : 0; /* what is there */
                        if (errno != ENOENT)
                                return -errno;
                        struct stat parent;
                        bool last = !p[n + strspn(p + n, "/")];
                        bool file = (make == RT_MAKE_FILE || make == RT_MAKE_SELF) && last;
                        if (fstat(dir, &parent) < 0)
                                return -errno;
                        /* A file is given its owner through its fd: by name, root's rtn could
                         * chown a hard link another sandbox of this live dir swapped in
                         * (fs.protected_hardlinks may be off). A directory cannot be one. */
                        if (file) {
                                _cleanup_close_ int fd = openat(
                                        dir, name,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                                if (fd < 0 || (geteuid() == 0 &&
                                               fchown(fd, parent.st_uid, parent.st_gid) < 0))
                                        return -errno;
                                if (make == RT_MAKE_SELF &&
                                    rtn_write_all(fd, RT_MAKE_SELF_TEXT,
                                                  sizeof RT_MAKE_SELF_TEXT - 1) < 0)
                                        return -errno;
                        } else if (mkdirat(dir, name, 0755) < 0 ||
                                   (geteuid() == 0 &&
                                    fchownat(dir, name, parent.st_uid, parent.st_gid,
                                             AT_SYMLINK_NOFOLLOW) < 0)) {
                                return -errno;
                        }
                        *ret_len = (size_t)(p - rel) + n;
                        return 0;
                }
                if (!S_ISDIR(st.st_mode)) {
                        *ret_len = (size_t)(p - rel) + n; /* a file or symlink ends it */
                        return 0;
                }
                int next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                close(dir);
                dir = next;
                p += n;
                p += strspn(p, "/");
        }
        *ret_len = strlen(rel);
        return 0;
}

int rt_pathlist_prepare(const char *top, struct rt_pathlist *list, struct rtn_error *err) {
        _cleanup_close_ int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return rtn_err(err, errno, "open %s", top);
        struct rt_pathlist out = {.git_rw = list->git_rw};
        size_t off = 0;
        const char *rel, *why;
        int r = 0;
        while (r >= 0 && rt_pathlist_next(list, &off, &rel, &why)) {
                char cut[PATH_MAX];
                size_t len = 0;
                int m = make_missing(fd, rel, rt_pathlist_make(why), &len);
                if (m < 0) {
                        /* the nearest existing ancestor instead: what the agent could make
                         * there, it cannot make once that is read-only */
                        if (!len) {
                                r = rtn_errx(err, -m,
                                             "%s/%s (%s) does not exist and rtn cannot make "
                                             "the empty directory that protects it: %s",
                                             top, rel, why, strerror(-m));
                                break;
                        }
                }
                snprintf(cut, sizeof cut, "%.*s", (int)len, rel);
                if (rt_pathlist_add(&out, cut, why, rt_pathlist_make(why)) < 0)
                        r = rtn_err(err, ENOMEM, "protect %s", rel);
        }
        if (r < 0) {
                rt_pathlist_free(&out);
                return r;
        }
        rt_pathlist_free(list);
        *list = out;
        return 0;
}

int rt_protect_check(const struct rt_spec *spec, struct rtn_error *err) {
        for (size_t i = 0; i < spec->nprotect; i++) {
                const char *p = spec->protect[i];
                char norm[PATH_MAX], buf[2 * PATH_MAX];
                snprintf(buf, sizeof buf, "%s%s", p[0] == '/' ? "" : "/workspace/", p);
                if (!*p || rt_path_normalise(buf, norm) < 0)
                        return rtn_errx(err, EINVAL, "--protect '%s': not a path", p);
                bool in = false;
                const char *tops[2 * RT_MAX_BINDS + 2];
                size_t n = 0;
                if (spec->workspace) {
                        tops[n++] = spec->workspace;
                        tops[n++] = "/workspace";
                }
                for (size_t j = 0; j < spec->nbinds; j++)
                        if (spec->binds[j].rw && !spec->binds[j].file) {
                                tops[n++] = spec->binds[j].src;
                                tops[n++] = spec->binds[j].dst;
                        }
                for (size_t j = 0; !in && j < n; j++) {
                        size_t len = strlen(tops[j]);
                        in = !strncmp(norm, tops[j], len) && norm[len] == '/';
                }
                if (!in)
                        return rtn_errx(err, EINVAL,
                                        "--protect %s: not below the workspace or a read-write "
                                        "--bind",
                                        p);
        }
        return 0;
}

void rt_protect_lists_free(struct rt_pathlist *lists) {
        for (size_t i = 0; lists && i < RT_MAX_BINDS + 1; i++)
                rt_pathlist_free(&lists[i]);
        free(lists);
}

/* --workspace-git rw: every place in a git dir that git reads configuration or a program
 * from, or that makes it read another git dir's (docs/security-invariants.md, 13): with the
 * git dir writable, each stays read-only, and a missing one is made first as what git would
 * find there (nothing), so the agent cannot create it. What git writes to commit (objects/,
 * refs/, logs/, index, HEAD, packed-refs, COMMIT_EDITMSG) stays writable. */
static const struct {
        const char *rel;
        enum rt_make make;
} git_rw_paths[] = {
        {".git/config", RT_MAKE_FILE}, /* core.fsmonitor, core.hooksPath, aliases ... */
        {".git/config.worktree", RT_MAKE_FILE}, /* with extensions.worktreeConfig */
        {".git/commondir", RT_MAKE_SELF}, /* another git dir's config; read if it exists */
        {".git/hooks", RT_MAKE_DIR},
        {".git/info", RT_MAKE_DIR}, /* attributes (filter and diff drivers), sparse-checkout */
        {".git/objects/info/alternates", RT_MAKE_FILE}, /* object stores elsewhere */
        {".git/objects/info/http-alternates", RT_MAKE_FILE},
        {".git/worktrees", RT_MAKE_DIR}, /* linked worktrees' git dirs: gitdir, config */
        {".git/modules", RT_MAKE_DIR}, /* submodules' git dirs, with their config and hooks */
        {".git/remotes", RT_MAKE_DIR}, /* remotes defined by file, as git's config does */
        {".git/branches", RT_MAKE_DIR},
};

int rt_git_rw_paths(const char *top, struct rt_pathlist *l, struct rtn_error *err) {
        char path[PATH_MAX + 8];
        struct stat st;
        l->git_rw = true;
        snprintf(path, sizeof path, "%s/.git", top);
        if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                return 0; /* none, or a gitfile: its git dir is outside, and .git read-only */
        for (size_t i = 0; i < sizeof git_rw_paths / sizeof git_rw_paths[0]; i++)
                if (rt_pathlist_add(l, git_rw_paths[i].rel,
                                    "git reads configuration or programs there (--workspace-git "
                                    "rw)",
                                    git_rw_paths[i].make) < 0)
                        return rtn_err(err, ENOMEM, "protect %s", git_rw_paths[i].rel);
        return 0;
}

/* One live bind's list: git's configuration, the user's paths in it, made ready. */
static int bind_list(const char *top, const char *inside, const struct rt_spec *spec,
                     struct rt_pathlist *l, int *matched, struct rtn_error *err) {
        int r = spec->workspace_git_rw && !strcmp(inside, "/workspace")
                        ? rt_git_rw_paths(top, l, err)
                        : 0;
        if (r >= 0)
                r = rt_gitconf_paths(top, NULL, l, err);
        if (r >= 0 &&
            (r = rt_gitconf_user_paths(top, inside, spec->protect, spec->nprotect, l, err)) >= 0)
                *matched += r;
        if (r >= 0)
                r = rt_pathlist_prepare(top, l, err);
        return r < 0 ? rtn_err_wrap(err, "protect what git runs in %s", inside) : 0;
}

int rt_protect_lists(const struct rt_spec *spec, struct rt_pathlist **ret, struct rtn_error *err) {
        struct rt_pathlist *l = calloc(RT_MAX_BINDS + 1, sizeof *l);
        if (!l)
                return rtn_err(err, ENOMEM, "protect what git runs");
        int r = rt_protect_check(spec, err), matched = 0;
        if (r >= 0 && spec->workspace && spec->workspace_mode == RT_WS_LIVE)
                r = bind_list(spec->workspace, "/workspace", spec, &l[0], &matched, err);
        for (size_t i = 0; r >= 0 && i < spec->nbinds; i++)
                if (spec->binds[i].rw && !spec->binds[i].file)
                        r = bind_list(spec->binds[i].src, spec->binds[i].dst, spec, &l[1 + i],
                                      &matched, err);
        (void)matched;
        if (r < 0) {
                rt_protect_lists_free(l);
                return r;
        }
        *ret = l;
        return 0;
}
