/* One command in a fresh sandbox, the lifecycle `rtn exec` fronts (runtime/exec/exec.c): the
 * environment's layers from the store, --keep's pending changes, --commit's upper, the agent's
 * proxy with its secrets, the published ports, the sandbox itself, and what is done with its
 * changes when the command ends. The caller keeps what a front end owns: the options, the
 * command's stdio and terminal, signals, the clock and the messages.
 *
 *   rt_exec_open -> rt_exec_start (queue the spawn) -> rt_exec_await_spawned
 *   -> rt_exec_read_ctl until it exits -> rt_exec_end -> rt_exec_keep | rt_exec_commit
 *   -> rt_exec_close
 *
 * It uses the pieces `rtn serve`'s sessions use (runtime/session/: uppers, pending changes,
 * the registry; rt_spec_opts_gate) and sits above them and runtime/rootfs/. */
#pragma once

#include <stdbool.h>
#include <time.h>

#include "common/err.h"
#include "netns/netns.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/hostrun.h"
#include "store/store.h"

struct rt_spec_opts;
struct rt_blocked;
struct rt_enter;

struct rt_exec_opts {
        const char *data_dir; /* --data-dir; NULL: the default (store_default_dir) */
        const char *env; /* --env; NULL: STORE_DEFAULT_ENV */
        const char *message; /* --commit -m; NULL: "rtn exec" */
        bool commit, keep; /* --commit, --keep */
        int argc; /* the command line, for `rtn ps` (runtime/session/registry.h) */
        char **argv;
        char *const *cmd; /* the command run (NULL-terminated): --keep's step names it */
        unsigned undo_depth; /* --keep: runs rtn undo can take back (--undo-depth) */
        uint64_t undo_bytes; /* --undo-bytes; 0: the --upper-size */
        /* No --rootfs: rt_exec_open sets spec->rootfs to the base the environment was made on
         * (rt_env_rootfs_in, in the store it opens for the layers anyway) */
        bool env_rootfs;
};

struct rt_exec {
        struct rt_sandbox sb; /* the caller polls sb.ctl and may signal or destroy it */
        struct netns_gate *gate; /* the agent's proxy (--allow-net), or NULL */
        int gate_fd; /* its listener once started, for the caller's poll; -1 */
        struct netns_publish *publish; /* --publish, or NULL */
        bool all_exited; /* rtn-init reported the exit of the last process (INIT_SPAWN_FINAL) */
        bool wait_end; /* the sandbox's end must be waited for: its upper is kept */
        struct rt_hostrun_mark started; /* a live workspace's, before the start */
        char listed[RT_PROTECT_LIST]; /* started.listed: kept by rt_exec_end */
        bool fell_back; /* started in the Landlock mode: user namespaces are denied here */
        struct rt_limit_warnings fallback_warn; /* the limits' warnings for that mode */
        const struct rt_exec_opts *o;
        const struct rt_spec_opts *so;
        struct rt_enter *enter; /* the listener of `rtn enter` (runtime/session/enter.h), or
                                 * NULL; the caller polls rt_enter_fd and calls rt_enter_serve */
        /* The environment's layers (and, with --commit, a session dir on the store's
         * filesystem for the upper). Without --commit or --keep a store that does not exist
         * yet is not created. */
        struct store *st;
        char *rootfs; /* the environment's base (rt_exec_opts.env_rootfs), or NULL */
        struct store_stack stack; /* held while the sandbox runs (gc keeps them) */
        struct store_base base;
        char *session_dir;
        int session_lock;
        char pending[4096]; /* --keep: the environment's pending dir */
        char pending_upper[4200]; /* its upper/, the sandbox's top layer */
        uint64_t upper_bytes; /* --upper-size, the default of --undo-bytes */
        const char **keep_layers; /* --keep: pending_upper, then the layers */
        int upper_fs; /* --keep, --commit: the sandbox's tmpfs upper (runtime/session/upper.h) */
        rt_queue_fn queue; /* rt_exec_start's caller's, called behind the registration */
        void *queue_arg;
        bool registered; /* in `rtn ps`'s registry (once, even where queue runs twice) */
};

/* Nothing started yet: every fd -1, so rt_exec_close after any failure is safe. */
void rt_exec_init(struct rt_exec *x);
/* Opens the store and the environment (spec's layers, --keep's pending changes on top,
 * --commit's session dir), makes the agent's proxy (so's
 * policy and secrets; spec->ca_pem) and listens on --publish's ports, so a port in use fails
 * the command before it runs. o must outlive x. */
int rt_exec_open(struct rt_exec *x, const struct rt_exec_opts *o, struct rt_spec *spec,
                 const struct rt_spec_opts *so, struct rtn_error *err);
/* Starts the sandbox with queue's spawn request sent as it starts
 * (rt_sandbox_start_queued), records the run for `rtn ps` just before queue (while the
 * sandbox's child builds its root, before its command can run), then serves the proxy and
 * the published ports. Where the full
 * sandbox fails to start and this host denies user namespaces (rt_spec_opts_fallback: spec
 * and so change), it starts again in the Landlock mode and sets x->fell_back; queue may then
 * be called twice. */
int rt_exec_start(struct rt_exec *x, struct rt_spec *spec, struct rt_spec_opts *so,
                  rt_queue_fn queue, void *arg, struct rtn_error *err);
/* The command (id 1) as rtn-init reports it. await_spawned reads the spawn reply (the error
 * names cmd, or cwd when the chdir failed): 0 with *ret_master the pty master (or -1); on
 * SPAWN_FAILED the exit code rtn exec uses (127 not found, 126 cannot execute, 125 another
 * step), with err saying why; < 0 when the sandbox ended or sent anything else. read_ctl
 * reads one event: one of an entered command's goes to enter (may be NULL) and is 0; EXITED
 * sets *wait_status and returns 1, BLOCKED fills *blocked (emptied when malformed), anything
 * else is ignored (0); -1 when the sandbox is gone. */
int rt_exec_await_spawned(struct rt_sandbox *sb, const char *cmd, const char *cwd, int *ret_master,
                          struct rtn_error *err);
int rt_exec_read_ctl(struct rt_sandbox *sb, struct rt_enter *enter, int *wait_status,
                     struct rt_blocked *blocked);
/* Ends the sandbox (and the listener of rtn enter): released without waiting when rtn-init
 * reported the last exit and nothing of it is kept, else destroyed and waited for.
 * Idempotent. */
void rt_exec_end(struct rt_exec *x);
/* Stops forwarding the published ports, after rt_exec_end: no new connection, and those
 * made deliver what the sandbox sent them before it ended (netns_publish_free). */
void rt_exec_unpublish(struct rt_exec *x);
/* --keep, after rt_exec_end: lays the run's changes over the pending ones, as a step rtn
 * undo can take back (runtime/session/pending.h); *note says why not when it cannot
 * ("" else). */
int rt_exec_keep(struct rt_exec *x, char *note, size_t notelen, struct rtn_error *err);
/* --commit, after rt_exec_end: 0 committed as ret_id, 1 nothing to commit. With --keep the
 * pending changes are committed; else the upper, on the tip it ran on only (a tip moved
 * meanwhile is another writer's). */
int rt_exec_commit(struct rt_exec *x, char ret_id[STORE_ID_SIZE], struct rtn_error *err);
/* --keep with an overlay workspace: how many workspace changes are now pending. */
int rt_exec_pending_count(const struct rt_exec *x, unsigned *ret, struct rtn_error *err);
/* Frees everything, the proxy included; < 0 (err set) when --commit's session dir could not
 * be removed (all else is freed all the same). */
int rt_exec_close(struct rt_exec *x, struct rtn_error *err);
