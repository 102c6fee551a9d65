/* Each sandbox's share of its owner's per-user kernel budgets. The kernel charges what a user
 * namespace's processes hold (inotify instances and watches, fanotify groups and marks,
 * namespaces of each kind) to their uid in that namespace and again, level by level, to the
 * namespace's owner in every ancestor (inc_ucount in kernel/ucount.c): a sandbox that held
 * 128 inotify instances left its owner, host root for a root-run rtn or the caller, none for
 * the sandbox's life. A namespace's own limits are its /proc/sys/user/max_* files
 * (setup_userns_sysctls; writable with CAP_SYS_RESOURCE in it, and INT_MAX at creation), so
 * the sandbox child writes there a share, 1/RT_BUDGET_SHARE of what rtn's own namespace
 * allows: whatever it does, its owner keeps the rest.
 *
 * The rlimit-counted budgets (RLIMIT_MSGQUEUE bytes of POSIX message queues, RLIMIT_SIGPENDING
 * queued signals, RLIMIT_MEMLOCK) are charged up the tree too (inc_rlimit_ucounts) and bounded
 * at the owner's level by the namespace's rlimit_max, which create_user_ns copies from the
 * creating task's soft limits (kernel/user_namespace.c). rtn lowers its own soft limits to the
 * share around the clone3 that creates the namespace, and the sandbox inherits them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/io.h"
#include "runtime/internal.h"

#define SYSCTL_USER "/proc/sys/user"

static unsigned long long share_of(unsigned long long v) {
        unsigned long long s = v / RT_BUDGET_SHARE;
        return s ? s : 1;
}

/* rtn's own namespace's /proc/sys/user/max_* (read once per process: they are the host's
 * settings, and every sandbox start would otherwise read a dozen files). */
const struct rt_budgets *rt_budgets_get(void) {
        static struct rt_budgets b;
        static bool done;
        if (done)
                return &b;
        done = true;
        DIR *d = opendir(SYSCTL_USER);
        if (!d)
                return &b; /* no user namespaces' sysctls: nothing to share */
        struct dirent *de;
        while ((de = readdir(d)) && b.n < RT_MAX_BUDGETS) {
                if (strncmp(de->d_name, "max_", 4) != 0 || strlen(de->d_name) >= sizeof b.b[0].name)
                        continue;
                char buf[32];
                int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
                if (fd >= 0)
                        close(fd);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                char *end;
                errno = 0;
                unsigned long long v = strtoull(buf, &end, 10);
                if (errno || end == buf)
                        continue;
                snprintf(b.b[b.n].name, sizeof b.b[b.n].name, "%s", de->d_name);
                b.b[b.n++].max = share_of(v);
        }
        closedir(d);
        return &b;
}

/* Child side, once it is inside root (proc_sys's test_perm gives host root's euid only the
 * "other" bits of these files, which are none, so before setresuid root's child may not
 * write them), through the sandbox's fresh procfs (proc, from runtime/sandbox/mount.c): a
 * lookup in the host's would leave a dentry and an inode there for the namespace's table,
 * which outlive it and lengthen every later lookup and listing of /proc/sys/user. A file the
 * kernel lacks or refuses (EPERM/EACCES: no CAP_SYS_RESOURCE in a nested set-up) is skipped,
 * as pid_max is; docs/security-invariants.md (10) says what is lost then. Where a container
 * forbids a fresh procfs, the host's read-only one (EROFS) loses them, which rtn says
 * (rt_setup_warning). */
int rt_child_budgets(const struct rt_plan *p, const char *proc, struct rtn_error *err) {
        const struct rt_budgets *b = p->budgets;
        for (size_t i = 0; b && i < b->n; i++) {
                char path[96], val[24];
                snprintf(path, sizeof path, "%s/sys/user/%s", proc, b->b[i].name);
                snprintf(val, sizeof val, "%llu", b->b[i].max);
                int r = rtn_write_file_at(AT_FDCWD, path, val);
                if (r == -EROFS && p->protect) {
                        p->protect->setup.budgets_lost = true;
                        return 0;
                }
                if (r < 0 && r != -ENOENT && r != -EPERM && r != -EACCES)
                        return rtn_err(err, r, "set %s of the sandbox to %s", path, val);
        }
        if (p->protect)
                p->protect->setup.budgets_lost = false;
        return 0;
}

static const int shared_rlimits[] = {RLIMIT_MSGQUEUE, RLIMIT_SIGPENDING, RLIMIT_MEMLOCK};

void rt_rlimit_shares_lower(struct rt_rlimit_saved *ret) {
        for (size_t i = 0; i < RT_SHARED_RLIMITS; i++) {
                struct rlimit *s = &ret->saved[i];
                ret->ok[i] = getrlimit(shared_rlimits[i], s) == 0;
                if (!ret->ok[i] || s->rlim_cur == RLIM_INFINITY)
                        continue; /* no owner's budget to protect */
                struct rlimit lower = {share_of(s->rlim_cur), s->rlim_max};
                ret->ok[i] = setrlimit(shared_rlimits[i], &lower) == 0;
        }
}

void rt_rlimit_shares_restore(const struct rt_rlimit_saved *saved) {
        for (size_t i = 0; i < RT_SHARED_RLIMITS; i++)
                if (saved->ok[i])
                        (void)setrlimit(shared_rlimits[i], &saved->saved[i]);
}
