/* Sandbox-wide resource limits, set by the sandbox child before it builds the root. Process
 * count: since Linux 6.14 /proc/sys/kernel/pid_max belongs to the pid namespace of the
 * writer (kernel/pid_sysctl.h, commit "pid: allow pid_max to be set per pid namespace"), and
 * the child is PID 1 of a fresh one, holding CAP_SYS_ADMIN in its owning user namespace; a
 * namespace's pid_max caps how many tasks can exist in it at once, whatever uid they run as
 * (RLIMIT_NPROC would count per uid, host-wide). Memory: oom_score_adj 1000 makes the sandbox
 * the OOM killer's first choice; a hard cap needs cgroup v2 (see rt_memory_limit). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/internal.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int write_str(const char *path, const char *val) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        ssize_t n = write(fd, val, strlen(val));
        if (n < 0)
                return negative_errno();
        return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

int rt_child_limits(const struct rt_plan *p, struct rtn_error *err) {
        char val[32];
        snprintf(val, sizeof val, "%u", p->spec->pids_max);
        int r = write_str("/proc/sys/kernel/pid_max", val);
        /* Before 6.14 the file is the host's and not ours to write (EPERM/EACCES): go on;
         * rtn probe and docs/security-invariants.md say what is lost. */
        if (r < 0 && r != -EPERM && r != -EACCES)
                return rtn_err(err, r, "set pid_max of the sandbox to %s", val);
        r = write_str("/proc/self/oom_score_adj", "1000");
        if (r < 0)
                return rtn_err(err, r, "set oom_score_adj of the sandbox");
        return 0;
}

/* Whether the cgroup v2 hierarchy is mounted at /sys/fs/cgroup and our own cgroup in it is
 * writable (delegated). Fills why with the reason when it is not. */
static bool cgroup2_delegated(char *why, size_t len) {
        struct statfs sf;
        if (statfs("/sys/fs/cgroup", &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
                snprintf(why, len, "/sys/fs/cgroup is not cgroup v2 (v1 or hybrid host)");
                return false;
        }
        char line[512], path[600];
        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        if (!f || !fgets(line, sizeof line, f) || strncmp(line, "0::", 3) != 0) {
                snprintf(why, len, "no cgroup v2 entry in /proc/self/cgroup");
                return false;
        }
        line[strcspn(line, "\n")] = '\0';
        snprintf(path, sizeof path, "/sys/fs/cgroup%s", line + 3);
        if (access(path, W_OK) < 0) {
                snprintf(why, len, "cgroup %s is not delegated to us", line + 3);
                return false;
        }
        snprintf(why, len, "moving the sandbox into a child cgroup is not implemented yet");
        return false;
}

void rt_memory_limit(struct rt_spec *spec, char *warning, size_t len) {
        warning[0] = '\0';
        if (spec->memory_bytes == 0)
                return;
        char why[160];
        if (!cgroup2_delegated(why, sizeof why)) {
                /* RLIMIT_AS bounds each process's address space, not the sandbox's memory:
                 * weaker (N processes may use N times it) and stricter (reservations count). */
                spec->limits.as_bytes = spec->memory_bytes;
                snprintf(warning, len,
                         "memory limit is RLIMIT_AS per process, not a cgroup "
                         "memory.max for the sandbox: %s",
                         why);
        }
}
