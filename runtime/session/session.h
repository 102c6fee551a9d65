/* A persistent sandbox session (docs/architecture.md, "Sessions and `rtn serve`"): one sandbox kept
 * alive across commands, driven from an event loop. Commands (shell_run, jobs) are spawned by
 * rtn-init inside the same namespaces, so they share one filesystem and one loopback network.
 * Output is read through pipes into bounded buffers; exits arrive on the control socket. If
 * rtn-init dies, running commands end with an error and the next command starts a fresh sandbox on
 * the same layers and upper. The upper is a tmpfs of --upper-size that the session keeps by fd
 * across those restarts (runtime/session/upper.h); a commit copies it into the session dir, on the
 * data dir's filesystem, and the store takes it from there with a rename. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "runtime/sandbox/blocked.h"
#include "runtime/runtime.h"

/* Checkpoints kept (rtn serve's per sandbox, rtn exec --keep's per environment;
 * --undo-depth): the default and the ceiling. */
#define RT_UNDO_DEPTH_DEFAULT 50
#define RT_UNDO_DEPTH_MAX 1000

struct rtn_loop;
struct rtn_loop_source;
struct rt_session;
struct rt_cmd;
struct rt_spec_opts;

typedef void (*rt_cmd_done_fn)(struct rt_cmd *c, void *userdata);
/* Bytes a command wrote, as they arrive (err: on its stderr), before they are kept. */
typedef void (*rt_cmd_output_fn)(struct rt_cmd *c, bool err, const char *p, size_t n,
                                 void *userdata);

struct rt_outbuf {
        char *data;
        size_t len, max; /* bytes kept; at most max */
        uint64_t total; /* bytes produced in all */
        bool keep_tail; /* jobs keep the newest bytes, shell_run the first */
};

struct rt_stream {
        struct rt_cmd *cmd;
        int fd;
        bool eof;
        struct rt_outbuf *buf;
};

struct rt_cmd {
        struct rt_session *s;
        uint64_t id;
        char *command;
        char *cwd; /* where it runs: a failed chdir names it */
        bool is_job;
        uint32_t policy;
        pid_t pid;
        struct rt_outbuf out, err; /* jobs: both streams go to out */
        struct rt_stream sout, serr;
        int in_fd;
        char *in_data;
        size_t in_len, in_off;
        bool spawned, exited, done, killed, timed_out, lost;
        const char *lost_why; /* lost: what stopped the sandbox (rt_session_stop_for); NULL:
                               * rtn-init died */
        int spawn_errno; /* spawn failed: errno and step */
        uint32_t spawn_step;
        int wait_status;
        struct rt_blocked blocked; /* what seccomp blocked until the exit (n = total = 0) */
        uint64_t net_seq, net_end_seq; /* the proxy's refusals when it started and when it
                                          was done (netns_gate_seq): its own are between */
        uint64_t start_usec, end_usec; /* CLOCK_MONOTONIC (rtn_now_usec) */
        struct rtn_loop_source *timer, *grace;
        rt_cmd_done_fn done_fn;
        void *done_ud;
        rt_cmd_output_fn output_fn;
        void *output_ud;
        struct rt_cmd *next; /* session's list */
};

struct rt_cmd_opts {
        const char *command; /* run as /bin/sh -c COMMAND */
        const char *cwd; /* default /workspace */
        char *const *env; /* extra KEY=VALUE, NULL-terminated, may be NULL */
        const char *stdin_data;
        size_t stdin_len;
        uint64_t timeout_usec; /* 0: the session default */
        uint32_t policy; /* enum init_policy */
        size_t max_output; /* 0: the session default */
        bool job;
        rt_cmd_output_fn output_fn; /* may be NULL; `rtn pkg install` streams apt's output */
        void *output_ud;
};

struct rt_session_config {
        struct rt_spec spec; /* base spec: rootfs, workspace, binds, hostname, limits */
        const struct rt_spec_opts *opts; /* --setenv for agent commands; may be NULL */
        const char *session_dir; /* where a commit copies the upper; created if missing */
        uint64_t default_timeout_usec;
        size_t max_output;
};

int rt_session_new(struct rtn_loop *loop, const struct rt_session_config *cfg,
                   struct rt_session **ret, struct rtn_error *err);
/* A new session (cfg, its own session_dir) on src's layers, holding a copy of src's
 * filesystem state as it is now (its upper, an overlay workspace's changes and their record,
 * /tmp); src's commands go on and are not copied. Later writes on either side stay its
 * own. */
int rt_session_fork(struct rt_session *src, const struct rt_session_config *cfg,
                    struct rt_session **ret, struct rtn_error *err);
/* Ends the sandbox and every command (their done callbacks run), frees the session. The
 * session dir is left for the caller to remove or keep. */
void rt_session_free(struct rt_session *s);

/* Sets the committed layers (newest first, copied) the next sandbox mounts. */
int rt_session_set_layers(struct rt_session *s, char *const *layers, size_t n);
/* True once when the last rt_session_ensure (or rt_session_run, which calls it) started a
 * fresh sandbox because rtn-init had died on its own (not by rt_session_stop). */
bool rt_session_take_crash(struct rt_session *s);
/* Starts the sandbox now if it is not running. */
int rt_session_ensure(struct rt_session *s, struct rtn_error *err);
/* Kills every command and the sandbox; the next command starts a fresh one. */
void rt_session_stop(struct rt_session *s);
/* The same, saying why (a string literal such as "env_reset dropped the sandbox"): the
 * commands cut off get it in lost_why, the listener from rt_session_lost_why. */
void rt_session_stop_for(struct rt_session *s, const char *why);
/* Why the sandbox last ended: rt_session_stop_for's reason, "the sandbox was stopped", or
 * NULL when rtn-init died. */
const char *rt_session_lost_why(const struct rt_session *s);
/* Stops the session and empties its upper: all uncommitted changes are gone. */
int rt_session_discard(struct rt_session *s, struct rtn_error *err);
/* The upper as a path ("/proc/self/fd/N/upper"), NULL while no sandbox has made one (no
 * changes yet); and its tmpfs's fd, -1 then. */
const char *rt_session_upper(struct rt_session *s);
int rt_session_upper_fs(const struct rt_session *s);
/* Stops the sandbox and commits its changes to env as o says (rt_upper_commit: 1 when
 * there were none); afterwards the next sandbox starts with an empty upper. -EOPNOTSUPP in
 * --isolation landlock, which has no upper to commit: the sandbox is left running. */
struct store;
struct store_commit_opts;
int rt_session_commit(struct rt_session *s, struct store *st, const char *env,
                      const struct store_commit_opts *o, char ret_id[65], struct rtn_error *err);
/* The session dir, on the data dir's filesystem: a commit copies the upper there; an
 * overlay workspace's ws/ (runtime/session/wsover.h). */
const char *rt_session_dir(const struct rt_session *s);
const struct rt_sandbox *rt_session_sandbox(const struct rt_session *s);
bool rt_session_alive(const struct rt_session *s);
/* The id mapping of the last sandbox, NULL before the first (for rt_remove_tree). */
const struct rt_idmap *rt_session_idmap(const struct rt_session *s);
/* The agent's proxy (--allow-net; netns/gate.c), NULL without one: its refusals since a
 * command's net_seq are that command's network_denied. */
struct netns_gate *rt_session_gate(const struct rt_session *s);
/* Commands not yet done. */
unsigned rt_session_running(const struct rt_session *s);

/* Spawns a command; done_fn runs once when it has exited and its output is read (or it
 * failed to start, or the sandbox died). The cmd stays valid until rt_cmd_free. */
int rt_session_run(struct rt_session *s, const struct rt_cmd_opts *o, rt_cmd_done_fn done_fn,
                   void *ud, struct rt_cmd **ret, struct rtn_error *err);
void rt_cmd_kill(struct rt_cmd *c);
/* Unlinks and frees a command; if still running it is killed first (no callback). */
void rt_cmd_free(struct rt_cmd *c);
/* Exit code in the shell's convention, or -1 while running; signal number or 0. */
int rt_cmd_exit_code(const struct rt_cmd *c);
int rt_cmd_signal(const struct rt_cmd *c);

/* Control messages that belong to no command (INIT_MSG_FILES_STARTED) go to the session's
 * listener, which owns the fd that came with one (-1: none); on_lost runs when the sandbox
 * ends (rtn-init died, or the session was stopped). One listener per session. */
struct rt_session_listener {
        void (*on_msg)(void *ud, const void *msg, size_t len, int fd);
        void (*on_lost)(void *ud);
};
void rt_session_set_listener(struct rt_session *s, const struct rt_session_listener *l, void *ud);
/* Sends one message to rtn-init, starting the sandbox first if it is not running. */
int rt_session_send(struct rt_session *s, const void *msg, size_t len, struct rtn_error *err);
/* The spec the next sandbox is built from. A bind added here is kept across restarts (its
 * strings must outlive the session); it takes effect at the next start. */
struct rt_spec *rt_session_spec(struct rt_session *s);

/* `rtn enter` (runtime/session/enter.h) into this session's sandbox, which is called sb-N by
 * e: rtn-init's messages about entered commands go to e, and its callers learn when the
 * sandbox ends (e may be NULL: none). enter_spawn starts a command as an agent command of the
 * running sandbox (its policy, environment, workspace for cwd NULL), never a job nor one of
 * rt_session_running's, with no timeout; it refuses when no sandbox runs rather than start
 * one. enter_signal signals one. */
struct rt_enter;
void rt_session_set_enter(struct rt_session *s, struct rt_enter *e, unsigned sb);
int rt_session_enter_spawn(struct rt_session *s, uint64_t id, uint32_t flags, const char *cwd,
                           char *const argv[], const int fds[3], uint16_t rows, uint16_t cols,
                           struct rtn_error *err);
void rt_session_enter_signal(struct rt_session *s, uint64_t id, int signo);

/* The sandbox's skeleton dirs (mountpoints, /workspace, HOME) appear in an upper as empty
 * directories the agent did not make. rt_upper_prune removes them (unless opaque) before a
 * commit; rt_upper_is_skeleton tells a diff to skip them. */
void rt_upper_prune(const char *upper);
bool rt_upper_is_skeleton(const char *path);
