/* store/export.c and import.c: a round trip into another data dir reproduces every id, plain
 * tar lists the export, and archives from a small generator of hostile entries are refused
 * with the store left exactly as it was. */
#include "tests/unit/store/helpers.h"

#include <archive.h>
#include <archive_entry.h>
#include <criterion/parameterized.h>
#include <ftw.h>

/* Table rows name only the fields they need. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

TestSuite(store_export, .init = t_setup, .fini = t_teardown);
TestSuite(store_import, .init = t_setup, .fini = t_teardown);

static char snap_buf[1 << 16];

static int snap_cb(const char *p, const struct stat *st, int flag, struct FTW *f) {
        size_t l = strlen(snap_buf);
        snprintf(snap_buf + l, sizeof snap_buf - l, "%s %o %lld\n", p, st->st_mode,
                 (long long)st->st_size);
        return 0;
}

/* Every path, mode and size under the data dir, minus the lock file's times. */
static char *snapshot(const char *rel) {
        snap_buf[0] = '\0';
        cr_assert_eq(nftw(t_path(rel), snap_cb, 16, FTW_PHYS), 0);
        return strdup(snap_buf);
}

struct logbuf {
        char ids[8][STORE_ID_SIZE];
        int n;
};

static int log_cb(const struct store_commit_info *c, void *ud) {
        struct logbuf *l = ud;
        memcpy(l->ids[l->n++], c->id, STORE_ID_SIZE);
        return 0;
}

/* Three commits exercising every entry kind. */
static void populate(struct store *s, char tip[STORE_ID_SIZE]) {
        struct rtn_error err = {0};
        t_mkdir("u1");
        t_write("u1/a", "alpha");
        t_write("u1/empty", "");
        t_mkdir("u1/ro");
        t_write("u1/ro/f", "in a read-only dir");
        cr_assert_eq(link(t_path("u1/a"), t_path("u1/ro/hl")), 0);
        cr_assert_eq(symlink("/etc/passwd", t_path("u1/abs")), 0);
        cr_assert_eq(mkfifo(t_path("u1/fifo"), 0600), 0);
        cr_assert_eq(setxattr(t_path("u1/a"), "user.k", "v", 1, 0), 0);
        cr_assert_eq(chmod(t_path("u1/ro"), 0555), 0);
        cr_assert_eq(store_commit(s, "default", t_path("u1"), "one", tip, &err), 0, "%s", err.msg);
        t_mkdir("u2");
        t_whiteout("u2/a");
        t_mkdir("u2/opq");
        cr_assert_eq(setxattr(t_path("u2/opq"), "user.overlay.opaque", "y", 1, 0), 0);
        cr_assert_eq(store_commit(s, "default", t_path("u2"), "two", tip, &err), 0, "%s", err.msg);
        t_mkdir("u3");
        t_write("u3/big", "");
        int fd = open(t_path("u3/big"), O_WRONLY | O_CLOEXEC);
        cr_assert_eq(ftruncate(fd, 3 << 20), 0);
        cr_assert_eq(pwrite(fd, "end", 3, (3 << 20) - 3), 3);
        close(fd);
        cr_assert_eq(store_commit(s, "default", t_path("u3"), "three", tip, &err), 0, "%s",
                     err.msg);
}

/* populate()'s three commits in A, exported to x.tar.zst and imported into B: the tip
 * arrives with its id. */
static void round_trip(struct store *a, struct store *b) {
        struct rtn_error err = {0};
        char tip[STORE_ID_SIZE], got[STORE_ID_SIZE];
        populate(a, tip);
        cr_assert_eq(store_export(a, "default", NULL, t_path("x.tar.zst"), &err), 0, "%s", err.msg);
        cr_assert_eq(store_import(b, "default", t_path("x.tar.zst"), 0, got, &err), 0, "%s",
                     err.msg);
        cr_assert_str_eq(got, tip);
}

Test(store_export, round_trip_same_ids) {
        struct store *a = t_open("A"), *b = t_open("B");
        struct rtn_error err = {0};
        char got[STORE_ID_SIZE];
        round_trip(a, b);
        struct logbuf la = {0}, lb = {0};
        cr_assert_eq(store_log(a, "default", log_cb, &la, &err), 0);
        cr_assert_eq(store_log(b, "default", log_cb, &lb, &err), 0);
        cr_assert_eq(la.n, 3);
        cr_assert_eq(lb.n, 3);
        for (int i = 0; i < 3; i++)
                cr_assert_str_eq(la.ids[i], lb.ids[i]);
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(b, &vs, &err), 0, "%s", err.msg);
        cr_assert_eq(vs.layers, 3);
        /* Importing again is harmless; into an env with other history is refused. */
        cr_assert_eq(store_import(b, "default", t_path("x.tar.zst"), 0, got, &err), 0, "%s",
                     err.msg);
        t_mkdir("u4");
        t_write("u4/z", "z");
        char other[STORE_ID_SIZE];
        cr_assert_eq(store_commit(b, "default", t_path("u4"), "diverge", other, &err), 0);
        cr_assert_eq(store_import(b, "default", t_path("x.tar.zst"), 0, got, &err), -EEXIST);
        cr_assert_eq(store_import(b, "copy", t_path("x.tar.zst"), 0, got, &err), 0, "%s", err.msg);
        store_close(a);
        store_close(b);
}

/* The imported layer's copy of the sparse file (u3/big) into found. */
static char found[4096];

static int find_big(const char *p, const struct stat *st, int flag, struct FTW *f) {
        (void)st;
        if (flag == FTW_F && !strcmp(p + f->base, "big"))
                snprintf(found, sizeof found, "%s", p);
        return 0;
}

/* A file a commit kept sparse comes back sparse: the export's tar holds its 3 MiB of zeros,
 * and the import leaves them unwritten (what it reads is the same, and so is the id). */
Test(store_import, keeps_holes) {
        /* Only where the temp dir's filesystem keeps a hole: elsewhere no file could pass. */
        struct stat st;
        int fd = open(t_path("probe"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0, "%m");
        cr_assert_eq(pwrite(fd, "end", 3, (3 << 20) - 3), 3);
        cr_assert_eq(fstat(fd, &st), 0);
        close(fd);
        if ((long long)st.st_blocks * 512 >= 64 << 10)
                t_skip_test("%s keeps no holes (a sparse file of 3 MiB takes %lld bytes)", t_root,
                            (long long)st.st_blocks * 512);
        struct store *a = t_open("A"), *b = t_open("B");
        struct rtn_error err = {0};
        round_trip(a, b);
        found[0] = '\0';
        cr_assert_eq(nftw(t_path("B/layers"), find_big, 16, FTW_PHYS), 0);
        cr_assert(found[0], "no layer holds big");
        cr_assert_eq(stat(found, &st), 0);
        cr_assert_eq(st.st_size, 3 << 20);
        cr_assert_lt((long long)st.st_blocks * 512, 64 << 10, "%lld bytes on disk",
                     (long long)st.st_blocks * 512);
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(b, &vs, &err), 0, "%s", err.msg);
        store_close(a);
        store_close(b);
}

Test(store_export, plain_tar_lists_it) {
        struct store *a = t_open("A");
        struct rtn_error err = {0};
        char tip[STORE_ID_SIZE];
        populate(a, tip);
        cr_assert_eq(store_export(a, "default", tip, t_path("x.tar.zst"), &err), 0, "%s", err.msg);
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "tar --zstd -tf %s > %s 2>&1", t_path("x.tar.zst"),
                 t_path("list"));
        if (system("command -v zstd >/dev/null") != 0)
                t_skip_test("tar --zstd needs the zstd program (tools/deps.txt)");
        cr_assert_eq(system(cmd), 0, "%s", t_read(t_path("list")));
        char *l = t_read(t_path("list"));
        cr_assert(strstr(l, "rtn-export\n"), "%s", l);
        char want[128];
        snprintf(want, sizeof want, "commits/%s\n", tip);
        cr_assert(strstr(l, want), "%s", l);
        cr_assert(strstr(l, "/ro/hl\n"), "%s", l);
        store_close(a);
}

Test(store_import, oversized_is_refused) {
        struct store *a = t_open("A"), *b = t_open("B");
        struct rtn_error err = {0};
        char tip[STORE_ID_SIZE], got[STORE_ID_SIZE] = "keep";
        populate(a, tip);
        cr_assert_eq(store_export(a, "default", NULL, t_path("x.tar.zst"), &err), 0);
        char *before = snapshot("B");
        cr_assert_eq(store_import(b, "default", t_path("x.tar.zst"), 1 << 20, got, &err), -EFBIG);
        cr_assert(strstr(err.msg, "more than 1048576 bytes"), "%s", err.msg);
        char *after = snapshot("B");
        cr_assert_str_eq(before, after);
        cr_assert_str_eq(got, "keep");
        free(before);
        free(after);
        store_close(a);
        store_close(b);
}

/* ---- the generator of hostile archives --------------------------------------------- */

#define LID "1111111111111111111111111111111111111111111111111111111111111111"
#define LID2 "2222222222222222222222222222222222222222222222222222222222222222"

struct gen_entry {
        const char *path;
        mode_t type;
        const char *data; /* file content or symlink target */
        const char *hardlink;
        dev_t rdev;
};

static void put(struct archive *a, const struct gen_entry *it) {
        struct archive_entry *ae = archive_entry_new();
        archive_entry_set_pathname(ae, it->path);
        archive_entry_set_filetype(ae, it->type);
        archive_entry_set_perm(ae, it->type == AE_IFDIR ? 0755 : 0644);
        archive_entry_set_rdev(ae, it->rdev);
        if (it->hardlink)
                archive_entry_set_hardlink(ae, it->hardlink);
        if (it->type == AE_IFLNK)
                archive_entry_set_symlink(ae, it->data);
        size_t len = it->type == AE_IFREG && it->data ? strlen(it->data) : 0;
        archive_entry_set_size(ae, (la_int64_t)len);
        cr_assert_eq(archive_write_header(a, ae), ARCHIVE_OK, "%s", archive_error_string(a));
        if (len)
                archive_write_data(a, it->data, len);
        archive_entry_free(ae);
}

/* A well-formed prefix (header, a commit of layer LID, the layer's root, d/ and d/f) then
 * the hostile entries. The layer does not hash to LID: a generated archive whose entries
 * all pass is still refused at the id check. */
static void gen(const char *file, const struct gen_entry *e, size_t n) {
        struct archive *a = archive_write_new();
        archive_write_add_filter_zstd(a);
        archive_write_set_format_pax_restricted(a);
        cr_assert_eq(archive_write_open_filename(a, file), ARCHIVE_OK);
        struct store_commit_info c = {.layer = LID, .time = 1};
        char *rec, id[STORE_ID_SIZE], head[128], cpath[96];
        size_t len;
        cr_assert_eq(store_record_encode(&c, "m", &rec, &len), 0);
        store_id_of(rec, len, id);
        snprintf(head, sizeof head, "rtn-export 1\ntip %s\n", id);
        snprintf(cpath, sizeof cpath, "commits/%s", id);
        const struct gen_entry pre[] = {
                {"rtn-export", AE_IFREG, head},        {cpath, AE_IFREG, rec},
                {"layers/" LID "/", AE_IFDIR},         {"layers/" LID "/d/", AE_IFDIR},
                {"layers/" LID "/d/f", AE_IFREG, "x"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(pre); i++)
                put(a, &pre[i]);
        for (size_t i = 0; i < n; i++)
                put(a, &e[i]);
        archive_write_close(a);
        archive_write_free(a);
        free(rec);
}

struct bad_case {
        const char *name;
        struct gen_entry e[2]; /* e[1] optional follow-up entry, path NULL if none */
        int err;
        const char *msg;
};

static struct bad_case cases[] = {
        {"dotdot", {{"../evil", AE_IFREG, "x"}}, EPERM, "../evil"},
        {"dotdot-in-layer", {{"layers/" LID "/d/../../../evil", AE_IFREG, "x"}}, EPERM, "'..'"},
        {"absolute", {{"/tmp/evil", AE_IFREG, "x"}}, EPERM, "/tmp/evil"},
        {"device", {{"layers/" LID "/null", AE_IFCHR, NULL, NULL, 0x103}}, EPERM, "device node"},
        {"block-device",
         {{"layers/" LID "/sda", AE_IFBLK, NULL, NULL, 0x800}},
         EPERM,
         "device node"},
        {"hardlink-out",
         {{"layers/" LID "/h", AE_IFREG, NULL, "/etc/passwd"}},
         EPERM,
         "hard link out"},
        {"hardlink-other-layer",
         {{"layers/" LID "/h", AE_IFREG, NULL, "layers/" LID2 "/f"}},
         EPERM,
         "hard link out"},
        {"hardlink-up",
         {{"layers/" LID "/h", AE_IFREG, NULL, "layers/" LID "/../x"}},
         EPERM,
         "hard link out"},
        {"symlink-escape",
         {{"layers/" LID "/s", AE_IFLNK, "/tmp"}, {"layers/" LID "/s/evil", AE_IFREG, "x"}},
         EPERM,
         "symlink"},
        {"duplicate", {{"layers/" LID "/d/f", AE_IFREG, "y"}}, EPERM, "duplicate"},
        {"unknown", {{"etc/passwd", AE_IFREG, "x"}}, EPERM, "not part of"},
        {"tampered-layer", {{"layers/" LID "/g", AE_IFREG, "fine"}}, EBADMSG, "hashes to"},
        {"bad-commit", {{"commits/" LID2, AE_IFREG, "junk"}}, EBADMSG, ""},
};

/* Criterion runs each case in a fresh exec of the binary: pass indexes, not pointers. */
ParameterizedTestParameters(store_import, refuses_hostile_archives) {
        static int idx[ARRAY_SIZE(cases)];
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                idx[i] = (int)i;
        return cr_make_param_array(int, idx, ARRAY_SIZE(cases));
}

ParameterizedTest(int *i, store_import, refuses_hostile_archives) {
        const struct bad_case *c = &cases[*i];
        struct store *b = t_open("B");
        struct rtn_error err = {0};
        char tip[STORE_ID_SIZE], got[STORE_ID_SIZE] = "keep";
        t_commit_files(b, "default", "m", tip, (const char *[]){"a=1", NULL});
        char *before = snapshot("B");
        char file[512];
        snprintf(file, sizeof file, "%s", t_path("bad.tar.zst"));
        gen(file, c->e, c->e[1].path ? 2 : 1);
        int r = store_import(b, "default", file, 0, got, &err);
        cr_assert_eq(r, -c->err, "%s: got %d (%s)", c->name, r, err.msg);
        cr_assert(strstr(err.msg, c->msg), "%s: %s", c->name, err.msg);
        cr_assert_str_eq(got, "keep");
        char *after = snapshot("B");
        cr_assert_str_eq(before, after, "%s: store changed", c->name);
        cr_assert_eq(access("/tmp/evil", F_OK), -1);
        cr_assert_eq(access(t_path("evil"), F_OK), -1);
        free(before);
        free(after);
        store_close(b);
}
