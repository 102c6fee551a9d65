/* tools/bench — `make bench`: measures rtn side by side with a bare posix_spawn (the floor)
 * and bubblewrap in one run on one machine, because these machines are noisy and only
 * ratios taken together mean anything. Every measurement is repeated --runs times; the
 * table gives the median with min and max over runs, and the ratios the issue sets targets
 * for are computed from medians of the same run. Cold starts are interleaved (floor, rtn,
 * bwrap, floor, rtn, ...) so a burst of noise lands on all of them alike. --json prints the
 * same as one JSON object. The serve and commit groups live in bench_mcp.c and
 * bench_commit.c, the density group in bench_density.c. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench.h"

extern char **environ;

static struct bench_result results[BENCH_MAX_RESULTS];
static int nresults;

struct bench_result *bench_result(const char *key, const char *label, const char *unit) {
        for (int i = 0; i < nresults; i++)
                if (!strcmp(results[i].key, key))
                        return &results[i];
        if (nresults == BENCH_MAX_RESULTS) {
                fprintf(stderr, "bench: too many results\n");
                exit(2);
        }
        struct bench_result *r = &results[nresults++];
        snprintf(r->key, sizeof r->key, "%s", key);
        snprintf(r->label, sizeof r->label, "%s", label);
        r->unit = unit;
        return r;
}

void bench_skip(const char *key, const char *label, const char *fmt, ...) {
        struct bench_result *r = bench_result(key, label, "");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->note, sizeof r->note, fmt, ap);
        va_end(ap);
}

void bench_add(struct bench_result *r, double value) {
        if (r->n < BENCH_MAX_RUNS)
                r->v[r->n++] = value;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

double bench_median(const struct bench_result *r) {
        if (r->n == 0)
                return 0;
        double s[BENCH_MAX_RUNS];
        memcpy(s, r->v, sizeof(double) * (size_t)r->n);
        qsort(s, (size_t)r->n, sizeof s[0], cmp_double);
        return r->n % 2 ? s[r->n / 2] : (s[r->n / 2 - 1] + s[r->n / 2]) / 2;
}

static void minmax(const struct bench_result *r, double *lo, double *hi) {
        *lo = *hi = r->n ? r->v[0] : 0;
        for (int i = 1; i < r->n; i++) {
                if (r->v[i] < *lo)
                        *lo = r->v[i];
                if (r->v[i] > *hi)
                        *hi = r->v[i];
        }
}

static const struct bench_result *find(const char *key) {
        for (int i = 0; i < nresults; i++)
                if (!strcmp(results[i].key, key) && results[i].n > 0)
                        return &results[i];
        return NULL;
}

double bench_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_log(const struct bench_opts *o, const char *fmt, ...) {
        if (!o->verbose)
                return;
        va_list ap;
        va_start(ap, fmt);
        fputs("bench: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

pid_t bench_spawn(char *const argv[], int in, int out, int errfd) {
        static int devnull = -1;
        if (devnull < 0 && (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
                return -errno;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in >= 0 ? in : devnull, 0);
        posix_spawn_file_actions_adddup2(&fa, out >= 0 ? out : devnull, 1);
        posix_spawn_file_actions_adddup2(&fa, errfd >= 0 ? errfd : devnull, 2);
        pid_t pid;
        int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        return r ? -r : pid;
}

int bench_run(char *const argv[], int in, int out, int errfd) {
        pid_t pid = bench_spawn(argv, in, out, errfd);
        if (pid < 0)
                return pid;
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return st;
}

bool bench_rtn_has(const struct bench_opts *o, const char *verb) {
        char path[] = "/tmp/rtn-bench-help-XXXXXX";
        int fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0)
                return false;
        unlink(path);
        char *argv[] = {(char *)o->rtn, "help", NULL};
        (void)bench_run(argv, -1, fd, fd);
        char buf[8192];
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        char pat[64];
        snprintf(pat, sizeof pat, "\n  %s ", verb);
        return strstr(buf, pat) != NULL;
}

bool bench_want(const struct bench_opts *o, const char *group) {
        if (!o->only)
                return true;
        size_t gl = strlen(group);
        for (const char *p = o->only; *p;) {
                size_t l = strcspn(p, ",");
                if (l == gl && !strncmp(p, group, l))
                        return true;
                p += l + (p[l] == ',');
        }
        return false;
}

/* ---- cold starts --------------------------------------------------------------------- */

#define MAX_ARGS 64
struct cold {
        const char *key, *label, *group;
        char *argv[MAX_ARGS];
        bool ok;
};

/* bwrap with the flags: /usr read-only, the merged-/usr links (or binds where the
 * host has real directories), fresh /proc, /dev and /tmp, every namespace unshared. */
static void bwrap_argv(struct cold *c) {
        static char links[5][2][32];
        static const char *const top[] = {"bin", "sbin", "lib", "lib32", "lib64"};
        int n = 0;
        c->argv[n++] = "bwrap";
        c->argv[n++] = "--unshare-all";
        c->argv[n++] = "--ro-bind";
        c->argv[n++] = "/usr";
        c->argv[n++] = "/usr";
        for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
                char *path = links[i][0], *target = links[i][1];
                struct stat st;
                snprintf(path, 32, "/%s", top[i]);
                if (lstat(path, &st) < 0)
                        continue;
                if (S_ISLNK(st.st_mode)) {
                        ssize_t l = readlink(path, target, 31);
                        if (l <= 0)
                                continue;
                        target[l] = '\0';
                        c->argv[n++] = "--symlink";
                        c->argv[n++] = target;
                        c->argv[n++] = path;
                } else {
                        c->argv[n++] = "--ro-bind";
                        c->argv[n++] = path;
                        c->argv[n++] = path;
                }
        }
        const char *rest[] = {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "/bin/true"};
        for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
                c->argv[n++] = (char *)rest[i];
        c->argv[n] = NULL;
}

/* One trial start, so a broken tool is reported instead of timed. */
static bool cold_check(struct cold *c) {
        int st = bench_run(c->argv, -1, -1, 2);
        if (st < 0) {
                bench_skip(c->key, c->label, "cannot run %s: %s", c->argv[0], strerror(-st));
                return false;
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                bench_skip(c->key, c->label, "%s exited with status %d", c->argv[0],
                           WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
                return false;
        }
        return true;
}

static void bench_cold(const struct bench_opts *o) {
        struct cold c[4] = {
                {.key = "spawn_true",
                 .label = "posix_spawn /bin/true (floor)",
                 .group = "spawn",
                 .argv = {"/bin/true", NULL}},
                {.key = "rtn_exec_true",
                 .label = "rtn exec -- /bin/true (cold)",
                 .group = "exec",
                 .argv = {(char *)o->rtn, "exec", "--", "/bin/true", NULL}},
                {.key = "bwrap_true",
                 .label = "bwrap --unshare-all ... /bin/true",
                 .group = "bwrap"},
                {.key = "rtn_b_exec_true",
                 .label = "rtn exec (--compare binary)",
                 .group = "exec",
                 .argv = {(char *)o->compare, "exec", "--", "/bin/true", NULL}},
        };
        bwrap_argv(&c[2]);
        for (int i = 0; i < 4; i++)
                c[i].ok = bench_want(o, c[i].group) && (i < 3 || o->compare) && cold_check(&c[i]);
        for (int run = 0; run < o->runs; run++) {
                for (int i = 0; i < 4; i++) {
                        if (!c[i].ok)
                                continue;
                        double t0 = bench_now();
                        for (int k = 0; k < o->iters; k++) {
                                int st = bench_run(c[i].argv, -1, -1, -1);
                                if (st != 0) {
                                        fprintf(stderr, "bench: %s failed (status %d)\n",
                                                c[i].label, st);
                                        exit(1);
                                }
                        }
                        double per = (bench_now() - t0) / o->iters * 1e3;
                        bench_add(bench_result(c[i].key, c[i].label, "ms"), per);
                }
                bench_log(o, "cold starts: run %d/%d done", run + 1, o->runs);
        }
}

/* ---- report -------------------------------------------------------------------------- */

/* A ratio of two results' medians, or with den NULL one result's median on its own (a
 * target in its unit, as memory per sandbox). */
struct ratio {
        const char *key, *label, *num, *den;
        double target; /* ratio <= target meets the goal; 0 = no target */
};

static const struct ratio ratios[] = {
        {"exec_vs_bwrap", "rtn exec / bwrap", "rtn_exec_true", "bwrap_true", 0.8},
        {"exec_vs_compare", "rtn exec / --compare binary", "rtn_exec_true", "rtn_b_exec_true", 0},
        {"exec_vs_spawn", "rtn exec / posix_spawn", "rtn_exec_true", "spawn_true", 0},
        {"bwrap_vs_spawn", "bwrap / posix_spawn", "bwrap_true", "spawn_true", 0},
        {"shell_true_p50_vs_spawn", "shell_run true p50 / posix_spawn", "shell_run_true_p50",
         "spawn_true_beside_p50", 1.2},
        {"shell_echo_p50_vs_spawn", "shell_run echo x p50 / posix_spawn", "shell_run_echo_p50",
         "spawn_true_beside_p50", 1.2},
        {"shell_true_p50_vs_cold_floor", "shell_run true p50 / floor of cold", "shell_run_true_p50",
         "spawn_true", 0},
        {"commit_1_vs_sha", "commit 1 file / sha256sum", "commit_1_file", "sha256_1_file", 1.5},
        {"commit_small_vs_sha", "commit small files / sha256sum", "commit_small", "sha256_small",
         1.5},
        {"commit_large_vs_sha", "commit large / sha256sum", "commit_large", "sha256_large", 1.5},
        {"exec_commit_1_vs_compare", "exec --commit 4 KiB / --compare", "exec_commit_1_file",
         "exec_commit_1_file_b", 0},
        {"exec_commit_large_vs_compare", "exec --commit large / --compare", "exec_commit_large",
         "exec_commit_large_b", 0},
        {"fork_10mb_vs_cold", "sandbox_fork 10 MB / cold shell_run", "fork_10mb", "fork_cold_first",
         1.5},
        {"forks_100_vs_cold", "sandbox_fork x100 mean / cold", "forks_100_each", "fork_cold_first",
         0.5},
        {"net_proxy_vs_direct", "100 MiB download via proxy / direct", "net_proxy", "net_direct",
         1.1},
        {"http_write_vs_stdio", "file_write 1 MiB, HTTP / stdio", "http_write_1m", "stdio_write_1m",
         2.0},
        {"density_mib", "memory per sandbox (MiB, MemAvailable)", "density_avail", NULL, 1.0},
};

/* --targets: each ratio with a target, as a key and its target, one a line. */
static int print_targets(void) {
        for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++)
                if (ratios[i].target > 0)
                        printf("%-32s %.1f\n", ratios[i].key, ratios[i].target);
        return 0;
}

/* The ratio's value from this run's medians; false when a side did not run. */
static bool ratio_value(const struct ratio *q, double *ret) {
        const struct bench_result *a = find(q->num), *b = q->den ? find(q->den) : NULL;
        if (!a || (q->den && (!b || bench_median(b) == 0)))
                return false;
        *ret = bench_median(a) / (b ? bench_median(b) : 1);
        return true;
}

static void machine(char *kernel, size_t kl, char *cpu, size_t cl) {
        struct utsname u;
        snprintf(kernel, kl, "%s", uname(&u) == 0 ? u.release : "?");
        snprintf(cpu, cl, "?");
        FILE *f = fopen("/proc/cpuinfo", "re");
        char line[256];
        while (f && fgets(line, sizeof line, f))
                if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                        char *v = strchr(line, ':') + 1;
                        v += strspn(v, " \t");
                        v[strcspn(v, "\n")] = '\0';
                        snprintf(cpu, cl, "%s", v);
                        break;
                }
        if (f)
                fclose(f);
}

static void json_str(const char *s) {
        putchar('"');
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        printf("\\%c", *s);
                else if ((unsigned char)*s < 0x20)
                        printf("\\u%04x", *s);
                else
                        putchar(*s);
        }
        putchar('"');
}

static void print_json(const struct bench_opts *o, const char *kernel, const char *cpu) {
        printf("{\"kernel\":");
        json_str(kernel);
        printf(",\"cpu\":");
        json_str(cpu);
        printf(",\"cpus\":%ld,\"runs\":%d,\"iters\":%d,\"calls\":%d,\"results\":[",
               sysconf(_SC_NPROCESSORS_ONLN), o->runs, o->iters, o->calls);
        for (int i = 0; i < nresults; i++) {
                const struct bench_result *r = &results[i];
                double lo, hi;
                minmax(r, &lo, &hi);
                printf("%s{\"key\":", i ? "," : "");
                json_str(r->key);
                printf(",\"label\":");
                json_str(r->label);
                if (r->n)
                        printf(",\"unit\":\"%s\",\"median\":%.6g,\"min\":%.6g,\"max\":%.6g,"
                               "\"n\":%d",
                               r->unit, bench_median(r), lo, hi, r->n);
                else
                        printf(",\"skipped\":true");
                if (r->note[0]) {
                        printf(",\"note\":");
                        json_str(r->note);
                }
                putchar('}');
        }
        printf("],\"ratios\":[");
        int first = 1;
        for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
                double q;
                if (!ratio_value(&ratios[i], &q))
                        continue;
                printf("%s{\"key\":\"%s\",\"value\":%.4g", first ? "" : ",", ratios[i].key, q);
                if (ratios[i].target > 0)
                        printf(",\"target\":%.4g,\"met\":%s", ratios[i].target,
                               q <= ratios[i].target ? "true" : "false");
                putchar('}');
                first = 0;
        }
        printf("]}\n");
}

static void print_table(const struct bench_opts *o, const char *kernel, const char *cpu) {
        printf("rtn bench: kernel %s, %s, %ld CPUs; %d runs, %d cold starts/run, %d calls/run\n\n",
               kernel, cpu, sysconf(_SC_NPROCESSORS_ONLN), o->runs, o->iters, o->calls);
        printf("%-40s %10s %10s %10s  %s\n", "measurement", "median", "min", "max", "unit");
        for (int i = 0; i < nresults; i++) {
                const struct bench_result *r = &results[i];
                if (!r->n) {
                        printf("%-40s %10s  (%s)\n", r->label, "skipped", r->note);
                        continue;
                }
                double lo, hi;
                minmax(r, &lo, &hi);
                printf("%-40s %10.3f %10.3f %10.3f  %s%s%s\n", r->label, bench_median(r), lo, hi,
                       r->unit, r->note[0] ? "  " : "", r->note);
        }
        printf("\n%-40s %10s %10s\n", "ratio (medians, same run)", "value", "target");
        for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
                double q;
                if (!ratio_value(&ratios[i], &q))
                        continue;
                if (ratios[i].target > 0)
                        printf("%-40s %10.2f %8s%.1f %s\n", ratios[i].label, q,
                               "<= ", ratios[i].target, q <= ratios[i].target ? "met" : "MISSED");
                else
                        printf("%-40s %10.2f\n", ratios[i].label, q);
        }
}

/* ---- recorded ratios ----------------------------------------------------------------- */

static int current_lines(const struct bench_opts *o, struct bench_line *ret) {
        int n = 0;
        for (size_t i = 0; i < sizeof ratios / sizeof ratios[0] && n < BENCH_MAX_LINES; i++) {
                double q;
                if (!ratio_value(&ratios[i], &q))
                        continue;
                struct bench_line *l = &ret[n++];
                snprintf(l->key, sizeof l->key, "%s", ratios[i].key);
                snprintf(l->commit, sizeof l->commit, "%s", o->commit);
                l->value = q;
        }
        return n;
}

/* The ratios of this run in the form docs/benchmarks.md records them. */
static void print_lines(const struct bench_opts *o) {
        static struct bench_line now[BENCH_MAX_LINES];
        int n = current_lines(o, now);
        char day[16];
        time_t t = time(NULL);
        strftime(day, sizeof day, "%Y-%m-%d", gmtime(&t));
        printf("\n```ratios\n");
        for (int i = 0; i < n; i++)
                printf("%-32s %6.2f  %-10s %s\n", now[i].key, now[i].value, now[i].commit, day);
        printf("```\n");
}

/* --check-against: 0 when no line moved, 1 when one did, 2 when a file cannot be used. */
static int check_against(const struct bench_opts *o) {
        static struct bench_line old[BENCH_MAX_LINES], now[BENCH_MAX_LINES];
        int nold = bench_lines_read(o->check_against, old, BENCH_MAX_LINES);
        if (nold <= 0) {
                fprintf(stderr, "bench: %s: %s\n", o->check_against,
                        nold < 0 ? strerror(-nold) : "no recorded ratio lines");
                return 2;
        }
        int nnow = o->result ? bench_lines_read(o->result, now, BENCH_MAX_LINES)
                             : current_lines(o, now);
        if (nnow <= 0 && o->result) {
                fprintf(stderr, "bench: %s: %s\n", o->result,
                        nnow < 0 ? strerror(-nnow) : "no ratio lines");
                return 2;
        }
        printf("\nagainst %s:\n", o->check_against);
        return bench_check(old, nold, now, nnow, BENCH_CHECK_TOLERANCE) ? 1 : 0;
}

/* ---- main ---------------------------------------------------------------------------- */

static const char usage[] =
        "usage: bench [--rtn PATH] [--compare PATH] [--json] [--runs N] [--iters N] [--calls N]\n"
        "             [--commit-mb N] [--small-files N] [--density N] [--density-runs N]\n"
        "             [--tmp DIR] [--only GROUPS] [--lines] [--commit ID] [-v]\n"
        "             [--check-against FILE [--result FILE]] [--targets]\n"
        "groups: spawn exec bwrap serve fork commit net http undo density (comma-separated)\n";

static int num(const char *s, int lo, int hi) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end || v < lo || v > hi) {
                fprintf(stderr, "bench: %s is not a number in %d..%d\n", s, lo, hi);
                exit(2);
        }
        return (int)v;
}

static void parse(int argc, char **argv, struct bench_opts *o) {
        static const struct option longopts[] = {{"rtn", required_argument, NULL, 'r'},
                                                 {"json", no_argument, NULL, 'j'},
                                                 {"runs", required_argument, NULL, 'n'},
                                                 {"iters", required_argument, NULL, 'i'},
                                                 {"calls", required_argument, NULL, 'c'},
                                                 {"commit-mb", required_argument, NULL, 'm'},
                                                 {"small-files", required_argument, NULL, 's'},
                                                 {"density", required_argument, NULL, 'd'},
                                                 {"density-runs", required_argument, NULL, 'D'},
                                                 {"tmp", required_argument, NULL, 't'},
                                                 {"only", required_argument, NULL, 'o'},
                                                 {"verbose", no_argument, NULL, 'v'},
                                                 {"compare", required_argument, NULL, 'C'},
                                                 {"check-against", required_argument, NULL, 'K'},
                                                 {"result", required_argument, NULL, 'R'},
                                                 {"lines", no_argument, NULL, 'L'},
                                                 {"commit", required_argument, NULL, 'I'},
                                                 {"targets", no_argument, NULL, 'T'},
                                                 {"help", no_argument, NULL, 'h'},
                                                 {0}};
        int c;
        while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        o->rtn = optarg;
                        break;
                case 'C':
                        o->compare = optarg;
                        break;
                case 'j':
                        o->json = true;
                        break;
                case 'n':
                        o->runs = num(optarg, 1, BENCH_MAX_RUNS);
                        break;
                case 'i':
                        o->iters = num(optarg, 1, 100000);
                        break;
                case 'c':
                        o->calls = num(optarg, 1, 1000000);
                        break;
                case 'm':
                        o->commit_mb = num(optarg, 1, 65536);
                        break;
                case 's':
                        o->small_files = num(optarg, 1, 1000000);
                        break;
                case 'd':
                        o->density = num(optarg, 1, 100000);
                        break;
                case 'D':
                        o->density_runs = num(optarg, 1, BENCH_MAX_RUNS);
                        break;
                case 't':
                        o->tmp = optarg;
                        break;
                case 'o':
                        o->only = optarg;
                        break;
                case 'v':
                        o->verbose = true;
                        break;
                case 'K':
                        o->check_against = optarg;
                        break;
                case 'R':
                        o->result = optarg;
                        break;
                case 'L':
                        o->lines = true;
                        break;
                case 'I':
                        o->commit = optarg;
                        break;
                case 'T':
                        exit(print_targets());
                case 'h':
                        fputs(usage, stdout);
                        exit(0);
                default:
                        fputs(usage, stderr);
                        exit(2);
                }
        }
        if (optind != argc || (o->result && !o->check_against)) {
                fputs(usage, stderr);
                exit(2);
        }
}

int main(int argc, char **argv) {
        struct bench_opts o = {.rtn = "build/rtn",
                               .runs = 5,
                               .iters = 50,
                               .calls = 1000,
                               .commit_mb = 500,
                               .small_files = 10000,
                               .density = 1000,
                               .density_runs = 1,
                               .commit = "?"};
        const char *tmp = getenv("TMPDIR");
        o.tmp = tmp && *tmp ? tmp : "/var/tmp";
        parse(argc, argv, &o);
        if (o.result) /* a recorded result against recorded ratios: nothing to run */
                return check_against(&o);
        if (access(o.rtn, X_OK) < 0) {
                fprintf(stderr, "bench: %s: %s (build it first, or pass --rtn)\n", o.rtn,
                        strerror(errno));
                return 2;
        }
        /* A data dir of our own: rtn exec and serve start on the default environment's tip,
         * and the caller's store may hold one; the issue measures the bare host base. */
        char data[4096];
        snprintf(data, sizeof data, "%s/rtn-bench-data-XXXXXX", o.tmp);
        if (!mkdtemp(data) || setenv("RTN_DATA_DIR", data, 1) < 0) {
                fprintf(stderr, "bench: data dir in %s: %s\n", o.tmp, strerror(errno));
                return 2;
        }
        bench_cold(&o);
        if (bench_want(&o, "serve"))
                bench_serve(&o);
        if (bench_want(&o, "fork"))
                bench_fork(&o);
        if (bench_want(&o, "commit"))
                bench_commit(&o);
        if (bench_want(&o, "commit"))
                bench_exec_commit(&o);
        if (bench_want(&o, "net"))
                bench_net(&o);
        if (bench_want(&o, "http"))
                bench_http(&o);
        if (bench_want(&o, "undo"))
                bench_undo(&o);
        if (bench_want(&o, "density")) /* last: a thousand sandboxes disturb what follows */
                bench_density(&o);
        char *rm[] = {"rm", "-rf", "--", data, NULL};
        (void)bench_run(rm, -1, -1, 2);
        char kernel[128], cpu[128];
        machine(kernel, sizeof kernel, cpu, sizeof cpu);
        if (o.json)
                print_json(&o, kernel, cpu);
        else
                print_table(&o, kernel, cpu);
        if (o.lines)
                print_lines(&o);
        return o.check_against ? check_against(&o) : 0;
}
