/* One command in a fresh sandbox: `rtn exec`'s lifecycle (runtime/exec/exec.h), over the
 * pieces `rtn serve`'s sessions use. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/initproto.h"
#include "common/log.h"
#include "runtime/exec/exec.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/sandbox/blocked.h"
#include "runtime/sandbox/hostrun.h"
#include "runtime/sandbox/specopt.h"
#include "runtime/session/enter.h"
#include "runtime/session/pending.h"
#include "runtime/session/registry.h"
#include "runtime/session/upper.h"
#include "runtime/session/wsover.h"

void rt_exec_init(struct rt_exec *x) {
        memset(x, 0, sizeof *x);
        /* Not started yet: a failure before the sandbox exists destroys nothing (fd 0 is not
         * its control socket or pidfd). */
        x->sb.pid = x->sb.pidfd = x->sb.ctl = x->sb.gate_fd = x->sb.net_fd = -1;
        x->gate_fd = x->session_lock = x->upper_fs = -1;
}

static const char *exec_env(const struct rt_exec *x) {
        return x->o->env ? x->o->env : STORE_DEFAULT_ENV;
}

/* --keep: the pending changes on disk are the sandbox's top layer, read-only; its writes go
 * to a tmpfs of what --upper-size leaves them, laid over them when the command ends
 * (rt_upper_merge), so together they never take more than --upper-size. */
static int keep_pending(struct rt_exec *x, struct rt_spec *spec, struct rtn_error *err) {
        const char *env = exec_env(x);
        int r = rt_pending_open(x->st, env, x->pending, sizeof x->pending, &x->session_lock, err);
        if (r < 0)
                return r;
        uint64_t used = rt_upper_pending_size(x->pending);
        if (used + (1u << 20) > spec->upper_bytes)
                return rtn_errx(err, ENOSPC,
                                "the pending changes of environment %s take %llu MiB, "
                                "--upper-size is %llu MiB: commit them (rtn commit), drop them "
                                "(rtn reset) or give a larger --upper-size",
                                env, (unsigned long long)(used >> 20),
                                (unsigned long long)(spec->upper_bytes >> 20));
        snprintf(x->pending_upper, sizeof x->pending_upper, "%s/upper", x->pending);
        if (!(x->keep_layers = calloc(x->stack.n + 1, sizeof *x->keep_layers)))
                return rtn_err(err, ENOMEM, "layers");
        x->keep_layers[0] = x->pending_upper;
        for (size_t i = 0; i < x->stack.n; i++)
                x->keep_layers[i + 1] = x->stack.paths[i];
        spec->layers = x->keep_layers;
        spec->nlayers = x->stack.n + 1;
        spec->ws_dir = x->pending; /* an overlay workspace's pending changes: ws/ */
        spec->upper_keep = true;
        spec->upper_room = spec->upper_bytes - used;
        x->upper_bytes = spec->upper_bytes;
        return 0;
}

static int open_store(struct rt_exec *x, struct rt_spec *spec, uint64_t store_max,
                      struct rtn_error *err) {
        char dir[4096];
        const struct rt_exec_opts *o = x->o;
        const char *data_dir = o->data_dir; /* --data-dir, else the default, in dir */
        const char *env = exec_env(x);
        int r;
        if ((r = store_env_check(env, err)) < 0)
                return r;
        if (!data_dir) {
                if ((r = store_default_dir(dir, sizeof dir, err)) < 0)
                        return o->commit || o->env ? r : 0;
                data_dir = dir;
        }
        if (!o->commit && !o->keep && access(data_dir, F_OK) < 0)
                return o->env ? rtn_errx(err, ENOENT,
                                         "no store at %s: environment %s has no "
                                         "commits",
                                         data_dir, env)
                              : 0;
        if ((r = store_open(data_dir, &x->st, err)) < 0)
                return r;
        store_set_max(x->st, store_max);
        if (o->env_rootfs) {
                if ((r = rt_env_rootfs_in(x->st, o->data_dir, env, &x->rootfs, err)) < 0)
                        return r;
                spec->rootfs = x->rootfs;
        }
        if ((r = rt_env_stack(x->st, env, spec->rootfs, o->keep, &x->base, &x->stack, err)) < 0)
                return r;
        spec->layers = (const char *const *)x->stack.paths;
        spec->nlayers = x->stack.n;
        if (o->keep)
                return keep_pending(x, spec, err);
        if (o->commit) {
                if ((r = store_session_new(x->st, &x->session_dir, &x->session_lock, err)) < 0)
                        return r;
                spec->upper_keep = true;
        }
        return 0;
}

/* For `rtn ps` (runtime/session/registry.h); best effort: a registry that cannot be written
 * is no reason not to run. */
static void register_running(struct rt_exec *x) {
        if (x->registered)
                return;
        x->registered = true;
        char dir[4096];
        struct rtn_error err = {0};
        const char *data_dir = x->o->data_dir;
        if (!data_dir)
                data_dir = store_default_dir(dir, sizeof dir, &err) < 0 ? "" : dir;
        if (rt_registry_add("exec", exec_env(x), data_dir, x->o->argc, x->o->argv, &err) < 0)
                rt_registry_unavailable(&err);
}

/* `rtn enter` (runtime/session/enter.h): an entered command is an agent command of this
 * sandbox, with its environment, spawned by rtn-init like the command itself. */
static int enter_spawn(void *ud, unsigned sb, uint64_t id, uint32_t flags, const char *cwd,
                       char *const argv[], const int fds[3], uint16_t rows, uint16_t cols,
                       struct rtn_error *err) {
        struct rt_exec *x = ud;
        struct rt_env env;
        int r;
        if (sb != 1)
                return rtn_errx(err, ENOENT,
                                "an rtn exec has one sandbox: no sb-%u (enter it by "
                                "its PID alone)",
                                sb);
        if (x->sb.ctl < 0 || x->all_exited)
                return rtn_errx(err, ESRCH, "the sandbox has ended");
        if ((r = rt_spec_opts_env(x->so, &env, &x->sb, INIT_POLICY_AGENT, flags & INIT_SPAWN_PTY,
                                  NULL, err)) < 0)
                return r;
        return rt_sandbox_spawn(&x->sb, id, flags, INIT_POLICY_AGENT, cwd ? cwd : x->sb.workspace,
                                argv, env.vars, fds, rows, cols, err);
}

static void enter_signal(void *ud, uint64_t id, int signo) {
        struct rt_exec *x = ud;
        if (x->sb.ctl >= 0)
                (void)rt_sandbox_signal(&x->sb, id, signo);
}

static const struct rt_enter_ops enter_ops = {enter_spawn, enter_signal};

int rt_exec_open(struct rt_exec *x, const struct rt_exec_opts *o, struct rt_spec *spec,
                 const struct rt_spec_opts *so, struct rtn_error *err) {
        int r;
        x->o = o;
        x->so = so;
        if ((r = open_store(x, spec, so->store_max, err)) < 0)
                return r;
        if ((r = rt_spec_opts_gate(so, spec, &x->gate, err)) < 0)
                return r;
        /* Listening before the sandbox starts: a port in use fails the command, not a
         * connection later. */
        if (so->npublish &&
            (r = netns_publish_new(so->publish, so->npublish, &x->publish, err)) < 0)
                return r;
        return 0;
}

/* rtn enter's socket is made and the run registered here, off the start's critical path:
 * the sandbox's child is building its root on the other CPU and rtn would otherwise wait
 * for its READY, and the command cannot run before the spawn request that follows. The
 * socket first: what rtn ps lists, rtn enter reaches (a request waits in its backlog). Both
 * once, though a start that falls back comes here again. */
static int queue_registered(struct rt_sandbox *sb, void *arg, struct rtn_error *err) {
        struct rt_exec *x = arg;
        struct rtn_error e = {0}; /* beside the entry it is named after; best effort, as it */
        if (!x->enter && rt_enter_listen(&enter_ops, x, &x->enter, &e) < 0)
                log_debug("rtn enter cannot reach this sandbox: %s", e.msg);
        register_running(x);
        return x->queue ? x->queue(sb, x->queue_arg, err) : 0;
}

int rt_exec_start(struct rt_exec *x, struct rt_spec *spec, struct rt_spec_opts *so,
                  rt_queue_fn queue, void *arg, struct rtn_error *err) {
        int r;
        x->queue = queue;
        x->queue_arg = arg;
        x->wait_end = spec->upper_keep;
        if (spec->workspace && spec->workspace_mode == RT_WS_LIVE)
                rt_hostrun_now(spec->workspace, &x->started);
        /* Its command and rtn enter's are the agent's: rtn-init builds no other ruleset */
        spec->policies = INIT_POLICY_BIT(INIT_POLICY_AGENT);
        /* Whether this host denies user namespaces is asked only of a start that failed: the
         * probe is a fork and a user namespace of its own, which every start paid when it
         * came first. The decision is the probe's either way (docs/containers.md). */
        if ((r = rt_sandbox_start_queued(spec, &x->sb, queue_registered, x, err)) < 0) {
                if (!rt_spec_opts_fallback(spec, so, &x->fallback_warn))
                        return r;
                log_debug("full sandbox refused (%s): %s", err->msg, so->isolation_auto);
                x->fell_back = true;
                *err = (struct rtn_error){0};
                if ((r = rt_sandbox_start_queued(spec, &x->sb, queue_registered, x, err)) < 0)
                        return r;
        }
        x->upper_fs = TAKE_FD(x->sb.upper_fs);
        /* The agent's proxy for --allow-net: made before the sandbox, served once it runs. */
        if (x->sb.net_fd >= 0) {
                if ((r = netns_gate_listen(x->gate, TAKE_FD(x->sb.net_fd))) < 0)
                        return rtn_err(err, -r, "serve the network proxy");
                x->gate_fd = r;
        }
        if (x->publish && (r = netns_publish_run(x->publish, x->sb.pidfd, err)) < 0)
                return r;
        return 0;
}

int rt_exec_await_spawned(struct rt_sandbox *sb, const char *cmd, const char *cwd, int *ret_master,
                          struct rtn_error *err) {
        char buf[sizeof(struct init_status) + 64];
        int fds[1];
        size_t nfds = 1;
        ssize_t n = rt_sandbox_recv(sb, buf, sizeof buf, fds, &nfds);
        if (n > 0 &&
            init_check_msg(buf, (size_t)n, INIT_MSG_SPAWNED, sizeof(struct init_spawned)) == 0) {
                *ret_master = nfds ? fds[0] : -1;
                return 0;
        }
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]); /* an empty datagram reads as the end, and may carry one */
        if (n <= 0)
                return rtn_errx(err, EPIPE, "sandbox ended before the command started");
        const struct init_status *st = (const void *)buf;
        if (init_check_msg(buf, (size_t)n, INIT_MSG_SPAWN_FAILED, sizeof *st) < 0)
                return rtn_errx(err, EBADMSG, "unexpected reply to spawn");
        if (st->step == INIT_STEP_ENTER) /* the owner of an entered sandbox refused */
                rtn_errx(err, st->error, "%.*s", (int)sizeof st->message, st->message);
        else if (st->step == INIT_STEP_EXEC)
                rtn_err(err, st->error, "execute %s", cmd);
        else
                rtn_err(err, st->error, "%s %s", init_step_name(st->step),
                        init_step_subject(st->step, cmd, cwd));
        return init_spawn_exit_code(st->step, st->error);
}

int rt_exec_read_ctl(struct rt_sandbox *sb, struct rt_enter *enter, int *wait_status,
                     struct rt_blocked *blocked) {
        union {
                struct init_exited ex;
                struct init_blocked bl;
                struct init_status st;
                char raw[sizeof(struct init_blocked) + 64];
        } u;
        int fds[1];
        size_t nfds = 1;
        ssize_t n = rt_sandbox_recv(sb, u.raw, sizeof u, fds, &nfds);
        if (n <= 0) {
                for (size_t i = 0; i < nfds; i++)
                        close(fds[i]);
                return -1;
        }
        if (rt_enter_event(enter, u.raw, (size_t)n, fds, nfds)) /* an entered command's */
                return 0;
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]);
        if ((size_t)n < sizeof u.ex.hdr || u.ex.hdr.id != 1)
                return 0;
        if (init_check_msg(u.raw, (size_t)n, INIT_MSG_EXITED, sizeof u.ex) == 0) {
                *wait_status = u.ex.wait_status;
                return 1;
        }
        if (u.ex.hdr.type == INIT_MSG_BLOCKED)
                (void)rt_blocked_decode(u.raw, (size_t)n, blocked); /* bad: no report */
        return 0;
}

/* The command was the sandbox's last (INIT_SPAWN_FINAL): when rtn-init reports its exit,
 * every other process has been killed and reaped too, so nothing of the sandbox can act any
 * more, and rtn need not also wait for the kernel to tear down what is left (rtn-init's
 * own exit: the mount namespace with its overlays, each of which waits for an expedited
 * RCU grace period, the network namespace; docs/benchmarks.md), as bwrap does
 * not either. The sandbox's cgroup, which can be removed only once rtn-init has left it, is
 * left to a cleaner (rt_cgroup_release). It waits when something of its own must follow
 * that teardown: a --keep or --commit upper may be moved into the store only once no
 * overlay uses it. Until rtn-init has reported, or when it failed, the sandbox is
 * destroyed and waited for (rt_sandbox_destroy). */
void rt_exec_end(struct rt_exec *x) {
        rt_enter_free(x->enter); /* the callers of rtn enter learn that the sandbox ended */
        x->enter = NULL;
        /* What the walk at the start protected in the workspace, kept for rt_hostrun_since
         * once the report the child shared is gone */
        const struct rt_protect_report *pr = x->sb.protect;
        if (pr && pr->n > 0 && !strcmp(pr->binds[0].mount_point, "/workspace") &&
            !pr->binds[0].whole) {
                const char *l = pr->binds[0].list;
                size_t n = 0;
                for (uint32_t i = 0; i < pr->binds[0].nlisted; i++)
                        n += strlen(l + n) + 1;
                memcpy(x->listed, l, n);
                x->started.listed = x->listed;
                x->started.nlisted = pr->binds[0].nlisted;
                x->started.listed_all = pr->binds[0].nlisted == pr->binds[0].nprotected;
        }
        if (x->all_exited && !x->wait_end)
                rt_sandbox_release(&x->sb);
        else
                rt_sandbox_destroy(&x->sb);
}

void rt_exec_unpublish(struct rt_exec *x) {
        netns_publish_free(x->publish);
        x->publish = NULL;
}

int rt_exec_keep(struct rt_exec *x, char *note, size_t notelen, struct rtn_error *err) {
        struct rt_pending_undo_opts u = {.depth = x->o->undo_depth,
                                         .bytes = x->o->undo_bytes ? x->o->undo_bytes
                                                                   : x->upper_bytes,
                                         .limit = x->upper_bytes};
        int argc = 0;
        while (x->o->cmd && x->o->cmd[argc])
                argc++;
        return rt_pending_keep(&x->sb.idmap, x->upper_fs, x->pending, argc, x->o->cmd, &u, note,
                               notelen, err);
}

int rt_exec_commit(struct rt_exec *x, char ret_id[STORE_ID_SIZE], struct rtn_error *err) {
        const char *msg = x->o->message ? x->o->message : "rtn exec";
        if (x->o->keep)
                return rt_pending_commit(x->st, exec_env(x), msg, &x->sb.idmap, x->session_lock,
                                         ret_id, err);
        struct store_commit_opts co = {.msg = msg,
                                       .parent = x->stack.tip,
                                       .base = &x->base,
                                       .upper_lock = x->session_lock};
        return rt_upper_commit(&x->sb.idmap, x->st, exec_env(x), x->upper_fs, x->session_dir, &co,
                               ret_id, err);
}

static int count_change(enum rt_ws_change what, const char *path, void *ud) {
        ++*(unsigned *)ud;
        return 0;
}

int rt_exec_pending_count(const struct rt_exec *x, unsigned *ret, struct rtn_error *err) {
        unsigned n = 0;
        int r = rt_ws_diff(x->pending, NULL, count_change, &n, err);
        if (r >= 0)
                *ret = n;
        return r;
}

int rt_exec_close(struct rt_exec *x, struct rtn_error *err) {
        int r = 0;
        rt_exec_end(x);
        rt_exec_unpublish(x);
        if (x->session_dir) {
                char *slash = strrchr(x->session_dir, '/');
                *slash = '\0';
                r = rt_remove_tree(&x->sb.idmap, x->session_dir, slash + 1, err);
                free(x->session_dir);
                x->session_dir = NULL;
        }
        x->session_lock = rtn_safe_close(x->session_lock);
        x->upper_fs = rtn_safe_close(x->upper_fs);
        free(x->keep_layers);
        x->keep_layers = NULL;
        store_stack_free(&x->stack);
        if (x->st)
                store_close(x->st);
        x->st = NULL;
        free(x->rootfs);
        x->rootfs = NULL;
        netns_gate_free(x->gate);
        x->gate = NULL;
        return r < 0 ? r : 0;
}
