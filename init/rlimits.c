/* Resource limits of a command, applied right after chdir so every later step and the user's
 * program run under them. Defaults are documented in docs/policy.md: no core dumps (they can
 * hold secrets and fill the disk), a bounded fd table and file size; process count and memory
 * are left to the pid namespace and cgroups, which account the whole sandbox rather than one
 * uid, unless the caller sets them. */
#include "init/policy.h"

#include <sys/resource.h>

/* select(2) cannot handle fds >= FD_SETSIZE; keep the soft limit there as systemd does
 * (systemd.exec(5), LimitNOFILE=) and let programs that know better raise it. */
#define NOFILE_SOFT_MAX 1024

/* Lower (never raise) a limit. Raising a hard limit needs CAP_SYS_RESOURCE in the initial
 * user namespace, which no sandbox has; asking for more than was inherited gets what was
 * inherited, which is stricter than asked. */
static int set_limit(int resource, const char *name, uint64_t soft, uint64_t hard,
                     struct rtn_error *err) {
        struct rlimit cur;
        if (getrlimit(resource, &cur) < 0)
                return rtn_err(err, errno, "rlimits: get %s", name);
        struct rlimit want = {.rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard};
        if (want.rlim_max > cur.rlim_max)
                want.rlim_max = cur.rlim_max;
        if (want.rlim_cur > want.rlim_max)
                want.rlim_cur = want.rlim_max;
        if (setrlimit(resource, &want) < 0)
                return rtn_err(err, errno, "rlimits: set %s to %llu/%llu", name,
                               (unsigned long long)want.rlim_cur,
                               (unsigned long long)want.rlim_max);
        return 0;
}

int init_rlimits_apply(const struct init_limits *l, struct rtn_error *err) {
        if (!l)
                return rtn_errx(err, EINVAL, "rlimits: no limits given");
        int r = set_limit(RLIMIT_CORE, "RLIMIT_CORE", l->core_bytes, l->core_bytes, err);
        if (r >= 0 && l->nofile) {
                uint64_t soft = l->nofile < NOFILE_SOFT_MAX ? l->nofile : NOFILE_SOFT_MAX;
                r = set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", soft, l->nofile, err);
        }
        if (r >= 0 && l->fsize_bytes)
                r = set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", l->fsize_bytes, l->fsize_bytes, err);
        if (r >= 0 && l->nproc)
                r = set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", l->nproc, l->nproc, err);
        if (r >= 0 && l->data_bytes)
                r = set_limit(RLIMIT_DATA, "RLIMIT_DATA", l->data_bytes, l->data_bytes, err);
        /* CPU: soft limit sends SIGXCPU, the hard one a second later SIGKILL. */
        if (r >= 0 && l->cpu_seconds)
                r = set_limit(RLIMIT_CPU, "RLIMIT_CPU", l->cpu_seconds, l->cpu_seconds + 1, err);
        return r;
}
