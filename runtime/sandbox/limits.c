/* Sandbox-wide resource limits, set by the sandbox child before it builds the root. Process
 * count: since Linux 6.14 /proc/sys/kernel/pid_max belongs to the pid namespace of the
 * writer (kernel/pid_sysctl.h, commit "pid: allow pid_max to be set per pid namespace"), and
 * the child is PID 1 of a fresh one, holding CAP_SYS_ADMIN in its owning user namespace; a
 * namespace's pid_max caps how many tasks can exist in it at once, whatever uid they run as
 * (RLIMIT_NPROC would count per uid, host-wide). It is written through the sandbox's own
 * fresh procfs before its /proc/sys is made read-only (rt_child_pid_max): a lookup in the
 * host's /proc/sys from the new namespace would leave a dentry there for its table that
 * outlives the sandbox. Where a container forbids a fresh procfs, the host's is tried, which a
 * container mounts read-only (EROFS), and RLIMIT_NPROC stands in (docs/containers.md): set on the
 * child, it is inherited by rtn-init and every command, and the kernel counts it per uid of the
 * sandbox's own user namespace (ucounts), so the caller's other processes do not count against it.
 * Raising a hard limit needs CAP_SYS_RESOURCE in the initial user namespace: under a container's
 * lower inherited limit (podman's --ulimit nproc=1024:1024) that limit is used as it is, and the
 * sandbox says so (RT_PIDS_NPROC_KEPT, rt_setup_warning), rather than fail every start.
 * Memory: oom_score_adj 1000 makes the sandbox the OOM killer's first choice; a hard cap is
 * the sandbox cgroup's memory.max where cgroup v2 has the memory controller for us
 * (runtime/sandbox/cgroup.c), else RLIMIT_DATA per process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>

#include "common/io.h"
#include "runtime/internal.h"

static int write_pid_max(const struct rt_plan *p, const char *proc) {
        char val[32], path[64];
        snprintf(val, sizeof val, "%u", p->spec->pids_max);
        snprintf(path, sizeof path, "%s/sys/kernel/pid_max", proc);
        return rtn_write_file_at(AT_FDCWD, path, val);
}

static void report_pids(const struct rt_plan *p, enum rt_pids_route route) {
        if (p->protect)
                p->protect->setup.pids = route;
}

int rt_child_limits(const struct rt_plan *p, struct rtn_error *err) {
        (void)p;
        int r = rtn_write_file_at(AT_FDCWD, "/proc/self/oom_score_adj", "1000");
        if (r < 0)
                return rtn_err(err, r, "set oom_score_adj of the sandbox");
        return 0;
}

int rt_child_pid_max(const struct rt_plan *p, const char *proc, struct rtn_error *err) {
        int r = write_pid_max(p, proc);
        if (r == 0) {
                report_pids(p, RT_PIDS_PID_MAX);
                return 0;
        }
        /* Before 6.14 the file is the host's and not ours to write (EPERM/EACCES); in a
         * container the host's procfs is read-only (EROFS) */
        if (r != -EPERM && r != -EACCES && r != -EROFS && r != -ENOENT)
                return rtn_err(err, r, "set pid_max of the sandbox to %u", p->spec->pids_max);
        struct rlimit cur, rl = {p->spec->pids_max, p->spec->pids_max};
        if (getrlimit(RLIMIT_NPROC, &cur) < 0)
                return rtn_err(err, errno, "get RLIMIT_NPROC");
        bool kept = cur.rlim_max < rl.rlim_max;
        if (kept)
                rl.rlim_cur = rl.rlim_max = cur.rlim_max;
        if (setrlimit(RLIMIT_NPROC, &rl) < 0)
                return rtn_err(err, errno, "set RLIMIT_NPROC of the sandbox to %llu",
                               (unsigned long long)rl.rlim_max);
        report_pids(p, kept ? RT_PIDS_NPROC_KEPT : RT_PIDS_NPROC);
        if (kept && p->protect) {
                p->protect->setup.nproc_kept = rl.rlim_max;
                p->protect->setup.nproc_asked = p->spec->pids_max;
        }
        return 0;
}
