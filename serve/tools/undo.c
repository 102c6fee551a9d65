/* `rtn serve`: env_history, env_undo, env_redo (docs/tools.md, "Undo"). Before each call that
 * can change a sandbox's files (a row flagged SERVE_TOOL_CHANGES in serve/tools.c) the state
 * it starts from is copied onto the sandbox's own tmpfs (rt_upper_save,
 * runtime/session/upper.h): a step. env_undo stops the sandbox and copies a step back
 * (rt_upper_restore); the state it left is kept first as "top", so that env_redo can go
 * forward again until the next changing call forgets what was undone. A fork starts with an
 * empty history; env_commit, env_reset and env_discard forget it. At most --undo-depth steps
 * are kept, the oldest dropped first; a step that finds no room on the tmpfs drops older
 * ones, and when even the first finds none the call runs without a checkpoint and
 * env_history says so. A live host directory is never covered. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "runtime/session/upper.h"
#include "serve/serve.h"

#define STEP_TOP "top" /* the state env_undo left, for env_redo */

struct undo_step {
        unsigned num;
        char tool[32];
        char args[128]; /* a short form of the call's arguments */
        int64_t when_sec;
        bool empty; /* nothing had run: the state was empty, there is no copy */
        bool kept; /* false: no checkpoint (why says why) */
        char why[160];
};

struct serve_undo {
        struct undo_step *v; /* oldest first */
        size_t n, cap;
        size_t pos; /* steps in effect: n unless env_undo went back */
        unsigned next; /* the next step's number */
        unsigned dropped; /* oldest steps dropped for --undo-depth or room */
};

static void step_name(char *buf, size_t len, const struct undo_step *s) {
        snprintf(buf, len, "s%u", s->num);
}

static int session_fs(struct serve *sv) {
        return rt_session_upper_fs(sv->sess);
}

static void step_drop(struct serve *sv, const struct undo_step *s) {
        char name[16];
        struct rtn_error err = {0};
        if (!s->kept || s->empty || session_fs(sv) < 0)
                return;
        step_name(name, sizeof name, s);
        (void)rt_upper_step_drop(rt_session_idmap(sv->sess), session_fs(sv), name, &err);
}

static void drop_oldest(struct serve *sv) {
        struct serve_undo *u = sv->undo;
        step_drop(sv, &u->v[0]);
        memmove(u->v, u->v + 1, (u->n - 1) * sizeof *u->v);
        u->n--;
        u->pos--;
        u->dropped++;
}

/* Forgets the steps env_undo undid, and the state it left: no more redo. */
static void forget_undone(struct serve *sv) {
        struct serve_undo *u = sv->undo;
        struct rtn_error err = {0};
        if (u->pos == u->n)
                return;
        while (u->n > u->pos)
                step_drop(sv, &u->v[--u->n]);
        if (session_fs(sv) >= 0)
                (void)rt_upper_step_drop(rt_session_idmap(sv->sess), session_fs(sv), STEP_TOP,
                                         &err);
}

void serve_undo_forget(struct serve *sv, bool drop) {
        struct serve_undo *u = sv->undo;
        if (!u)
                return;
        if (drop)
                forget_undone(sv);
        while (drop && u->n)
                step_drop(sv, &u->v[--u->n]);
        u->pos = 0;
        u->dropped = 0;
        free(u->v);
        free(u);
        sv->undo = NULL;
}

static void short_args(char *buf, size_t len, const struct mcp_args *a) {
        static const char *const keys[] = {"command", "code", "path", "commit", NULL};
        buf[0] = '\0';
        for (size_t i = 0; keys[i]; i++) {
                char *v = NULL;
                if (mcp_args_str(a, keys[i], &v) == 0 && v) {
                        snprintf(buf, len, "%s", v);
                        free(v);
                        break;
                }
        }
        size_t n = strlen(buf);
        if (n == len - 1 && len > 4)
                memcpy(buf + len - 4, "...", 4);
}

/* The new step (zeroed), making room for it. */
static struct undo_step *step_push(struct serve_undo *u) {
        if (u->n == u->cap) {
                size_t cap = u->cap ? u->cap * 2 : 8;
                struct undo_step *v = realloc(u->v, cap * sizeof *v);
                if (!v)
                        return NULL;
                u->v = v;
                u->cap = cap;
        }
        struct undo_step *s = &u->v[u->n];
        *s = (struct undo_step){.num = u->next++};
        return s;
}

void serve_undo_checkpoint(struct serve *sv, const char *tool, const struct mcp_args *a) {
        if (!sv->undo_depth || !sv->sess)
                return;
        if (!sv->undo && !(sv->undo = calloc(1, sizeof *sv->undo)))
                return;
        struct serve_undo *u = sv->undo;
        forget_undone(sv);
        while (u->n >= sv->undo_depth)
                drop_oldest(sv);
        struct undo_step *s = step_push(u);
        if (!s)
                return;
        snprintf(s->tool, sizeof s->tool, "%s", tool);
        short_args(s->args, sizeof s->args, a);
        s->when_sec = (int64_t)time(NULL);
        u->n++;
        u->pos = u->n;
        s->kept = true;
        if (session_fs(sv) < 0) { /* nothing ran yet: the state is empty */
                s->empty = true;
                return;
        }
        char name[16];
        step_name(name, sizeof name, s);
        for (;;) {
                struct rtn_error err = {0};
                int r = rt_upper_save(rt_session_idmap(sv->sess), session_fs(sv), name, &err);
                if (r >= 0)
                        return;
                s = &u->v[u->n - 1];
                if ((r == -ENOSPC || r == -EDQUOT) && u->n > 1) {
                        drop_oldest(sv); /* room for the newest first */
                        s = &u->v[u->n - 1];
                        continue;
                }
                s->kept = false;
                snprintf(s->why, sizeof s->why, "no checkpoint: %s", err.msg);
                return;
        }
}

/* ---- the tools ------------------------------------------------------------------------- */

int serve_env_history(struct serve *sv, struct mcp_call *call, const char *tool,
                      const struct mcp_args *a) {
        struct serve_undo *u = sv->undo;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "steps");
        rtn_json_arr_begin(&b);
        for (size_t i = u ? u->n : 0; i-- > 0;) {
                const struct undo_step *s = &u->v[i];
                char when[32];
                struct tm tm;
                time_t t = (time_t)s->when_sec;
                strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
                rtn_json_obj_begin(&b);
                rtn_json_kv_int(&b, "step", (int64_t)(i + 1));
                rtn_json_kv_str(&b, "tool", s->tool);
                rtn_json_kv_str(&b, "args", s->args);
                rtn_json_kv_str(&b, "time", when);
                rtn_json_kv_bool(&b, "undone", i >= u->pos);
                rtn_json_kv_bool(&b, "undoable", s->kept);
                if (!s->kept)
                        rtn_json_kv_str(&b, "note", s->why);
                rtn_json_obj_end(&b);
        }
        rtn_json_arr_end(&b);
        rtn_json_kv_int(&b, "undoable", u ? (int64_t)u->pos : 0);
        rtn_json_kv_int(&b, "redoable", u ? (int64_t)(u->n - u->pos) : 0);
        rtn_json_kv_int(&b, "dropped", u ? (int64_t)u->dropped : 0);
        rtn_json_kv_int(&b, "undo_depth", sv->undo_depth);
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
        return 0;
}

/* Stops the sandbox (its jobs with it) and makes the state the one before step i's call, or
 * the state env_undo left (i == n). */
static int go_to(struct serve *sv, size_t i, unsigned *ret_killed, unsigned killed_ids[],
                 struct rtn_error *err) {
        struct serve_undo *u = sv->undo;
        char name[16];
        if (i == u->n)
                snprintf(name, sizeof name, STEP_TOP);
        else if (u->v[i].empty)
                snprintf(name, sizeof name, "empty");
        else
                step_name(name, sizeof name, &u->v[i]);
        unsigned n = 0;
        for (int k = 0; k < SERVE_MAX_JOBS; k++)
                if (sv->jobs[k].cmd && !sv->jobs[k].cmd->done)
                        killed_ids[n++] = sv->jobs[k].num;
        *ret_killed = n;
        serve_drop_jobs(sv);
        rt_session_stop_for(sv->sess, "env_undo restored an earlier state");
        return rt_upper_restore(rt_session_idmap(sv->sess), session_fs(sv), name, err);
}

static int undo_or_redo(struct serve *sv, struct mcp_call *call, const struct mcp_args *a,
                        bool redo) {
        struct serve_undo *u = sv->undo;
        int64_t steps = 1;
        if (mcp_args_int(a, "steps", &steps) == -EINVAL)
                return -EINVAL;
        size_t can = !u ? 0 : redo ? u->n - u->pos : u->pos;
        if ((size_t)steps > can) {
                mcp_call_finish_error(call, "%s %lld steps: %zu can be %s (env_history)",
                                      redo ? "cannot redo" : "cannot undo", (long long)steps, can,
                                      redo ? "redone" : "undone");
                return 0;
        }
        size_t to = redo ? u->pos + (size_t)steps : u->pos - (size_t)steps;
        for (size_t i = redo ? u->pos : to; i < (redo ? to : u->pos); i++)
                if (!u->v[i].kept) {
                        mcp_call_finish_error(call, "step %zu has no checkpoint (%s)", i + 1,
                                              u->v[i].why);
                        return 0;
                }
        struct rtn_error err = {0};
        if (session_fs(sv) < 0) {
                mcp_call_finish_error(call, "nothing to %s: the sandbox has no changes",
                                      redo ? "redo" : "undo");
                return 0;
        }
        if (!redo && u->pos == u->n &&
            rt_upper_save(rt_session_idmap(sv->sess), session_fs(sv), STEP_TOP, &err) < 0) {
                mcp_call_finish_error(call, "undo failed, nothing changed: %s", err.msg);
                return 0;
        }
        unsigned killed = 0, ids[SERVE_MAX_JOBS];
        if (go_to(sv, to, &killed, ids, &err) < 0) {
                mcp_call_finish_error(call, "%s failed: %s", redo ? "redo" : "undo", err.msg);
                return 0;
        }
        u->pos = to;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_int(&b, redo ? "redone" : "undone", steps);
        rtn_json_kv_int(&b, "undoable", (int64_t)u->pos);
        rtn_json_kv_int(&b, "redoable", (int64_t)(u->n - u->pos));
        rtn_json_kv_int(&b, "killed_jobs", killed);
        rtn_json_key(&b, "killed_job_ids");
        rtn_json_arr_begin(&b);
        for (unsigned k = 0; k < killed; k++)
                rtn_json_strf(&b, "%u", ids[k]);
        rtn_json_arr_end(&b);
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
        return 0;
}

int serve_env_undo(struct serve *sv, struct mcp_call *call, const char *tool,
                   const struct mcp_args *a) {
        return undo_or_redo(sv, call, a, false);
}

int serve_env_redo(struct serve *sv, struct mcp_call *call, const char *tool,
                   const struct mcp_args *a) {
        return undo_or_redo(sv, call, a, true);
}
