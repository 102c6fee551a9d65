/* The Landlock part of the command policy. PID 1 builds one ruleset per policy after
 * pivot_root (paths are the sandbox's own), and every command enforces it between fork and
 * execve. The handled-access masks are negotiated from the kernel's ABI with one row per ABI,
 * as the kernel's samples/landlock/sandboxer.c does, so an older kernel gets the strongest
 * policy it can express and a newer one never sees bits it would reject. docs/policy.md has
 * the table and the reasons for each rule. */
#include "init/policy.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/syscall.h"

#include "init/landlock_rules.h"

int init_landlock_abi(void) {
        static int known; /* asked once per process: at READY and per ruleset */
        if (known > 0)
                return known;
        int abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0)
                return negative_errno();
        return known = abi;
}

/* Opens path for a rule of *access: a directory gets every right asked, anything else only
 * the file rights (the rest would be EINVAL), narrowing *access. The type comes from the
 * open, without a stat: none where the rights are a file's alone (either type gets them
 * all), O_DIRECTORY where they are more, unless type (a dirent's d_type, DT_UNKNOWN when not
 * known) says a file. Should the path change type between the opens, it gets fewer rights,
 * never more. openat, here and in all of rtn-init: musl's open() follows an O_CLOEXEC open
 * with fcntl(F_SETFD), a second system call per path (tests/integration/exec_coldpath.sh). */
static int open_for_rule(const char *path, unsigned char type, uint64_t *access) {
        if (type != DT_UNKNOWN && type != DT_DIR)
                *access &= FS_FILE_RIGHTS;
        if (!(*access & ~FS_FILE_RIGHTS))
                return openat(AT_FDCWD, path, O_PATH | O_CLOEXEC);
        int fd = openat(AT_FDCWD, path, O_PATH | O_CLOEXEC | O_DIRECTORY);
        if (fd >= 0 || errno != ENOTDIR)
                return fd;
        *access &= FS_FILE_RIGHTS;
        return openat(AT_FDCWD, path, O_PATH | O_CLOEXEC);
}

static int add_rule_typed(int ruleset, const char *path, unsigned char type, uint64_t access,
                          uint64_t handled, bool optional, struct rtn_error *err) {
        _cleanup_close_ int fd = open_for_rule(path, type, &access);
        if (fd < 0) {
                if (optional && errno == ENOENT)
                        return 0;
                return rtn_err(err, errno, "landlock: open %s", path);
        }
        struct landlock_path_beneath_attr rule = {
                .allowed_access = access & handled,
                .parent_fd = fd,
        };
        if (rule.allowed_access == 0)
                return 0; /* nothing this kernel can grant: the rule would be EINVAL */
        if (sys_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
                return rtn_err(err, errno, "landlock: add rule for %s", path);
        return 0;
}

static int add_path_rule(int ruleset, const char *path, uint64_t access, uint64_t handled,
                         bool optional, struct rtn_error *err) {
        return add_rule_typed(ruleset, path, DT_UNKNOWN, access, handled, optional, err);
}

static int add_read_rules(int ruleset, uint64_t handled, unsigned flags, struct rtn_error *err) {
        if (!(flags & INIT_LANDLOCK_HOST))
                return add_path_rule(ruleset, "/", FS_RX, handled, false, err);
        for (size_t i = 0; i < ARRAY_SIZE(host_read); i++) {
                int r = add_path_rule(ruleset, host_read[i], FS_RX, handled, true, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* path equals dir or lies below it (absolute, canonical, no trailing slash but "/"). */
static bool is_under(const char *path, const char *dir) {
        size_t n = strlen(dir);
        if (n == 1)
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* "all rights beneath dir, but only read beneath each of except[]": Landlock only adds
 * rights, and a right on a directory holds for everything beneath it, so this is built as
 * all rights on each directory that holds none of them; read rights on the ones that are one
 * or lead to one, and then the same for each entry of the latter (a file gets its own rule,
 * a symlink none: its target has the rules of where it lies). So the directories on the way
 * to an exception keep their entries: nothing there can be renamed, removed or created.
 * Used for provisioning (all of / but the host directories) and, in --isolation landlock,
 * for the agent's workspace (all of it but what runtime/sandbox/protect.c found). dir is a PATH_MAX
 * buffer, changed during the walk and restored. */
struct all_but {
        int ruleset;
        uint64_t all, handled;
        const char *const *except;
        size_t n;
        struct rtn_error *err;
        bool required; /* the top directory must exist (a writable one) */
};

static int add_entry(const struct all_but *a, char *dir, unsigned char type, unsigned depth);

static int add_all_but(const struct all_but *a, char *dir, unsigned depth) {
        bool self = false, below = false, optional = depth > 0 || !a->required;
        for (size_t i = 0; i < a->n; i++) {
                self |= !strcmp(a->except[i], dir);
                below |= is_under(a->except[i], dir) && strcmp(a->except[i], dir);
        }
        if (!self && !below)
                return add_path_rule(a->ruleset, dir, a->all, a->handled, optional, a->err);
        int r = add_path_rule(a->ruleset, dir, FS_RX, a->handled, optional, a->err);
        if (r < 0 || self)
                return r;
        if (depth > 64)
                return rtn_errx(a->err, ELOOP, "landlock: %s is nested too deep", dir);
        _cleanup_close_ int fd = openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return rtn_err(a->err, errno, "landlock: open %s", dir);
        size_t len = strlen(dir);
        char buf[4096];
        ssize_t got;
        while ((got = sys_getdents64(fd, buf, sizeof buf)) > 0) {
                for (ssize_t off = 0; off < got && r >= 0;) {
                        const struct dirent64 *d = (const void *)(buf + off);
                        off += d->d_reclen;
                        if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
                                continue;
                        if (len + strlen(d->d_name) + 2 > PATH_MAX)
                                return rtn_errx(a->err, ENAMETOOLONG, "landlock: below %s", dir);
                        snprintf(dir + len, PATH_MAX - len, "%s%s", len > 1 ? "/" : "", d->d_name);
                        r = add_entry(a, dir, d->d_type, depth);
                        dir[len] = '\0';
                }
                if (r < 0)
                        return r;
        }
        if (got < 0)
                return rtn_err(a->err, errno, "landlock: read %s", dir);
        return 0;
}

/* type: the entry's d_type; a file system that does not fill it in (DT_UNKNOWN) costs an
 * lstat. */
static int add_entry(const struct all_but *a, char *path, unsigned char type, unsigned depth) {
        struct stat st;
        if (type == DT_UNKNOWN) {
                if (lstat(path, &st) < 0)
                        return 0; /* gone */
                type = IFTODT(st.st_mode);
        }
        if (type == DT_LNK)
                return 0; /* a symlink: nothing to grant */
        if (type == DT_DIR)
                return add_all_but(a, path, depth + 1);
        for (size_t i = 0; i < a->n; i++)
                if (!strcmp(a->except[i], path))
                        return add_rule_typed(a->ruleset, path, type, FS_RX, a->handled, true,
                                              a->err);
        return add_rule_typed(a->ruleset, path, type, a->all, a->handled, true, a->err);
}

static int check_absolute(const char *const paths[], size_t n, const char *what,
                          struct rtn_error *err) {
        for (size_t i = 0; i < n; i++)
                if (!paths[i] || paths[i][0] != '/')
                        return rtn_errx(err, EINVAL, "landlock: %s path %s is not absolute", what,
                                        paths[i] ? paths[i] : "(null)");
        return 0;
}

static int add_provision_rules(int ruleset, uint64_t handled, const char *const except[], size_t n,
                               struct rtn_error *err) {
        struct all_but a = {ruleset, handled, handled, except, n, err, false};
        char dir[PATH_MAX] = "/";
        int r = check_absolute(except, n, "read-only", err);
        return r < 0 ? r : add_all_but(&a, dir, 0);
}

static int add_agent_rules(int ruleset, uint64_t handled, unsigned flags,
                           const char *const writable[], size_t n, const char *const except[],
                           size_t nexcept, struct rtn_error *err) {
        int r = add_read_rules(ruleset, handled, flags, err);
        if (r < 0 || (r = check_absolute(writable, n, "writable", err)) < 0 ||
            (r = check_absolute(except, nexcept, "read-only", err)) < 0)
                return r;
        struct all_but a = {ruleset, AGENT_WRITE_RIGHTS, handled, except, nexcept, err, true};
        if (flags & INIT_LANDLOCK_ROOTFS) {
                struct all_but root = {ruleset,       AGENT_WRITE_RIGHTS,        handled,
                                       rootfs_closed, ARRAY_SIZE(rootfs_closed), err,
                                       false};
                char dir[PATH_MAX] = "/";
                if ((r = add_all_but(&root, dir, 0)) < 0)
                        return r;
        }
        for (size_t i = 0; i < n; i++) { /* each must exist (all_but.required) */
                char dir[PATH_MAX];
                if (strlen(writable[i]) >= sizeof dir)
                        return rtn_errx(err, ENAMETOOLONG, "landlock: %s", writable[i]);
                strcpy(dir, writable[i]);
                if ((r = add_all_but(&a, dir, 0)) < 0)
                        return r;
        }
        for (size_t i = 0; i < ARRAY_SIZE(dev_rules); i++) {
                if (dev_rules[i].ns && (flags & INIT_LANDLOCK_HOST))
                        continue;
                r = add_path_rule(ruleset, dev_rules[i].path, dev_rules[i].access, handled, true,
                                  err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Provisioning fetches packages through rtn's proxy only: connect to proxy_port, bind
 * nothing (maintainer scripts have no business starting listeners). */
static int add_provision_net_rules(int ruleset, uint16_t proxy_port, struct rtn_error *err) {
        if (proxy_port == 0)
                return 0;
        struct rtn_landlock_net_port_attr rule = {
                .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
                .port = proxy_port,
        };
        if (sys_landlock_add_rule(ruleset, LANDLOCK_RULE_NET_PORT, &rule, 0) < 0)
                return rtn_err(err, errno, "landlock: allow connect to port %u", proxy_port);
        return 0;
}

int init_landlock_prepare(enum init_policy policy, const char *const paths[], size_t n,
                          uint16_t proxy_port, unsigned flags, int *ret_ruleset_fd,
                          struct rtn_error *err) {
        return init_landlock_prepare_except(policy, paths, n, NULL, 0, proxy_port, flags,
                                            ret_ruleset_fd, err);
}

int init_landlock_prepare_except(enum init_policy policy, const char *const paths[], size_t n,
                                 const char *const except[], size_t nexcept, uint16_t proxy_port,
                                 unsigned flags, int *ret_ruleset_fd, struct rtn_error *err) {
        if (policy != INIT_POLICY_AGENT && policy != INIT_POLICY_PROVISION)
                return rtn_errx(err, EINVAL, "landlock: unknown policy %d", (int)policy);
        if (flags & ~(unsigned)(INIT_LANDLOCK_SCOPED | INIT_LANDLOCK_HOST | INIT_LANDLOCK_ROOTFS))
                return rtn_errx(err, EINVAL, "landlock: unknown flags %#x", flags);
        if ((flags & INIT_LANDLOCK_ROOTFS) &&
            (policy != INIT_POLICY_AGENT || (flags & INIT_LANDLOCK_HOST)))
                return rtn_errx(err, EINVAL,
                                "landlock: a writable rootfs is for the agent "
                                "in namespaces only");
        if (policy == INIT_POLICY_PROVISION && (flags & INIT_LANDLOCK_HOST))
                return rtn_errx(err, EINVAL, "landlock: no provisioning without namespaces");
        int abi = init_landlock_abi();
        if (abi < 0)
                return rtn_err(err, abi, "landlock: not available");
        if (abi == 0)
                return rtn_errx(err, EOPNOTSUPP, "landlock: kernel reports ABI 0");
        struct rtn_landlock_ruleset_attr attr = abi_masks[abi > ABI_KNOWN ? ABI_KNOWN : abi];
        /* The agent's network is the sandbox's loopback-only netns, and the servers it starts
         * on 127.0.0.1 must be reachable from its next command: TCP is not handled, so not
         * restricted. Provisioning handles both bind and connect (see above). Without a
         * netns (INIT_LANDLOCK_HOST) TCP is handled with no rule: the host's network is
         * closed to TCP entirely. */
        if (policy == INIT_POLICY_AGENT && !(flags & INIT_LANDLOCK_HOST))
                attr.handled_access_net = 0;
        /* Pathname unix sockets likewise: in a full sandbox every path the agent reaches is
         * the sandbox's own. Without namespaces (ABI >= 9) only sockets beneath the writable
         * dirs (or made in the command's own domain) may be connected to: not the host's
         * D-Bus or docker.sock. */
        if (!(flags & INIT_LANDLOCK_HOST))
                attr.handled_access_fs &= ~LANDLOCK_ACCESS_FS_RESOLVE_UNIX;
        /* Inside a full sandbox the pid and net namespaces already keep signals and abstract
         * sockets away from the host, and every command is its own Landlock domain: scoping
         * would stop a later command from killing (or connecting to) an earlier job's
         * processes in the same sandbox. So scope only where asked (no namespaces). */
        if (!(flags & INIT_LANDLOCK_SCOPED))
                attr.scoped = 0;
        _cleanup_close_ int ruleset = sys_landlock_create_ruleset(&attr, sizeof attr, 0);
        if (ruleset < 0)
                return rtn_err(err, errno, "landlock: create ruleset (ABI %d)", abi);
        int r;
        if (policy == INIT_POLICY_AGENT)
                r = add_agent_rules(ruleset, attr.handled_access_fs, flags, paths, n, except,
                                    nexcept, err);
        else {
                r = add_provision_rules(ruleset, attr.handled_access_fs, except, nexcept, err);
                if (r >= 0 && attr.handled_access_net)
                        r = add_provision_net_rules(ruleset, proxy_port, err);
        }
        if (r < 0)
                return r;
        *ret_ruleset_fd = TAKE_FD(ruleset);
        return 0;
}

int init_landlock_enforce(int ruleset_fd, struct rtn_error *err) {
        if (ruleset_fd < 0)
                return rtn_errx(err, EBADF, "landlock: no ruleset");
        /* Flags 0: at ABI 7 that logs denials only until execve (the default), so the user's
         * program does not fill the host's audit log. */
        if (sys_landlock_restrict_self(ruleset_fd, 0) < 0)
                return rtn_err(err, errno, "landlock: restrict self");
        return 0;
}
