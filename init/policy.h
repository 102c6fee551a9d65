/* The confinement rtn-init applies to every command, between fork and execve, in this order
 * (docs/policy.md says why):
 *   setsid → stdio → close_range(3, ~0, CLOSE_RANGE_CLOEXEC) → chdir → init_rlimits_apply →
 *   credentials (init_caps_drop_bounding before a switch to a non-zero uid, then
 *   init_caps_check_none; init_caps_drop_all for an agent left at uid 0) →
 *   PR_SET_NO_NEW_PRIVS → init_landlock_enforce →
 *   [init_seccomp_install_host_net in --isolation landlock] → init_seccomp_install (last) →
 *   execve.
 * init_landlock_prepare runs once in PID 1 after pivot_root; its ruleset fd is enforced by
 * every command. None of these allocate; all are fail-closed: any error is returned (and
 * described in err), and the caller must kill the command rather than exec it. */
#pragma once

#include <linux/capability.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/initproto.h" /* enum init_policy, struct init_limits */

/* The Landlock ABI version of the running kernel (> 0), or -EOPNOTSUPP (built in but
 * disabled at boot) / -ENOSYS (not built in). */
int init_landlock_abi(void);

/* Build the ruleset for a policy and return its fd (O_CLOEXEC) in *ret_ruleset_fd.
 * AGENT: read+exec on "/", full rights (but mknod of devices) beneath each of paths[0..n)
 * (the writable paths: absolute paths inside the sandbox that must exist), read/write on the
 * /dev nodes a shell needs (ioctl on tty, ptmx and pts at ABI >= 5). PROVISION: everything
 * beneath "/" (paths unused).
 * ABI >= 4 (TCP): the agent is not restricted (its netns has only lo, and servers it starts
 * on 127.0.0.1 must be reachable); provisioning may connect only to proxy_port (0: nowhere)
 * and bind nothing. flags:
 *   INIT_LANDLOCK_SCOPED  (ABI >= 6) abstract unix sockets and signals scoped to the domain;
 *   INIT_LANDLOCK_HOST    no mount/net namespace around us (--isolation landlock): read+exec
 *                         only on the host's system dirs and /proc instead of "/", the
 *                         agent's TCP bind/connect handled with no rule (all denied), none
 *                         of the host's /dev/ptmx, /dev/pts and /dev/shm, and (ABI >= 9)
 *                         connect to pathname unix sockets only beneath paths[].
 *   INIT_LANDLOCK_ROOTFS  (AGENT, --user root) also every right but mknod of devices on all
 *                         of "/" except rootfs_closed[] (/proc, /sys, /dev: the kernel's
 *                         files and the nodes above, whose owner checks alone would let
 *                         uid 0 inside write some), which keep read+exec, as does "/" itself.
 * Fails with -EOPNOTSUPP/-ENOSYS when the kernel has no Landlock. */
enum init_landlock_flags {
        INIT_LANDLOCK_SCOPED = 1u << 0,
        INIT_LANDLOCK_HOST = 1u << 1,
        INIT_LANDLOCK_ROOTFS = 1u << 2,
};
int init_landlock_prepare(enum init_policy policy, const char *const paths[], size_t n,
                          uint16_t proxy_port, unsigned flags, int *ret_ruleset_fd,
                          struct rtn_error *err);
/* The same, but beneath each of except[0..nexcept) (absolute) only reading, and the
 * directories on the way to one keep their entries (nothing renamed, removed or created
 * there; landlock.c, add_all_but). PROVISION: the host directories (the workspace, rw binds),
 * where its writes would reach the host. AGENT in --isolation landlock: the protected
 * entries of the workspace (runtime/sandbox/protect.c), which mounts protect in a full sandbox. */
int init_landlock_prepare_except(enum init_policy policy, const char *const paths[], size_t n,
                                 const char *const except[], size_t nexcept, uint16_t proxy_port,
                                 unsigned flags, int *ret_ruleset_fd, struct rtn_error *err);

/* landlock_restrict_self(ruleset_fd). Needs no_new_privs (or CAP_SYS_ADMIN); the fd is left
 * open for the next command. */
int init_landlock_enforce(int ruleset_fd, struct rtn_error *err);

/* Install the precompiled filter for policy with seccomp(SECCOMP_SET_MODE_FILTER). Refuses
 * (-EPERM) unless no_new_privs is already set, so the order above cannot be broken silently.
 * Blocked calls and their errnos: docs/policy.md. */
int init_seccomp_install(enum init_policy policy, struct rtn_error *err);
/* --isolation landlock, before the agent's filter: the host's network is ruled by Landlock
 * for TCP only, so this one lets socket(2) make TCP and NETLINK_ROUTE sockets of AF_INET,
 * AF_INET6 and AF_NETLINK and refuses the rest of them (UDP, raw, ICMP, SCTP, MPTCP, other
 * netlink families) with EACCES (tools/gen-seccomp.c, build_host_net). */
int init_seccomp_install_host_net(struct rtn_error *err);
/* From the configuration: agent filters allow ptrace of the sandbox's own processes. */
void init_seccomp_allow_ptrace(bool on);
/* The file server's (init/file_server.c): the agent's plain filter with openat2 allowed, which it
 * resolves every path with (RESOLVE_IN_ROOT) and never passes a mode. */
int init_seccomp_install_files(struct rtn_error *err);

/* The same decisions, but the EPERM-class denials are SECCOMP_RET_USER_NOTIF, installed with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER: *ret_listener gets the listener (O_CLOEXEC), whose owner
 * must answer every notification (init/notify.c answers EPERM). When the kernel refuses a
 * listener (EBUSY: a filter already on this task's stack has one; EMFILE, ENFILE) it installs
 * the plain filter instead and sets *ret_listener to -1: no report, same errnos. */
int init_seccomp_install_notify(enum init_policy policy, int *ret_listener, struct rtn_error *err);

/* Apply l with setrlimit. A field of 0 leaves that limit as inherited, except core_bytes,
 * where 0 means "no core dumps". A limit above the inherited hard limit is clamped to it
 * (raising needs CAP_SYS_RESOURCE in the initial user namespace; the result is stricter). */
int init_rlimits_apply(const struct init_limits *l, struct rtn_error *err);

/* Lock the securebits (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, all
 * locked), then empty the bounding, ambient, inheritable, permitted and effective sets. For
 * the agent policy. keep (0, or INIT_CAPS_ROOT for --user root): these stay in the bounding,
 * permitted and effective sets, and NOROOT is left off so an execve by uid 0 keeps them. As uid 0
 * inside it needs CAP_SETPCAP (it has it). After a setuid to a non-zero uid the securebits cannot
 * be set and are not needed (no uid 0, nothing permitted, no_new_privs next); the bounding set must
 * already be empty then, else -EPERM. */
int init_caps_drop_all(uint64_t keep, struct rtn_error *err);
/* What an agent that is root by choice (--user root, init_config.agent_root) keeps of
 * init_caps_drop_all's keep (anything else asked is dropped too): reading and writing files
 * whatever their mode or owner (apt's _apt-owned 0700 partial dirs), and only files whose
 * owner the sandbox's user namespace maps: the rootfs's, the agent's own and, with a
 * subordinate range, the caller's and the range's; host root's and every unmapped owner's
 * stay out (capable_wrt_inode_uidgid). No CAP_CHOWN (a host file keeps its owner), no
 * CAP_FSETID, CAP_SETUID or CAP_SETFCAP, and the filter's set-id refusal stands. */
#define INIT_CAPS_ROOT ((1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_FOWNER))
/* The bounding set alone (needs CAP_SETPCAP: before a switch to a non-zero uid). */
int init_caps_drop_bounding(struct rtn_error *err);
/* What a provisioning command (apt, dpkg and their maintainer scripts, as root inside) may
 * hold after execve: the capability set container runtimes give by default (Docker's,
 * crun's), under which package managers work. Everything else is either checked only
 * against the host's user namespace, where no process of the sandbox has it anyway, or not
 * needed to install packages. */
#define INIT_CAPS_PROVISION                                                                        \
        ((1ull << CAP_CHOWN) | (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_FSETID) |                 \
         (1ull << CAP_FOWNER) | (1ull << CAP_MKNOD) | (1ull << CAP_NET_RAW) |                      \
         (1ull << CAP_SETGID) | (1ull << CAP_SETUID) | (1ull << CAP_SETFCAP) |                     \
         (1ull << CAP_SETPCAP) | (1ull << CAP_NET_BIND_SERVICE) | (1ull << CAP_SYS_CHROOT) |       \
         (1ull << CAP_KILL) | (1ull << CAP_AUDIT_WRITE))
/* rtn-init's own bounding set, once at configuration: INIT_CAPS_PROVISION and nothing else.
 * rtn-init keeps its effective capabilities (the bounding set only bounds what an execve
 * may grant), and every command it starts after that has at most these; an agent command
 * then has 14 capabilities to drop instead of 41. */
int init_caps_limit_bounding(struct rtn_error *err);
/* After that switch: fails unless no uid is 0 and nothing is permitted any more (the kernel
 * clears the sets itself on the switch; this checks it did). */
int init_caps_check_none(struct rtn_error *err);
