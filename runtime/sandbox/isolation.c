/* Which isolation this host allows, where that is not the full sandbox (docs/containers.md).
 * A container or an LSM may deny user namespaces: a seccomp profile (clone3 or
 * unshare(CLONE_NEWUSER) refused with EPERM, or clone3 with ENOSYS as Docker's does), a
 * sysctl (ENOSPC from user.max_user_namespaces, EPERM from unprivileged_userns_clone), or
 * AppArmor's restriction on Ubuntu 23.10+, which lets the namespace be made but takes every
 * capability in it (the first mount fails with EACCES). rt_userns_denied tries what a
 * sandbox's start does first, in a child that does nothing else; when it is denied and the
 * user named no mode, rtn runs the Landlock mode instead and says so (rt_spec_opts_limits).
 * Also here: what a started sandbox's child had to do otherwise in a container (a host /proc,
 * RLIMIT_NPROC for pid_max, a lower inherited RLIMIT_NPROC), as the sentence rtn prints. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/syscall.h"
#include "runtime/internal.h"

/* The container flags that give the sandbox its own /proc (docs/containers.md). */
#define UNLOCK_PROC "--security-opt systempaths=unconfined"

static bool denied_errno(int e) {
        return e == EPERM || e == EACCES || e == ENOSPC || e == ENOSYS || e == EUSERS;
}

bool rt_userns_denied(char *why, size_t len) {
        struct clone_args ca = {.flags = CLONE_NEWUSER | CLONE_NEWNS, .exit_signal = SIGCHLD};
        pid_t pid = sys_clone3(&ca, sizeof ca);
        if (pid == 0) {
                /* Root of the new namespace, with every capability in it unless an LSM took
                 * them: making / private is the first mount a sandbox's child makes. */
                if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(errno & 0x7f);
                _exit(0);
        }
        if (pid < 0) {
                int e = errno;
                snprintf(why, len, "clone3(CLONE_NEWUSER) fails with %s", strerror(e));
                return denied_errno(e);
        }
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return false;
        int e = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
        if (!denied_errno(e))
                return false;
        snprintf(why, len,
                 "a new user namespace gets no capabilities (its first mount fails with %s; an "
                 "LSM such as Ubuntu's AppArmor restriction)",
                 strerror(e));
        return true;
}

const char *rt_setup_warning(const struct rt_sandbox *sb) {
        static char buf[1536];
        buf[0] = '\0';
        if (!sb || !sb->protect || sb->isolation == INIT_ISOLATION_LANDLOCK)
                return buf;
        const struct rt_setup_report *s = &sb->protect->setup;
        size_t n = 0;
        if (s->proc == RT_PROC_HOST)
                n += (size_t)snprintf(
                        buf, sizeof buf,
                        "the kernel refused the sandbox a /proc of its own (the container masks "
                        "paths of its /proc): the container's /proc is bound instead, so commands "
                        "see the container's processes (they cannot signal or trace them); the "
                        "process limit is RLIMIT_NPROC per uid inside, and the per-user kernel "
                        "budgets are the container's (" UNLOCK_PROC " gives the sandbox its own "
                        "/proc; rtn probe)");
        if (s->pids == RT_PIDS_NPROC_KEPT && n < sizeof buf)
                n += (size_t)snprintf(
                        buf + n, sizeof buf - n,
                        "%sthe process limit is %llu, the hard RLIMIT_NPROC rtn was started "
                        "with, not the %llu asked for (only a higher hard limit raises it: "
                        "--ulimit nproc=%llu:%llu; rtn probe)",
                        n ? "; " : "", (unsigned long long)s->nproc_kept,
                        (unsigned long long)s->nproc_asked, (unsigned long long)s->nproc_asked,
                        (unsigned long long)s->nproc_asked);
        if (s->ro_dirs[0] && n < sizeof buf)
                snprintf(buf + n, sizeof buf - n,
                         "%s%s %s read-only, bound with the container's mounts over files in "
                         "it, not overlaid: provisioning cannot change it",
                         n ? "; " : "", s->ro_dirs, strchr(s->ro_dirs, ' ') ? "are" : "is");
        return buf;
}

/* The engine from the marks each leaves: Podman's /run/.containerenv, Docker's /.dockerenv,
 * the kubelet's service variables, or the `container` variable others set (systemd's
 * convention). Only a hint for rtn probe: nothing is decided on it. */
static const char *container_engine(void) {
        static char other[64];
        if (access("/run/.containerenv", F_OK) == 0)
                return "podman";
        if (access("/.dockerenv", F_OK) == 0)
                return "docker";
        if (getenv("KUBERNETES_SERVICE_HOST"))
                return "kubernetes";
        const char *c = getenv("container");
        if (c && *c) {
                snprintf(other, sizeof other, "%s", c);
                return other;
        }
        return NULL;
}

/* Mounts over paths inside /proc (/proc/kcore bound to /dev/null, a read-only /proc/sys...):
 * the kernel then refuses a fresh procfs in a user namespace (mount_too_revealing). */
static bool proc_masked(void) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return false;
        char line[4096], mnt[4096];
        bool masked = false;
        while (!masked && fgets(line, sizeof line, f))
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
                        masked = strncmp(mnt, "/proc/", 6) == 0;
        fclose(f);
        return masked;
}

void rt_container_probe(struct rt_container *c, bool userns_denied, const char *why) {
        memset(c, 0, sizeof *c);
        c->engine = container_engine();
        c->proc_masked = proc_masked();
        if (!c->engine)
                return;
        bool k8s = strcmp(c->engine, "kubernetes") == 0;
        if (userns_denied && strstr(why, "no capabilities"))
                c->unlock[c->n++] =
                        k8s ? "securityContext.appArmorProfile {type: Unconfined}: the AppArmor "
                              "profile takes the capabilities of a new user namespace"
                            : "--security-opt apparmor=unconfined: the AppArmor profile takes "
                              "the capabilities of a new user namespace";
        else if (userns_denied)
                c->unlock[c->n++] =
                        k8s ? "securityContext.seccompProfile {type: Unconfined}, or a profile "
                              "that allows clone3 and unshare/clone with CLONE_NEWUSER: the "
                              "full sandbox instead of the Landlock mode"
                            : "a seccomp profile that allows clone3 and unshare/clone with "
                              "CLONE_NEWUSER (Podman's default does; Docker's only with "
                              "--cap-add SYS_ADMIN), or --security-opt seccomp=unconfined: "
                              "the full sandbox instead of the Landlock mode";
        if (c->proc_masked)
                c->unlock[c->n++] = k8s ? "securityContext.procMount: Unmasked (with hostUsers: "
                                          "false): the sandbox's own /proc, pid_max and kernel "
                                          "budgets"
                                        : UNLOCK_PROC ": the sandbox's own /proc, pid_max and "
                                                      "kernel budgets";
}
