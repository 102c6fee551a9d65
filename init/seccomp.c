/* Installs the seccomp filter of a policy: the last step before execve. The BPF was produced
 * at build time by tools/gen-seccomp (an allowlist; see docs/policy.md for the list of blocked
 * calls and their errnos), so rtn-init, which is static and runs between fork and execve,
 * needs neither libseccomp nor malloc here. A command gets the reporting variant, whose
 * EPERM-class denials are SECCOMP_RET_USER_NOTIF: the installing task receives the filter's
 * listener and rtn-init answers every notification with EPERM (init/notify.c). */
#include "init/policy.h"

#include <errno.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "seccomp_filters.h" /* generated into $(O)/gen */

/* --allow-ptrace (init_config.allow_ptrace): agent commands get the agent_trace filters,
 * which differ from the agent's only in allowing ptrace and process_vm_readv/writev. */
static bool allow_ptrace;

void init_seccomp_allow_ptrace(bool on) {
        allow_ptrace = on;
}

static int pick(enum init_policy policy, bool notify, struct sock_fprog *ret,
                struct rtn_error *err) {
        switch (policy) {
        case INIT_POLICY_AGENT:
        case INIT_POLICY_AGENT_ROOT: /* root by call runs the agent's filter */
                if (allow_ptrace) {
                        ret->filter = (struct sock_filter
                                               *)(notify ? init_seccomp_agent_trace_notify_filter
                                                         : init_seccomp_agent_trace_filter);
                        ret->len =
                                (unsigned short)(notify ? ARRAY_SIZE(
                                                                  init_seccomp_agent_trace_notify_filter)
                                                        : ARRAY_SIZE(
                                                                  init_seccomp_agent_trace_filter));
                        return 0;
                }
                ret->filter = (struct sock_filter *)(notify ? init_seccomp_agent_notify_filter
                                                            : init_seccomp_agent_filter);
                ret->len = (unsigned short)(notify ? ARRAY_SIZE(init_seccomp_agent_notify_filter)
                                                   : ARRAY_SIZE(init_seccomp_agent_filter));
                return 0;
        case INIT_POLICY_PROVISION:
                ret->filter = (struct sock_filter *)(notify ? init_seccomp_provision_notify_filter
                                                            : init_seccomp_provision_filter);
                ret->len =
                        (unsigned short)(notify ? ARRAY_SIZE(init_seccomp_provision_notify_filter)
                                                : ARRAY_SIZE(init_seccomp_provision_filter));
                return 0;
        default:
                return rtn_errx(err, EINVAL, "seccomp: unknown policy %d", (int)policy);
        }
}

/* Without no_new_privs the kernel would still accept the filter from a task holding
 * CAP_SYS_ADMIN in its user namespace (root inside the sandbox), and a setuid exec could then
 * run under a filter it did not expect (seccomp(2), "EACCES"). rtn-init always sets it first;
 * refuse if the order was broken. */
static int check_nnp(struct rtn_error *err) {
        int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        if (nnp < 0)
                return rtn_err(err, errno, "seccomp: PR_GET_NO_NEW_PRIVS");
        if (nnp != 1)
                return rtn_errx(err, EPERM, "seccomp: no_new_privs is not set");
        return 0;
}

static const char *policy_name(enum init_policy policy) {
        return policy == INIT_POLICY_AGENT ? "agent" : "provision";
}

static int install_plain(struct sock_fprog *prog, const char *name, struct rtn_error *err) {
        int r = check_nnp(err);
        if (r < 0)
                return r;
        /* No SECCOMP_FILTER_FLAG_LOG: denials would go to the host's audit log, not to the
         * user, and glibc's clone3 probe alone would flood it. */
        if (sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
                return rtn_err(err, errno, "seccomp: install %s filter", name);
        return 0;
}

int init_seccomp_install_files(struct rtn_error *err) {
        struct sock_fprog prog = {.filter = (struct sock_filter *)init_seccomp_files_filter,
                                  .len = (unsigned short)ARRAY_SIZE(init_seccomp_files_filter)};
        return install_plain(&prog, "file server", err);
}

int init_seccomp_install_host_net(struct rtn_error *err) {
        struct sock_fprog prog = {.filter = (struct sock_filter *)init_seccomp_host_net_filter,
                                  .len = (unsigned short)ARRAY_SIZE(init_seccomp_host_net_filter)};
        return install_plain(&prog, "host network", err);
}

int init_seccomp_install(enum init_policy policy, struct rtn_error *err) {
        struct sock_fprog prog;
        int r = pick(policy, false, &prog, err);
        if (r < 0)
                return r;
        return install_plain(&prog, policy_name(policy), err);
}

int init_seccomp_install_notify(enum init_policy policy, int *ret_listener, struct rtn_error *err) {
        struct sock_fprog prog;
        int r = pick(policy, true, &prog, err);
        if (r < 0 || (r = check_nnp(err)) < 0)
                return r;
        int fd = (int)sys_seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (fd >= 0) {
                *ret_listener = fd; /* the kernel made it O_CLOEXEC (kernel/seccomp.c) */
                return 0;
        }
        /* EBUSY: a filter already on our stack has a listener (kernel/seccomp.c,
         * has_duplicate_listener), e.g. rtn-init itself runs under another supervisor;
         * EMFILE/ENFILE: no fd for the listener. Without a listener USER_NOTIF would fail
         * calls with ENOSYS, so fall back to the plain filter: same decisions, no report. */
        if (errno != EBUSY && errno != EMFILE && errno != ENFILE)
                return rtn_err(err, errno, "seccomp: install %s filter with a listener",
                               policy_name(policy));
        r = init_seccomp_install(policy, err);
        if (r == 0)
                *ret_listener = -1;
        return r;
}
