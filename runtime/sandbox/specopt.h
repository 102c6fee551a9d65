/* The sandbox options `rtn exec` and `rtn serve` share (runtime/sandbox/specopt.c): one table, one
 * parser and one help text, so both commands take them with the same meaning. */
#pragma once

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
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
        RT_OPT_ALLOW_HOST_PORT,
        RT_OPT_UPSTREAM_PROXY,
        RT_OPT_PUBLISH,
        RT_OPT_SECRET,
        RT_OPT_SECRET_FILE,
        RT_OPT_SECRET_HEADER,
        RT_OPT_PROTECT,
        RT_OPT_STORE_MAX,
        RT_OPT_ROOTFS,
        RT_OPT_WORKSPACE,
        RT_OPT_WORKSPACE_MODE,
        RT_OPT_WORKSPACE_GIT,
        RT_OPT_BIND,
        RT_OPT_NET,
        RT_OPT_HOSTNAME,
        RT_OPT_TIMEOUT,
        RT_OPT_DATA_DIR,
        RT_OPT_ENV,
        RT_OPT_USER,
        RT_OPT_VERB = 0x200, /* a verb's own options' values start here (or are characters) */
};

/* The verbs that take the shared options; a row's help may differ between them. */
enum rt_opt_verb { RT_VERB_EXEC, RT_VERB_SERVE, RT_VERB_N };

/* One option of a verb's table: getopt_long's name, argument and value, and its lines of
 * --help (help[verb]; NULL: help[RT_VERB_EXEC], the same text). The shared rows are
 * rt_spec_opt_rows[] (runtime/sandbox/specopt.c); a verb lists its own after them. */
struct rt_opt {
        const char *name;
        int has_arg; /* no_argument, required_argument */
        int val;
        const char *help[RT_VERB_N];
};

/* The sandbox options both verbs take, in --help's order; the row's parse is the case of
 * its value in rt_spec_opt. */
extern const struct rt_opt rt_spec_opt_rows[];
extern const size_t rt_spec_opt_nrows;

/* The getopt_long table of a verb: the shared rows, then its own (nown of them), 'help'
 * with -h, and the terminator, in ret (room for cap entries). */
int rt_opts_longopts(const struct rt_opt *own, size_t nown, struct option *ret, size_t cap);
/* A verb's --help: head, the shared rows' help, its own rows', tail, then the environment
 * every sandbox verb reads (RTN_CGROUP). */
void rt_opts_usage(FILE *f, enum rt_opt_verb verb, const char *head, const struct rt_opt *own,
                   size_t nown, const char *tail);

struct rt_spec_opts {
        const char *data_dir; /* --data-dir, or NULL: the default */
        const char *env; /* --env (checked), or NULL: STORE_DEFAULT_ENV */
        uint64_t timeout_usec; /* --timeout, or 0 */
        char workspace_abs[PATH_MAX]; /* --workspace, resolved: what the policy checks */
        const char *setenv[RT_ENV_MAX]; /* --setenv K=V, checked when parsed */
        size_t nsetenv;
        char store[16384]; /* the K=V made from --setenv K and --env-file lines */
        size_t used;
        bool pids_asked; /* --pids-max given: say how it is enforced when not pids.max */
        struct netns_policy net; /* --allow-net and --net-policy (spec.net_proxy when given) */
        struct netns_secrets secrets; /* --secret, --secret-file, --secret-header */
        struct netns_upstream upstream; /* --upstream-proxy, or unset */
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
int rt_spec_opt(int c, char *arg, struct rt_spec *spec, struct rt_spec_opts *o,
                struct rtn_error *err);
/* After parsing: options that cannot go together (--publish with --net none or
 * --isolation landlock, --allow-host-port with --net none or a --publish host port). */
int rt_spec_opts_check(const struct rt_spec *spec, const struct rt_spec_opts *o,
                       struct rtn_error *err);
/* The isolation mode alone: the Landlock mode when the user named none and this host denies
 * user namespaces (o->isolation_auto says why, "" otherwise); changes nothing else (rtn probe
 * asks it which mode rtn would pick). */
void rt_spec_opts_isolation(struct rt_spec *spec, struct rt_spec_opts *o);
/* After parsing and choosing the isolation mode: how the limits are enforced
 * (rt_limits_choose), with the warnings a command prints on stderr. The mode is chosen either
 * before, once (rt_spec_opts_isolation: rtn serve, whose tools report it), or only when the
 * full sandbox failed to start (rt_spec_opts_fallback: rtn exec, where the probe's fork and
 * user namespace would cost every start). */
void rt_spec_opts_limits(struct rt_spec *spec, struct rt_spec_opts *o,
                         struct rt_limit_warnings *ret);
/* After a start of the full sandbox failed: when the user named no mode and this host denies
 * user namespaces (rt_spec_opts_isolation), the Landlock mode with its limits chosen again
 * (rt_spec_opts_limits, *ret) and true, so the caller starts again; o->isolation_auto says
 * why, or, with an option that needs the namespaces, why the start failed. Else false. */
bool rt_spec_opts_fallback(struct rt_spec *spec, struct rt_spec_opts *o,
                           struct rt_limit_warnings *ret);
/* The environment of a command of this sandbox: the defaults (rt_env_default), then --setenv
 * (for agent commands), then extra KEY=VALUE settings (NULL-terminated, may be NULL). */
int rt_spec_opts_env(const struct rt_spec_opts *o, struct rt_env *env, const struct rt_sandbox *sb,
                     uint32_t policy, bool tty, char *const *extra, struct rtn_error *err);
/* The agent's proxy for --allow-net, --net-policy and --secret (spec->net_proxy): a gate with
 * o's policy and --upstream-proxy, then o's secrets, and their CA in spec->ca_pem, in that order
 * (the CA exists once the secrets are set); *ret NULL without spec->net_proxy. `rtn exec` and each
 * `rtn serve` session make theirs with it. */
int rt_spec_opts_gate(const struct rt_spec_opts *o, struct rt_spec *spec, struct netns_gate **ret,
                      struct rtn_error *err);
/* "full", "landlock" or "namespaces". */
const char *rt_isolation_name(enum init_isolation iso);
