/* Import: unpacks an export into tmp/import.*, trusting nothing in it. Every path must be
 * rtn-export, commits/<id> or layers/<id>/<relative path> with no "..", ".", empty or
 * absolute component; every file is created with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS) below its layer root and O_EXCL, so a symlink in the archive can
 * never be followed out (or in); hard links must point at an earlier file of the same layer;
 * the only device node allowed is the 0:0 whiteout; the declared bytes are capped. Then
 * every commit and layer is rehashed against its id and only a fully checked import is
 * renamed into the store. Any failure removes the temp dir: the store is untouched. */
#include "store/internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "store/dl.h" /* after the library headers: lazy-loaded names */

#include "common/cleanup.h"
#include "common/io.h"
#include "common/log.h"
#include "common/syscall.h"

#define IMPORT_MAX_ENTRIES 2000000
#define ENTRY_OVERHEAD 512 /* bytes charged per entry against the cap (a tar header) */
#define MAX_DEPTH 256

struct fixup {
        char *path; /* layers/<id>/<rel> relative to the import root */
        mode_t mode;
        uid_t uid;
        gid_t gid;
        struct timespec mtime;
};

struct imp {
        struct store *s;
        struct archive *a;
        struct rtn_error *err;
        int rootfd; /* tmp/import.* */
        int in_fd; /* the archive, closed after m.a is freed */
        char name[128]; /* its name under tmp/ */
        uint64_t max, used;
        size_t entries;
        char tip[STORE_ID_SIZE];
        struct fixup *fix;
        size_t nfix;
        char (*layers)[STORE_ID_SIZE];
        size_t nlayers;
};

static int refuse(struct imp *m, const char *path, const char *why) {
        return rtn_errx(m->err, EPERM, "import refused: %s: %s", path ? path : "(no name)", why);
}

static int arc_err(struct imp *m, const char *what) {
        int e = archive_errno(m->a);
        return rtn_errx(m->err, e > 0 ? e : EIO, "%s: %s", what, archive_error_string(m->a));
}

/* Checks rel has only normal components and at most MAX_DEPTH of them. */
static bool rel_ok(const char *rel) {
        if (!*rel || *rel == '/' || strlen(rel) >= PATH_MAX)
                return false;
        int depth = 0;
        for (const char *c = rel; *c;) {
                const char *e = strchrnul(c, '/');
                size_t n = (size_t)(e - c);
                if (n == 0 || n > NAME_MAX || (n == 1 && c[0] == '.') ||
                    (n == 2 && c[0] == '.' && c[1] == '.') || ++depth > MAX_DEPTH)
                        return false;
                c = *e ? e + 1 : e;
        }
        return true;
}

/* Opens the directory holding path (relative to the import root) without following any
 * symlink or leaving the root; *ret_base gets the last component. */
static int open_parent(struct imp *m, char *path, const char **ret_base) {
        char *slash = strrchr(path, '/');
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
        *slash = '\0';
        int fd = sys_openat2(m->rootfd, path, &how, sizeof how);
        int r = fd < 0 ? negative_errno() : fd;
        *slash = '/';
        *ret_base = slash + 1;
        return r;
}

static int add_fixup(struct imp *m, const char *path, struct archive_entry *ae) {
        struct fixup *nf = realloc(m->fix, (m->nfix + 1) * sizeof *nf);
        if (!nf)
                return -ENOMEM;
        m->fix = nf;
        struct fixup *f = &m->fix[m->nfix];
        if (!(f->path = strdup(path)))
                return -ENOMEM;
        f->mode = archive_entry_perm(ae);
        f->uid = (uid_t)archive_entry_uid(ae);
        f->gid = (gid_t)archive_entry_gid(ae);
        f->mtime = (struct timespec){archive_entry_mtime(ae), archive_entry_mtime_nsec(ae)};
        m->nfix++;
        return 0;
}

/* Ownership can only be restored with CAP_CHOWN; without it a layer whose owners differ
 * from the importer fails its id check below, which names the layer. */
static void set_xattrs(int fd, int dirfd, const char *base, struct archive_entry *ae) {
        const char *name;
        const void *val;
        size_t len;
        char p[64 + NAME_MAX];
        snprintf(p, sizeof p, "/proc/self/fd/%d/%s", dirfd, base);
        archive_entry_xattr_reset(ae);
        while (archive_entry_xattr_next(ae, &name, &val, &len) == ARCHIVE_OK) {
                if (!store_xattr_covered(name))
                        continue;
                if (fd >= 0)
                        (void)fsetxattr(fd, name, val, len, 0);
                else
                        (void)lsetxattr(p, name, val, len, 0);
        }
}

/* A file's zeros are left unwritten: the file is new, so what is never written reads as the
 * zeros it stands for (the layer's hash is the same), and a sparse file that a commit kept
 * sparse (a disk image of gigabytes, 4 KiB on disk) does not come back whole from its
 * export, whose tar holds the zeros. The data is looked at in pieces that end at the file's
 * HOLE_BLOCK boundaries, and a piece of zeros is skipped even where it is part of a block
 * (the archive's data blocks start anywhere): a run of zeros that spans two of them is then
 * a hole as well. */
#define HOLE_BLOCK 4096

static bool zeros(const unsigned char *p, size_t n) {
        return p[0] == 0 && memcmp(p, p + 1, n - 1) == 0;
}

static int put(struct imp *m, int fd, const char *path, const unsigned char *p, size_t n,
               la_int64_t off) {
        if (n && pwrite(fd, p, n, (off_t)off) != (ssize_t)n)
                return rtn_err(m->err, errno ? errno : EIO, "write %s", path);
        return 0;
}

static int write_block(struct imp *m, int fd, const char *path, const unsigned char *p, size_t len,
                       la_int64_t off) {
        size_t from = 0; /* p[from, i) is data not yet written */
        int r;
        for (size_t i = 0, k; i < len; i += k) {
                k = HOLE_BLOCK - (size_t)((uint64_t)(off + (la_int64_t)i) % HOLE_BLOCK);
                if (k > len - i)
                        k = len - i;
                if (!zeros(p + i, k))
                        continue;
                if ((r = put(m, fd, path, p + from, i - from, off + (la_int64_t)from)) < 0)
                        return r;
                from = i + k;
        }
        return put(m, fd, path, p + from, len - from, off + (la_int64_t)from);
}

static int write_data(struct imp *m, int fd, const char *path) {
        const void *buf;
        size_t len;
        la_int64_t off;
        int r;
        while ((r = archive_read_data_block(m->a, &buf, &len, &off)) == ARCHIVE_OK)
                if ((r = write_block(m, fd, path, buf, len, off)) < 0)
                        return r;
        return r == ARCHIVE_EOF ? 0 : arc_err(m, path);
}

static int make_file(struct imp *m, int dirfd, const char *base, const char *path,
                     struct archive_entry *ae) {
        _cleanup_close_ int fd =
                openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return errno == EEXIST ? refuse(m, path, "duplicate entry")
                                       : rtn_err(m->err, errno, "create %s", path);
        int r = write_data(m, fd, path);
        if (r < 0)
                return r;
        if (ftruncate(fd, archive_entry_size(ae)) < 0)
                return rtn_err(m->err, errno, "size %s", path);
        if (fchown(fd, (uid_t)archive_entry_uid(ae), (gid_t)archive_entry_gid(ae)) < 0)
                log_debug("chown %s: %m", path);
        if (fchmod(fd, archive_entry_perm(ae)) < 0)
                return rtn_err(m->err, errno, "chmod %s", path);
        set_xattrs(fd, dirfd, base, ae);
        struct timespec ts[2] = {{0, UTIME_OMIT},
                                 {archive_entry_mtime(ae), archive_entry_mtime_nsec(ae)}};
        (void)futimens(fd, ts);
        return 0;
}

/* A hard link must name an earlier regular file of the same layer. */
static int make_link(struct imp *m, int dirfd, const char *base, const char *path,
                     const char *layer, const char *target) {
        char prefix[96];
        snprintf(prefix, sizeof prefix, "layers/%s/", layer);
        if (strncmp(target, prefix, strlen(prefix)) || !rel_ok(target + strlen(prefix)))
                return refuse(m, path, "hard link out of its layer");
        _cleanup_free_ char *t = strdup(target);
        if (!t)
                return -ENOMEM;
        const char *tbase;
        _cleanup_close_ int tdir = open_parent(m, t, &tbase);
        struct stat st;
        if (tdir < 0 || fstatat(tdir, tbase, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                return refuse(m, path, "hard link to something not extracted before it");
        if (linkat(tdir, tbase, dirfd, base, 0) < 0)
                return errno == EEXIST ? refuse(m, path, "duplicate entry")
                                       : rtn_err(m->err, errno, "link %s", path);
        return 0;
}

static int make_node(struct imp *m, int dirfd, const char *base, const char *path,
                     struct archive_entry *ae) {
        mode_t type = archive_entry_filetype(ae);
        int r;
        if (type == AE_IFDIR) {
                r = mkdirat(dirfd, base, 0700);
                struct stat st;
                if (r < 0 &&
                    (errno != EEXIST || fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                     !S_ISDIR(st.st_mode)))
                        return errno == EEXIST ? refuse(m, path, "duplicate entry")
                                               : rtn_err(m->err, errno, "mkdir %s", path);
                _cleanup_close_ int fd =
                        openat(dirfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0)
                        set_xattrs(fd, dirfd, base, ae);
                return add_fixup(m, path, ae) < 0 ? rtn_err(m->err, ENOMEM, "import") : 0;
        }
        if (type == AE_IFLNK) {
                const char *t = archive_entry_symlink(ae);
                if (!t || !*t || strlen(t) >= PATH_MAX)
                        return refuse(m, path, "bad symlink target");
                r = symlinkat(t, dirfd, base);
        } else if (type == AE_IFIFO) {
                r = mkfifoat(dirfd, base, archive_entry_perm(ae));
        } else if (type == AE_IFCHR && archive_entry_rdev(ae) == 0) {
                /* An overlay whiteout; unprivileged users may create these since Linux 5.8
                 * (commit a3c751a50fe6, "vfs: allow unprivileged whiteout creation"). */
                r = mknodat(dirfd, base, S_IFCHR | archive_entry_perm(ae), 0);
        } else {
                return refuse(m, path,
                              type == AE_IFCHR || type == AE_IFBLK
                                      ? "device node (only 0:0 whiteouts are allowed)"
                                      : "unsupported entry type");
        }
        if (r < 0)
                return errno == EEXIST ? refuse(m, path, "duplicate entry")
                                       : rtn_err(m->err, errno, "create %s", path);
        if (fchownat(dirfd, base, (uid_t)archive_entry_uid(ae), (gid_t)archive_entry_gid(ae),
                     AT_SYMLINK_NOFOLLOW) < 0)
                log_debug("chown %s: %m", path);
        if (type != AE_IFLNK && fchmodat(dirfd, base, archive_entry_perm(ae), 0) < 0)
                return rtn_err(m->err, errno, "chmod %s", path);
        set_xattrs(-1, dirfd, base, ae);
        return 0;
}

static int note_layer(struct imp *m, const char *id) {
        for (size_t i = 0; i < m->nlayers; i++)
                if (!strcmp(m->layers[i], id))
                        return 0;
        void *p = realloc(m->layers, (m->nlayers + 1) * STORE_ID_SIZE);
        if (!p)
                return -ENOMEM;
        m->layers = p;
        memcpy(m->layers[m->nlayers++], id, STORE_ID_SIZE);
        return 0;
}

/* layers/<id>[/rel]: the layer root or an entry below it. */
static int layer_entry(struct imp *m, char *path, struct archive_entry *ae) {
        char id[STORE_ID_SIZE];
        const char *rest = path + strlen("layers/");
        size_t idl = strcspn(rest, "/");
        if (idl != STORE_ID_LEN)
                return refuse(m, path, "not a layer path");
        memcpy(id, rest, STORE_ID_LEN);
        id[STORE_ID_LEN] = '\0';
        if (!store_id_valid(id))
                return refuse(m, path, "not a layer id");
        const char *rel = rest[idl] ? rest + idl + 1 : "";
        if (*rel && !rel_ok(rel))
                return refuse(m, path, "'..', '.', empty or absolute path component");
        if (!*rel && archive_entry_filetype(ae) != AE_IFDIR)
                return refuse(m, path, "layer root is not a directory");
        if (note_layer(m, id) < 0)
                return rtn_err(m->err, ENOMEM, "import");
        const char *base;
        _cleanup_close_ int dirfd = open_parent(m, path, &base);
        if (dirfd < 0)
                return dirfd == -ELOOP || dirfd == -EXDEV
                               ? refuse(m, path, "path passes through a symlink")
                               : refuse(m, path, "parent directory missing from the archive");
        const char *hl = archive_entry_hardlink(ae);
        if (hl)
                return make_link(m, dirfd, base, path, id, hl);
        if (archive_entry_filetype(ae) == AE_IFREG)
                return make_file(m, dirfd, base, path, ae);
        return make_node(m, dirfd, base, path, ae);
}

static int small_entry(struct imp *m, const char *path, char *buf, size_t cap, size_t *ret_len) {
        size_t got = 0;
        for (;;) {
                la_ssize_t n = archive_read_data(m->a, buf + got, cap - got);
                if (n < 0)
                        return arc_err(m, path);
                if (n == 0)
                        break;
                got += (size_t)n;
                if (got >= cap)
                        return refuse(m, path, "too large");
        }
        buf[got] = '\0';
        *ret_len = got;
        return 0;
}

static int head_entry(struct imp *m, const char *path) {
        char buf[256];
        size_t len;
        int r = small_entry(m, path, buf, sizeof buf, &len);
        if (r < 0)
                return r;
        if (len != strlen("rtn-export 1\ntip \n") + STORE_ID_LEN ||
            strncmp(buf, "rtn-export 1\ntip ", 17) || buf[len - 1] != '\n')
                return refuse(m, path, "not an rtn export of a known version");
        memcpy(m->tip, buf + 17, STORE_ID_LEN);
        m->tip[STORE_ID_LEN] = '\0';
        return store_id_valid(m->tip) ? 0 : refuse(m, path, "bad tip id");
}

static int commit_entry(struct imp *m, const char *path) {
        const char *id = path + strlen("commits/");
        if (!store_id_valid(id))
                return refuse(m, path, "not a commit id");
        _cleanup_free_ char *buf = malloc(STORE_MSG_MAX + 1024);
        size_t len;
        if (!buf)
                return rtn_err(m->err, ENOMEM, "import");
        int r = small_entry(m, path, buf, STORE_MSG_MAX + 1024, &len);
        if (r < 0)
                return r;
        _cleanup_close_ int fd =
                openat(m->rootfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return errno == EEXIST ? refuse(m, path, "duplicate entry")
                                       : rtn_err(m->err, errno, "create %s", path);
        r = rtn_write_all(fd, buf, len);
        return r < 0 ? rtn_err(m->err, r, "write %s", path) : 0;
}

static int one_entry(struct imp *m, struct archive_entry *ae) {
        const char *p = archive_entry_pathname(ae);
        if (!p)
                return refuse(m, NULL, "entry without a name");
        _cleanup_free_ char *path = strdup(p);
        if (!path)
                return rtn_err(m->err, ENOMEM, "import");
        size_t n = strlen(path);
        if (n > 1 && path[n - 1] == '/')
                path[n - 1] = '\0';
        if (++m->entries > IMPORT_MAX_ENTRIES)
                return refuse(m, path, "too many entries");
        la_int64_t size = archive_entry_size_is_set(ae) ? archive_entry_size(ae) : 0;
        if (size < 0 || (uint64_t)size > m->max - m->used ||
            m->max - m->used - (uint64_t)size < ENTRY_OVERHEAD)
                return rtn_errx(m->err, EFBIG,
                                "import refused: archive unpacks to more than %llu bytes",
                                (unsigned long long)m->max);
        m->used += (uint64_t)size + ENTRY_OVERHEAD;
        bool is_dir = archive_entry_filetype(ae) == AE_IFDIR;
        if (!strcmp(path, "rtn-export"))
                return head_entry(m, path);
        if ((!strcmp(path, "commits") || !strcmp(path, "layers")) && is_dir)
                return 0;
        if (!strncmp(path, "commits/", 8) && archive_entry_filetype(ae) == AE_IFREG &&
            !archive_entry_hardlink(ae))
                return commit_entry(m, path);
        if (!strncmp(path, "layers/", 7))
                return layer_entry(m, path, ae);
        return refuse(m, path, "not part of an rtn export (absolute path, '..' or unknown name)");
}

/* What libarchive could not read: the file is no (complete) rtn export, which the user can
 * fix (EBADMSG), unless reading itself failed. */
static int not_export(struct imp *m, const char *path) {
        int e = archive_errno(m->a);
        if (e == EIO || e == ENOMEM || e == ENOSPC)
                return arc_err(m, path);
        return rtn_errx(m->err, EBADMSG, "%s is not an rtn export: %s", path,
                        archive_error_string(m->a));
}

static int unpack(struct imp *m, const char *in_path) {
        /* Opened here, not by libarchive, so a missing file says why (strerror). */
        int fd = m->in_fd = open(in_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return rtn_err(m->err, errno, "open %s", in_path);
        m->a = archive_read_new();
        if (!m->a)
                return rtn_err(m->err, ENOMEM, "import");
        /* Only what export writes: pax tar, zstd or uncompressed. */
        if (archive_read_support_filter_zstd(m->a) != ARCHIVE_OK ||
            archive_read_support_format_tar(m->a) != ARCHIVE_OK)
                return arc_err(m, in_path);
        if (archive_read_open_fd(m->a, fd, 1 << 16) != ARCHIVE_OK)
                return not_export(m, in_path);
        struct archive_entry *ae;
        int r, ar;
        while ((ar = archive_read_next_header(m->a, &ae)) == ARCHIVE_OK)
                if ((r = one_entry(m, ae)) < 0)
                        return r;
        if (ar != ARCHIVE_EOF)
                return not_export(m, in_path);
        if (!m->tip[0])
                return refuse(m, in_path, "no rtn-export entry: not an rtn export");
        return 0;
}

/* Directory modes, owners and times last, deepest first, so a 0555 directory did not block
 * its own children. */
static void apply_fixups(struct imp *m) {
        for (size_t i = m->nfix; i-- > 0;) {
                struct fixup *f = &m->fix[i];
                struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                                       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
                _cleanup_close_ int fd = sys_openat2(m->rootfd, f->path, &how, sizeof how);
                if (fd < 0)
                        continue;
                if (fchown(fd, f->uid, f->gid) < 0)
                        log_debug("chown %s: %m", f->path);
                (void)fchmod(fd, f->mode);
                struct timespec ts[2] = {{0, UTIME_OMIT}, f->mtime};
                (void)futimens(fd, ts);
        }
}

/* Reads and checks one imported commit record: hash matches, canonical. */
static int check_commit(struct imp *m, const char *id, struct store_commit_info *c) {
        char p[96], got[STORE_ID_SIZE];
        snprintf(p, sizeof p, "commits/%s", id);
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = store_read_small(m->rootfd, p, STORE_MSG_MAX + 1024, &buf, &len);
        if (r == -ENOENT)
                return rtn_errx(m->err, EBADMSG,
                                "import refused: commit %s missing from the archive", id);
        if (r < 0)
                return rtn_err(m->err, r, "read %s", p);
        if (store_id_of(buf, len, got) < 0 || strcmp(got, id) ||
            store_record_decode(buf, len, c, NULL, 0) < 0)
                return rtn_errx(m->err, EBADMSG, "import refused: commit %s does not match its id",
                                id);
        memcpy(c->id, id, STORE_ID_SIZE);
        return 0;
}

/* Walks the imported chain from the tip: every commit present and intact, every layer it
 * names present and hashing to its id. Sets *ret_has when `have` is in the chain. */
static int check_chain(struct imp *m, const char *have, bool *ret_has) {
        char cur[STORE_ID_SIZE];
        memcpy(cur, m->tip, STORE_ID_SIZE);
        *ret_has = false;
        size_t guard = 0;
        while (cur[0]) {
                struct store_commit_info c;
                int r = check_commit(m, cur, &c);
                if (r < 0)
                        return r;
                if (!strcmp(cur, have))
                        *ret_has = true;
                bool listed = false;
                for (size_t i = 0; i < m->nlayers; i++)
                        listed = listed || !strcmp(m->layers[i], c.layer);
                if (!listed)
                        return rtn_errx(m->err, EBADMSG,
                                        "import refused: layer %s of commit %s missing", c.layer,
                                        cur);
                if (++guard > m->entries)
                        return rtn_errx(m->err, EBADMSG, "import refused: commit chain loops");
                memcpy(cur, c.parent, STORE_ID_SIZE);
        }
        return 0;
}

static int check_layers(struct imp *m) {
        for (size_t i = 0; i < m->nlayers; i++) {
                char p[96], id[STORE_ID_SIZE];
                snprintf(p, sizeof p, "layers/%s", m->layers[i]);
                _cleanup_close_ int fd =
                        openat(m->rootfd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return rtn_err(m->err, errno, "import refused: open %s", p);
                int r = store_layer_hash(fd, id, m->err);
                if (r < 0)
                        return rtn_err_wrap(m->err, "import refused: %s", p);
                if (strcmp(id, m->layers[i]))
                        return rtn_errx(m->err, EBADMSG,
                                        "import refused: layer %s hashes to %s (content altered, "
                                        "or owners that could not be restored)",
                                        m->layers[i], id);
        }
        return 0;
}

/* Renames the checked objects into the store; objects it already has are left in tmp/. */
static int install(struct imp *m, const char *env) {
        if (syncfs(m->rootfd) < 0)
                return rtn_err(m->err, errno, "sync import");
        char p[96];
        for (size_t i = 0; i < m->nlayers; i++) {
                snprintf(p, sizeof p, "layers/%s", m->layers[i]);
                if (renameat(m->rootfd, p, m->s->layersfd, m->layers[i]) < 0 && errno != EEXIST &&
                    errno != ENOTEMPTY)
                        return rtn_err(m->err, errno, "move %s into the store", p);
        }
        _cleanup_close_ int cfd = openat(m->rootfd, "commits", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char cur[STORE_ID_SIZE];
        memcpy(cur, m->tip, STORE_ID_SIZE);
        while (cur[0]) {
                struct store_commit_info c;
                int r = check_commit(m, cur, &c);
                if (r < 0)
                        return r;
                if (renameat(cfd, cur, m->s->commitsfd, cur) < 0)
                        return rtn_err(m->err, errno, "move commit %s into the store", cur);
                memcpy(cur, c.parent, STORE_ID_SIZE);
        }
        int r = store_fsync_dir(m->s->layersfd);
        if (r >= 0)
                r = store_fsync_dir(m->s->commitsfd);
        char have[STORE_ID_SIZE] = "";
        if (r >= 0 && (store_env_get(m->s, env, have) < 0 || strcmp(have, m->tip)))
                r = store_env_move(m->s, env, m->tip, "import");
        return r < 0 ? rtn_err(m->err, r, "record import in '%s'", env) : 0;
}

static int import_locked(struct imp *m, const char *env, const char *in_path) {
        char have[STORE_ID_SIZE] = "";
        int r = store_env_get(m->s, env, have);
        if (r < 0 && r != -ENOENT)
                return rtn_err(m->err, r, "read tip of '%s'", env);
        if ((r = unpack(m, in_path)) < 0)
                return r;
        apply_fixups(m);
        bool has = false;
        if ((r = check_chain(m, have, &has)) < 0 || (r = check_layers(m)) < 0)
                return r;
        if (have[0] && !has)
                return rtn_errx(m->err, EEXIST,
                                "environment '%s' has commits the import does not contain "
                                "(tip %.12s); import into another --env",
                                env, have);
        return install(m, env);
}

int store_import(struct store *s, const char *env, const char *in_path, uint64_t max_bytes,
                 char ret_tip[STORE_ID_SIZE], struct rtn_error *err) {
        if (store_env_valid(env) < 0)
                return rtn_errx(err, EINVAL, "invalid environment name '%s'", env ? env : "");
        struct imp m = {.s = s,
                        .err = err,
                        .rootfd = -1,
                        .in_fd = -1,
                        .max = max_bytes ? max_bytes : STORE_IMPORT_MAX_BYTES};
        int r = store_lock(s, true);
        if (r < 0)
                return rtn_err(err, r, "lock store");
        store_tmp_name(m.name, sizeof m.name, "import");
        if (mkdirat(s->tmpfd, m.name, 0700) < 0 ||
            (m.rootfd = openat(s->tmpfd, m.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
            mkdirat(m.rootfd, "commits", 0700) < 0 || mkdirat(m.rootfd, "layers", 0700) < 0) {
                r = rtn_err(err, errno, "create import dir in %s/tmp", s->dir);
        } else {
                r = import_locked(&m, env, in_path);
        }
        if (m.a)
                archive_read_free(m.a);
        rtn_safe_close(m.in_fd);
        rtn_safe_close(m.rootfd);
        (void)store_rm_rf_at(s->tmpfd, m.name);
        store_unlock(s);
        for (size_t i = 0; i < m.nfix; i++)
                free(m.fix[i].path);
        free(m.fix);
        free(m.layers);
        if (r >= 0)
                memcpy(ret_tip, m.tip, STORE_ID_SIZE);
        return r < 0 ? r : 0;
}
