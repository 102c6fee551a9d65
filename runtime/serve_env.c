/* The environment tools of `rtn serve`: status, commit, snapshots, rollback, reset/discard,
 * gc and diff, on the store (store/) and the session's upper. Commit and rollback refuse while
 * commands run (design.md: quiesce first); reset and discard kill them. */
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
#include "runtime/serve.h"
#include "runtime/upper.h"

#define DIFF_MAX 2000
#define DIRTY_MAX 100

int serve_load_layers(struct serve *sv, struct rtn_error *err) {
        char **paths = NULL;
        size_t n = 0;
        int r = store_layer_stack(sv->store, sv->env, &paths, &n, err);
        if (r < 0)
                return r;
        r = rt_session_set_layers(sv->sess, paths, n);
        store_free_paths(paths, n);
        return r < 0 ? rtn_err(err, r, "layer stack") : 0;
}

static void finish_json(struct mcp_call *call, struct rtn_json_buf *b) {
        if (b->err)
                mcp_call_finish_error(call, "result too large");
        else
                mcp_call_finish(call, b->data, false);
        rtn_json_buf_free(b);
}

static void json_tip(struct rtn_json_buf *b, struct serve *sv, const char *key) {
        char tip[STORE_ID_SIZE];
        rtn_json_key(b, key);
        if (store_tip(sv->store, sv->env, tip, NULL) == 0)
                rtn_json_str(b, tip);
        else
                rtn_json_null(b);
}

/* What the session's uncommitted changes take on their tmpfs. */
static uint64_t upper_bytes(struct serve *sv) {
        uint64_t bytes = 0;
        (void)rt_upper_usage(rt_session_upper_fs(sv->sess), &bytes, NULL);
        return bytes;
}

struct diff_acc {
        struct rtn_json_buf added, modified, deleted;
        size_t n, max;
};

static int diff_cb(enum store_change what, const char *path, void *ud) {
        struct diff_acc *d = ud;
        if (d->n++ >= d->max)
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

static int collect_diff(struct serve *sv, struct diff_acc *d, struct rtn_error *err) {
        d->added = (struct rtn_json_buf)RTN_JSON_BUF_INIT(0);
        d->modified = (struct rtn_json_buf)RTN_JSON_BUF_INIT(0);
        d->deleted = (struct rtn_json_buf)RTN_JSON_BUF_INIT(0);
        rtn_json_arr_begin(&d->added);
        rtn_json_arr_begin(&d->modified);
        rtn_json_arr_begin(&d->deleted);
        const char *upper = rt_session_upper(sv->sess);
        int r = upper ? store_diff(sv->store, sv->env, upper, diff_filtered_cb, d, err) : 0;
        rtn_json_arr_end(&d->added);
        rtn_json_arr_end(&d->modified);
        rtn_json_arr_end(&d->deleted);
        return r < 0 ? r : 0;
}

static void free_diff(struct diff_acc *d) {
        rtn_json_buf_free(&d->added);
        rtn_json_buf_free(&d->modified);
        rtn_json_buf_free(&d->deleted);
}

/* The resource options the session's sandboxes get (rtn serve --upper-size, --memory-max,
 * --pids-max, --setenv; runtime/specopt.h), and how each is enforced. */
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
        /* rt_limits_choose moved it to RLIMIT_AS when no cgroup memory.max can be had. */
        rtn_json_kv_str(b, "memory_enforced_by",
                        !sp->memory_bytes     ? "none"
                        : sp->limits.as_bytes ? "rlimit_as_per_process"
                                              : "cgroup_memory_max");
        rtn_json_kv_int(b, "pids_max", sp->pids_max);
        rtn_json_key(b, "setenv");
        rtn_json_arr_begin(b);
        for (size_t i = 0; i < sv->spec_opts.nsetenv; i++) {
                const char *kv = sv->spec_opts.setenv[i];
                rtn_json_strf(b, "%.*s", (int)strcspn(kv, "="), kv);
        }
        rtn_json_arr_end(b);
        rtn_json_obj_end(b);
}

static int env_status(struct serve *sv, struct mcp_call *call) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        struct rtn_error err = {0};
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "env", sv->env);
        rtn_json_kv_str(&b, "base", sv->rootfs);
        json_tip(&b, sv, "tip");
        rtn_json_key(&b, "layers");
        rtn_json_arr_begin(&b);
        char **paths = NULL;
        size_t n = 0;
        if (store_layer_stack(sv->store, sv->env, &paths, &n, &err) == 0) {
                for (size_t i = 0; i < n; i++) {
                        const char *slash = strrchr(paths[i], '/');
                        rtn_json_str(&b, slash ? slash + 1 : paths[i]);
                }
                store_free_paths(paths, n);
        }
        rtn_json_arr_end(&b);
        rtn_json_kv_int(&b, "upper_bytes", (int64_t)upper_bytes(sv));
        struct diff_acc d = {.max = DIRTY_MAX};
        (void)collect_diff(sv, &d, &err);
        rtn_json_key(&b, "dirty_files");
        rtn_json_arr_begin(&b);
        /* one flat list: added, modified and deleted paths */
        struct rtn_json_buf *parts[] = {&d.added, &d.modified, &d.deleted};
        for (size_t i = 0; i < 3; i++)
                if (parts[i]->len > 2) {
                        rtn_json_raw(&b, parts[i]->data + 1, parts[i]->len - 2);
                }
        rtn_json_arr_end(&b);
        rtn_json_kv_bool(&b, "dirty_truncated", d.n > d.max);
        free_diff(&d);
        rtn_json_kv_int(&b, "running_jobs", serve_running_jobs(sv));
        rtn_json_key(&b, "isolation");
        rtn_json_obj_begin(&b);
        const struct rt_sandbox *sb = rt_session_sandbox(sv->sess);
        enum init_isolation iso = sv->scfg.spec.isolation;
        rtn_json_kv_str(&b, "mode", rt_isolation_name(iso));
        rtn_json_kv_bool(&b, "degraded", iso != INIT_ISOLATION_FULL);
        rtn_json_kv_str(&b, "namespaces",
                        iso == INIT_ISOLATION_LANDLOCK ? "none"
                                                       : "user mount pid net ipc uts cgroup");
        rtn_json_kv_str(&b, "network",
                        iso == INIT_ISOLATION_LANDLOCK ? "host"
                        : sv->scfg.spec.net_none       ? "none"
                                                       : "loopback");
        rtn_json_kv_bool(&b, "seccomp", true);
        rtn_json_kv_bool(&b, "no_new_privs", true);
        rtn_json_kv_int(&b, "landlock_abi", rt_session_alive(sv->sess) ? sb->landlock_abi : 0);
        rtn_json_kv_str(&b, "id_mapping",
                        !rt_session_alive(sv->sess)         ? "not started"
                        : iso == INIT_ISOLATION_LANDLOCK    ? "none"
                        : sb->idmap.mode == RT_IDMAP_SINGLE ? "single"
                        : sb->idmap.mode == RT_IDMAP_SUBID  ? "subid"
                                                            : "root");
        rtn_json_kv_bool(&b, "sandbox_running", rt_session_alive(sv->sess));
        rtn_json_obj_end(&b);
        json_limits(&b, sv);
        rtn_json_obj_end(&b);
        finish_json(call, &b);
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

static int env_commit(struct serve *sv, struct mcp_call *call, const struct mcp_args *a) {
        _cleanup_free_ char *msg = NULL;
        struct rtn_error err = {0};
        char id[STORE_ID_SIZE], buf[4200];
        if (mcp_args_str(a, "message", &msg) < 0)
                return -EINVAL;
        if (refuse_busy(sv, call, "a commit"))
                return 0;
        serve_drop_jobs(sv); /* finished jobs only: their output goes with the old sandbox */
        int committed = rt_session_commit(sv->sess, sv->store, sv->env, msg, id, &err);
        int r = committed;
        if (r >= 0)
                r = serve_load_layers(sv, &err);
        if (r < 0) {
                mcp_call_finish_error(call, "commit failed: %s", err.msg);
                return 0;
        }
        struct store_commit_info info = {0};
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        if (id[0] && store_commit_read(sv->store, id, &info, buf, sizeof buf, &err) == 0) {
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

static int env_snapshots(struct serve *sv, struct mcp_call *call) {
        struct rtn_error err = {0};
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "env", sv->env);
        json_tip(&b, sv, "tip");
        rtn_json_key(&b, "commits");
        rtn_json_arr_begin(&b);
        int r = store_log(sv->store, sv->env, log_cb, &b, &err);
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

static int env_rollback(struct serve *sv, struct mcp_call *call, const struct mcp_args *a) {
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

static int env_drop(struct serve *sv, struct mcp_call *call) {
        struct rtn_error err = {0};
        uint64_t bytes = upper_bytes(sv);
        unsigned killed = serve_drop_jobs(sv);
        rt_session_stop(sv->sess);
        if (rt_session_discard(sv->sess, &err) < 0) {
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

static int env_gc(struct serve *sv, struct mcp_call *call) {
        struct rtn_error err = {0};
        struct store_gc_stats st = {0};
        if (rt_store_gc(rt_session_idmap(sv->sess), sv->store, &st, &err) < 0) {
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

static int env_diff(struct serve *sv, struct mcp_call *call) {
        struct rtn_error err = {0};
        struct diff_acc d = {.max = DIFF_MAX};
        if (collect_diff(sv, &d, &err) < 0) {
                free_diff(&d);
                mcp_call_finish_error(call, "diff failed: %s", err.msg);
                return 0;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_raw(&b, "added", d.added.data, d.added.len);
        rtn_json_kv_raw(&b, "modified", d.modified.data, d.modified.len);
        rtn_json_kv_raw(&b, "deleted", d.deleted.data, d.deleted.len);
        rtn_json_kv_bool(&b, "truncated", d.n > d.max);
        rtn_json_obj_end(&b);
        free_diff(&d);
        finish_json(call, &b);
        return 0;
}

int serve_env_call(struct serve *sv, struct mcp_call *call, const char *tool,
                   const struct mcp_args *a) {
        if (!strcmp(tool, "env_status"))
                return env_status(sv, call);
        if (!strcmp(tool, "env_commit"))
                return env_commit(sv, call, a);
        if (!strcmp(tool, "env_snapshot_list"))
                return env_snapshots(sv, call);
        if (!strcmp(tool, "env_rollback"))
                return env_rollback(sv, call, a);
        if (!strcmp(tool, "env_reset") || !strcmp(tool, "env_discard"))
                return env_drop(sv, call);
        if (!strcmp(tool, "env_gc"))
                return env_gc(sv, call);
        if (!strcmp(tool, "env_diff"))
                return env_diff(sv, call);
        mcp_call_finish_error(call, "unknown environment tool %s", tool);
        return 0;
}
