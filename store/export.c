/* Export: a commit chain, down to its root, as a pax tar compressed with zstd, which plain
 * `tar --zstd -tf` lists. The archive holds rtn-export (format version and tip id), then
 * commits/<id> (the exact record bytes) and layers/<id>/... (each layer tree once, written
 * through store_walk so hard links, whiteouts and xattrs come out as the manifest sees
 * them). The file is written under a temp name beside out_path and renamed when complete. */
#include "store/internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/dl.h" /* after the library headers: lazy-loaded names */

#include "common/cleanup.h"

#define COPY_BUF (1U << 20)

struct exp {
        struct archive *a;
        const char *layer;
        char *buf;
        struct rtn_error *err;
};

static int arc_err(struct exp *x, const char *what) {
        int e = archive_errno(x->a);
        return rtn_errx(x->err, e > 0 ? e : EIO, "%s: %s", what, archive_error_string(x->a));
}

static int write_blob(struct exp *x, const char *path, const void *data, size_t len) {
        struct archive_entry *ae = archive_entry_new();
        if (!ae)
                return rtn_err(x->err, ENOMEM, "export");
        archive_entry_set_pathname(ae, path);
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, (la_int64_t)len);
        int r = 0;
        if (archive_write_header(x->a, ae) != ARCHIVE_OK ||
            archive_write_data(x->a, data, len) != (la_ssize_t)len)
                r = arc_err(x, path);
        archive_entry_free(ae);
        return r;
}

static int copy_data(struct exp *x, int fd, uint64_t size, const char *path) {
        uint64_t off = 0;
        while (off < size) {
                size_t want = size - off < COPY_BUF ? (size_t)(size - off) : COPY_BUF;
                ssize_t n = pread(fd, x->buf, want, (off_t)off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return rtn_err(x->err, n < 0 ? errno : EIO, "read %s", path);
                if (archive_write_data(x->a, x->buf, (size_t)n) != n)
                        return arc_err(x, path);
                off += (uint64_t)n;
        }
        return 0;
}

static void fill_entry(struct archive_entry *ae, const struct store_entry *e, const char *layer) {
        archive_entry_set_perm(ae, e->st.st_mode & 07777);
        archive_entry_set_uid(ae, e->st.st_uid);
        archive_entry_set_gid(ae, e->st.st_gid);
        archive_entry_set_mtime(ae, e->st.st_mtim.tv_sec, e->st.st_mtim.tv_nsec);
        switch (e->kind) {
        case STORE_K_DIR:
                archive_entry_set_filetype(ae, AE_IFDIR);
                break;
        case STORE_K_FILE:
                archive_entry_set_filetype(ae, AE_IFREG);
                archive_entry_set_size(ae, e->st.st_size);
                break;
        case STORE_K_HARDLINK: {
                char t[PATH_MAX + 80];
                snprintf(t, sizeof t, "layers/%s/%s", layer, e->target);
                archive_entry_set_filetype(ae, AE_IFREG);
                archive_entry_set_hardlink(ae, t);
                archive_entry_set_size(ae, 0);
                break;
        }
        case STORE_K_SYMLINK:
                archive_entry_set_filetype(ae, AE_IFLNK);
                archive_entry_set_symlink(ae, e->target);
                break;
        case STORE_K_FIFO:
                archive_entry_set_filetype(ae, AE_IFIFO);
                break;
        case STORE_K_WHITEOUT:
                archive_entry_set_filetype(ae, AE_IFCHR);
                archive_entry_set_rdev(ae, 0);
                break;
        }
        for (size_t i = 0; i < e->nxattrs; i++)
                archive_entry_xattr_add_entry(ae, e->xattrs[i].name, e->xattrs[i].value,
                                              e->xattrs[i].len);
}

static int export_entry(const struct store_entry *e, void *userdata) {
        struct exp *x = userdata;
        char path[PATH_MAX + 80];
        if (!strcmp(e->path, "."))
                snprintf(path, sizeof path, "layers/%s/", x->layer);
        else
                snprintf(path, sizeof path, "layers/%s/%s%s", x->layer, e->path,
                         e->kind == STORE_K_DIR ? "/" : "");
        struct archive_entry *ae = archive_entry_new();
        if (!ae)
                return rtn_err(x->err, ENOMEM, "export");
        archive_entry_set_pathname(ae, path);
        fill_entry(ae, e, x->layer);
        int r = 0;
        if (archive_write_header(x->a, ae) != ARCHIVE_OK)
                r = arc_err(x, path);
        else if (e->kind == STORE_K_FILE)
                r = copy_data(x, e->fd, (uint64_t)e->st.st_size, path);
        archive_entry_free(ae);
        return r;
}

static int export_layer(struct store *s, struct exp *x, const char *layer) {
        _cleanup_close_ int fd =
                openat(s->layersfd, layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return rtn_err(x->err, errno, "open layer %s", layer);
        x->layer = layer;
        return store_walk(fd, export_entry, x, x->err);
}

static int export_commit(struct store *s, struct exp *x, const char *id, char ret_parent[],
                         char ret_layer[]) {
        _cleanup_free_ char *rec = NULL;
        size_t len;
        struct store_commit_info c;
        int r = store_commit_read(s, id, &c, NULL, 0, x->err);
        if (r < 0)
                return r;
        if ((r = store_read_small(s->commitsfd, id, STORE_MSG_MAX + 512, &rec, &len)) < 0)
                return rtn_err(x->err, r, "read commit %s", id);
        char path[96];
        snprintf(path, sizeof path, "commits/%s", id);
        if ((r = write_blob(x, path, rec, len)) < 0)
                return r;
        memcpy(ret_parent, c.parent, STORE_ID_SIZE);
        memcpy(ret_layer, c.layer, STORE_ID_SIZE);
        return 0;
}

/* Writes the whole chain from tip; each layer once. */
static int export_chain(struct store *s, struct exp *x, const char *tip) {
        char head[128];
        snprintf(head, sizeof head, "rtn-export 1\ntip %s\n", tip);
        int r = write_blob(x, "rtn-export", head, strlen(head));
        char cur[STORE_ID_SIZE], (*layers)[STORE_ID_SIZE] = NULL;
        size_t n = 0;
        snprintf(cur, sizeof cur, "%s", tip);
        while (r >= 0 && cur[0]) {
                void *p = realloc(layers, (n + 1) * STORE_ID_SIZE);
                if (!p) {
                        r = rtn_err(x->err, ENOMEM, "export");
                        break;
                }
                layers = p;
                r = export_commit(s, x, cur, cur, layers[n++]);
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                bool dup = false;
                for (size_t j = 0; j < i; j++)
                        dup = dup || !strcmp(layers[i], layers[j]);
                if (!dup)
                        r = export_layer(s, x, layers[i]);
        }
        free(layers);
        return r;
}

static int open_archive(struct exp *x, int fd, const char *path) {
        x->a = archive_write_new();
        if (!x->a)
                return rtn_err(x->err, ENOMEM, "export");
        if (archive_write_add_filter_zstd(x->a) != ARCHIVE_OK ||
            archive_write_set_format_pax_restricted(x->a) != ARCHIVE_OK ||
            archive_write_open_fd(x->a, fd) != ARCHIVE_OK)
                return arc_err(x, path);
        return 0;
}

/* Where the archive goes: stdout for "-"; else a file made unnamed in out_path's directory
 * (O_TMPFILE) and named by finish_out only once complete, so an export killed half-way
 * (SIGINT) leaves nothing behind. A filesystem without O_TMPFILE gets the named temp file
 * tmp instead (*ret_named). */
static int open_out(const char *out_path, const char *tmp, bool *ret_named, struct rtn_error *err) {
        if (!strcmp(out_path, "-")) {
                int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? rtn_err(err, errno, "export to stdout") : fd;
        }
        _cleanup_free_ char *dir = strdup(out_path);
        if (!dir)
                return rtn_err(err, ENOMEM, "export");
        char *slash = strrchr(dir, '/');
        const char *d = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
        int fd = open(d, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
                return fd >= 0 ? fd
                               : rtn_err(err, errno, "export to %s: directory %s", out_path, d);
        *ret_named = true;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        return fd >= 0 ? fd : rtn_err(err, errno, "export to %s: create %s", out_path, tmp);
}

/* Gives the complete archive its name: out_path, replaced in one rename. */
static int finish_out(int fd, const char *out_path, const char *tmp, bool named,
                      struct rtn_error *err) {
        if (!strcmp(out_path, "-"))
                return 0;
        if (fsync(fd) < 0)
                return rtn_err(err, errno, "write %s", out_path);
        if (!named) {
                char proc[64];
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                (void)unlink(tmp); /* a leftover of a crashed export of this pid */
                if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) < 0)
                        return rtn_err(err, errno, "export to %s: name %s", out_path, tmp);
        }
        if (rename(tmp, out_path) < 0)
                return rtn_err(err, errno, "rename %s to %s", tmp, out_path);
        return 0;
}

int store_export(struct store *s, const char *env, const char *name, const char *out_path,
                 struct rtn_error *err) {
        char tip[STORE_ID_SIZE];
        struct exp x = {.err = err};
        _cleanup_free_ char *tmp = NULL;
        bool named = false;
        if (asprintf(&tmp, "%s.tmp.%d", out_path, (int)getpid()) < 0)
                return rtn_err(err, ENOMEM, "export");
        int r = store_lock(s, false);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        /* The commit first: an unknown id creates nothing. */
        if ((r = store_resolve(s, env, name, tip, err)) < 0) {
                store_unlock(s);
                return r;
        }
        _cleanup_close_ int fd = open_out(out_path, tmp, &named, err);
        if (fd < 0) {
                store_unlock(s);
                return fd;
        }
        if (!(x.buf = malloc(COPY_BUF)))
                r = rtn_err(err, ENOMEM, "export");
        if (r >= 0 && (r = open_archive(&x, fd, out_path)) >= 0)
                r = export_chain(s, &x, tip);
        store_unlock(s);
        if (x.a && archive_write_close(x.a) != ARCHIVE_OK && r >= 0)
                r = arc_err(&x, out_path);
        if (x.a)
                archive_write_free(x.a);
        free(x.buf);
        if (r >= 0)
                r = finish_out(fd, out_path, tmp, named, err);
        if (r < 0 && strcmp(out_path, "-"))
                (void)unlink(tmp);
        return r < 0 ? r : 0;
}
