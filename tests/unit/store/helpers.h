/* Shared fixtures of the store tests: a temp dir per test holding a data dir and uppers
 * on the same filesystem (commit renames), and small tree builders. Header-only so each
 * test file stays self-contained; everything is static. */
#pragma once

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "store/internal.h"
#include "store/store.h"

static char t_root[256];

/* In $TMPDIR (make test gives each stream one of its own), else /tmp. */
static inline void t_setup(void) {
        const char *tmp = getenv("TMPDIR");
        int n = snprintf(t_root, sizeof t_root, "%s/rtn-store-test.XXXXXX",
                         tmp && *tmp ? tmp : "/tmp");
        cr_assert(n > 0 && (size_t)n < sizeof t_root, "TMPDIR too long");
        cr_assert_not_null(mkdtemp(t_root), "mkdtemp %s: %m", t_root);
}

static inline void t_teardown(void) {
        if (t_root[0]) {
                (void)store_rm_rf_at(AT_FDCWD, t_root);
                t_root[0] = '\0';
        }
}

/* criterion runs no .fini after a skip: a skipping test removes its temp dir first (and
 * keeps the errno a %m of its message names). */
#define t_skip_test(...)                                                                           \
        do {                                                                                       \
                int t_skip_errno_ = errno;                                                         \
                t_teardown();                                                                      \
                errno = t_skip_errno_;                                                             \
                cr_skip_test(__VA_ARGS__);                                                         \
        } while (0)

/* t_path("a/b") -> "<root>/a/b" in a rotating static buffer. */
static inline const char *t_path(const char *rel) {
        static char bufs[8][512];
        static int i;
        char *b = bufs[i++ % 8];
        int n = snprintf(b, sizeof bufs[0], "%s/%s", t_root, rel);
        cr_assert(n > 0 && (size_t)n < sizeof bufs[0]);
        return b;
}

static inline void t_mkdir(const char *rel) {
        cr_assert_eq(mkdir(t_path(rel), 0755), 0, "mkdir %s: %m", rel);
}

static inline void t_write(const char *rel, const char *content) {
        int fd = open(t_path(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "open %s: %m", rel);
        size_t n = strlen(content);
        cr_assert_eq(write(fd, content, n), (ssize_t)n);
        close(fd);
}

static inline char *t_read(const char *path) {
        static char buf[4096];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[n < 0 ? 0 : n] = '\0';
        return buf;
}

static inline void t_whiteout(const char *rel) {
        cr_assert_eq(mknod(t_path(rel), S_IFCHR | 0000, makedev(0, 0)), 0, "mknod %s: %m", rel);
}

static inline void t_hash(const char *rel, char id[STORE_ID_SIZE]) {
        struct rtn_error err = {0};
        int fd = open(t_path(rel), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        int r = store_layer_hash(fd, id, &err);
        close(fd);
        cr_assert_eq(r, 0, "hash %s: %s", rel, err.msg);
}

static inline struct store *t_open(const char *rel) {
        struct store *s = NULL;
        struct rtn_error err = {0};
        cr_assert_eq(store_open(t_path(rel), &s, &err), 0, "%s", err.msg);
        return s;
}

/* Commits a fresh upper holding the given files ("name=content" pairs, NULL-terminated). */
static inline int t_commit_files(struct store *s, const char *env, const char *msg,
                                 char id[STORE_ID_SIZE], const char *const *files) {
        static int n;
        char up[64];
        snprintf(up, sizeof up, "up%d", n++);
        t_mkdir(up);
        for (; files && *files; files++) {
                char rel[256], content[256];
                const char *eq = strchr(*files, '=');
                snprintf(rel, sizeof rel, "%s/%.*s", up, (int)(eq - *files), *files);
                snprintf(content, sizeof content, "%s", eq + 1);
                if (!strcmp(content, "<whiteout>"))
                        t_whiteout(rel);
                else
                        t_write(rel, content);
        }
        struct rtn_error err = {0};
        int r = store_commit(s, env, t_path(up), msg, id, &err);
        cr_assert_geq(r, 0, "commit: %s", err.msg);
        return r;
}
