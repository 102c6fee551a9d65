/* The layer id: every entry type goes in, the same tree built twice in different orders and
 * with different times hashes the same, and any change a lowerdir would show changes it. */
#include "tests/unit/store/helpers.h"

#include <criterion/parameterized.h>
#include <sys/time.h>

TestSuite(store_layer_hash, .init = t_setup, .fini = t_teardown);

static void set_mtime(const char *rel, time_t t) {
        struct timespec ts[2] = {{t, 0}, {t, 0}};
        cr_assert_eq(utimensat(AT_FDCWD, t_path(rel), ts, AT_SYMLINK_NOFOLLOW), 0);
}

static void mk_sparse(const char *rel) {
        int fd = open(t_path(rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(pwrite(fd, "x", 1, 512 * 1024), 1);
        cr_assert_eq(ftruncate(fd, 1024 * 1024), 0);
        close(fd);
}

static void mk_dense(const char *rel) {
        int fd = open(t_path(rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        const size_t size = 1024 * 1024;
        char *img = calloc(1, size);
        cr_assert_not_null(img);
        img[512 * 1024] = 'x';
        cr_assert_eq(write(fd, img, size), (ssize_t)size);
        free(img);
        close(fd);
}

static const char *join(char (*p)[128], int *k, const char *b, const char *x) {
        char *out = p[(*k)++ % 64];
        snprintf(out, 128, "%s/%s", b, x);
        return out;
}

/* One tree with every entry kind. order 0 creates in one order, 1 in the reverse and with
 * other mtimes; sparse 0 writes the sparse file densely. */
static void build(const char *b, int order, int sparse) {
        static char p[64][128];
        int k = 0;
#define P(x) join(p, &k, b, x)
        t_mkdir(b);
        if (order == 0) {
                t_mkdir(P("d"));
                t_mkdir(P("d/sub"));
                t_write(P("f"), "hello");
                t_write(P("empty"), "");
                t_write(P("d/sub/deep"), "deep");
        } else {
                t_mkdir(P("d"));
                t_write(P("empty"), "");
                t_mkdir(P("d/sub"));
                t_write(P("d/sub/deep"), "deep");
                t_write(P("f"), "hello");
        }
        (sparse ? mk_sparse : mk_dense)(P("sparse"));
        cr_assert_eq(symlink("f", t_path(P("link"))), 0);
        cr_assert_eq(symlink("/etc/passwd", t_path(P("abs"))), 0);
        cr_assert_eq(link(t_path(P("f")), t_path(P("d/hl"))), 0);
        cr_assert_eq(mkfifo(t_path(P("fifo")), 0640), 0);
        t_whiteout(P("gone"));
        t_mkdir(P("opq"));
        cr_assert_eq(setxattr(t_path(P("opq")), "user.overlay.opaque", "y", 1, 0), 0, "%m");
        cr_assert_eq(setxattr(t_path(P("f")), "user.test", "v1", 2, 0), 0);
        /* Overlay bookkeeping of the writing machine: not content. */
        cr_assert_eq(setxattr(t_path(P("d")), "user.overlay.impure", order ? "y" : "n", 1, 0), 0);
        cr_assert_eq(chmod(t_path(P("d/sub")), 0700), 0);
        set_mtime(P("f"), order ? 1000 : 2000000);
        set_mtime(P("d"), order ? 5 : 99999);
#undef P
}

Test(store_layer_hash, same_tree_same_id) {
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE];
        build("a", 0, 1);
        build("b", 1, 0);
        t_hash("a", a);
        t_hash("b", b);
        cr_assert_str_eq(a, b);
        cr_assert_eq(strlen(a), 64);
}

Test(store_layer_hash, empty_dir) {
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE];
        t_mkdir("e1");
        t_mkdir("e2");
        t_hash("e1", a);
        t_hash("e2", b);
        cr_assert_str_eq(a, b);
        t_write("e2/x", "");
        t_hash("e2", b);
        cr_assert_str_neq(a, b);
}

/* Each mutation of the reference tree must change the id. */
static void mutate(int which) {
        switch (which) {
        case 0:
                t_write("m/f", "hellO");
                break; /* content */
        case 1:
                cr_assert_eq(chmod(t_path("m/f"), 0600), 0);
                break; /* mode */
        case 2:
                cr_assert_eq(lchown(t_path("m/f"), 4242, 4242), 0, "%m");
                break; /* owner */
        case 3:
                unlink(t_path("m/link"));
                cr_assert_eq(symlink("g", t_path("m/link")), 0);
                break;
        case 4:
                unlink(t_path("m/gone"));
                break; /* whiteout */
        case 5:
                cr_assert_eq(removexattr(t_path("m/opq"), "user.overlay.opaque"), 0);
                break;
        case 6:
                cr_assert_eq(setxattr(t_path("m/f"), "user.test", "v2", 2, 0), 0);
                break;
        case 7:
                cr_assert_eq(rename(t_path("m/empty"), t_path("m/empty2")), 0);
                break;
        case 8: /* break the hard link: same bytes, two inodes */
                unlink(t_path("m/d/hl"));
                t_write("m/d/hl", "hello");
                break;
        case 9:
                t_write("m/d/new", "");
                break;
        case 10:
                unlink(t_path("m/fifo"));
                t_write("m/fifo", "");
                break; /* type */
        case 11:
                cr_assert_eq(chmod(t_path("m/fifo"), 0600), 0);
                break;
        case 12:
                cr_assert_eq(rmdir(t_path("m/opq")), 0);
                t_whiteout("m/opq");
                break;
        default:
                cr_assert_fail();
        }
}

ParameterizedTestParameters(store_layer_hash, any_change_changes_id) {
        static int cases[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        return cr_make_param_array(int, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(int *which, store_layer_hash, any_change_changes_id) {
        char before[STORE_ID_SIZE], after[STORE_ID_SIZE];
        if (*which == 2 && geteuid() != 0)
                t_skip_test("chown to another uid needs root");
        build("m", 0, 1);
        t_hash("m", before);
        mutate(*which);
        t_hash("m", after);
        cr_assert_str_neq(before, after, "mutation %d kept id %s", *which, after);
}

Test(store_layer_hash, sockets_are_not_content) {
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE];
        t_mkdir("s");
        t_write("s/x", "1");
        t_hash("s", a);
        cr_assert_eq(mknod(t_path("s/sock"), S_IFSOCK | 0600, 0), 0, "%m");
        t_hash("s", b);
        cr_assert_str_eq(a, b);
}

/* A whiteout's mode and owner are invisible through overlayfs and belong to whoever mounted
 * it (a subordinate id for an unprivileged sandbox), so they must not change the id. */
Test(store_layer_hash, whiteout_attributes_are_not_content) {
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], c[STORE_ID_SIZE];
        t_mkdir("w");
        t_whiteout("w/gone");
        t_hash("w", a);
        cr_assert_eq(chmod(t_path("w/gone"), 0600), 0, "%m");
        t_hash("w", b);
        cr_assert_str_eq(a, b, "a whiteout's mode changed the id");
        if (geteuid() == 0) {
                cr_assert_eq(lchown(t_path("w/gone"), 12345, 12345), 0, "%m");
                t_hash("w", c);
                cr_assert_str_eq(a, c, "a whiteout's owner changed the id");
        }
        cr_assert_eq(unlink(t_path("w/gone")), 0, "%m");
        t_hash("w", b);
        cr_assert_str_neq(a, b, "a whiteout is content");
}

Test(store_layer_hash, refuses_device_node) {
        char id[STORE_ID_SIZE] = "unchanged";
        struct rtn_error err = {0};
        t_mkdir("dev");
        if (mknod(t_path("dev/null"), S_IFCHR | 0666, makedev(1, 3)) < 0)
                t_skip_test("mknod 1:3 needs CAP_MKNOD: %m");
        int fd = open(t_path("dev"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_eq(store_layer_hash(fd, id, &err), -EINVAL);
        close(fd);
        cr_assert_eq(err.code, EINVAL);
        cr_assert(strstr(err.msg, "null: device node"), "%s", err.msg);
        cr_assert_str_eq(id, "unchanged");
}

Test(store_layer_hash, not_a_directory) {
        char id[STORE_ID_SIZE];
        struct rtn_error err = {0};
        cr_assert_eq(store_layer_hash(-1, id, &err), -EBADF);
        cr_assert_eq(err.code, EBADF);
}

/* A file with holes hashes as the same bytes written out: the hasher asks where the data
 * is and hashes the holes as zeros without reading them (store/walk.c), so each layout here
 * (data first, holes first, data up to the end, only a hole, data across the 1 MiB read
 * buffer, a small data region and then one larger than the buffer, which the hasher reads
 * with a buffer of the small one's size at first) is built sparse and dense and the ids
 * compared; a byte put where a hole was changes the id. */
struct extent {
        off_t at;
        size_t n;
        char c;
};

struct layout {
        off_t size;
        struct extent ext[3];
};

static const struct layout layouts[] = {
        {3 << 20, {{0, 1, 'a'}, {(1 << 20) + 100, 1, 'b'}, {(3 << 20) - 1, 1, 'c'}}},
        {(2 << 20) + 5, {{2 << 20, 5, 'h'}}},
        {1 << 20, {{0, 0, 0}}},
        {4 << 20, {{256 << 10, 1536 << 10, 'p'}}},
        {5 << 20, {{0, 1, 's'}, {1 << 20, 1536 << 10, 'g'}}},
};

static void mk_layout(const char *rel, const struct layout *l, bool dense, off_t extra) {
        int fd = open(t_path(rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        char *img = calloc(1, (size_t)l->size);
        cr_assert_not_null(img);
        for (size_t i = 0; i < sizeof l->ext / sizeof l->ext[0] && l->ext[i].n; i++)
                memset(img + l->ext[i].at, l->ext[i].c, l->ext[i].n);
        if (extra >= 0)
                img[extra] = 'z';
        if (dense) {
                cr_assert_eq(write(fd, img, (size_t)l->size), (ssize_t)l->size);
        } else {
                for (size_t i = 0; i < sizeof l->ext / sizeof l->ext[0] && l->ext[i].n; i++)
                        cr_assert_eq(pwrite(fd, img + l->ext[i].at, l->ext[i].n, l->ext[i].at),
                                     (ssize_t)l->ext[i].n);
                if (extra >= 0)
                        cr_assert_eq(pwrite(fd, "z", 1, extra), 1);
                cr_assert_eq(ftruncate(fd, l->size), 0);
        }
        free(img);
        close(fd);
}

Test(store_layer_hash, holes_hash_as_zeros) {
        for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
                char dir[3][32], f[32], ids[3][STORE_ID_SIZE];
                for (int k = 0; k < 3; k++) {
                        snprintf(dir[k], sizeof dir[k], "l%zu-%d", i, k);
                        t_mkdir(dir[k]);
                        snprintf(f, sizeof f, "%s/f", dir[k]);
                        /* 0 sparse, 1 dense, 2 sparse with a byte in a hole */
                        mk_layout(f, &layouts[i], k == 1, k == 2 ? layouts[i].size / 2 + 7 : -1);
                        t_hash(dir[k], ids[k]);
                }
                cr_assert_str_eq(ids[0], ids[1], "layout %zu: sparse and dense differ", i);
                cr_assert_str_neq(ids[0], ids[2], "layout %zu: a byte in a hole is not content", i);
        }
}
