/* Sandbox-wide resource limits, set by the sandbox child before it builds the root. Process
 * count: since Linux 6.14 /proc/sys/kernel/pid_max belongs to the pid namespace of the
 * writer (kernel/pid_sysctl.h, commit "pid: allow pid_max to be set per pid namespace"), and
 * the child is PID 1 of a fresh one, holding CAP_SYS_ADMIN in its owning user namespace; a
 * namespace's pid_max caps how many tasks can exist in it at once, whatever uid they run as
 * (RLIMIT_NPROC would count per uid, host-wide). Memory: oom_score_adj 1000 makes the sandbox
 * the OOM killer's first choice; a hard cap is the sandbox cgroup's memory.max where cgroup v2
 * has the memory controller for us (runtime/sandbox/cgroup.c), else RLIMIT_AS per process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "common/io.h"
#include "runtime/internal.h"

int rt_child_limits(const struct rt_plan *p, struct rtn_error *err) {
        char val[32];
        snprintf(val, sizeof val, "%u", p->spec->pids_max);
        int r = rtn_write_file_at(AT_FDCWD, "/proc/sys/kernel/pid_max", val);
        /* Before 6.14 the file is the host's and not ours to write (EPERM/EACCES): go on;
         * rtn probe and docs/security-invariants.md say what is lost. */
        if (r < 0 && r != -EPERM && r != -EACCES)
                return rtn_err(err, r, "set pid_max of the sandbox to %s", val);
        r = rtn_write_file_at(AT_FDCWD, "/proc/self/oom_score_adj", "1000");
        if (r < 0)
                return rtn_err(err, r, "set oom_score_adj of the sandbox");
        return 0;
}
