/* The rtn <-> rtn-init protocol: the wire protocol spoken over the SOCK_SEQPACKET control
 * socket between rtn (trusted side, outside) and rtn-init (PID 1 inside the sandbox), and
 * the encoders/decoders both sides link (common/initproto.c). One message per datagram; fds ride
 * along with SCM_RIGHTS. rtn-init finds the socket at INIT_CTL_FD. See docs/architecture.md. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/exitcode.h"

#define INIT_PROTO_VERSION 1
#define INIT_CTL_FD 3
/* Upper bound of one control message; argv+env+cwd of a spawn must fit. */
#define INIT_MSG_MAX (128 * 1024) /* fits the default socket send buffer */
#define INIT_MAX_ARGS 4096
#define INIT_MAX_WRITABLE 32
#define INIT_MAX_READONLY 1024 /* protected entries of a --isolation landlock workspace */

/* A start: rtn sends CONFIG (and may queue spawn requests behind it) without waiting;
 * rtn-init answers READY and CONFIGURED together once it has applied or refused CONFIG, and
 * with the SPAWNED or SPAWN_FAILED of a request that was queued by then (init/ctl.c). */
enum init_msg_type {
        INIT_MSG_READY = 1, /* init → rtn: init_ready, right before CONFIGURED */
        INIT_MSG_CONFIG, /* rtn → init: init_config (once, before any spawn) */
        INIT_MSG_CONFIGURED, /* init → rtn: init_status (error != 0: refused) */
        INIT_MSG_SPAWN, /* rtn → init: init_spawn + fds [stdin stdout stderr] */
        INIT_MSG_SPAWNED, /* init → rtn: init_spawned (+ pty master fd with INIT_SPAWN_PTY) */
        INIT_MSG_SPAWN_FAILED, /* init → rtn: init_status naming the failed step */
        INIT_MSG_EXITED, /* init → rtn: init_exited */
        INIT_MSG_SIGNAL, /* rtn → init: init_signal, to the command's process group */
        INIT_MSG_KILL_ALL, /* rtn → init: SIGKILL every process but init */
        INIT_MSG_SETUP_FAILED, /* sandbox child → rtn: init_status; building the sandbox failed */
        INIT_MSG_GATE_OPEN, /* rtn → init: open the provisioning gate (header only) */
        INIT_MSG_GATE, /* init → rtn: init_gate + the listening socket when error == 0 */
        INIT_MSG_FILES_START, /* rtn → init: start the file server (killing a previous one) */
        INIT_MSG_FILES_STARTED, /* init → rtn: init_status; error 0: + the server's socket fd */
        INIT_MSG_BLOCKED, /* init → rtn: init_blocked, right before the command's EXITED */
};

enum init_policy {
        INIT_POLICY_AGENT = 0, /* the agent's commands: Landlock writes to a few dirs only */
        INIT_POLICY_PROVISION = 1, /* package installs: whole overlay writable, runs as root */
        /* One agent command as root (shell_run's user "root"): what --user root gives every
         * command (init_config.agent_root), for this one: uid 0, INIT_CAPS_ROOT, the agent's
         * filter, the agent's Landlock domain with the rootfs writable. */
        INIT_POLICY_AGENT_ROOT = 2,
};

/* A set of policies (init_config.policies): bit INIT_POLICY_BIT(p) for policy p. */
#define INIT_POLICY_BIT(p) (1u << (p))
#define INIT_POLICIES_ALL                                                                          \
        (INIT_POLICY_BIT(INIT_POLICY_AGENT) | INIT_POLICY_BIT(INIT_POLICY_PROVISION) |             \
         INIT_POLICY_BIT(INIT_POLICY_AGENT_ROOT))

/* The agent's commands, whichever user they run as: its filter, environment and network. */
static inline int init_policy_is_agent(uint32_t policy) {
        return policy == INIT_POLICY_AGENT || policy == INIT_POLICY_AGENT_ROOT;
}

enum init_isolation {
        INIT_ISOLATION_FULL = 0, /* namespaces + Landlock + seccomp: the default */
        INIT_ISOLATION_NO_LANDLOCK, /* named weaker mode: kernel lacks Landlock, user opted in */
        INIT_ISOLATION_LANDLOCK, /* named weaker mode: no namespaces, no overlay; rtn-init is
                                    not PID 1 and Landlock + seccomp + rlimits do the work */
};

struct init_msg_hdr {
        uint32_t type;
        uint32_t len; /* whole message including this header */
        uint64_t id; /* command id chosen by rtn; 0 for session-wide messages */
};

struct init_ready {
        struct init_msg_hdr hdr;
        uint32_t version;
        int32_t landlock_abi; /* as the kernel reports it; <= 0: unavailable (-errno) */
};

struct init_limits {
        uint64_t nofile;
        uint64_t nproc; /* 0: leave to the pid namespace's pid_max */
        uint64_t fsize_bytes;
        uint64_t data_bytes; /* 0: unlimited */
        uint64_t cpu_seconds; /* 0: unlimited */
        uint64_t core_bytes;
};

/* Defaults (docs/policy.md): NOFILE 4096 (soft 1024), FSIZE 1 GiB, CORE 0; NPROC, AS and CPU
 * 0 = not set. rtn fills a spec with them and rtn-init's tests check them, so they live with
 * the protocol both link. */
void init_limits_default(struct init_limits *ret);

/* Strings follow the fixed part: nwritable NUL-terminated absolute paths inside the sandbox
 * that the agent policy may write (workspace, tmp, home, rw binds), then nreadonly paths
 * below them that it may only read (--isolation landlock: the workspace's git dirs and
 * host-run files, runtime/sandbox/protect.c; a full sandbox protects them with mounts and sends
 * none). */
struct init_config {
        struct init_msg_hdr hdr;
        uint32_t isolation; /* enum init_isolation */
        uint32_t agent_uid, agent_gid;
        uint32_t root_uid, root_gid; /* the ids provisioning runs as (0 when mapped) */
        uint32_t agent_drop_caps; /* 1: the agent uid is 0 inside; clear every capability */
        uint32_t host_writable; /* bit i: writable[i] is a host directory (the workspace, a rw
                                   bind): writes there reach the host, and the provisioning
                                   policy may only read it */
        uint32_t allow_ptrace; /* 1: agent commands may ptrace the sandbox's own processes */
        uint32_t agent_root; /* 1: --user root: agent commands (uid 0, no capabilities) may
                                write the rootfs too: all of / but /proc, /sys and /dev
                                (INIT_LANDLOCK_ROOTFS) */
        /* The policies a command may be spawned with (INIT_POLICY_BIT; the agent's is always
         * one): rtn-init builds their Landlock rulesets now, before any command runs, and
         * refuses a spawn of any other. Provisioning's is built when the gate opens instead
         * when it is not here, and the gate opens only before the first command. */
        uint32_t policies;
        uint32_t nwritable;
        uint32_t nreadonly;
        struct init_limits limits;
        uint32_t strings_len;
        char strings[];
};

enum init_spawn_flags {
        INIT_SPAWN_PTY = 1u << 0, /* allocate a pty inside; no fds passed */
        /* The sandbox ends with this command (rtn exec): at its exit rtn-init kills and reaps
         * every other process before it sends INIT_MSG_EXITED, so that message also says
         * nothing of the sandbox runs any more. */
        INIT_SPAWN_FINAL = 1u << 1,
};

/* Strings follow the fixed part: cwd, then argc args, then envc "K=V" entries. */
struct init_spawn {
        struct init_msg_hdr hdr;
        uint32_t flags;
        uint32_t policy; /* enum init_policy */
        uint32_t argc, envc;
        uint16_t rows, cols;
        uint32_t strings_len;
        char strings[];
};

struct init_spawned {
        struct init_msg_hdr hdr;
        int32_t pid; /* inside the sandbox's pid namespace */
};

/* Steps a spawn can fail at, for error messages ("rtn: execve sh: not found"). */
enum init_step {
        INIT_STEP_NONE = 0,
        INIT_STEP_FORK,
        INIT_STEP_SETSID,
        INIT_STEP_PTY,
        INIT_STEP_STDIO,
        INIT_STEP_CHDIR,
        INIT_STEP_RLIMITS,
        INIT_STEP_CREDS,
        INIT_STEP_NNP,
        INIT_STEP_LANDLOCK,
        INIT_STEP_SECCOMP,
        INIT_STEP_EXEC,
        INIT_STEP_CONFIG,
        INIT_STEP_PROTOCOL,
        INIT_STEP_NETNS,
        /* Not rtn-init's: the rtn that owns a sandbox refused an `rtn enter` (its message
         * says why; runtime/session/enter.h). */
        INIT_STEP_ENTER,
};

/* The exit code of a command that never started, failing at step with positive errno error:
 * 127 not found (ENOENT, or ENOTDIR: a component of the path is not a directory, so the
 * file is not there either, as the PATH search treats it), 126 found but cannot execute,
 * 125 a step before execve (the sandbox's failure). One rule for rtn-init's own exit, `rtn
 * exec` and rtn serve's shell tools (docs/architecture.md, "Commands"). */
static inline int init_spawn_exit_code(uint32_t step, int error) {
        if (step != INIT_STEP_EXEC)
                return RTN_EXIT_FAILURE;
        return error == ENOENT || error == ENOTDIR ? RTN_EXIT_NOTFOUND : RTN_EXIT_NOEXEC;
}

struct init_status {
        struct init_msg_hdr hdr;
        int32_t error; /* positive errno, 0 = ok */
        uint32_t step; /* enum init_step */
        char message[512];
};

struct init_exited {
        struct init_msg_hdr hdr;
        int32_t wait_status; /* as from waitpid(2) */
        int32_t pid;
};

/* The seccomp denials rtn-init saw for one command (through the filter's listener,
 * init/notify.c), sent just before its INIT_MSG_EXITED when there was at least one. Calls of
 * the same syscall by processes of the same comm share a record; records beyond
 * INIT_BLOCKED_MAX are only counted in total. Everything here is untrusted for rtn: the comm
 * is whatever the process named itself, and rtn-init lives inside the sandbox. */
#define INIT_BLOCKED_MAX 16
#define INIT_COMM_LEN 16 /* TASK_COMM_LEN, NUL included */
struct init_blocked_rec {
        uint32_t nr; /* syscall number, native ABI */
        int32_t pid; /* the first caller, in rtn-init's pid namespace */
        uint64_t count;
        char comm[INIT_COMM_LEN]; /* its /proc/PID/comm, NUL-terminated; "" when unknown */
};
struct init_blocked {
        struct init_msg_hdr hdr;
        uint32_t nrec;
        uint32_t reserved;
        uint64_t total; /* every blocked call, recorded or not */
        struct init_blocked_rec rec[INIT_BLOCKED_MAX];
};

/* The provisioning gate (docs/architecture.md, "Network gate"): a TCP listener on
 * 127.0.0.1:port in a network namespace of its own that only provisioning commands enter.
 * rtn accepts on the socket and proxies for them; agent commands, in the sandbox's main
 * netns, have no route to it. */
struct init_gate {
        struct init_msg_hdr hdr;
        int32_t error; /* positive errno, 0 = ok (then one fd rides along) */
        uint16_t port;
        uint16_t reserved;
        char message[256];
};

struct init_signal {
        struct init_msg_hdr hdr;
        int32_t signo;
};

/* Encoders write a whole message into buf (capacity cap) and return its length or -errno
 * (-E2BIG when it would not fit). Decoders validate lengths, counts and NUL terminators of a
 * received datagram and point into it; they never trust a length field. */
ssize_t init_encode_spawn(void *buf, size_t cap, uint64_t id, uint32_t flags, uint32_t policy,
                          const char *cwd, char *const argv[], char *const envp[], uint16_t rows,
                          uint16_t cols);
struct init_spawn_view {
        const struct init_spawn *msg;
        const char *cwd;
        const char *argv[INIT_MAX_ARGS + 1];
        const char *envp[INIT_MAX_ARGS + 1];
};
int init_decode_spawn(const void *buf, size_t len, struct init_spawn_view *ret);

ssize_t init_encode_config(void *buf, size_t cap, const struct init_config *fixed,
                           const char *const writable[], uint32_t nwritable,
                           const char *const readonly[], uint32_t nreadonly);
struct init_config_view {
        const struct init_config *msg;
        const char *writable[INIT_MAX_WRITABLE];
        uint32_t nwritable;
        const char *readonly[INIT_MAX_READONLY];
        uint32_t nreadonly;
};
int init_decode_config(const void *buf, size_t len, struct init_config_view *ret);

/* Checks that a datagram is at least a header of the declared type and size. */
int init_check_msg(const void *buf, size_t len, uint32_t type, size_t min_size);

const char *init_step_name(uint32_t step);
/* What a failed step acted on, for its error: the working directory for INIT_STEP_CHDIR
 * (chdir /nope, not chdir pwd), else the command. */
const char *init_step_subject(uint32_t step, const char *cmd, const char *cwd);

/* ---- the file server (init/file_server.c) ------------------------------------------------------
 * One long-lived child of rtn-init, confined exactly like an agent command (credentials,
 * capabilities, no_new_privs, the agent Landlock ruleset, seccomp), serving file requests on
 * its own SOCK_SEQPACKET socket, whose other end rtn-init hands to rtn with
 * INIT_MSG_FILES_STARTED. Requests are answered in order, one response per request. Bulk data
 * never rides in the datagrams: READ copies the file into a memfd that rtn passes along (the
 * read happens here, with the sandbox's credentials: procfs checks permission at read time,
 * so an fd handed to rtn and read there showed what rtn may see), WRITE takes the new content
 * as a memfd, LIST and SEARCH write records into a memfd that rtn passes along.
 * Relative paths are relative to /workspace. Everything a response says is untrusted: the
 * server runs inside the sandbox. docs/architecture.md, "File tools". */
#define INIT_FILES_REQ_MAX (12 * 1024)
#define INIT_FILES_PATH_MAX 4096
#define INIT_FILES_GLOB_MAX 1024
#define INIT_FILES_READ_MAX (8u << 20) /* bytes a read, edit or search looks at per file */
#define INIT_FILES_WRITE_MAX (8u << 20) /* bytes of a WRITE's content memfd */
#define INIT_FILES_OUT_MAX (8u << 20) /* bytes of LIST/SEARCH records */
#define INIT_FILES_DEPTH_MAX 32
#define INIT_FILES_TIMEOUT_S 30 /* a request running longer kills the server (SIGALRM) */

enum init_files_op {
        INIT_FILES_READ = 1, /* path + out memfd → the regular file's first READ_MAX + 1 bytes */
        INIT_FILES_WRITE, /* path + content memfd → atomically replaced or created */
        INIT_FILES_LIST, /* path, depth, glob, max entries + out memfd → records */
        INIT_FILES_SEARCH, /* path, pattern (ERE), glob, max matches + out memfd → records */
};

enum init_files_flags {
        INIT_FILES_CREATE_ONLY = 1u << 0, /* WRITE: fail with EEXIST if the file exists */
        INIT_FILES_MODE_SET = 1u << 1, /* WRITE: mode applies to a new file */
        INIT_FILES_MUST_EXIST = 1u << 2, /* WRITE: fail with ENOENT if it does not exist */
        INIT_FILES_CHECK_ID = 1u << 3, /* WRITE: the file must still be expect_dev/ino */
};

enum init_files_resp_flags {
        INIT_FILES_CREATED = 1u << 0, /* WRITE made a new file */
        INIT_FILES_TRUNCATED = 1u << 1, /* LIST/SEARCH stopped at a limit */
};

/* Strings follow the fixed part: path, pattern, glob (each NUL-terminated, "" when unused). */
struct init_files_req {
        struct init_msg_hdr hdr; /* type: enum init_files_op; id: chosen by rtn */
        uint32_t flags;
        uint32_t mode; /* WRITE with MODE_SET: permission bits, at most 0777 */
        uint32_t depth; /* LIST */
        uint32_t max; /* LIST: entries; SEARCH: matches */
        uint64_t expect_dev, expect_ino;
        uint32_t strings_len;
        char strings[];
};

struct init_files_resp {
        struct init_msg_hdr hdr; /* type and id of the request */
        int32_t error; /* positive errno, 0 = ok */
        uint32_t flags; /* enum init_files_resp_flags */
        uint64_t size; /* READ: file size; WRITE: bytes written; LIST/SEARCH: record bytes */
        uint64_t count; /* READ: bytes in the memfd; LIST/SEARCH: records */
        uint64_t dev, ino; /* READ: the file's identity, for a WRITE with CHECK_ID */
        uint32_t mode; /* READ: st_mode */
        char message[256]; /* what failed, for the agent */
};

/* Records in the out memfd, little-endian host order, packed:
 *   LIST:   u8 type ('f' file, 'd' dir, 'l' symlink, 'o' other), u64 size, u16 len, path
 *           (relative to the listed path; "" for the entry itself)
 *   SEARCH: u32 line, u16 path len, u16 text len, path (relative; "" when the searched path is
 *           the file), text (the line, cut at INIT_FILES_LINE_MAX bytes) */
#define INIT_FILES_LINE_MAX 512

ssize_t init_encode_files_req(void *buf, size_t cap, const struct init_files_req *fixed,
                              const char *path, const char *pattern, const char *glob);
struct init_files_req_view {
        const struct init_files_req *msg;
        const char *path, *pattern, *glob;
};
int init_decode_files_req(const void *buf, size_t len, struct init_files_req_view *ret);
