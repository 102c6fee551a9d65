/* The undo part of tools/bench: what a per-call checkpoint costs with each of the two
 * mechanisms weighed for env_undo (docs/benchmarks.md, "Checkpoints"), on an upper of
 * 1 GiB in one file plus --small-files files of 4 KiB (100 per directory), on tmpfs as a
 * session's upper is (/dev/shm when it is one, else --tmp, which the table then names).
 *
 * - A new upper stacked per call, the old one kept read-only below: overlayfs cannot swap
 *   the upper of a mounted overlay, so each changing call starts a new sandbox on the new
 *   stack; its cost per call is a cold first shell_run of a fresh `rtn serve` (and every
 *   running job dies with the old sandbox). Measured beside the warm shell_run of the same
 *   server.
 * - A copy of what the call changed: a shadow of the state at the last checkpoint is kept;
 *   after a call, a walk lstat()s every entry of the upper for a ctime newer than that
 *   checkpoint, moves the shadow's old version of each changed entry into the step (a
 *   rename) and copies the new one into the shadow. Timed here without rtn: the walk when
 *   nothing changed, the step when one 4 KiB file changed in the large upper, and the undo
 *   of that step (the step's version renamed back and copied into the upper).
 * - The copy mechanism as built (runtime/session/ckpt.c), through real `rtn serve`s: warm
 *   shell_run true with checkpoints on and with --undo-depth 0, a call that changes one file
 *   beside a 1 GiB one, and env_undo of it against the server's cold first shell_run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench.h"

#define BIG_MB 1024
#define PER_DIR 100

struct walk {
        struct timespec since;
        char (*changed)[512];
        size_t n, cap;
        long entries;
};

static bool newer(const struct timespec *a, const struct timespec *b) {
        return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* Every entry below dir (rel: its path below the upper), lstat'ed; changed ones recorded. */
static int walk_dir(int dir, const char *rel, struct walk *w) {
        DIR *d = fdopendir(dup(dir));
        if (!d)
                return -errno;
        struct dirent *de;
        int r = 0;
        while (r == 0 && (de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                struct stat st;
                if (fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return closedir(d), -errno;
                w->entries++;
                char path[512];
                snprintf(path, sizeof path, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
                if (newer(&st.st_ctim, &w->since) && !S_ISDIR(st.st_mode)) {
                        if (w->n == w->cap) {
                                w->cap = w->cap ? 2 * w->cap : 16;
                                w->changed = realloc(w->changed, w->cap * sizeof *w->changed);
                                if (!w->changed)
                                        return closedir(d), -ENOMEM;
                        }
                        snprintf(w->changed[w->n++], sizeof *w->changed, "%s", path);
                }
                if (S_ISDIR(st.st_mode)) {
                        int sub = openat(dir, de->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        r = sub < 0 ? -errno : walk_dir(sub, path, w);
                        if (sub >= 0)
                                close(sub);
                }
        }
        closedir(d);
        return r;
}

static int copy_file(const char *from, const char *to) {
        char buf[1 << 16];
        int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        ssize_t n = 0;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t)n) != n) {
                        n = -1;
                        break;
                }
        int r = in < 0 || out < 0 || n < 0 ? -errno : 0;
        if (in >= 0)
                close(in);
        if (out >= 0)
                close(out);
        return r;
}

static int write_small(const char *path, long seed) {
        char buf[4096];
        memset(buf, (int)(seed & 0xff), sizeof buf);
        snprintf(buf, sizeof buf, "%ld\n", seed);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, buf, sizeof buf);
        close(fd);
        return n == (ssize_t)sizeof buf ? 0 : -EIO;
}

/* upper/ and its shadow/ below top, and steps/. */
static int make_tree(const char *top, int files) {
        char p[4096];
        snprintf(p, sizeof p, "%s/upper", top);
        if (mkdir(p, 0755) < 0)
                return -errno;
        snprintf(p, sizeof p, "%s/upper/big", top);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || posix_fallocate(fd, 0, (off_t)BIG_MB << 20) != 0)
                return fd >= 0 ? (close(fd), -ENOSPC) : -errno;
        close(fd);
        for (int i = 0; i < files; i++) {
                snprintf(p, sizeof p, "%s/upper/d%d", top, i / PER_DIR);
                if (i % PER_DIR == 0 && mkdir(p, 0755) < 0)
                        return -errno;
                snprintf(p, sizeof p, "%s/upper/d%d/f%d", top, i / PER_DIR, i);
                int r = write_small(p, i);
                if (r < 0)
                        return r;
        }
        /* The shadow of the first checkpoint: a full copy, once per sandbox (cp keeps the
         * big file's pages; it is not timed). */
        char cmd[8300];
        snprintf(cmd, sizeof cmd, "cp -a '%s/upper' '%s/shadow' && mkdir '%s/steps'", top, top,
                 top);
        return system(cmd) == 0 ? 0 : -EIO;
}

static double walk_ms(const char *upper, struct walk *w) {
        int fd = open(upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        double t0 = bench_now();
        w->n = 0;
        w->entries = 0;
        int r = fd < 0 ? -errno : walk_dir(fd, "", w);
        double dt = (bench_now() - t0) * 1e3;
        if (fd >= 0)
                close(fd);
        return r < 0 ? -1 : dt;
}

/* One step of the copy mechanism: walk, then for each changed file the shadow's old version
 * moved into steps/N and the new one copied into the shadow. */
static double step_ms(const char *top, int n, struct walk *w) {
        char upper[4096], a[8400], b[8400], c[8400];
        snprintf(upper, sizeof upper, "%s/upper", top);
        double t0 = bench_now();
        if (walk_ms(upper, w) < 0)
                return -1;
        snprintf(a, sizeof a, "%s/steps/%d", top, n);
        if (mkdir(a, 0700) < 0)
                return -1;
        for (size_t i = 0; i < w->n; i++) {
                snprintf(a, sizeof a, "%s/shadow/%s", top, w->changed[i]);
                snprintf(b, sizeof b, "%s/steps/%d/%zu", top, n, i);
                snprintf(c, sizeof c, "%s/upper/%s", top, w->changed[i]);
                if (rename(a, b) < 0 || copy_file(c, a) < 0)
                        return -1;
        }
        clock_gettime(CLOCK_REALTIME_COARSE, &w->since);
        return (bench_now() - t0) * 1e3;
}

static void record(const char *key, const char *label, const char *unit, double v) {
        if (v >= 0)
                bench_add(bench_result(key, label, unit), v);
        else
                bench_skip(key, label, "failed");
}

static void copy_mechanism(const struct bench_opts *o, const char *base, int run) {
        char top[4096], upper[4200], cmd[8400];
        snprintf(top, sizeof top, "%s/rtn-bench-undo-XXXXXX", base);
        if (!mkdtemp(top) || make_tree(top, o->small_files) < 0) {
                bench_skip("undo_walk_nochange", "copy: walk, nothing changed",
                           "cannot make "
                           "a %d MiB upper in %s",
                           BIG_MB, base);
                return;
        }
        snprintf(upper, sizeof upper, "%s/upper", top);
        struct walk w = {0};
        usleep(20000); /* past the tick of the last write: ctime is the coarse clock's */
        clock_gettime(CLOCK_REALTIME_COARSE, &w.since);
        record("undo_walk_nochange", "copy: walk, nothing changed", "ms", walk_ms(upper, &w));
        if (w.n)
                bench_log(o, "undo: %zu entries changed where none did\n", w.n);
        char f[8300];
        snprintf(f, sizeof f, "%s/d0/f0", upper);
        (void)write_small(f, 1000000 + run);
        record("undo_step_onefile", "copy: step, 1 file changed of 1 GiB", "ms",
               step_ms(top, 1, &w));
        bench_log(o, "undo: walked %ld entries, %zu changed\n", w.entries, w.n);
        /* Undo of that step: the step's version back into the shadow and the upper. */
        char a[8400], b[8400];
        double t0 = bench_now();
        snprintf(a, sizeof a, "%s/steps/1/0", top);
        snprintf(b, sizeof b, "%s/shadow/d0/f0", top);
        int r = rename(a, b) < 0 ? -errno : copy_file(b, f);
        record("undo_restore_onefile", "copy: undo of that step", "ms",
               r < 0 ? -1 : (bench_now() - t0) * 1e3);
        free(w.changed);
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", top);
        (void)!system(cmd);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* The stacked-upper mechanism's cost per changing call: a new sandbox, as a fresh server's
 * first shell_run, beside the warm calls of the same server. */
static void stacked_mechanism(const struct bench_opts *o) {
        enum { CALLS = 21 };
        double ms[CALLS];
        if (bench_stdio_call_ms(o, "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"true\"}}",
                                CALLS, ms) < 0) {
                bench_skip("undo_cold", "stacked: new sandbox per call", "rtn serve failed");
                return;
        }
        qsort(ms + 1, CALLS - 1, sizeof *ms, cmp_double); /* the warm calls' median */
        record("undo_cold", "stacked: new sandbox per call", "ms", ms[0]);
        record("undo_warm", "shell_run true (warm), no checkpoint", "ms", ms[1 + (CALLS - 1) / 2]);
}

static double median(double *v, int n) {
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        return v[n / 2];
}

#define SHELL(cmd)                                                                                 \
        "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"" cmd "\",\"timeout\":600}}"

/* The checkpoints as built, through a real `rtn serve`: warm `shell_run true` with them on
 * (the default) and off (--undo-depth 0); a call that changes one file beside a 1 GiB file;
 * env_undo of that call; and the server's cold first shell_run. */
static void built(const struct bench_opts *o) {
        enum { WARM = 21, SMALL = 9 };
        const char *params[WARM + SMALL + 4];
        double on[WARM + SMALL + 4], off[WARM];
        for (int i = 0; i < WARM; i++)
                params[i] = SHELL("true");
        char *depth0[] = {"--undo-depth", "0", NULL};
        if (bench_stdio_seq_ms(o, NULL, params, WARM, on) < 0 ||
            bench_stdio_seq_ms(o, depth0, params, WARM, off) < 0) {
                bench_skip("undo_built_warm_x", "checkpoints on / off, warm shell_run true",
                           "rtn serve failed");
                return;
        }
        double m_on = median(on + 1, WARM - 1), m_off = median(off + 1, WARM - 1), cold = on[0];
        record("undo_built_cold", "first shell_run (cold), checkpoints on", "ms", on[0]);
        record("undo_built_warm_on", "shell_run true (warm), checkpoints on", "ms", m_on);
        record("undo_built_warm_off", "shell_run true (warm), --undo-depth 0", "ms", m_off);
        record("undo_built_warm_x", "checkpoints on / off, warm shell_run true", "x", m_on / m_off);
        /* 1 GiB in one file; the next call's checkpoint copies it into the shadow once */
        int n = 0;
        params[n++] = SHELL("head -c 1024M /dev/zero >/var/tmp/big");
        params[n++] = SHELL("true");
        for (int i = 0; i < SMALL; i++)
                params[n++] = SHELL("date +%N >/var/tmp/small");
        params[n++] = "{\"name\":\"env_undo\",\"arguments\":{}}";
        char *big[] = {"--upper-size", "3G", NULL};
        if (bench_stdio_seq_ms(o, big, params, n, on) < 0) {
                bench_skip("undo_built_onefile", "shell_run changing 1 file beside 1 GiB",
                           "rtn serve failed");
                return;
        }
        double m_one = median(on + 3, SMALL - 1); /* each seals the one before: a file */
        record("undo_built_first_seal", "first checkpoint after 1 GiB written (its shadow)", "ms",
               on[1]);
        record("undo_built_onefile", "shell_run changing 1 file beside 1 GiB", "ms", m_one);
        record("undo_built_onefile_x", "that / warm shell_run true, checkpoints off", "x",
               m_one / m_off);
        record("undo_built_undo", "env_undo of such a call", "ms", on[n - 1]);
        record("undo_built_undo_x", "env_undo / cold first shell_run", "x", on[n - 1] / cold);
}

void bench_undo(const struct bench_opts *o) {
        struct statfs sf;
        const char *base = statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
                                           access("/dev/shm", W_OK) == 0
                                   ? "/dev/shm"
                                   : o->tmp;
        if (strcmp(base, "/dev/shm"))
                bench_log(o, "undo: no writable tmpfs at /dev/shm, the upper is in %s\n", base);
        for (int run = 0; run < o->runs; run++) {
                copy_mechanism(o, base, run);
                if (bench_rtn_has(o, "serve"))
                        stacked_mechanism(o);
                if (bench_rtn_has(o, "serve"))
                        built(o);
        }
        struct bench_result *warm = bench_result("undo_warm", "", "ms");
        struct bench_result *walk = bench_result("undo_walk_nochange", "", "ms");
        struct bench_result *step = bench_result("undo_step_onefile", "", "ms");
        struct bench_result *cold = bench_result("undo_cold", "", "ms");
        for (int i = 0; i < warm->n && i < walk->n && i < step->n && i < cold->n; i++) {
                bench_add(bench_result("undo_copy_nochange_x", "copy: (warm + walk) / warm", "x"),
                          (warm->v[i] + walk->v[i]) / warm->v[i]);
                bench_add(bench_result("undo_copy_onefile_x", "copy: (warm + step) / warm", "x"),
                          (warm->v[i] + step->v[i]) / warm->v[i]);
                bench_add(bench_result("undo_stacked_x", "stacked: cold / warm", "x"),
                          cold->v[i] / warm->v[i]);
        }
}
