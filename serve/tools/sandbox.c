/* `rtn serve`: sandboxes as handles (docs/tools.md, "Sandboxes"). A server starts with one
 * sandbox, sb-1, which every call without a sandbox argument acts on; sandbox_new opens
 * another on an environment or a commit, sandbox_fork one holding a copy of a sandbox's
 * uncommitted changes (runtime/session/session.h, rt_session_fork), sandbox_close ends one.
 * Each sandbox has its own session, session dir, upper, jobs and file server; handles are
 * never reused, so a closed one stays refused by name. At most --max-sandboxes are open. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/term.h"
#include "serve/offload.h"
#include "serve/serve.h"
#include "serve/tools/http.h"
#include "runtime/session/file_client.h"
#include "runtime/session/pending.h"
#include "runtime/session/registry.h"
#include "runtime/session/wsover.h"

/* `rtn ps` lists the open sandboxes, each as `rtn enter PID/sb-N` takes it. */
static void registry_sync(struct serve_hub *h) {
        char list[1024];
        size_t off = 0;
        list[0] = '\0';
        for (size_t i = 0; i < h->n && off < sizeof list; i++)
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%s=%s", off ? " " : "",
                                        h->sbs[i]->handle, h->sbs[i]->env);
        if (off >= sizeof list) /* cut at the last whole one */
                *(strrchr(list, ' ') ? strrchr(list, ' ') : list) = '\0';
        (void)rt_registry_set_sandboxes(list);
}

/* A copy of the template with nothing of its own yet. */
static struct serve *sandbox_alloc(struct serve_hub *h) {
        struct serve *sv = malloc(sizeof *sv);
        if (!sv)
                return NULL;
        *sv = h->tmpl;
        sv->own_env = NULL;
        sv->sess = NULL;
        sv->session_dir = NULL;
        sv->session_lock = -1;
        memset(sv->jobs, 0, sizeof sv->jobs);
        sv->next_job = 0;
        sv->http = NULL;
        sv->files = NULL;
        sv->offload = NULL;
        sv->bind_strs = NULL;
        sv->nbind_strs = 0;
        sv->have_idmap = false;
        sv->stack = (struct store_stack){0};
        sv->undo = NULL;
        sv->used_usec = rtn_now_usec();
        sv->num = h->next;
        snprintf(sv->handle, sizeof sv->handle, "sb-%u", h->next);
        return sv;
}

/* The layers a new sandbox runs on: the server's environment's tip (from NULL), another
 * environment's (then its env; it must run on this base), or a commit's. */
static int sandbox_layers(struct serve *sv, const char *from, struct rtn_error *err) {
        char id[STORE_ID_SIZE];
        if (!from)
                return store_stack_get(sv->store, sv->env, &sv->stack, err);
        if (store_env_valid(from) == 0 && store_tip(sv->store, from, id, NULL) == 0) {
                int r = store_base_check(sv->store, from, &sv->base, false, err);
                if (r < 0)
                        return r;
                if (!(sv->own_env = strdup(from)))
                        return rtn_err(err, ENOMEM, "environment name");
                sv->env = sv->own_env;
                return store_stack_get(sv->store, sv->env, &sv->stack, err);
        }
        int r = store_resolve(sv->store, sv->env, from, id, NULL);
        if (r < 0)
                return rtn_errx(err, ENOENT,
                                "from: no environment with commits and no commit named '%s' "
                                "(env_snapshot_list lists the commits)",
                                from);
        return store_stack_of(sv->store, id, &sv->stack, err);
}

static int sandbox_session(struct serve *sv, struct serve *src, struct rtn_error *err) {
        int r = store_session_new(sv->store, &sv->session_dir, &sv->session_lock, err);
        if (r < 0)
                return r;
        sv->scfg.session_dir = sv->session_dir;
        if (src)
                r = rt_session_fork(src->sess, &sv->scfg, &sv->sess, err);
        else
                r = rt_session_new(sv->loop, &sv->scfg, &sv->sess, err);
        if (r < 0)
                return r;
        rt_session_set_enter(sv->sess, sv->hub->enter, sv->num); /* `rtn enter PID/sb-N` */
        if (src)
                return 0;
        if ((r = rt_session_set_layers(sv->sess, sv->stack.paths, sv->stack.n)) < 0)
                return rtn_err(err, r, "layer stack");
        return 0;
}

int serve_sandbox_open(struct serve_hub *h, const char *from, struct serve *src, struct serve **ret,
                       struct rtn_error *err) {
        if (h->n >= h->max)
                return rtn_errx(err, EMFILE,
                                "%zu sandboxes are open, the most this server keeps "
                                "(--max-sandboxes %u); close one with sandbox_close first",
                                h->n, h->max);
        struct serve **sbs = realloc(h->sbs, (h->n + 1) * sizeof *sbs);
        if (!sbs)
                return rtn_err(err, ENOMEM, "sandbox table");
        h->sbs = sbs;
        struct serve *sv = sandbox_alloc(h);
        if (!sv)
                return rtn_err(err, ENOMEM, "sandbox");
        int r;
        if (src) {
                if (src->own_env && !(sv->env = sv->own_env = strdup(src->own_env)))
                        r = rtn_err(err, ENOMEM, "environment name");
                else
                        r = store_stack_of(sv->store, src->stack.tip, &sv->stack, err);
        } else {
                r = sandbox_layers(sv, from, err);
        }
        if (r >= 0)
                r = sandbox_session(sv, src, err);
        if (r < 0) {
                serve_sandbox_end(sv, false);
                return r;
        }
        h->next++;
        h->sbs[h->n++] = sv;
        registry_sync(h);
        *ret = sv;
        return 0;
}

/* At exit, an overlay workspace's changes not applied become the environment's pending
 * changes, for rtn diff / rtn apply / rtn reset, unless it has some of its own (another
 * sandbox's, kept first: the oldest sandbox's win). */
static void keep_workspace_changes(struct serve *sv) {
        char dir[4096];
        int lock = -1;
        struct rtn_error err = {0};
        int r = rt_pending_open(sv->store, sv->env, dir, sizeof dir, &lock, &err);
        if (r == 0)
                r = rt_ws_move(sv->session_dir, rt_session_upper_fs(sv->sess), dir,
                               rt_session_idmap(sv->sess), &err);
        if (r == 1) /* no rtn exec --keep run made them: rtn undo's history ends here */
                rt_pending_undo_clear(dir, rt_session_idmap(sv->sess));
        rtn_safe_close(lock);
        if (r == 1)
                rtn_term_printf(
                        stderr,
                        "rtn serve: the workspace changes of sandbox %s not applied are kept as "
                        "the pending changes of environment %s (rtn diff, rtn apply, rtn reset)\n",
                        sv->handle, sv->env);
        else if (r < 0)
                rtn_term_printf(
                        stderr,
                        "rtn serve: the workspace changes of sandbox %s not applied are lost: "
                        "%s\n",
                        sv->handle, err.msg);
}

void serve_sandbox_end(struct serve *sv, bool keep_ws) {
        struct serve_hub *h = sv->hub;
        for (size_t i = 0; i < h->n; i++)
                if (h->sbs[i] == sv) {
                        memmove(&h->sbs[i], &h->sbs[i + 1], (h->n - i - 1) * sizeof *h->sbs);
                        h->n--;
                        registry_sync(h);
                        break;
                }
        rt_http_shutdown(sv->http);
        rt_offload_shutdown(sv->offload);
        serve_drop_jobs(sv);
        rt_files_free(sv->files); /* pending file calls get their answers */
        sv->files = NULL;
        if (sv->sess) {
                if (rt_session_idmap(sv->sess)) {
                        sv->idmap = *rt_session_idmap(sv->sess);
                        sv->have_idmap = true;
                }
                /* The sandbox first: no overlay may have the workspace's upper mounted while
                 * it is copied out; the tmpfs it is on goes with the session. */
                rt_session_stop(sv->sess);
                if (keep_ws && rt_session_spec(sv->sess)->workspace_mode == RT_WS_OVERLAY)
                        keep_workspace_changes(sv);
                serve_undo_forget(sv, false); /* the checkpoints go with the tmpfs */
                rt_session_free(sv->sess); /* the last fd of its tmpfs upper */
        }
        if (h->installing == sv)
                h->installing = NULL;
        if (sv->session_dir) {
                /* The session's upper dies with it: only commits persist. */
                char *slash = strrchr(sv->session_dir, '/');
                struct rtn_error e2 = {0};
                if (slash) {
                        *slash = '\0';
                        if (rt_remove_tree(sv->have_idmap ? &sv->idmap : NULL, sv->session_dir,
                                           slash + 1, &e2) < 0)
                                rtn_term_printf(stderr, "rtn serve: %s\n", e2.msg);
                }
        }
        rtn_safe_close(sv->session_lock);
        free(sv->session_dir);
        rt_http_free(sv->http);
        rt_offload_free(sv->offload);
        serve_bind_free(sv);
        store_stack_free(&sv->stack);
        free(sv->own_env);
        free(sv);
}

struct serve *serve_sandbox_pick(struct serve_hub *h, struct mcp_call *call,
                                 const struct mcp_args *a) {
        _cleanup_free_ char *name = NULL;
        const char *want = mcp_args_str(a, "sandbox", &name) == 0 ? name : SERVE_DEFAULT_SANDBOX;
        for (size_t i = 0; i < h->n; i++)
                if (!strcmp(h->sbs[i]->handle, want))
                        return h->sbs[i];
        unsigned num;
        char end;
        if (sscanf(want, "sb-%u%c", &num, &end) == 1 && num >= 1 && num < h->next)
                mcp_call_finish_error(
                        call, "sandbox %s was closed%s%s; sandbox_list lists the open ones", want,
                        h->idle_usec ? " (by sandbox_close, or unused longer than the server's "
                                       "--idle-timeout)"
                                     : "",
                        name ? ""
                             : " (it is the default: name an open one "
                               "with the sandbox argument)");
        else
                mcp_call_finish_error(call,
                                      "no sandbox %s in this server; sandbox_list lists the open "
                                      "ones",
                                      want);
        return NULL;
}

/* A sandbox is busy while a call on it, or a command or job of it, runs: the clock starts
 * again when the last ends. Handles are closed oldest first, as sandbox_close would close
 * them (its jobs killed: none runs). */
void serve_sandboxes_reap(struct serve_hub *h) {
        uint64_t now = rtn_now_usec();
        for (size_t i = 0; i < h->n;) {
                struct serve *sv = h->sbs[i];
                if ((sv->sess && rt_session_running(sv->sess) > 0) ||
                    mcp_server_owned(h->tmpl.srv, sv->num) > 0)
                        sv->used_usec = now;
                if (now - sv->used_usec < h->idle_usec) {
                        i++;
                        continue;
                }
                rtn_term_printf(stderr, "rtn serve: sandbox %s idle for %llu s: closed\n",
                                sv->handle, (unsigned long long)(h->idle_usec / RTN_USEC_PER_SEC));
                serve_sandbox_end(sv, false);
        }
        if (h->n == 0 && !h->told_empty && now - h->used_usec >= h->idle_usec) {
                h->told_empty = true;
                mcp_notify(h->tmpl.srv, MCP_NOTE_STATE_EMPTY);
        }
}

/* ---- the tools ------------------------------------------------------------------------- */

static void json_sandbox(struct rtn_json_buf *b, struct serve *sv) {
        rtn_json_kv_str(b, "sandbox", sv->handle);
        rtn_json_kv_str(b, "env", sv->env);
        rtn_json_key(b, "base_commit");
        if (sv->stack.tip[0])
                rtn_json_str(b, sv->stack.tip);
        else
                rtn_json_null(b);
}

static void finish_opened(struct mcp_call *call, struct serve *sv, struct serve *src) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        json_sandbox(&b, sv);
        if (src) {
                rtn_json_kv_str(&b, "forked_from", src->handle);
                rtn_json_kv_str(&b, "note",
                                "the fork holds a copy of the files as they were (uncommitted "
                                "changes and an overlay workspace's pending changes included); "
                                "processes and jobs are not copied, and directories added with "
                                "bind_host_dir are not bound in the fork");
        }
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
}

int serve_sandbox_new(struct serve *sv, struct mcp_call *call, const char *tool,
                      const struct mcp_args *a) {
        _cleanup_free_ char *from = NULL;
        struct rtn_error err = {0};
        struct serve *nsv;
        (void)mcp_args_str(a, "from", &from);
        if (serve_sandbox_open(sv->hub, from, NULL, &nsv, &err) < 0)
                mcp_call_finish_error(call, "sandbox_new: %s", err.msg);
        else
                finish_opened(call, nsv, NULL);
        return 0;
}

int serve_sandbox_fork(struct serve *sv, struct mcp_call *call, const char *tool,
                       const struct mcp_args *a) {
        struct rtn_error err = {0};
        struct serve *nsv;
        if (sv->scfg.spec.isolation == INIT_ISOLATION_LANDLOCK) {
                /* Its commands run on the host itself: no filesystem of its own to copy. */
                mcp_call_finish_error(call,
                                      "sandbox_fork: --isolation landlock runs commands on the "
                                      "host, with no filesystem of the sandbox's own to copy; "
                                      "sandbox_new opens another");
                return 0;
        }
        if (serve_sandbox_open(sv->hub, NULL, sv, &nsv, &err) < 0)
                mcp_call_finish_error(call, "sandbox_fork %s: %s", sv->handle, err.msg);
        else
                finish_opened(call, nsv, sv);
        return 0;
}

int serve_sandbox_list(struct serve *sv, struct mcp_call *call, const char *tool,
                       const struct mcp_args *a) {
        struct serve_hub *h = sv->hub;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "sandboxes");
        rtn_json_arr_begin(&b);
        for (size_t i = 0; i < h->n; i++) {
                rtn_json_obj_begin(&b);
                json_sandbox(&b, h->sbs[i]);
                rtn_json_kv_bool(&b, "default", !strcmp(h->sbs[i]->handle, SERVE_DEFAULT_SANDBOX));
                rtn_json_kv_bool(&b, "running", rt_session_alive(h->sbs[i]->sess));
                rtn_json_kv_int(&b, "running_jobs", serve_running_jobs(h->sbs[i]));
                rtn_json_obj_end(&b);
        }
        rtn_json_arr_end(&b);
        rtn_json_kv_int(&b, "max_sandboxes", h->max);
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
        return 0;
}

int serve_sandbox_close(struct serve *sv, struct mcp_call *call, const char *tool,
                        const struct mcp_args *a) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "sandbox", sv->handle);
        rtn_json_kv_int(&b, "killed_jobs", serve_running_jobs(sv));
        rtn_json_obj_end(&b);
        serve_sandbox_end(sv, false);
        mcp_call_finish_json(call, &b, NULL, false);
        return 0;
}
