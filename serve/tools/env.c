/* The environment tools of `rtn serve`: status, commit, snapshots, rollback, reset/discard,
 * gc and diff, on the store (store/) and the session's upper. Commit and rollback refuse while
 * commands run (a commit copies the upper, which a running command could be writing;
 * docs/tools.md, env_commit); reset and discard kill them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "serve/offload.h"
#include "serve/serve.h"
#include "runtime/session/upper.h"
#include "runtime/session/wsover.h"

#define DIFF_MAX 2000
#define DIRTY_MAX 100

int serve_load_layers(struct serve *sv, struct rtn_error *err) {
        struct store_stack st;
        int r = store_stack_get(sv->store, sv->env, &st, err);
        if (r < 0)
                return r;
        if ((r = rt_session_set_layers(sv->sess, st.paths, st.n)) < 0) {
                store_stack_free(&st);
                return rtn_err(err, r, "layer stack");
        }
        store_stack_free(&sv->stack); /* the old stack's layers are no longer ours */
        sv->stack = st;
        return 0;
}

static void finish_json(struct mcp_call *call, struct rtn_json_buf *b) {
        mcp_call_finish_json(call, b, NULL, false);
}

static void json_tip(struct rtn_json_buf *b, struct serve *sv, const char *key) {
        char tip[STORE_ID_SIZE];
        rtn_json_key(b, key);
        if (store_tip(sv->store, sv->env, tip, NULL) == 0)
                rtn_json_str(b, tip);
        else
                rtn_json_null(b);
}

/* A session's uncommitted bytes: what its tmpfs holds (upper_fs, -1 before the first
 * sandbox), an overlay workspace's changes, rtn serve's /tmp and env_undo's checkpoints
 * (tools/undo.c) included. */
static uint64_t upper_bytes(int upper_fs) {
        uint64_t bytes = 0;
        if (upper_fs >= 0)
                (void)rt_upper_usage(upper_fs, &bytes, NULL);
        return bytes;
}

struct diff_acc {
        struct rtn_json_buf added, modified, deleted;
        size_t n, max;
        int64_t ws_pending; /* an overlay workspace's changes, all of them */
        const atomic_bool *cancel;
};

static int diff_cb(enum store_change what, const char *path, void *ud) {
        struct diff_acc *d = ud;
        if (atomic_load(d->cancel) || d->n++ >= d->max)
                return 1;
        struct rtn_json_buf *b = what == STORE_ADDED     ? &d->added
                                 : what == STORE_DELETED ? &d->deleted
                                                         : &d->modified;
        rtn_json_strf(b, "/%s", path);
        return 0;
}

static int diff_filtered_cb(enum store_change what, const char *path, void *ud) {
        if (what == STORE_ADDED && rt_upper_is_skeleton(path))
                return 0;
        return diff_cb(what, path, ud);
}

/* An overlay workspace's pending changes, against the host dir: all counted, the first
 * listed beside the upper's. */
static int ws_diff_cb(enum rt_ws_change what, const char *path, void *ud) {
        struct diff_acc *d = ud;
        d->ws_pending++;
        if (atomic_load(d->cancel))
                return 1;
        if (d->n++ >= d->max)
                return 0;
        struct rtn_json_buf *b = what == RT_WS_ADDED     ? &d->added
                                 : what == RT_WS_DELETED ? &d->deleted
                                                         : &d->modified;
        rtn_json_strf(b, "/workspace/%s", path);
        return 0;
}

/* env_status and env_diff: the store is read on the loop (the tip and the layer stack, small
 * files), the upper is walked on a thread of its own (serve/offload.h), since how long that
 * takes is the agent's to decide. */
struct walk_job {
        struct serve *sv;
        struct mcp_call *call;
        bool status; /* env_status, else env_diff */
        char tip[STORE_ID_SIZE];
        char **layers;
        size_t nlayers;
        int upper_fd; /* the session's upper tmpfs (a dup: the loop may drop its own), or -1 */
        char *dir; /* the session's: an overlay workspace's ws/ */
        bool ws; /* an overlay workspace */
        /* written by the thread */
        uint64_t upper_bytes;
        struct diff_acc d;
        int r;
        struct rtn_error err;
};

static void walk_job_free(struct walk_job *j) {
        store_free_paths(j->layers, j->nlayers);
        free(j->dir);
        rtn_safe_close(j->upper_fd);
        rtn_json_buf_free(&j->d.added);
        rtn_json_buf_free(&j->d.modified);
        rtn_json_buf_free(&j->d.deleted);
        free(j);
}

static void walk_work(void *arg, const atomic_bool *cancel) {
        struct walk_job *j = arg;
        struct diff_acc *d = &j->d;
        if (j->status)
                j->upper_bytes = upper_bytes(j->upper_fd);
        d->cancel = cancel;
        rtn_json_arr_begin(&d->added);
        rtn_json_arr_begin(&d->modified);
        rtn_json_arr_begin(&d->deleted);
        _cleanup_free_ char *upper = NULL;
        if (j->upper_fd >= 0 && asprintf(&upper, "/proc/self/fd/%d/upper", j->upper_fd) < 0)
                j->r = rtn_err(&j->err, ENOMEM, "upper");
        else if (upper)
                j->r = store_diff_layers(j->layers, j->nlayers, upper, diff_filtered_cb, d,
                                         &j->err);
        char root[32];
        if (j->r >= 0 && j->ws)
                j->r = rt_ws_diff(j->dir, rt_ws_root(root, j->upper_fd), ws_diff_cb, d, &j->err);
        rtn_json_arr_end(&d->added);
        rtn_json_arr_end(&d->modified);
        rtn_json_arr_end(&d->deleted);
        if (atomic_load(cancel))
                j->r = rtn_errx(&j->err, ECANCELED, "cancelled");
}

static int count_cb(enum rt_ws_change what, const char *path, void *ud) {
        ++*(int64_t *)ud;
        return 0;
}

/* The resource options the session's sandboxes get (rtn serve --upper-size, --memory-max,
 * --pids-max, --setenv; runtime/sandbox/specopt.h), and how each is enforced. */
/* network: the rules the proxy admits, the host's ports it opens, where it listens inside, and
 * every refusal so far
 * (docs/network.md, "Reports"). */
static void json_network(struct rtn_json_buf *b, struct serve *sv) {
        struct netns_gate *g = rt_session_gate(sv->sess);
        const struct rt_sandbox *sb = rt_session_sandbox(sv->sess);
        rtn_json_key(b, "network");
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "mode", g ? "proxy" : sv->scfg.spec.net_none ? "none" : "loopback");
        rtn_json_key(b, "allow");
        rtn_json_arr_begin(b);
        char rule[300];
        for (size_t i = 0; netns_policy_describe(&sv->spec_opts.net, i, rule, sizeof rule); i++)
                rtn_json_str(b, rule);
        rtn_json_arr_end(b);
        /* --allow-host-port: ports of the host's loopback, at host.rtn.internal:PORT */
        rtn_json_key(b, "host_ports");
        rtn_json_arr_begin(b);
        for (size_t i = 0; i < sv->spec_opts.net.nhost_ports; i++)
                rtn_json_int(b, sv->spec_opts.net.host_ports[i]);
        rtn_json_arr_end(b);
        if (sv->spec_opts.net.nhost_ports)
                rtn_json_kv_str(b, "host_name", NETNS_HOST_NAME);
        if (sv->spec_opts.upstream.set) /* its credentials masked */
                rtn_json_kv_str(b, "upstream_proxy", sv->spec_opts.upstream.shown);
        if (g && rt_session_alive(sv->sess) && sb->net_port) {
                char url[40];
                snprintf(url, sizeof url, "http://127.0.0.1:%u", sb->net_port);
                rtn_json_kv_str(b, "proxy", url);
        }
        struct netns_denial d[32];
        uint64_t more = 0;
        size_t n = g ? netns_gate_denials(g, NETNS_GATE_ALL, 0, d, 32, &more) : 0;
        rtn_json_kv_int(b, "denied_total", (int64_t)(g ? netns_gate_seq(g) : 0));
        serve_json_denials(b, "denied", d, n, more);
        rtn_json_obj_end(b);
}

static void json_limits(struct rtn_json_buf *b, const struct serve *sv) {
        const struct rt_spec *sp = &sv->scfg.spec;
        rtn_json_key(b, "limits");
        rtn_json_obj_begin(b);
        rtn_json_kv_int(b, "upper_size", (int64_t)sp->upper_bytes);
        rtn_json_kv_int(b, "tmp_size", (int64_t)sp->upper_bytes);
        rtn_json_key(b, "memory_max");
        if (sp->memory_bytes)
                rtn_json_int(b, (int64_t)sp->memory_bytes);
        else
                rtn_json_null(b);
        /* rt_limits_choose moved it to RLIMIT_DATA when no cgroup memory.max can be had. */
        rtn_json_kv_str(b, "memory_enforced_by",
                        !sp->memory_bytes       ? "none"
                        : sp->limits.data_bytes ? "rlimit_data_per_process"
                                                : "cgroup_memory_max");
        rtn_json_kv_int(b, "pids_max", sp->pids_max);
        rtn_json_key(b, "setenv");
        rtn_json_arr_begin(b);
        for (size_t i = 0; i < sv->spec_opts.nsetenv; i++) {
                const char *kv = sv->spec_opts.setenv[i];
                size_t len = strcspn(kv, "="), j = 0;
                /* each name once, where it was first set (a later setting wins its value) */
                while (j < i && (strncmp(sv->spec_opts.setenv[j], kv, len + 1) != 0))
                        j++;
                if (j == i)
                        rtn_json_strf(b, "%.*s", (int)len, kv);
        }
        rtn_json_arr_end(b);
        rtn_json_obj_end(b);
}

/* --publish: the host's ADDR:HOSTPORT forwarded to each port of the sandbox's loopback; the
 * ports go to the first sandbox alone (serve/serve.c, publish_target). */
static void json_published(struct rtn_json_buf *b, const struct serve *sv) {
        bool first = !strcmp(sv->handle, SERVE_DEFAULT_SANDBOX);
        rtn_json_key(b, "published");
        rtn_json_arr_begin(b);
        for (size_t i = 0; first && i < sv->spec_opts.npublish; i++) {
                const struct netns_port *pt = &sv->spec_opts.publish[i];
                rtn_json_obj_begin(b);
                rtn_json_kv_str(b, "address", pt->addr);
                rtn_json_kv_int(b, "host_port", pt->host_port);
                rtn_json_kv_int(b, "sandbox_port", pt->sandbox_port);
                rtn_json_obj_end(b);
        }
        rtn_json_arr_end(b);
}

int64_t serve_ws_pending(struct serve *sv) {
        struct rtn_error err = {0};
        int64_t n = 0;
        char root[32];
        return rt_ws_diff(rt_session_dir(sv->sess), rt_ws_root(root, rt_session_upper_fs(sv->sess)),
                          count_cb, &n, &err) < 0
                       ? 0
                       : n;
}

/* What the agent may not take back: workspace_mode, and live_paths, the mount points where a
 * write is on the host at once (env_reset and env_rollback cannot undo it). host_dirs, with
 * each directory's mode and protections, is serve_hostdirs.c's. The binds are the
 * session's, bind_host_dir's included. */
static void json_live_paths(struct rtn_json_buf *b, struct serve *sv) {
        const struct rt_spec *sp = rt_session_spec(sv->sess);
        bool overlay = sp->workspace && sp->workspace_mode == RT_WS_OVERLAY;
        rtn_json_kv_str(b, "workspace_mode",
                        !sp->workspace ? "none"
                        : overlay      ? "overlay"
                                       : "live");
        rtn_json_key(b, "live_paths");
        rtn_json_arr_begin(b);
        if (sp->workspace && !overlay)
                rtn_json_str(b, "/workspace");
        for (size_t i = 0; i < sp->nbinds; i++)
                if (sp->binds[i].rw)
                        rtn_json_str(b, sp->binds[i].dst);
        rtn_json_arr_end(b);
}

static void status_done(struct walk_job *j) {
        struct serve *sv = j->sv;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "env", sv->env);
        rtn_json_kv_str(&b, "base", sv->rootfs);
        rtn_json_key(&b, "tip");
        if (j->tip[0])
                rtn_json_str(&b, j->tip);
        else
                rtn_json_null(&b);
        rtn_json_key(&b, "layers");
        rtn_json_arr_begin(&b);
        for (size_t i = 0; i < j->nlayers; i++) {
                const char *slash = strrchr(j->layers[i], '/');
                rtn_json_str(&b, slash ? slash + 1 : j->layers[i]);
        }
        rtn_json_arr_end(&b);
        rtn_json_kv_int(&b, "upper_bytes", (int64_t)j->upper_bytes);
        rtn_json_key(&b, "dirty_files");
        rtn_json_arr_begin(&b);
        /* one flat list: added, modified and deleted paths */
        struct rtn_json_buf *parts[] = {&j->d.added, &j->d.modified, &j->d.deleted};
        for (size_t i = 0; i < 3; i++)
                if (!parts[i]->err && parts[i]->len > 2)
                        rtn_json_raw(&b, parts[i]->data + 1, parts[i]->len - 2);
        rtn_json_arr_end(&b);
        rtn_json_kv_bool(&b, "dirty_truncated", j->d.n > j->d.max);
        rtn_json_kv_int(&b, "running_jobs", serve_running_jobs(sv));
        serve_json_host_dirs(&b, sv, j->d.ws_pending);
        rtn_json_key(&b, "isolation");
        rtn_json_obj_begin(&b);
        const struct rt_sandbox *sb = rt_session_sandbox(sv->sess);
        enum init_isolation iso = sv->scfg.spec.isolation;
        rtn_json_kv_str(&b, "mode", rt_isolation_name(iso));
        rtn_json_kv_bool(&b, "degraded", iso != INIT_ISOLATION_FULL);
        /* Chosen by rtn where user namespaces are denied (docs/containers.md), and what a
         * container made the sandbox do otherwise; "" when neither. */
        rtn_json_kv_bool(&b, "automatic", sv->spec_opts.isolation_auto[0] != '\0');
        rtn_json_kv_str(&b, "reason", sv->spec_opts.isolation_auto);
        rtn_json_kv_str(&b, "container_fallback",
                        rt_session_alive(sv->sess) ? rt_setup_warning(sb) : "");
        rtn_json_kv_str(&b, "namespaces",
                        iso == INIT_ISOLATION_LANDLOCK ? "none"
                                                       : "user mount pid net ipc uts cgroup");
        rtn_json_kv_str(&b, "network",
                        iso == INIT_ISOLATION_LANDLOCK ? "host"
                        : sv->scfg.spec.net_none       ? "none"
                                                       : "loopback");
        rtn_json_kv_bool(&b, "seccomp", true);
        rtn_json_kv_bool(&b, "allow_ptrace", sv->scfg.spec.allow_ptrace);
        rtn_json_kv_bool(&b, "no_new_privs", true);
        rtn_json_kv_int(&b, "landlock_abi", rt_session_alive(sv->sess) ? sb->landlock_abi : 0);
        rtn_json_kv_str(&b, "id_mapping",
                        !rt_session_alive(sv->sess)         ? "not started"
                        : iso == INIT_ISOLATION_LANDLOCK    ? "none"
                        : sb->idmap.mode == RT_IDMAP_SINGLE ? "single"
                        : sb->idmap.mode == RT_IDMAP_SUBID  ? "subid"
                                                            : "root");
        rtn_json_kv_bool(&b, "sandbox_running", rt_session_alive(sv->sess));
        /* Where the commands' workspace and temp dir are: host paths without mounts. */
        bool host = iso == INIT_ISOLATION_LANDLOCK, alive = rt_session_alive(sv->sess);
        rtn_json_kv_str(&b, "workspace_dir", !host ? "/workspace" : alive ? sb->workspace : "");
        rtn_json_kv_str(&b, "tmp_dir", !host ? "/tmp" : alive ? sb->host_tmp : "");
        rtn_json_kv_str(&b, "warning", rt_isolation_warning(iso));
        rtn_json_obj_end(&b);
        json_live_paths(&b, sv);
        json_limits(&b, sv);
        json_network(&b, sv);
        json_published(&b, sv);
        rtn_json_obj_end(&b);
        finish_json(j->call, &b);
}

static void diff_done(struct walk_job *j) {
        struct diff_acc *d = &j->d;
        if (j->r < 0) {
                mcp_call_finish_error(j->call, "diff failed: %s", j->err.msg);
                return;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_raw(&b, "added", d->added.data, d->added.len);
        rtn_json_kv_raw(&b, "modified", d->modified.data, d->modified.len);
        rtn_json_kv_raw(&b, "deleted", d->deleted.data, d->deleted.len);
        rtn_json_kv_bool(&b, "truncated", d->n > d->max);
        rtn_json_obj_end(&b);
        finish_json(j->call, &b);
}

static void walk_done(void *arg) {
        struct walk_job *j = arg;
        if (j->status)
                status_done(j);
        else
                diff_done(j);
        walk_job_free(j);
}

static void walk_abandon(void *arg, bool running) {
        struct walk_job *j = arg;
        mcp_call_finish_error(j->call, "the server is shutting down");
        if (!running)
                walk_job_free(j);
}

static const struct rt_offload_ops walk_ops = {
        .work = walk_work, .done = walk_done, .abandon = walk_abandon};

static int start_walk(struct serve *sv, struct mcp_call *call, bool status) {
        int r;
        if (!sv->offload && (r = rt_offload_new(sv->loop, &sv->offload)) < 0)
                return r;
        struct walk_job *j = calloc(1, sizeof *j);
        if (!j || !(j->dir = strdup(rt_session_dir(sv->sess)))) {
                free(j);
                return -ENOMEM;
        }
        j->sv = sv;
        j->call = call;
        j->status = status;
        int ufs = rt_session_upper_fs(sv->sess);
        j->upper_fd = ufs < 0 ? -1 : fcntl(ufs, F_DUPFD_CLOEXEC, 3);
        if (ufs >= 0 && j->upper_fd < 0) {
                r = -errno;
                walk_job_free(j);
                return r;
        }
        j->ws = rt_session_spec(sv->sess)->workspace_mode == RT_WS_OVERLAY;
        j->d = (struct diff_acc){.added = RTN_JSON_BUF_INIT(0),
                                 .modified = RTN_JSON_BUF_INIT(0),
                                 .deleted = RTN_JSON_BUF_INIT(0),
                                 .max = status ? DIRTY_MAX : DIFF_MAX};
        /* The tip and layers the sandbox runs on (held: store_stack_get), which the upper
         * is a change to, even when another server has moved the environment's tip since. */
        memcpy(j->tip, sv->stack.tip, sizeof j->tip);
        j->layers = calloc(sv->stack.n + 1, sizeof *j->layers);
        for (size_t i = 0; j->layers && i < sv->stack.n; i++, j->nlayers++)
                if (!(j->layers[i] = strdup(sv->stack.paths[i])))
                        break;
        if (!j->layers || j->nlayers < sv->stack.n) {
                walk_job_free(j);
                return -ENOMEM;
        }
        if ((r = rt_offload_run(sv->offload, &walk_ops, j, call)) < 0) {
                walk_job_free(j);
                return r;
        }
        return 0;
}

static bool refuse_busy(struct serve *sv, struct mcp_call *call, const char *what) {
        unsigned n = rt_session_running(sv->sess);
        if (n == 0)
                return false;
        mcp_call_finish_error(call,
                              "%u command(s) still running; %s needs a quiet sandbox: "
                              "stop them with shell_job_kill (shell_job_list shows them), or "
                              "env_reset to drop everything",
                              n, what);
        return true;
}

int serve_env_commit(struct serve *sv, struct mcp_call *call, const char *tool,
                     const struct mcp_args *a) {
        _cleanup_free_ char *msg = NULL;
        struct rtn_error err = {0};
        char id[STORE_ID_SIZE], buf[4200];
        bool rebase = false;
        if (mcp_args_str(a, "message", &msg) < 0)
                return -EINVAL;
        (void)mcp_args_bool(a, "rebase", &rebase);
        if (refuse_busy(sv, call, "a commit"))
                return 0;
        serve_drop_jobs(sv); /* finished jobs only: their output goes with the old sandbox */
        /* On the tip the sandbox runs on, unless told: another server on this environment
         * may have moved it (docs/store.md, "Live users"). */
        struct store_commit_opts co = {.msg = msg,
                                       .parent = rebase ? NULL : sv->stack.tip,
                                       .base = &sv->base,
                                       .upper_lock = sv->session_lock};
        int committed = rt_session_commit(sv->sess, sv->store, sv->env, &co, id, &err);
        int r = committed;
        if (r == -ESTALE) {
                mcp_call_finish_error(call,
                                      "commit refused: %s. Your changes are still in the "
                                      "sandbox: env_commit with rebase=true commits them on "
                                      "the new tip; env_reset starts over from it",
                                      err.msg);
                return 0;
        }
        if (r >= 0)
                serve_undo_forget(sv, true); /* undoable back to the commit, not past it */
        if (r >= 0)
                r = serve_load_layers(sv, &err);
        if (r < 0) {
                mcp_call_finish_error(call, "commit failed: %s", err.msg);
                return 0;
        }
        struct store_commit_info info = {0};
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        if (committed == 1) { /* nothing new: no commit was made, the tip stays */
                rtn_json_kv_str(&b, "commit_id", id);
                rtn_json_kv_str(&b, "layer_id", "");
                rtn_json_key(&b, "parent");
                rtn_json_null(&b);
                rtn_json_kv_str(&b, "message",
                                id[0] ? "nothing to commit: the sandbox has no changes since "
                                        "the tip (commit_id), which stays"
                                      : "nothing to commit: the sandbox has no changes");
        } else if (id[0] && store_commit_read(sv->store, id, &info, buf, sizeof buf, &err) == 0) {
                rtn_json_kv_str(&b, "commit_id", info.id);
                rtn_json_kv_str(&b, "layer_id", info.layer);
                rtn_json_key(&b, "parent");
                if (info.parent[0])
                        rtn_json_str(&b, info.parent);
                else
                        rtn_json_null(&b);
                rtn_json_kv_str(&b, "message", info.message ? info.message : "");
        } else {
                rtn_json_kv_str(&b, "commit_id", "");
                rtn_json_kv_str(&b, "layer_id", "");
                rtn_json_key(&b, "parent");
                rtn_json_null(&b);
                rtn_json_kv_str(&b, "message", "nothing to commit: the sandbox has no changes");
        }
        rtn_json_kv_bool(&b, "unchanged", committed == 1);
        /* Not in the commit: they stay pending for workspace_apply. */
        if (rt_session_spec(sv->sess)->workspace_mode == RT_WS_OVERLAY)
                rtn_json_kv_int(&b, "workspace_pending", serve_ws_pending(sv));
        rtn_json_obj_end(&b);
        finish_json(call, &b);
        return 0;
}

static int log_cb(const struct store_commit_info *c, void *ud) {
        struct rtn_json_buf *b = ud;
        char when[32];
        struct tm tm;
        time_t t = (time_t)c->time;
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "commit_id", c->id);
        rtn_json_key(b, "parent");
        if (c->parent[0])
                rtn_json_str(b, c->parent);
        else
                rtn_json_null(b);
        rtn_json_kv_str(b, "message", c->message ? c->message : "");
        rtn_json_kv_str(b, "time", when);
        rtn_json_obj_end(b);
        return b->err ? 1 : 0;
}

static int reflog_cb(const struct store_reflog_entry *e, void *ud) {
        struct rtn_json_buf *b = ud;
        char when[32];
        struct tm tm;
        time_t t = (time_t)e->time;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "commit_id", e->id);
        rtn_json_kv_str(b, "time", when);
        rtn_json_kv_str(b, "op", e->op);
        rtn_json_obj_end(b);
        return b->err ? 1 : 0;
}

int serve_env_snapshot_list(struct serve *sv, struct mcp_call *call, const char *tool,
                            const struct mcp_args *a) {
        struct rtn_error err = {0};
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "env", sv->env);
        json_tip(&b, sv, "tip");
        rtn_json_key(&b, "commits");
        rtn_json_arr_begin(&b);
        int r = store_log(sv->store, sv->env, log_cb, &b, &err);
        rtn_json_arr_end(&b);
        rtn_json_key(&b, "reflog");
        rtn_json_arr_begin(&b);
        if (r >= 0)
                r = store_reflog(sv->store, sv->env, reflog_cb, &b, &err);
        rtn_json_arr_end(&b);
        rtn_json_obj_end(&b);
        if (r < 0 && r != -ENOENT) {
                rtn_json_buf_free(&b);
                mcp_call_finish_error(call, "cannot read the history: %s", err.msg);
                return 0;
        }
        finish_json(call, &b);
        return 0;
}

int serve_env_rollback(struct serve *sv, struct mcp_call *call, const char *tool,
                       const struct mcp_args *a) {
        _cleanup_free_ char *target = NULL;
        struct rtn_error err = {0};
        char prev[STORE_ID_SIZE] = "", id[STORE_ID_SIZE];
        if (mcp_args_str(a, "commit_id", &target) < 0)
                return -EINVAL;
        if (refuse_busy(sv, call, "a rollback"))
                return 0;
        (void)store_tip(sv->store, sv->env, prev, NULL);
        int r = store_rollback(sv->store, sv->env, target, id, &err);
        if (r < 0) {
                mcp_call_finish_error(call,
                                      "rollback failed: %s (env_snapshot_list shows the "
                                      "commits)",
                                      err.msg);
                return 0;
        }
        /* Uncommitted changes were made against the old tip: they go. */
        serve_drop_jobs(sv);
        if ((r = rt_session_discard(sv->sess, &err)) < 0 || (r = serve_load_layers(sv, &err)) < 0) {
                mcp_call_finish_error(call, "rolled back, but the sandbox could not be reset: %s",
                                      err.msg);
                return 0;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "commit_id", id);
        rtn_json_key(&b, "previous");
        if (prev[0])
                rtn_json_str(&b, prev);
        else
                rtn_json_null(&b);
        rtn_json_obj_end(&b);
        finish_json(call, &b);
        return 0;
}

static int env_drop(struct serve *sv, struct mcp_call *call, bool reset) {
        struct rtn_error err = {0};
        uint64_t bytes = upper_bytes(rt_session_upper_fs(sv->sess));
        /* Stopped first, so that a job's waiters hear it was killed, not that it runs. */
        unsigned killed = serve_running_jobs(sv);
        rt_session_stop_for(sv->sess, reset ? "env_reset reset the sandbox"
                                            : "env_discard dropped the uncommitted changes");
        serve_drop_jobs(sv);
        /* Nothing uncommitted is left: start from the env's tip as it is now, which another
         * server may have moved. */
        serve_undo_forget(sv, false); /* the checkpoints go with the tmpfs */
        if (rt_session_discard(sv->sess, &err) < 0 ||
            rt_ws_drop(rt_session_dir(sv->sess), NULL, rt_session_idmap(sv->sess), &err) < 0 ||
            serve_load_layers(sv, &err) < 0) {
                mcp_call_finish_error(call, "reset failed: %s", err.msg);
                return 0;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        json_tip(&b, sv, "tip");
        rtn_json_kv_int(&b, "discarded_bytes", (int64_t)bytes);
        rtn_json_kv_int(&b, "killed_jobs", killed);
        rtn_json_obj_end(&b);
        finish_json(call, &b);
        return 0;
}

int serve_env_gc(struct serve *sv, struct mcp_call *call, const char *tool,
                 const struct mcp_args *a) {
        struct rtn_error err = {0};
        struct store_gc_stats st = {0};
        if (rt_store_gc(rt_session_idmap(sv->sess), sv->store, STORE_REFLOG_EXPIRE_SEC, &st, &err) <
            0) {
                mcp_call_finish_error(call, "gc failed: %s", err.msg);
                return 0;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_int(&b, "removed_layers", (int64_t)st.layers);
        rtn_json_kv_int(&b, "removed_commits", (int64_t)st.commits);
        rtn_json_kv_int(&b, "freed_bytes", 0);
        rtn_json_obj_end(&b);
        finish_json(call, &b);
        return 0;
}

#define APPLY_LIST_MAX 2000

struct apply_acc {
        struct rtn_json_buf applied, refused;
        size_t n;
};

static const char *change_name(enum rt_ws_change what) {
        return what == RT_WS_ADDED ? "added" : what == RT_WS_DELETED ? "deleted" : "modified";
}

static int apply_cb(enum rt_ws_change what, const char *path, const char *reason, void *ud) {
        struct apply_acc *a = ud;
        if (a->n++ >= APPLY_LIST_MAX)
                return 0; /* counted, not listed: the walk goes on */
        struct rtn_json_buf *b = reason ? &a->refused : &a->applied;
        rtn_json_obj_begin(b);
        rtn_json_key(b, "path");
        rtn_json_strf(b, "/workspace/%s", path);
        rtn_json_kv_str(b, "change", change_name(what));
        if (reason)
                rtn_json_kv_str(b, "reason", reason);
        rtn_json_obj_end(b);
        return 0;
}

/* workspace_apply: quiesce as a commit does, stop the sandbox (the overlay must not be
 * mounted while its upper and lower change), write the changes, and let the next call start
 * a sandbox on what is left pending. */
int serve_workspace_apply(struct serve *sv, struct mcp_call *call, const char *tool,
                          const struct mcp_args *a) {
        bool dry = false;
        struct rtn_error err = {0};
        (void)mcp_args_bool(a, "dry_run", &dry);
        const struct rt_spec *sp = rt_session_spec(sv->sess);
        if (sp->workspace_mode != RT_WS_OVERLAY) {
                mcp_call_finish_error(call, "workspace_apply needs --workspace-mode overlay");
                return 0;
        }
        if (!dry && refuse_busy(sv, call, "workspace_apply"))
                return 0;
        if (!dry) {
                serve_drop_jobs(sv); /* finished ones only */
                rt_session_stop(sv->sess);
        }
        struct apply_acc acc = {.applied = RTN_JSON_BUF_INIT(0), .refused = RTN_JSON_BUF_INIT(0)};
        rtn_json_arr_begin(&acc.applied);
        rtn_json_arr_begin(&acc.refused);
        char root[32];
        int r = rt_ws_apply(rt_session_dir(sv->sess),
                            rt_ws_root(root, rt_session_upper_fs(sv->sess)), dry, apply_cb, &acc,
                            &err);
        rtn_json_arr_end(&acc.applied);
        rtn_json_arr_end(&acc.refused);
        if (r < 0) {
                mcp_call_finish_error(call, "workspace_apply failed: %s", err.msg);
        } else {
                struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
                rtn_json_obj_begin(&b);
                rtn_json_kv_str(&b, "host_path", sp->workspace);
                rtn_json_kv_bool(&b, "dry_run", dry);
                rtn_json_kv_raw(&b, "applied", acc.applied.data, acc.applied.len);
                rtn_json_kv_raw(&b, "refused", acc.refused.data, acc.refused.len);
                rtn_json_kv_bool(&b, "truncated", acc.n > APPLY_LIST_MAX);
                rtn_json_obj_end(&b);
                finish_json(call, &b);
        }
        rtn_json_buf_free(&acc.applied);
        rtn_json_buf_free(&acc.refused);
        return 0;
}

int serve_env_status(struct serve *sv, struct mcp_call *call, const char *tool,
                     const struct mcp_args *a) {
        return start_walk(sv, call, true);
}

int serve_env_diff(struct serve *sv, struct mcp_call *call, const char *tool,
                   const struct mcp_args *a) {
        return start_walk(sv, call, false);
}

int serve_env_reset(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        return env_drop(sv, call, true);
}

int serve_env_discard(struct serve *sv, struct mcp_call *call, const char *tool,
                      const struct mcp_args *a) {
        return env_drop(sv, call, false);
}
