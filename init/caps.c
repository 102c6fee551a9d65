/* Drops every capability of an agent command that runs as uid 0 inside the sandbox. In a user
 * namespace uid 0 holds all capabilities over the namespace's objects, and execve would give
 * them back to a uid-0 process even after capset (capabilities(7), "Capabilities and
 * execution of programs by root"); so the securebits that stop that are set and locked
 * first, then the bounding, ambient and the three per-thread sets are emptied. The order
 * follows minijail's drop_caps / systemd's capability_bounding_set_drop. */
#include "init/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/syscall.h"

#define WANT_SECUREBITS                                                                            \
        (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                           \
         SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |   \
         SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/* True when the caller can never hold a capability again: no uid is 0 and the permitted set
 * is empty. setuid back to 0 needs CAP_SETUID, and the only other way in — execve of a setuid
 * or file-capability binary — is closed by no_new_privs, which rtn-init sets next. */
static bool unprivileged_for_good(void) {
        uid_t r, e, s;
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
        if (getresuid(&r, &e, &s) < 0 || r == 0 || e == 0 || s == 0 || setfsuid(-1) == 0)
                return false;
        if (sys_capget(&hdr, data) < 0)
                return false;
        for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
                if (data[i].permitted)
                        return false;
        return true;
}

/* keep: the capabilities a --user root agent holds (INIT_CAPS_ROOT); then uid 0 must get them
 * back at each execve, so NOROOT stays off: the bounding set, emptied of everything else, is
 * what bounds what an execve by uid 0 gives. */
static int lock_securebits(uint64_t keep, struct rtn_error *err) {
        int cur = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        if (cur < 0)
                return rtn_err(err, errno, "caps: PR_GET_SECUREBITS");
        /* Keep bits we do not know about (e.g. SECBIT_EXEC_RESTRICT_FILE), clear KEEP_CAPS. */
        int bits =
                keep ? WANT_SECUREBITS & ~(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED) : WANT_SECUREBITS;
        int want = (cur | bits) & ~SECBIT_KEEP_CAPS;
        if (cur == want)
                return 0;
        if (prctl(PR_SET_SECUREBITS, want, 0, 0, 0) == 0)
                return 0;
        /* Setting them needs CAP_SETPCAP, gone once rtn-init has switched to a non-zero agent
         * uid; the bits only govern how uid 0 gains capabilities, which such a process never
         * can. Anything else is a failure. */
        if (errno == EPERM && unprivileged_for_good())
                return 0;
        return rtn_err(err, errno, "caps: set securebits 0x%x (have 0x%x)", want, cur);
}

/* The calling thread's bounding set from /proc/thread-self/status ("CapBnd:"), one open and
 * read instead of a PR_CAPBSET_READ per capability; < 0 where /proc cannot tell. */
static int read_bounding(uint64_t *ret) {
        int fd = openat(AT_FDCWD, "/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        const char *p = strstr(buf, "\nCapBnd:\t");
        char *end;
        if (!p)
                return -EIO;
        errno = 0;
        unsigned long long v = strtoull(p + 9, &end, 16);
        if (errno || end == p + 9 || *end != '\n')
                return -EIO;
        *ret = v;
        return 0;
}

/* Drops from the bounding set every capability not in keep. Each PR_CAPBSET_DROP replaces
 * the task's credentials (prepare_creds, commit_creds, an RCU free: ~1.5 µs here), even for
 * a capability already gone, and needs CAP_SETPCAP even then; so only present ones are
 * dropped. Which are present is read from /proc at once, and read again after: a bit left
 * there that keep does not hold is a failure. Without /proc, each bit is read with
 * PR_CAPBSET_READ up to the first the kernel does not know. */
static int limit_bounding(uint64_t keep, struct rtn_error *err) {
        uint64_t bnd;
        if (read_bounding(&bnd) == 0) {
                for (unsigned long cap = 0; cap < 64; cap++)
                        if ((bnd >> cap) & 1 && !((keep >> cap) & 1) &&
                            prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                                return rtn_err(err, errno, "caps: drop cap %lu from bounding set",
                                               cap);
                int r = read_bounding(&bnd);
                if (r < 0)
                        return rtn_err(err, -r, "caps: read the bounding set back");
                if (bnd & ~keep)
                        return rtn_errx(err, EPERM, "caps: bounding set %#llx after the drop",
                                        (unsigned long long)bnd);
                return 0;
        }
        for (unsigned long cap = 0;; cap++) {
                int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
                if (r < 0 && errno == EINVAL)
                        return 0; /* past CAP_LAST_CAP of the running kernel */
                if (r < 0)
                        return rtn_err(err, errno, "caps: read bounding cap %lu", cap);
                if (r == 1 && !(cap < 64 && (keep >> cap) & 1) &&
                    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                        return rtn_err(err, errno, "caps: drop cap %lu from bounding set", cap);
        }
}

/* A caller that will run as a non-zero uid must empty the bounding set before its setuid (as
 * rtn-init's set_creds does); here a capability left in it is a failure. */
int init_caps_drop_bounding(struct rtn_error *err) {
        return limit_bounding(0, err);
}

int init_caps_limit_bounding(struct rtn_error *err) {
        return limit_bounding(INIT_CAPS_PROVISION, err);
}

int init_caps_drop_all(uint64_t keep, struct rtn_error *err) {
        keep &= INIT_CAPS_ROOT;
        int r = lock_securebits(keep, err);
        if (r < 0)
                return r;
        r = limit_bounding(keep, err);
        if (r < 0)
                return r;
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return rtn_err(err, errno, "caps: clear ambient set");
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
        for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
                data[i].effective = data[i].permitted = (uint32_t)(keep >> (32 * i));
        if (sys_capset(&hdr, data) < 0)
                return rtn_err(err, errno, "caps: clear effective/permitted/inheritable");
        /* Read back: a kernel that silently kept something must not pass. */
        if (sys_capget(&hdr, data) < 0)
                return rtn_err(err, errno, "caps: capget");
        for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
                if ((data[i].effective | data[i].permitted) & ~(uint32_t)(keep >> (32 * i)) ||
                    data[i].inheritable)
                        return rtn_errx(err, EPERM, "caps: capabilities still set after capset");
        return 0;
}

int init_caps_check_none(struct rtn_error *err) {
        if (!unprivileged_for_good())
                return rtn_errx(err, EPERM,
                                "caps: a non-root command still holds capabilities "
                                "or a uid 0");
        return 0;
}
