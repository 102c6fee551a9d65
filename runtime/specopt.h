/* The sandbox options `rtn exec` and `rtn serve` share (runtime/specopt.c): one table, one
 * parser and one help text, so both commands take them with the same meaning. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/runtime.h"

/* getopt_long values past every short option's character. */
enum {
        RT_OPT_UPPER_SIZE = 0x100,
        RT_OPT_MEMORY_MAX,
        RT_OPT_PIDS_MAX,
        RT_OPT_ISOLATION,
        RT_OPT_SETENV,
};

/* Entries for a command's struct option table. */
#define RT_SPEC_LONGOPTS                                                                           \
        {"upper-size", required_argument, NULL, RT_OPT_UPPER_SIZE},                                \
                {"memory-max", required_argument, NULL, RT_OPT_MEMORY_MAX},                        \
                {"pids-max", required_argument, NULL, RT_OPT_PIDS_MAX},                            \
                {"isolation", required_argument, NULL, RT_OPT_ISOLATION}, {                        \
                "setenv", required_argument, NULL, RT_OPT_SETENV                                   \
        }

#define RT_SPEC_USAGE                                                                              \
        "  --setenv K=V          set an environment variable of the agent's commands; "            \
        "repeatable\n"                                                                             \
        "  --upper-size BYTES    room for the sandbox's changes (its upper layer, a tmpfs, an\n"   \
        "                        overlay workspace's included) and for /tmp, each (default 2G;\n"  \
        "                        K M G); a write beyond fails with ENOSPC inside\n"                \
        "  --pids-max N          tasks that may exist in the sandbox at once (default 4096;\n"     \
        "                        cgroup v2 pids.max when available, and the pid_max)\n"            \
        "  --memory-max BYTES    memory limit of the sandbox (cgroup v2 memory.max when\n"         \
        "                        available, else RLIMIT_AS per process, with a warning)\n"         \
        "  --isolation MODE      full (default); landlock: no namespaces, Landlock+seccomp "       \
        "only;\n"                                                                                  \
        "                        namespaces: no Landlock (both weaker, reported on stderr)\n"

struct rt_spec_opts {
        const char *setenv[RT_ENV_MAX]; /* --setenv K=V, checked when parsed */
        size_t nsetenv;
        bool pids_asked; /* --pids-max given: say how it is enforced when not pids.max */
};

/* BYTES with an optional K, M or G suffix (powers of 1024). */
int rt_parse_size(const char *arg, const char *what, uint64_t *ret, struct rtn_error *err);
/* Applies option c (one of RT_OPT_*) to spec and o: 1 when it was one, 0 when c is not one of
 * these options, < 0 (err set) for a bad value. */
int rt_spec_opt(int c, const char *arg, struct rt_spec *spec, struct rt_spec_opts *o,
                struct rtn_error *err);
/* After parsing: how the limits are enforced (rt_limits_choose), with the warnings a command
 * prints on stderr. */
void rt_spec_opts_limits(struct rt_spec *spec, const struct rt_spec_opts *o,
                         struct rt_limit_warnings *ret);
/* The environment of a command of this sandbox: the defaults (rt_env_default), then --setenv
 * (for agent commands), then extra KEY=VALUE settings (NULL-terminated, may be NULL). */
int rt_spec_opts_env(const struct rt_spec_opts *o, struct rt_env *env, const struct rt_sandbox *sb,
                     uint32_t policy, bool tty, char *const *extra, struct rtn_error *err);
/* "full", "landlock" or "namespaces". */
const char *rt_isolation_name(enum init_isolation iso);
