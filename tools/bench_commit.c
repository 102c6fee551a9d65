/* The commit part of tools/bench: `rtn commit --upper DIR` of one small file, of many small
 * files (100 per directory) and of a few large files, each beside `sha256sum` over the very
 * same files — the floor, since a commit must at least hash every byte once. Each run
 * writes a fresh upper (pseudo-random bytes, different in every file, so nothing is sparse
 * or deduplicated) and a fresh data dir in --tmp, flushes them with syncfs so neither side
 * pays for the other's writeback, runs sha256sum first (which leaves the page cache warm for
 * both) and then the commit, which moves the upper into the store. `rtn exec --commit` of
 * a file written inside (one of 4 KiB, one of --commit-mb/5 MB) measures what a sandbox's
 * commit costs end to end, its upper copied from the sandbox's tmpfs onto the data dir's
 * filesystem first; with --compare, the other binary runs the same, interleaved. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench.h"

struct shape {
        const char *key, *label;
        long files;
        size_t bytes; /* per file */
};

static int write_file(const char *path, size_t bytes, uint64_t seed) {
        static uint64_t buf[1 << 16]; /* 512 KiB */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
        while (bytes) {
                size_t n = bytes < sizeof buf ? bytes : sizeof buf;
                for (size_t i = 0; i < (n + 7) / 8; i++) {
                        x ^= x << 13; /* xorshift64 */
                        x ^= x >> 7;
                        x ^= x << 17;
                        buf[i] = x;
                }
                if (write(fd, buf, n) != (ssize_t)n) {
                        int e = errno ? -errno : -EIO;
                        close(fd);
                        return e;
                }
                bytes -= n;
        }
        return close(fd) < 0 ? -errno : 0;
}

/* Fills upper with the shape's files and returns their paths as a NULL-terminated argv
 * for sha256sum (argv[0] already set). */
static char **make_upper(const char *upper, const struct shape *s, uint64_t seed) {
        char **argv = calloc((size_t)s->files + 2, sizeof *argv);
        if (!argv || mkdir(upper, 0755) < 0)
                return NULL;
        argv[0] = "sha256sum";
        for (long i = 0; i < s->files; i++) {
                char dir[4096];
                snprintf(dir, sizeof dir, "%s/d%03ld", upper, i / 100);
                if (i % 100 == 0 && mkdir(dir, 0755) < 0)
                        return NULL;
                if (asprintf(&argv[i + 1], "%s/f%05ld", dir, i) < 0)
                        return NULL;
                int r = write_file(argv[i + 1], s->bytes, seed + (uint64_t)i);
                if (r < 0) {
                        fprintf(stderr, "bench: write %s: %s\n", argv[i + 1], strerror(-r));
                        return NULL;
                }
        }
        return argv;
}

static void free_argv(char **argv, long n) {
        for (long i = 1; argv && i <= n; i++)
                free(argv[i]);
        free(argv);
}

static void remove_tree(const char *path) {
        char *argv[] = {"rm", "-rf", "--", (char *)path, NULL};
        (void)bench_run(argv, -1, -1, 2);
}

/* One run of one shape: seconds for sha256sum and for rtn commit, or -errno. */
static int one(const struct bench_opts *o, const struct shape *s, uint64_t seed, double *sha,
               double *commit) {
        char top[4096], upper[4200], data[4200];
        snprintf(top, sizeof top, "%s/rtn-bench-commit-XXXXXX", o->tmp);
        if (!mkdtemp(top))
                return -errno;
        snprintf(upper, sizeof upper, "%s/upper", top);
        snprintf(data, sizeof data, "%s/data", top);
        int r = -EIO;
        char **files = make_upper(upper, s, seed);
        int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (!files || fd < 0 || syncfs(fd) < 0)
                goto out;
        double t0 = bench_now();
        int st = bench_run(files, -1, -1, 2);
        *sha = bench_now() - t0;
        if (st != 0)
                goto out;
        char *argv[] = {(char *)o->rtn, "commit", "--data-dir", data, "--upper",
                        upper,          "-m",     "bench",      NULL};
        t0 = bench_now();
        st = bench_run(argv, -1, -1, 2);
        *commit = bench_now() - t0;
        r = st == 0 ? 0 : -EPROTO;
out:
        if (fd >= 0)
                close(fd);
        free_argv(files, s->files);
        remove_tree(top);
        return r;
}

void bench_commit(const struct bench_opts *o) {
        if (!bench_rtn_has(o, "commit")) {
                bench_skip("commit", "rtn commit", "this rtn has no commit verb yet");
                return;
        }
        char small[64], large[64];
        long nlarge = 5;
        snprintf(small, sizeof small, "%d files of 1 KiB", o->small_files);
        snprintf(large, sizeof large, "%ld files, %d MB in all", nlarge, o->commit_mb);
        const struct shape shapes[] = {
                {"1_file", "1 file of 4 KiB", 1, 4096},
                {"small", small, o->small_files, 1024},
                {"large", large, nlarge, (size_t)o->commit_mb * 1000000 / (size_t)nlarge},
        };
        for (int run = 0; run < o->runs; run++) {
                for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                        double sha = 0, commit = 0;
                        int r = one(o, &shapes[i], (uint64_t)run << 32, &sha, &commit);
                        if (r < 0) {
                                fprintf(stderr, "bench: commit of %s failed: %s\n", shapes[i].label,
                                        strerror(-r));
                                return;
                        }
                        char key[48], label[64];
                        snprintf(key, sizeof key, "sha256_%s", shapes[i].key);
                        snprintf(label, sizeof label, "sha256sum, %s", shapes[i].label);
                        bench_add(bench_result(key, label, "ms"), sha * 1e3);
                        snprintf(key, sizeof key, "commit_%s", shapes[i].key);
                        snprintf(label, sizeof label, "rtn commit, %s", shapes[i].label);
                        bench_add(bench_result(key, label, "ms"), commit * 1e3);
                }
                bench_log(o, "commit: run %d/%d done", run + 1, o->runs);
        }
}

/* `RTN exec --commit` of a file of mb MiB (0: 4 KiB) written inside, on a fresh data dir. */
static int exec_commit(const struct bench_opts *o, const char *rtn, int mb, double *ret) {
        char top[4096], data[4200], cmd[128];
        snprintf(top, sizeof top, "%s/rtn-bench-exec-commit-XXXXXX", o->tmp);
        if (!mkdtemp(top))
                return -errno;
        snprintf(data, sizeof data, "%s/data", top);
        if (mb)
                snprintf(cmd, sizeof cmd,
                         "dd if=/dev/zero of=/var/tmp/f bs=1M count=%d 2>/dev/null", mb);
        else
                snprintf(cmd, sizeof cmd, "head -c 4096 /dev/zero > /var/tmp/f");
        char *argv[] = {(char *)rtn, "exec", "--data-dir", data, "--commit", "-m",
                        "bench",     "--",   "sh",         "-c", cmd,        NULL};
        double t0 = bench_now();
        int st = bench_run(argv, -1, -1, -1);
        *ret = bench_now() - t0;
        remove_tree(top);
        return st == 0 ? 0 : -EPROTO;
}

void bench_exec_commit(const struct bench_opts *o) {
        const struct {
                const char *rtn, *suffix, *who;
        } bins[] = {{o->rtn, "", "rtn"}, {o->compare, "_b", "--compare rtn"}};
        const int sizes[] = {0, o->commit_mb / 5 ? o->commit_mb / 5 : 1};
        for (int run = 0; run < o->runs; run++) {
                for (size_t i = 0; i < 2; i++)
                        for (size_t b = 0; b < 2 && bins[b].rtn; b++) {
                                double t = 0;
                                int r = exec_commit(o, bins[b].rtn, sizes[i], &t);
                                char key[48], label[64];
                                snprintf(key, sizeof key, "exec_commit_%s%s",
                                         i ? "large" : "1_file", bins[b].suffix);
                                if (i)
                                        snprintf(label, sizeof label,
                                                 "%s exec --commit, %d MB file", bins[b].who,
                                                 sizes[i]);
                                else
                                        snprintf(label, sizeof label,
                                                 "%s exec --commit, 4 KiB file", bins[b].who);
                                if (r < 0) {
                                        bench_skip(key, label, "failed: %s", strerror(-r));
                                        return;
                                }
                                bench_add(bench_result(key, label, "ms"), t * 1e3);
                        }
                bench_log(o, "exec --commit: run %d/%d done", run + 1, o->runs);
        }
}
