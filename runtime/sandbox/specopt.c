/* The sandbox options `rtn exec` and `rtn serve` share: their parsing, checks and the
 * environment they give commands (runtime/sandbox/specopt.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/sandbox/specopt.h"

int rt_parse_size(const char *arg, const char *what, uint64_t *ret, struct rtn_error *err) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        unsigned shift = 0;
        if (*end == 'K' || *end == 'k')
                shift = 10, end++;
        else if (*end == 'M' || *end == 'm')
                shift = 20, end++;
        else if (*end == 'G' || *end == 'g')
                shift = 30, end++;
        if (errno || *end || end == arg || arg[0] == '-' || v > (~0ULL >> (shift + 1)))
                return rtn_errx(err, EINVAL, "%s wants a size in bytes (K, M, G suffixes): %s",
                                what, arg);
        *ret = (uint64_t)v << shift;
        return 0;
}

static int parse_isolation(const char *arg, struct rt_spec *s, struct rtn_error *err) {
        if (!strcmp(arg, "full"))
                s->isolation = INIT_ISOLATION_FULL;
        else if (!strcmp(arg, "landlock"))
                s->isolation = INIT_ISOLATION_LANDLOCK;
        else if (!strcmp(arg, "namespaces"))
                s->isolation = INIT_ISOLATION_NO_LANDLOCK;
        else
                return rtn_errx(err, EINVAL, "--isolation must be full, landlock or namespaces");
        return 0;
}

const char *rt_isolation_name(enum init_isolation iso) {
        switch (iso) {
        case INIT_ISOLATION_LANDLOCK:
                return "landlock";
        case INIT_ISOLATION_NO_LANDLOCK:
                return "namespaces";
        case INIT_ISOLATION_FULL:
        default:
                return "full";
        }
}

static int parse_setenv(const char *arg, struct rt_spec_opts *o, struct rtn_error *err) {
        if (o->nsetenv >= RT_ENV_MAX)
                return rtn_errx(err, E2BIG, "too many --setenv options");
        /* Checked now, so a bad one stops the command before anything starts. */
        static struct rt_env probe;
        probe.n = probe.used = 0;
        probe.vars[0] = NULL;
        int r = rt_env_set(&probe, arg, err);
        if (r < 0)
                return r;
        o->setenv[o->nsetenv++] = arg;
        return 0;
}

int rt_spec_opt(int c, const char *arg, struct rt_spec *s, struct rt_spec_opts *o,
                struct rtn_error *err) {
        uint64_t v;
        int r;
        switch (c) {
        case RT_OPT_UPPER_SIZE:
                r = rt_parse_size(arg, "--upper-size", &s->upper_bytes, err);
                break;
        case RT_OPT_MEMORY_MAX:
                r = rt_parse_size(arg, "--memory-max", &s->memory_bytes, err);
                break;
        case RT_OPT_PIDS_MAX:
                if ((r = rt_parse_size(arg, "--pids-max", &v, err)) < 0)
                        return r;
                if (v > UINT32_MAX)
                        return rtn_errx(err, EINVAL, "--pids-max too large");
                s->pids_max = (uint32_t)v;
                o->pids_asked = true;
                break;
        case RT_OPT_ISOLATION:
                r = parse_isolation(arg, s, err);
                break;
        case RT_OPT_SETENV:
                r = parse_setenv(arg, o, err);
                break;
        default:
                return 0;
        }
        return r < 0 ? r : 1;
}

void rt_spec_opts_limits(struct rt_spec *spec, const struct rt_spec_opts *o,
                         struct rt_limit_warnings *ret) {
        /* No pid namespace in the Landlock-only mode: RLIMIT_NPROC (per uid, counting the
         * caller's other processes too) is the only process limit there is. */
        if (spec->isolation == INIT_ISOLATION_LANDLOCK && spec->limits.nproc == 0)
                spec->limits.nproc = spec->pids_max;
        rt_limits_choose(spec, o->pids_asked, ret);
}

int rt_spec_opts_env(const struct rt_spec_opts *o, struct rt_env *env, const struct rt_sandbox *sb,
                     uint32_t policy, bool tty, char *const *extra, struct rtn_error *err) {
        int r;
        rt_env_default(env, sb, policy, tty);
        for (size_t i = 0; o && policy == INIT_POLICY_AGENT && i < o->nsetenv; i++)
                if ((r = rt_env_set(env, o->setenv[i], err)) < 0)
                        return r;
        for (size_t i = 0; extra && extra[i]; i++)
                if ((r = rt_env_set(env, extra[i], err)) < 0)
                        return r;
        return 0;
}
