/* Shared by the parts of tools/bench (`make bench`): the result table every measurement
 * fills, process helpers, and the entry points of the measurement groups. The bench is a
 * host tool, not part of rtn: it drives the built rtn binary as a user would. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define BENCH_MAX_RUNS 64
#define BENCH_MAX_RESULTS 64

struct bench_opts {
        const char *rtn; /* the rtn binary under test */
        const char *compare; /* another rtn whose cold exec is timed alongside, or NULL */
        const char *tmp; /* a scratch dir on the filesystem the store would use */
        int runs; /* repetitions of every measurement */
        int iters; /* cold starts per run */
        int calls; /* shell_run / ping round trips per run */
        int commit_mb; /* size of the large commit */
        int small_files; /* files in the many-files commit */
        int density; /* sandboxes alive at once in the density group */
        int density_runs; /* runs of the density group (each starts and stops them all) */
        bool json, verbose;
        bool lines; /* print the ratios as lines to record (bench_check.c's form) */
        const char *only; /* comma-separated groups, NULL = all */
        const char *commit; /* the commit under test, named in --lines */
        const char *check_against; /* recorded ratios to compare with, or NULL */
        const char *result; /* with check_against: ratio lines instead of a run */
};

/* One line of the table: a value per run, summarised as median [min, max]. */
struct bench_result {
        char key[48]; /* stable name for --json and ratios */
        char label[64]; /* what the table prints */
        const char *unit;
        double v[BENCH_MAX_RUNS];
        int n;
        char note[96]; /* why it was skipped, or a remark */
};

/* One recorded ratio: `KEY VALUE COMMIT [NOTE...]` (bench_check.c). */
struct bench_line {
        char key[48];
        double value;
        char commit[48];
};
#define BENCH_MAX_LINES 128
#define BENCH_CHECK_TOLERANCE 0.15 /* a ratio moved when it changed by more than this */

/* Reads the ratio lines of path's ```ratios fences; a key's later line replaces its
 * earlier ones. Returns how many, or -errno. */
int bench_lines_read(const char *path, struct bench_line *ret, int max);
/* Prints each recorded line beside its new value; returns how many moved by more than
 * tolerance (a fraction) either way. */
int bench_check(const struct bench_line *old, int nold, const struct bench_line *now, int nnow,
                double tolerance);

/* Returns the result named key, creating it. */
struct bench_result *bench_result(const char *key, const char *label, const char *unit);
/* Records that a group could not run (the table shows the reason). */
void bench_skip(const char *key, const char *label, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void bench_add(struct bench_result *r, double value);
double bench_median(const struct bench_result *r);

double bench_now(void); /* CLOCK_MONOTONIC seconds */
/* posix_spawn argv[0] (PATH lookup) with stdio on the given fds (-1 = /dev/null) and waits;
 * returns the wait status, or -errno when it could not start. */
int bench_run(char *const argv[], int in, int out, int errfd);
/* Same, without waiting: returns the pid (> 0) or -errno. */
pid_t bench_spawn(char *const argv[], int in, int out, int errfd);
/* rtn's usage text lists verb (e.g. "serve", "commit"). */
bool bench_rtn_has(const struct bench_opts *o, const char *verb);
bool bench_want(const struct bench_opts *o, const char *group);
void bench_log(const struct bench_opts *o, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Measurement groups: each adds its results, or skips them with a reason. */
void bench_serve(const struct bench_opts *o); /* bench_mcp.c: shell_run, ping, RSS */
/* bench_mcp.c: sandbox_fork of 10 MB and 1 GB against a cold shell_run, 100 forks' RSS */
void bench_fork(const struct bench_opts *o);
void bench_commit(const struct bench_opts *o); /* bench_commit.c: commit vs sha256sum */
/* bench_net.c: a 100 MiB download through the agent's proxy against the same without */
void bench_net(const struct bench_opts *o);
/* bench_commit.c: rtn exec --commit end to end, beside --compare's */
void bench_exec_commit(const struct bench_opts *o);
/* bench_mcp.c: a fresh `rtn serve` on stdio, initialized, then calls tools/call of params
 * (a JSON object) one at a time; ret[i] is each one's round trip in ms. */
int bench_stdio_call_ms(const struct bench_opts *o, const char *params, int calls, double *ret);
/* A fresh `rtn serve` with the options extra (NULL-terminated), each of the calls' params in
 * turn: their times in ms into ret. */
int bench_stdio_seq_ms(const struct bench_opts *o, char *const *extra, const char *const *params,
                       int calls, double *ret);
/* bench_density.c: N concurrent `rtn exec -- sleep`, memory per sandbox, time to start all */
void bench_density(const struct bench_opts *o);
/* bench_http.c: file_write of 1 MiB over `rtn serve --http` against the same over stdio */
void bench_http(const struct bench_opts *o);
/* bench_undo.c: a checkpoint per call, two mechanisms (docs/benchmarks.md, "Checkpoints") */
void bench_undo(const struct bench_opts *o);
