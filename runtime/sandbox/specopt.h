/* The sandbox options `rtn exec` and `rtn serve` share (runtime/sandbox/specopt.c): one table, one
 * parser and one help text, so both commands take them with the same meaning. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netns/netns.h"
#include "runtime/runtime.h"

/* getopt_long values past every short option's character. */
enum {
        RT_OPT_UPPER_SIZE = 0x100,
        RT_OPT_MEMORY_MAX,
        RT_OPT_PIDS_MAX,
        RT_OPT_ISOLATION,
        RT_OPT_SETENV,
        RT_OPT_ENV_FILE,
        RT_OPT_ALLOW_PTRACE,
        RT_OPT_ALLOW_NET,
        RT_OPT_NET_POLICY,
        RT_OPT_PUBLISH,
        RT_OPT_SECRET,
        RT_OPT_SECRET_FILE,
        RT_OPT_SECRET_HEADER,
        RT_OPT_PROTECT,
        RT_OPT_STORE_MAX,
};

/* Entries for a command's struct option table. */
#define RT_SPEC_LONGOPTS                                                                           \
        {"upper-size", required_argument, NULL, RT_OPT_UPPER_SIZE},                                \
                {"store-max", required_argument, NULL, RT_OPT_STORE_MAX},                          \
                {"memory-max", required_argument, NULL, RT_OPT_MEMORY_MAX},                        \
                {"pids-max", required_argument, NULL, RT_OPT_PIDS_MAX},                            \
                {"isolation", required_argument, NULL, RT_OPT_ISOLATION},                          \
                {"setenv", required_argument, NULL, RT_OPT_SETENV},                                \
                {"env-file", required_argument, NULL, RT_OPT_ENV_FILE},                            \
                {"allow-ptrace", no_argument, NULL, RT_OPT_ALLOW_PTRACE},                          \
                {"allow-net", required_argument, NULL, RT_OPT_ALLOW_NET},                          \
                {"net-policy", required_argument, NULL, RT_OPT_NET_POLICY},                        \
                {"publish", required_argument, NULL, RT_OPT_PUBLISH},                              \
                {"secret", required_argument, NULL, RT_OPT_SECRET},                                \
                {"secret-file", required_argument, NULL, RT_OPT_SECRET_FILE},                      \
                {"secret-header", required_argument, NULL, RT_OPT_SECRET_HEADER}, {                \
                "protect", required_argument, NULL, RT_OPT_PROTECT                                 \
        }

#define RT_SPEC_USAGE                                                                              \
        "  --setenv K=V|K        set an environment variable of the agent's commands (K alone:\n"  \
        "                        the value rtn has; an error when it has none); repeatable\n"      \
        "  --env-file FILE       --setenv for each line of FILE (docker's format: K=V or K,\n"     \
        "                        # comments, blank lines; values taken as written)\n"              \
        "  --upper-size BYTES    room for the sandbox's changes (its upper layer, a tmpfs, an\n"   \
        "                        overlay workspace's included) and for /tmp, each (default 2G;\n"  \
        "                        K M G); a write beyond fails with ENOSPC inside; more\n"          \
        "                        than the machine's memory is refused\n"                           \
        "  --store-max BYTES     the most the data dir may hold on disk (K M G): a commit that\n"  \
        "                        would pass it is refused, as one that would leave its\n"          \
        "                        filesystem less than 5 percent free (1G-quarter of it)\n"         \
        "  --pids-max N          tasks that may exist in the sandbox at once (default 4096,\n"     \
        "                        at least 301; cgroup v2 pids.max when available, and the\n"       \
        "                        pid_max)\n"                                                       \
        "  --memory-max BYTES    memory limit of the sandbox (cgroup v2 memory.max when\n"         \
        "                        available, else RLIMIT_DATA per process, with a warning)\n"       \
        "  --allow-ptrace        let the agent's commands ptrace the sandbox's own processes\n"    \
        "                        (strace, gdb); never rtn-init nor anything outside\n"             \
        "  --allow-net HOST      let the agent's commands reach HOST through rtn's proxy: a\n"     \
        "                        name, .domain (it and every name below), IPv4 or [IPv6]\n"        \
        "                        address, :PORT (default 80 and 443); an address of this\n"        \
        "                        machine only as ADDR:PORT; repeatable\n"                          \
        "  --net-policy FILE     the same rules from FILE, one a line (docs/network.md)\n"         \
        "  --secret NAME@HOST    add the header 'Authorization: Bearer VALUE' to the agent's\n"    \
        "                        requests for HOST (allowed by it; HTTPS intercepted with a\n"     \
        "                        CA of the sandbox's own, the server verified), VALUE being\n"     \
        "                        rtn's environment variable NAME; commands see a placeholder\n"    \
        "                        in NAME; plain http:// to HOST is refused unless written\n"       \
        "                        NAME@http://HOST (then sent unverified); repeatable\n"            \
        "  --secret-file NAME@[http://]HOST=FILE\n"                                                \
        "                        the same with VALUE read from FILE (its last newline dropped)\n"  \
        "  --secret-header NAME=TEMPLATE\n"                                                        \
        "                        the header for the secrets named NAME before, {} the value\n"     \
        "                        ('X-Api-Key: {}'; docs/network.md, \"Secrets\")\n"                \
        "  --publish [ADDR:]HOSTPORT:SANDBOXPORT\n"                                                \
        "                        forward connections to ADDR:HOSTPORT on the host (ADDR\n"         \
        "                        127.0.0.1 by default) to SANDBOXPORT on the sandbox's\n"          \
        "                        loopback; repeatable (docs/network.md)\n"                         \
        "  --protect PATH        keep PATH (relative to the workspace, or absolute below it or\n"  \
        "                        a read-write --bind) read-only inside, and refused by rtn\n"      \
        "                        apply, as the files git's configuration names are; repeatable\n"  \
        "  --isolation MODE      full (default); landlock: no namespaces, Landlock+seccomp "       \
        "only;\n"                                                                                  \
        "                        namespaces: no Landlock (both weaker, reported on stderr).\n"     \
        "                        Without it rtn picks landlock by itself where user\n"             \
        "                        namespaces are denied, and says so (rtn probe)\n"

struct rt_spec_opts {
        const char *setenv[RT_ENV_MAX]; /* --setenv K=V, checked when parsed */
        size_t nsetenv;
        char store[16384]; /* the K=V made from --setenv K and --env-file lines */
        size_t used;
        bool pids_asked; /* --pids-max given: say how it is enforced when not pids.max */
        struct netns_policy net; /* --allow-net and --net-policy (spec.net_proxy when given) */
        struct netns_secrets secrets; /* --secret, --secret-file, --secret-header */
        struct netns_port publish[NETNS_PUBLISH_MAX]; /* --publish */
        size_t npublish;
        const char *protect[RT_PROTECT_PATHS_MAX]; /* --protect, in spec.protect */
        bool isolation_asked; /* --isolation given: no automatic choice */
        uint64_t store_max; /* --store-max: the store's budget (store_set_max), 0 for none */
        char isolation_auto[320]; /* why rtn chose the Landlock mode by itself, or "" */
};

/* BYTES with an optional K, M or G suffix (powers of 1024). */
int rt_parse_size(const char *arg, const char *what, uint64_t *ret, struct rtn_error *err);
/* Applies option c (one of RT_OPT_*) to spec and o: 1 when it was one, 0 when c is not one of
 * these options, < 0 (err set) for a bad value. */
int rt_spec_opt(int c, const char *arg, struct rt_spec *spec, struct rt_spec_opts *o,
                struct rtn_error *err);
/* After parsing: options that cannot go together (--publish with --net none or
 * --isolation landlock). */
int rt_spec_opts_check(const struct rt_spec *spec, const struct rt_spec_opts *o,
                       struct rtn_error *err);
/* The isolation mode alone: the Landlock mode when the user named none and this host denies
 * user namespaces (o->isolation_auto says why, "" otherwise); changes nothing else (rtn probe
 * asks it which mode rtn would pick). */
void rt_spec_opts_isolation(struct rt_spec *spec, struct rt_spec_opts *o);
/* After parsing: the isolation mode (rt_spec_opts_isolation), the Landlock mode when the user named
 * none and this host denies user namespaces (o->isolation_auto says why; docs/containers.md), and
 * how the limits are enforced (rt_limits_choose), with the warnings a command prints on stderr. */
void rt_spec_opts_limits(struct rt_spec *spec, struct rt_spec_opts *o,
                         struct rt_limit_warnings *ret);
/* The environment of a command of this sandbox: the defaults (rt_env_default), then --setenv
 * (for agent commands), then extra KEY=VALUE settings (NULL-terminated, may be NULL). */
int rt_spec_opts_env(const struct rt_spec_opts *o, struct rt_env *env, const struct rt_sandbox *sb,
                     uint32_t policy, bool tty, char *const *extra, struct rtn_error *err);
/* "full", "landlock" or "namespaces". */
const char *rt_isolation_name(enum init_isolation iso);
