/* Internals shared by the runtime module: the plan the parent prepares (everything opened by fd
 * before clone3) and the child's setup steps. */
#pragma once

#include <sys/resource.h>

#include "runtime/runtime.h"

#define RT_MAX_HOSTDIRS 12

struct rt_hostdir {
        char name[16]; /* "usr", "etc", "lib64"... (top-level entry) */
        int fd; /* O_PATH dir fd, or -1 when the entry is a symlink */
        char link[128]; /* symlink target when fd < 0 */
};

/* The child's private tmpfs stage, where the new root is assembled (runtime/sandbox/mount.c). */
#define RT_STAGE "/tmp"

/* A sandbox's share of a per-user kernel budget: its user namespace's /proc/sys/user/<name>
 * (runtime/sandbox/budget.c). */
#define RT_MAX_BUDGETS 24
#define RT_BUDGET_SHARE 8 /* each sandbox may hold 1/8 of what its owner may */
struct rt_budgets {
        struct {
                char name[40];
                unsigned long long max;
        } b[RT_MAX_BUDGETS];
        size_t n;
};

struct rt_plan {
        const struct rt_spec *spec;
        const struct rt_budgets *budgets; /* the sandbox's shares (rt_budgets_get) */
        const struct rt_idmap *idmap;
        int base_fd; /* rootfs dir, -1 for the host base */
        struct rt_hostdir host[RT_MAX_HOSTDIRS];
        size_t nhost;
        int layer_fds[RT_MAX_LAYERS]; /* newest first */
        size_t nlayers;
        int workspace_fd;
        int workspace_tree; /* idmapped detached mount (root only), or -1 */
        int ws_lower_fd; /* overlay workspace: ws_dir's ws/upper (--keep's earlier changes) */
        int bind_fds[RT_MAX_BINDS];
        int bind_trees[RT_MAX_BINDS]; /* idmapped detached mounts of rw binds (root), or -1 */
        int init_fd; /* sealed memfd of rtn-init */
        int ctl_fd; /* child's end of the control socket */
        const char *home; /* HOME inside for agent commands */
        struct rt_protect_report *protect; /* shared with rtn: what rt_protect_bind made */
        /* What git's configuration and --protect name in each live bind (runtime/sandbox/
         * gitconf.h), made before clone3: [0] the workspace, [1 + i] binds[i] */
        struct rt_pathlist *listed;
};

/* The network namespace, sent to the child right behind GO (runtime/sandbox/sandbox.c, make_netns):
 * with SCM_RIGHTS when error is 0, else message says why none was made. */
#define RT_NETNS_TAG 'N'
struct rt_netns_msg {
        char tag;
        int error;
        char message[256];
};

/* A kept upper the child made (spec.upper_keep without upper_fs), sent to rtn with its fd
 * (SCM_RIGHTS) before rtn-init starts. */
#define RT_UPPER_TAG 'U'
struct rt_upper_msg {
        char tag;
};

/* Child side, between clone3 and fexecve: build the root, pivot, exec rtn-init. Never
 * returns on success; on failure fills err. */
int rt_child_build_root(const struct rt_plan *plan, struct rtn_error *err);
/* The sandbox's passwd, group, hostname and hosts on the stage (runtime/sandbox/identity.c):
 * rt_identity_make writes them, rt_identity_lower names their directory (a lower layer of
 * /etc just above the base), rt_identity_bind binds hostname and hosts read-only over the
 * new root's. */
int rt_identity_make(const struct rt_plan *plan, struct rtn_error *err);
const char *rt_identity_lower(void);
int rt_identity_bind(const char *newroot, struct rtn_error *err);
/* --secret (spec.ca_pem): writes the trust store the sandbox sees at RT_CA_BUNDLE to path
 * (in the skeleton layer, so it is never a change of the sandbox's). */
int rt_identity_ca_bundle(const struct rt_plan *plan, const char *path, struct rtn_error *err);
int rt_child_exec_init(const struct rt_plan *plan, struct rtn_error *err);

/* The walk of a live host bind for what the host runs by itself (runtime/sandbox/protect.c): fn
 * gets each entry to protect, relative to the top, in an order where a directory comes before what
 * lies below it; *ret_whole says the top is a git dir itself (then fn got nothing). Bounded; fails
 * closed (E2BIG) beyond. It allocates nothing on the heap. */
enum rt_protect_kind {
        RT_PROTECT_PIN, /* a directory on the way to a protected entry: must not move */
        RT_PROTECT_RO, /* a protected file or directory: read-only, must not move */
        RT_PROTECT_LINK, /* a protected symlink: must not be replaced or removed */
        RT_PROTECT_UNREADABLE, /* a directory the walk cannot read: might hold a repository */
};
typedef int (*rt_protect_fn)(void *arg, const char *rel, enum rt_protect_kind kind,
                             struct rtn_error *err);
int rt_protect_walk(int top, const char *shown, rt_protect_fn fn, void *arg, bool *ret_whole,
                    struct rtn_error *err);
/* The same, the top walked even where it looks like a git dir itself (what a command made
 * of a workspace that was not one at its start). */
int rt_protect_walk_through(int top, const char *shown, rt_protect_fn fn, void *arg,
                            struct rtn_error *err);
/* Child side: protects what the host runs by itself in the read-write host bind attached at
 * path (shown: its mount point inside) with read-only bind mounts of each entry and pins of
 * the directories on the way (runtime/sandbox/protect.c), then the paths of listed (git's
 * configuration and --protect: runtime/sandbox/gitconf.h; may be NULL); stand_in caches the empty
 * file mounted over protected symlinks (-1 at first; the caller closes it). ret says what was made.
 */
struct rt_pathlist;
/* Parent side (runtime/sandbox/protectlist.c): the lists of plan.listed, for the live workspace
 * and each rw bind, or an error that says which path could not be protected; freed with
 * rt_protect_lists_free. rt_protect_check refuses a --protect path outside them all. */
int rt_protect_lists(const struct rt_spec *spec, struct rt_pathlist **ret, struct rtn_error *err);
void rt_protect_lists_free(struct rt_pathlist *lists);
int rt_protect_check(const struct rt_spec *spec, struct rtn_error *err);
int rt_protect_bind(const char *path, const char *shown, const struct rt_pathlist *listed,
                    int *stand_in, struct rt_protect_bind *ret, struct rtn_error *err);

/* Parent side: a sealed memfd holding rtn-init (runtime/sandbox/initfd.c): made in one go, or
 * created empty before clone3 and filled and sealed once the child holds it. The child
 * checks the seals before it executes the memfd. */
int rt_init_memfd(struct rtn_error *err);
int rt_init_memfd_new(struct rtn_error *err);
int rt_init_memfd_fill(int fd, struct rtn_error *err);
int rt_init_memfd_check(int fd, struct rtn_error *err);

/* Root only: a detached, idmapped clone of the mount of fd (O_PATH is enough) that the agent
 * owns; path only names it in errors. */
int rt_idmapped_tree_at(int fd, const char *path, const struct rt_idmap *m, struct rtn_error *err);

/* "/proc/self/fd/N" for fd into buf. */
const char *rt_fdpath(char buf[32], int fd);

/* Child side, before building the root: oom_score_adj 1000, so under memory pressure the
 * kernel kills the sandbox first (runtime/sandbox/limits.c). */
int rt_child_limits(const struct rt_plan *plan, struct rtn_error *err);
/* Once /proc is mounted: the pid namespace's pid_max (spec->pids_max) through proc (the
 * sandbox's own procfs, or the host's where it had to be bound), else RLIMIT_NPROC =
 * spec->pids_max. */
int rt_child_pid_max(const struct rt_plan *plan, const char *proc, struct rtn_error *err);

/* Per-user kernel budgets (runtime/sandbox/budget.c): rtn's shares, read once; the child writes
 * them into its user namespace through proc (its own procfs, as pid_max) once it is inside
 * root; rtn's soft rlimits that the kernel copies
 * into a new user namespace's budget are lowered to the share around clone3. */
const struct rt_budgets *rt_budgets_get(void);
int rt_child_budgets(const struct rt_plan *plan, const char *proc, struct rtn_error *err);
#define RT_SHARED_RLIMITS 3
struct rt_rlimit_saved {
        struct rlimit saved[RT_SHARED_RLIMITS];
        bool ok[RT_SHARED_RLIMITS];
};
void rt_rlimit_shares_lower(struct rt_rlimit_saved *ret);
void rt_rlimit_shares_restore(const struct rt_rlimit_saved *saved);

/* Parent side: the configuration exchange with a started rtn-init (runtime/sandbox/sandbox.c).
 * rt_recv_typed reads one message of the given type and exactly len bytes into out, and
 * returns len; a sandbox child's SETUP_FAILED instead becomes the error it carries. */
int rt_recv_typed(struct rt_sandbox *sb, void *out, size_t len, uint32_t type, const char *what,
                  struct rtn_error *err);
/* Sends rtn-init its configuration and waits for the reply: rt_config_send, then
 * rt_config_wait (the two halves, for callers that queue more behind the CONFIG message). */
int rt_config_exchange(struct rt_sandbox *sb, const struct rt_spec *s, const char *const readonly[],
                       uint32_t nreadonly, struct rtn_error *err);
/* The CONFIG message; the wait for rtn-init's CONFIGURED reply. */
int rt_config_send(struct rt_sandbox *sb, const struct rt_spec *s, const char *const readonly[],
                   uint32_t nreadonly, struct rtn_error *err);
int rt_config_wait(struct rt_sandbox *sb, struct rtn_error *err);
/* Asks rtn-init for the provisioning gate: its listener arrives with SCM_RIGHTS and becomes
 * sb->gate_fd, its port sb->gate_port. */
int rt_sandbox_open_gate(struct rt_sandbox *sb, struct rtn_error *err);

/* The second half of rt_session_ensure: the session takes over sb, a started sandbox, and
 * watches its control socket on the loop (runtime/session/session.c). fuzz/fuzz_session.c attaches
 * one whose rtn-init it plays itself. */
struct rt_session;
int rt_session_attach(struct rt_session *s, const struct rt_sandbox *sb, struct rtn_error *err);

/* --isolation landlock: rtn-init on the host, no namespaces (runtime/sandbox/landlock_only.c). */
int rt_landlock_only_start(const struct rt_spec *spec, struct rt_sandbox *sb,
                           struct rtn_error *err);
void rt_landlock_only_destroy(struct rt_sandbox *sb);
/* --isolation landlock has no mounts: "/workspace" and the paths below it (and, with
 * relative, a relative path, which the file tools take as one below it) name the same place
 * under the workspace's host path, so the tools' defaults and an agent's habits hold there
 * too. path itself in any other mode or for any other path, buf when rewritten, NULL when
 * the result would not fit in cap. */
const char *rt_landlock_path(const struct rt_sandbox *sb, const char *path, bool relative,
                             char *buf, size_t cap);

/* Parent side: the sandbox's cgroup (runtime/sandbox/cgroup.c). create makes rtn-<pid>-<n> with the
 * limits of spec when cgroup v2 is writable for us (ret->on false otherwise); destroy kills
 * what is left in it (cgroup.kill) and removes it. */
int rt_cgroup_create(const struct rt_spec *spec, struct rt_cgroup *ret, struct rtn_error *err);
void rt_cgroup_destroy(struct rt_cgroup *cg);
void rt_cgroup_release(struct rt_cgroup *cg, int pidfd);
