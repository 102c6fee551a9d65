/* Installs the seccomp filter of a policy: the last step before execve. The BPF was produced
 * at build time by tools/gen-seccomp (an allowlist; see docs/policy.md for the list of blocked
 * calls and their errnos), so rtn-init, which is static and runs between fork and execve,
 * needs neither libseccomp nor malloc here. */
#include "init/policy.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#include "common/cleanup.h"
#include "common/syscall.h"
#include "seccomp_filters.h" /* generated into $(O)/gen */

int init_seccomp_install(enum init_policy policy, struct rtn_error *err) {
        struct sock_fprog prog;
        switch (policy) {
        case INIT_POLICY_AGENT:
                prog.filter = (struct sock_filter *)init_seccomp_agent_filter;
                prog.len = (unsigned short)ARRAY_SIZE(init_seccomp_agent_filter);
                break;
        case INIT_POLICY_PROVISION:
                prog.filter = (struct sock_filter *)init_seccomp_provision_filter;
                prog.len = (unsigned short)ARRAY_SIZE(init_seccomp_provision_filter);
                break;
        default:
                return rtn_errx(err, EINVAL, "seccomp: unknown policy %d", (int)policy);
        }
        /* Without no_new_privs the kernel would still accept the filter from a task holding
         * CAP_SYS_ADMIN in its user namespace (root inside the sandbox), and a setuid exec
         * could then run under a filter it did not expect (seccomp(2), "EACCES"). rtn-init
         * always sets it first; refuse if the order was broken. */
        int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        if (nnp < 0)
                return rtn_err(err, errno, "seccomp: PR_GET_NO_NEW_PRIVS");
        if (nnp != 1)
                return rtn_errx(err, EPERM, "seccomp: no_new_privs is not set");
        /* No SECCOMP_FILTER_FLAG_LOG: denials would go to the host's audit log, not to the
         * user, and glibc's clone3 probe alone would flood it. */
        if (sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                return rtn_err(err, errno, "seccomp: install %s filter",
                               policy == INIT_POLICY_AGENT ? "agent" : "provision");
        return 0;
}
