/* The sandbox runtime: turns a spec (base rootfs, layers, upper, binds, network, hostname)
 * into a running sandbox whose PID 1 is rtn-init, and talks to that init over the control
 * socket (common/initproto.h). Used by `rtn exec` (one command) and by `rtn serve` sessions (many).
 * Every entry point fills a struct rtn_error on failure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/initproto.h"

#define RT_MAX_BINDS 32
#define RT_PROTECT_PATHS_MAX 32 /* --protect */
#define RT_MAX_LAYERS 512
#define RT_DEFAULT_HOSTNAME "rtn"
#define RT_DEFAULT_UPPER_BYTES (2ULL << 30) /* tmpfs upper and /tmp: 2 GiB each */
/* The pid namespace's own pid_max (Linux >= 6.14 namespaces it): at most this many tasks
 * (threads count) exist inside at once, so a fork bomb ends in EAGAIN. The kernel's floor
 * is 301 (RESERVED_PIDS + 1). */
#define RT_DEFAULT_PIDS_MAX 4096
#define RT_MIN_PIDS_MAX 301
/* The uid (and gid) root's commands run as in the Landlock-only mode, where no user namespace
 * can map root away (runtime/sandbox/landlock_only.c): owns nothing, has no passwd entry, and
 * lies just above the block of subordinate ids root's full sandboxes use without an
 * /etc/subuid entry (0x70000000 + 65536). */
#define RT_LANDLOCK_ROOT_UID 0x70010000u

/* How --workspace reaches /workspace (docs/architecture.md, "The workspace"): live, a
 * read-write bind (writes are on the host at once), or overlay, the host dir as the lower
 * layer of an overlay whose upper holds the agent's changes until they are applied
 * (runtime/session/wsover.h). */
enum rt_ws_mode {
        RT_WS_LIVE,
        RT_WS_OVERLAY,
};

struct rt_bind {
        const char *src; /* host path */
        const char *dst; /* absolute path inside */
        bool rw;
        bool mode_given; /* :ro or :rw was written (a file is ro unless asked; rw refused) */
        bool file; /* set by rt_binds_check: src is a regular file, bound read-only */
        uint64_t dev, ino; /* set by rt_binds_check: src must still be this directory */
};

enum rt_idmode {
        RT_IDMAP_SINGLE, /* unprivileged, or root of a user namespace without 65536 ids to
                          * spare: inside 0 <-> the caller, nothing else mapped */
        RT_IDMAP_SUBID, /* unprivileged with /etc/subuid + newuidmap: 65536 ids, 1000 = caller */
        RT_IDMAP_ROOT, /* rtn runs as root: 65536 subordinate ids (of its user namespace's
                        * own where it has no others), never its 0 */
};

struct rt_idmap {
        enum rt_idmode mode;
        uid_t host_uid; /* the caller */
        gid_t host_gid;
        uid_t sub_uid; /* first subordinate id (SUBID/ROOT) */
        gid_t sub_gid;
        uint32_t count; /* ids mapped */
        uid_t agent_uid; /* uid inside that agent commands run as */
        gid_t agent_gid;
        bool agent_drop_caps; /* agent runs as inside 0: strip every capability */
        bool agent_root; /* --user root: the agent may write the rootfs (init_config.agent_root) */
        uid_t caller_uid_in; /* the caller's ids inside (SUBID: 1000; SINGLE: 0), which --user
                              * does not move: the owner of the uppers' tops */
        gid_t caller_gid_in;
        bool ns_single; /* SINGLE for root: its user namespace has no 65536 ids to give */
        bool nnp_single; /* SINGLE although a subordinate range exists: under no_new_privs */
        bool owner; /* SINGLE for root: inside 0 is the owner of the workspace (and read-write
                     * binds), which root could not give its agent through an idmapped mount
                     * (rt_idmap_owner) */
};

struct rt_spec {
        const char *rootfs; /* NULL or "host": allowlisted host dirs; else a rootfs dir */
        const char *const *layers; /* committed layers, newest first (host paths) */
        size_t nlayers;
        /* The upper is a tmpfs of upper_bytes on the sandbox's stage, gone with it, unless
         * upper_keep: then it is a tmpfs of its own that outlives the sandbox (sessions,
         * --keep, --commit; runtime/session/upper.h), upper_fs when an earlier sandbox made one
         * (the fd of its detached mount), else made now of upper_room bytes (0: upper_bytes)
         * and handed to rtn in rt_sandbox.upper_fs. */
        bool upper_keep;
        int upper_fs;
        uint64_t upper_room;
        /* With upper_keep: /tmp is tmp/ on the kept tmpfs (runtime/sandbox/kept.h), kept with
         * the changes and within the same upper_bytes, rather than a tmpfs of its own (rtn
         * serve's sandboxes: their forks and checkpoints hold it too) */
        bool tmp_kept;
        const char *workspace; /* host dir at /workspace (canonical), or NULL */
        uint64_t workspace_dev, workspace_ino; /* set by rt_binds_check, like a bind's */
        /* overlay: the workspace's upper is ws_dir's ws/ (runtime/session/wsover.h), a dir on the
         * stage without ws_dir */
        enum rt_ws_mode workspace_mode;
        /* --workspace-git rw: a live workspace's top .git is writable but for what git reads
         * configuration or programs from (runtime/sandbox/protectlist.c) */
        bool workspace_git_rw;
        const char *ws_dir; /* a session dir or an environment's pending changes, or NULL */
        struct rt_bind binds[RT_MAX_BINDS];
        size_t nbinds;
        /* --protect: more paths of the workspace or a rw bind kept read-only, as git's
         * configuration's are (runtime/sandbox/gitconf.h) */
        const char *const *protect;
        size_t nprotect;
        const char *hostname;
        bool net_none; /* leave lo down */
        uint64_t upper_bytes; /* size of the tmpfs upper (and of /tmp) */
        uint32_t pids_max; /* pid_max of the sandbox's pid namespace */
        uint64_t memory_bytes; /* 0: no limit; else the sandbox cgroup's memory.max when
                                  the controller is ours, else RLIMIT_DATA per process (with a
                                  warning; rt_limits_choose) */
        enum init_isolation isolation;
        struct init_limits limits;
        bool gate; /* open the provisioning gate (init/gate.c) at start */
        /* The policies its commands may be spawned with (INIT_POLICY_BIT), 0 for all: rtn-init
         * builds a Landlock ruleset for each at start (rtn exec: the agent's only) */
        uint32_t policies;
        bool allow_ptrace; /* --allow-ptrace: agent commands may trace the sandbox's own */
        bool user_set; /* --user: agent commands run as user_uid:user_gid inside (rt_idmap_user) */
        uint32_t user_uid, user_gid;
        bool net_proxy; /* --allow-net: a listener for the agent's proxy in the sandbox's
                           netns (rt_sandbox.net_fd; netns/gate.c serves it) */
        const char *ca_pem; /* --secret: the gate's CA certificate, installed in RT_CA_BUNDLE */
};

/* What a sandbox's live read-write host binds protect (runtime/sandbox/protect.c): per bind, the
 * entries host programs run by themselves that were made read-only, and how many
 * directories on the way to them were pinned. Filled by the sandbox child in a mapping it
 * shares with rtn, read by env_status. */
#define RT_PROTECT_LIST 8192
struct rt_protect_bind {
        char mount_point[256]; /* "/workspace", a bind's destination */
        uint32_t nprotected, npinned;
        bool whole; /* the bind is a git dir itself (a bare repository): all read-only */
        bool git_rw; /* --workspace-git rw: its top .git writable, git's configuration not */
        uint32_t nlisted; /* the first of the protected paths, relative to the bind's top: */
        char list[RT_PROTECT_LIST]; /* nlisted NUL-terminated strings */
};
/* Where the host forbids the usual way (a container: /proc masked, /proc/sys read-only), what
 * the child did instead (runtime/sandbox/limits.c, mount.c; docs/containers.md). */
enum rt_proc_kind {
        RT_PROC_FRESH, /* a procfs of the sandbox's own pid namespace */
        RT_PROC_HOST, /* the kernel refused one (masked /proc): the host's /proc, bound */
};
enum rt_pids_route {
        RT_PIDS_PID_MAX, /* the pid namespace's pid_max */
        RT_PIDS_NPROC, /* pid_max could not be written: RLIMIT_NPROC per uid inside */
        RT_PIDS_NPROC_KEPT, /* RLIMIT_NPROC, but the inherited hard limit, lower than asked */
};
struct rt_setup_report {
        enum rt_proc_kind proc;
        enum rt_pids_route pids;
        bool budgets_lost; /* /proc/sys/user/max_* could not be written (read-only) */
        uint64_t nproc_kept, nproc_asked; /* RT_PIDS_NPROC_KEPT: the limit used, the one asked */
        char ro_dirs[64]; /* host dirs bound read-only, not overlaid ("/etc"), or "" */
};
struct rt_protect_report {
        uint32_t n; /* binds[0..n): the workspace first, then rw binds in order */
        struct rt_protect_bind binds[RT_MAX_BINDS + 1];
        struct rt_setup_report setup; /* beside it in the page the child shares with rtn */
};

/* A sandbox's cgroup: a child of rtn's own cgroup, entered by clone3 (CLONE_INTO_CGROUP). */
struct rt_cgroup {
        bool on; /* false: the sandbox runs in rtn's cgroup */
        int fd; /* the cgroup directory (O_RDONLY) */
        char name[48]; /* rtn-<pid>-<n> */
};

struct rt_sandbox {
        pid_t pid; /* rtn-init, in our pid namespace */
        int pidfd;
        int ctl; /* SOCK_SEQPACKET to rtn-init */
        struct rt_idmap idmap;
        int landlock_abi;
        enum init_isolation isolation;
        char home[512]; /* HOME inside for agent commands */
        char workspace[512]; /* the workspace as commands see it ("/workspace" inside a
                                full sandbox; a host path with --isolation landlock) */
        char host_tmp[512]; /* --isolation landlock: private dir (TMPDIR) removed at the end */
        bool remove_workspace; /* --isolation landlock without --workspace: ours to remove */
        int gate_fd; /* the gate's listener (spec.gate), else -1 */
        uint16_t gate_port;
        int net_fd; /* the agent's proxy listener (spec.net_proxy), else -1 */
        uint16_t net_port; /* its port on 127.0.0.1 inside; 0 when there is none */
        struct rt_cgroup cgroup; /* the sandbox's own cgroup v2 (cgroup.on), if any */
        struct rt_protect_report *protect; /* shared with its child; NULL in landlock mode */
        int upper_fs; /* the kept upper this start made (spec.upper_keep), the caller's to
                         close; else -1 */
        char *config_held; /* while rt_sandbox_start_queued's queue runs: the CONFIG message
                              its first spawn request carries (rt_sandbox_spawn); else NULL */
        size_t config_held_len;
};

void rt_spec_init(struct rt_spec *spec);
/* Parses SRC:DST[:ro|rw] (arg is modified and must outlive spec) into a new bind. */
int rt_parse_bind(struct rt_spec *spec, char *arg, struct rtn_error *err);
/* --workspace-mode live|overlay into spec; the name of a mode. */
int rt_parse_ws_mode(struct rt_spec *spec, const char *arg, struct rtn_error *err);
const char *rt_ws_mode_name(enum rt_ws_mode m);
/* Validates user-given parts of a spec (bind destinations, hostname). */
int rt_spec_check(const struct rt_spec *spec, struct rtn_error *err);
/* The first option of SPEC only the sandbox's namespaces can give ("--bind"), with why the
 * Landlock mode cannot (*why); NULL when there is none. One list: the Landlock mode refuses
 * these, and rtn never picks that mode by itself for a spec that has one. */
const char *rt_spec_ns_option(const struct rt_spec *spec, const char **why);

/* Host directory binds (runtime/sandbox/hostpath.c). agent: the request comes from the sandbox's
 * agent (bind_host_dir), which may only name directories below home or below roots (what
 * the user named with --workspace/--bind); otherwise it is the user's own --bind. */
struct rt_hostpath_policy {
        const char *home; /* the caller's $HOME */
        const char *data_dir; /* rtn's data dir, or NULL */
        const char *const *roots; /* canonical host dirs the user named */
        size_t nroots;
        bool agent;
};
struct rt_hostpath {
        int fd; /* O_PATH, opened without crossing a symlink */
        uint64_t dev, ino;
        bool file; /* a regular file (else a directory; nothing else is taken) */
        bool hidden; /* below a hidden directory of $HOME (the user's only): read-only */
};
int rt_hostpath_check(const char *path, const struct rt_hostpath_policy *pol,
                      struct rt_hostpath *ret, struct rtn_error *err);
/* Mount points, canonical: the agent's (bind_host_dir) strictly below /workspace, or /mnt and
 * below; the user's (--bind) anywhere but on, below or above the sandbox's own paths
 * (RTN_SANDBOX_OWN_PATHS) and /workspace itself. */
int rt_mount_point_check(const char *dst, bool agent, struct rtn_error *err);
/* A bind's path as given (in place, into cap bytes): a trailing '/', '.' components and
 * doubled '/' dropped; a relative path (src only: rel_ok) made absolute from the cwd. '..'
 * is refused: below it a symlink would mean another place than the text says. */
/* Records whether b's source is a file (rt_hostpath.file): a file, and a hidden directory of
 * $HOME (rt_hostpath.hidden), is bound read-only, and an explicit :rw for one is refused. */
int rt_bind_mode(struct rt_bind *b, const struct rt_hostpath *hp, struct rtn_error *err);
int rt_bind_path_clean(char *path, size_t cap, bool rel_ok, const char *what,
                       struct rtn_error *err);
/* Checks the user's --workspace and --bind sources (policy not agent: the same refusals and
 * messages for both) and records their identity. */
int rt_binds_check(struct rt_spec *spec, const char *data_dir, struct rtn_error *err);
/* The caller's home for the policy: $HOME when absolute, else the passwd entry of our euid
 * (an MCP client may start rtn without HOME). NULL when neither is known. */
const char *rt_hostpath_home(void);

/* Chooses the id mapping for this caller (rtn's euid, /etc/subuid, newuidmap). */
int rt_idmap_choose(struct rt_idmap *ret, struct rtn_error *err);
/* --user (spec->user_set): the agent runs as user_uid:user_gid of the sandbox's user namespace
 * instead of the mapping's default, with no more than the default agent (uid 0 inside: every
 * capability dropped, as for a caller without a subordinate range). Refused, naming why, when
 * the mapping does not hold the ids (one id, the caller's as 0, without a subordinate range).
 * Nothing when --user was not given. */
int rt_idmap_user(struct rt_idmap *m, const struct rt_spec *spec, struct rtn_error *err);
/* Whether the agent may run as u:g in a sandbox of spec mapped by m (rt_idmap_user's checks,
 * also for one command as root, INIT_POLICY_AGENT_ROOT). */
int rt_idmap_user_check(const struct rt_idmap *m, const struct rt_spec *spec, uint32_t u,
                        uint32_t g, struct rtn_error *err);
/* Parses --user's value: root, UID or UID:GID (GID defaults to UID), each below 65536. */
int rt_user_parse(const char *arg, struct rt_spec *spec, struct rtn_error *err);
struct stat;
/* Root whose idmapped mounts the kernel refuses (a container's root has no CAP_SYS_ADMIN over
 * the host's filesystems): the single mapping of the owner of PATH (st, the directory a
 * sandbox must let its agent write), the agent running as that owner without capabilities,
 * as for an unprivileged caller that owns it. Refused, with what to do, when the owner or,
 * where the owner's passwd entry gives none other, its group is host root's: no sandbox id
 * maps to host id 0. */
int rt_idmap_owner(struct rt_idmap *m, const char *path, const struct stat *st,
                   struct rtn_error *err);
/* The ids of the owner of PATH (st) that a sandbox may run its agent as: rt_idmap_owner's
 * rule, for the Landlock-only mode's root. */
int rt_owner_ids(const char *path, const struct stat *st, uid_t *ret_uid, gid_t *ret_gid,
                 struct rtn_error *err);
/* The uid (and gid) root's commands run as in the Landlock-only mode: RT_LANDLOCK_ROOT_UID,
 * or in a user namespace that does not map it (a user-namespaced container), the highest id
 * both its maps have other than 0, when no passwd or group entry names it; else
 * RT_LANDLOCK_ROOT_UID, which the mode then refuses. */
uid_t rt_landlock_root_uid(void);
/* Writes the maps for a child in a fresh user namespace. Parent side. */
int rt_idmap_write(const struct rt_idmap *m, pid_t child, struct rtn_error *err);

/* rm -rf dir/name; where the caller lacks the rights (files of subordinate ids), does it
 * inside a user namespace mapped like the sandbox (m may be NULL: no fallback). */
int rt_remove_tree(const struct rt_idmap *m, const char *dir, const char *name,
                   struct rtn_error *err);

/* Runs fn in a forked child that is root of a fresh user namespace mapped like a sandbox
 * (m), with file creation as the caller and owners reported as host ids to the
 * store. fn's return value, error and up to 255 bytes of out come back. */
typedef int (*rt_userns_fn)(void *arg, char *out, size_t outlen, struct rtn_error *err);
int rt_userns_run(const struct rt_idmap *m, rt_userns_fn fn, void *arg, char *out, size_t outlen,
                  struct rtn_error *err);
/* The same where fn returns an fd of the helper's (a mount it made there): *ret_fd is rtn's
 * copy of it. */
int rt_userns_run_fd(const struct rt_idmap *m, rt_userns_fn fn, void *arg, int *ret_fd,
                     struct rtn_error *err);

/* A kept upper's tmpfs (spec.upper_keep) with its upper/ and work/, as the detached mount's
 * fd: of spec's upper_room bytes (0: upper_bytes) and as many inodes as a copy to disk could
 * need. Made by the sandbox that first needs it, or by a helper in a user namespace mapped
 * like it (m) for a fork; the caller must be root of its user and mount namespaces. */
int rt_upper_fs_new(const struct rt_spec *spec, const struct rt_idmap *m, struct rtn_error *err);

/* fn as the owner of what a sandbox mapped by m wrote, with its root's CAP_DAC_OVERRIDE over
 * the mapped ids, so a mode the agent set (a 000 directory) stops nothing: through
 * rt_userns_run for a SUBID or SINGLE mapping (SINGLE: directly where no user namespace can
 * be made), directly for host root (m NULL, ROOT, or SINGLE with owner). */
int rt_userns_as_owner(const struct rt_idmap *m, rt_userns_fn fn, void *arg, char *out,
                       size_t outlen, struct rtn_error *err);

/* Store operations that read or remove what sandboxes wrote, through rt_userns_as_owner. */
struct store;
struct store_commit_opts;
struct store_gc_stats;
struct store_verify_stats;
int rt_store_commit(const struct rt_idmap *m, struct store *st, const char *env, const char *upper,
                    const struct store_commit_opts *o, char ret_id[65], struct rtn_error *err);
/* expire: the reflog's, in seconds (store_gc_expire). */
int rt_store_gc(const struct rt_idmap *m, struct store *st, int64_t expire,
                struct store_gc_stats *ret, struct rtn_error *err);
int rt_store_verify(const struct rt_idmap *m, struct store *st, struct store_verify_stats *ret,
                    struct rtn_error *err);
int rt_store_export(const struct rt_idmap *m, struct store *st, const char *env, const char *name,
                    const char *out_path, struct rtn_error *err);

/* Builds the sandbox and waits until rtn-init has applied the configuration. */
int rt_sandbox_start(const struct rt_spec *spec, struct rt_sandbox *ret, struct rtn_error *err);
/* The same, calling queue (unless NULL) before rtn-init's replies are read: the spawn
 * request it sends (rt_sandbox_spawn, the only send it may make) goes with the configuration
 * in one batch, which rtn-init applies first and refuses by exiting; a queue that sends none
 * has the configuration sent after it. A queue that fails (< 0, err set) fails the start. */
typedef int (*rt_queue_fn)(struct rt_sandbox *sb, void *arg, struct rtn_error *err);
int rt_sandbox_start_queued(const struct rt_spec *spec, struct rt_sandbox *ret, rt_queue_fn queue,
                            void *arg, struct rtn_error *err);

/* cgroup v2 (runtime/sandbox/cgroup.c). What rtn finds without changing anything (rtn probe). */
struct rt_cgroup_state {
        char mount[512]; /* cgroup2 mount point, "" when none */
        char self[1024]; /* our cgroup: the "0::" line of /proc/self/cgroup */
        char dir[1536]; /* its directory */
        char controllers[256]; /* its cgroup.controllers */
        char subtree[256]; /* its cgroup.subtree_control */
        bool writable; /* the directory and its cgroup.procs are writable by us (delegated) */
        bool memory, pids; /* listed in cgroup.controllers */
        bool memory_on, pids_on; /* enabled for our children (cgroup.subtree_control) */
        char why[3200]; /* when there is no mount or it is not writable: why */
};
int rt_cgroup_probe(struct rt_cgroup_state *ret);
/* rt_cgroup_probe's answer, probed once per process: what a sandbox's cgroup and the tmpfs
 * check (rt_memory_bytes) both start from, read once for a start, not once each. */
const struct rt_cgroup_state *rt_cgroup_probed(void);
/* Whether rtn is the only process in that cgroup: a controller listed there but not enabled
 * can then be (cgroup v2's no-internal-process rule; runtime/sandbox/cgroup.c, enable). */
bool rt_cgroup_alone(const struct rt_cgroup_state *s);
/* RTN_CGROUP: auto (unset or empty: a child cgroup per sandbox where a memory or pids
 * controller can enforce its limit), always (even with none), never; -EINVAL otherwise. */
enum { RT_CGROUP_AUTO, RT_CGROUP_ALWAYS, RT_CGROUP_NEVER };
int rt_cgroup_mode(void);

#define RT_CGROUP_WHY 1800
struct rt_limit_warnings {
        char memory[RT_CGROUP_WHY + 128];
        char pids[RT_CGROUP_WHY + 128];
};
/* Decides how spec->memory_bytes and spec->pids_max are enforced: the sandbox cgroup's
 * memory.max and pids.max when those controllers can be had, else RLIMIT_DATA per process
 * (set in spec->limits here) and the pid namespace's pid_max. Each warning says what was
 * lost and why ("" when nothing); pids only when the caller asked for a pid limit. The first
 * call sets up cgroups for the process (removes stale sandbox cgroups, enables controllers). */
void rt_limits_choose(struct rt_spec *spec, bool pids_asked, struct rt_limit_warnings *ret);
/* The memory a tmpfs can take on this machine: MemTotal + SwapTotal (/proc/meminfo), or the
 * lowest memory.max of rtn's cgroup and its ancestors plus swap when that is lower; 0 when
 * unknown (runtime/sandbox/memcheck.c). */
uint64_t rt_memory_bytes(void);
/* The tmpfs n sandboxes of spec may hold (an upper and a /tmp of spec->upper_bytes each, or
 * one with tmp_kept)
 * against rt_memory_bytes: -E2BIG (err says the numbers) when one sandbox alone may hold
 * more; else 0, with a warning with the numbers in ret_warn when n of them may ("" when
 * not). */
int rt_tmpfs_check(const struct rt_spec *spec, unsigned n, char *ret_warn, size_t len,
                   struct rtn_error *err);
/* Whether this host denies the user namespace a sandbox starts with (runtime/sandbox/isolation.c);
 * why in why. */
bool rt_userns_denied(char *why, size_t len);
/* Inside a container (rtn probe): its engine ("podman", "docker", "kubernetes", another's
 * `container` variable, or NULL outside one), whether mounts over paths of /proc keep the
 * sandbox from a procfs of its own, and the engine's flags that would give rtn more here,
 * given whether user namespaces are denied and why (rt_userns_denied). */
struct rt_container {
        const char *engine;
        bool proc_masked;
        const char *unlock[2];
        size_t n;
};
void rt_container_probe(struct rt_container *c, bool userns_denied, const char *why);
/* Names a weaker isolation mode on stderr ("" for the full sandbox), and what it leaves open
 * on this kernel (a static buffer, rewritten by the next call). */
const char *rt_isolation_warning(enum init_isolation iso);
/* What a started sandbox's child had to do otherwise (NULL-safe): a sentence for stderr and
 * the MCP log, "" when nothing. */
const char *rt_setup_warning(const struct rt_sandbox *sb);
/* Kills the whole sandbox (if alive) and reaps rtn-init; safe to call twice. */
void rt_sandbox_destroy(struct rt_sandbox *sb);
/* For a sandbox whose processes are known to be gone but PID 1 (rtn-init reported the exit
 * of an INIT_SPAWN_FINAL command): kills rtn-init and does not wait for it, nor for the
 * kernel to tear the namespaces down; the caller is about to exit, and whoever inherits
 * rtn-init reaps it. A cgroup is removed by a forked cleaner once rtn-init has left it
 * (rt_cgroup_release). Without a pid namespace it is rt_sandbox_destroy. */
void rt_sandbox_release(struct rt_sandbox *sb);

/* The variables that point an agent's tools at the proxy (docs/network.md, "What each tool
 * honours"): curl, wget, git, pip, cargo, go and apt read the lower- or upper-case *_proxy
 * variables; npm reads its npm_config_* settings; Node's own fetch reads them with
 * NODE_USE_ENV_PROXY. The sandbox's loopback stays direct (no_proxy), since servers an agent
 * starts live there. */
#define RT_PROXY_VARS                                                                              \
        "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",        \
                "npm_config_proxy", "npm_config_https_proxy"
#define RT_NO_PROXY_VARS "no_proxy", "NO_PROXY"
#define RT_NO_PROXY_LIST "localhost,127.0.0.1,::1"
/* With --secret: the trust store inside (the base's system bundle and the gate's CA, written
 * by runtime/sandbox/identity.c into the skeleton layer: /etc may be the host's, read-only,
 * in a container), and the variables that point tools at it: OpenSSL (curl,
 * git, Python's ssl, go), requests and pip, curl, Node (npm), git, pip, cargo. */
#define RT_CA_BUNDLE "/run/rtn/ca-certificates.crt"
/* apt's configuration for root as the agent (APT_CONFIG in its environment): stay root to
 * download, since it holds no capability to switch to _apt with (identity.c). */
#define RT_APT_ROOT_CONF "/etc/apt/rtn-root.conf"
#define RT_CA_BUNDLE_BASE "ssl/certs/ca-certificates.crt" /* the base's, below its etc/ */
#define RT_CA_BUNDLE_VARS                                                                          \
        "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",            \
                "GIT_SSL_CAINFO", "PIP_CERT", "CARGO_HTTP_CAINFO"

/* Fills a default command environment (PATH, HOME, USER, LANG/TERM passed from the host,
 * and for an agent command of a sandbox with a proxy, the variables that point the tools at
 * it: RT_PROXY_VARS), then KEY=VALUE overrides. Strings point into storage owned by buf. */
#define RT_ENV_MAX 128
struct rt_env {
        char *vars[RT_ENV_MAX + 1];
        size_t n;
        char storage[16384];
        size_t used;
};
void rt_env_default(struct rt_env *env, const struct rt_sandbox *sb, uint32_t policy, bool tty);
int rt_env_set(struct rt_env *env, const char *kv, struct rtn_error *err);
/* --secret: NAME=rtn-placeholder-NAME for each secret, and RT_CA_BUNDLE_VARS = RT_CA_BUNDLE. */
struct netns_secrets;
int rt_env_secrets(struct rt_env *env, const struct netns_secrets *ss, struct rtn_error *err);

/* Control-socket helpers. rt_sandbox_spawn sends one SPAWN (fds: stdin, stdout, stderr, or
 * none for a pty). rt_sandbox_recv reads one event into buf (fds into fds[], up to *nfds). */
int rt_sandbox_spawn(struct rt_sandbox *sb, uint64_t id, uint32_t flags, uint32_t policy,
                     const char *cwd, char *const argv[], char *const envp[], const int fds[3],
                     uint16_t rows, uint16_t cols, struct rtn_error *err);
ssize_t rt_sandbox_recv(struct rt_sandbox *sb, void *buf, size_t len, int *fds, size_t *nfds);
int rt_sandbox_signal(struct rt_sandbox *sb, uint64_t id, int signo);

/* Wait-status → exit code in the shell's convention (128+N for a signal). */
int rt_exit_code(int wait_status);
