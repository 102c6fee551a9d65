/* `rtn serve`: env_history, env_undo, env_redo (docs/tools.md, "Undo"). Before each call that
 * can change a sandbox's files (a row flagged SERVE_TOOL_CHANGES in serve/tools.c) a step
 * begins: the checkpoint before it seals the step before, whose record then holds the old
 * versions of what changed while it was the newest (rt_ckpt, runtime/session/upper.h: a
 * walk of the state against a shadow of it, and a copy of only what changed). env_undo seals
 * the newest step, stops the sandbox and swaps the steps back in, newest first; a swapped
 * step holds the versions it replaced, so env_redo is the same swap, until the next changing
 * call forgets what was undone. A fork starts with an empty history (its first checkpoint
 * copies its state into a shadow of its own); env_commit, env_reset and env_discard forget
 * it. At most --undo-depth steps and --undo-bytes of old versions are kept, the oldest
 * dropped first; a seal that finds no room on the tmpfs drops older steps, and when even the
 * newest finds none every step goes and the call runs without a checkpoint, which
 * env_history says. A live host directory is never covered.
 *
 * What blocks the event loop: each seal, swap and drop is a helper process rtn waits for
 * (a walk of the state, and copies of what changed), as long as the state's entries and the
 * changed bytes make it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "runtime/sandbox/wsprep.h"
#include "runtime/session/upper.h"
#include "serve/serve.h"

#define SCRATCH "scratch" /* a seal of changes no step is open for */

struct undo_step {
        unsigned num;
        char tool[32];
        char args[128]; /* a short form of the call's arguments */
        int64_t when_sec;
        bool base_empty; /* nothing had run: its seal starts from an empty shadow */
        bool sealed;
        bool kept; /* false: no checkpoint (why says why) */
        char why[200];
        uint64_t records, bytes; /* what the step holds (once sealed) */
        const void *call; /* the call, until its command's exit status is known */
        bool has_exit;
        int exit_code;
};

struct serve_undo {
        struct undo_step *v; /* oldest first */
        size_t n, cap;
        size_t pos; /* steps in effect: n unless env_undo went back */
        unsigned next; /* the next step's number */
        unsigned dropped; /* oldest steps dropped for --undo-depth, --undo-bytes or room */
        bool shadow; /* the tmpfs holds a shadow of the state as of since */
        int64_t since; /* rt_ckpt_now when the shadow was last brought up to date */
};

static void step_name(char *buf, size_t len, const struct undo_step *s) {
        snprintf(buf, len, "s%u", s->num);
}

static int session_fs(struct serve *sv) {
        return rt_session_upper_fs(sv->sess);
}

static int ckpt(struct serve *sv, enum rt_ckpt_op op, const char *step, const char *const *spare,
                size_t nspare, struct rt_ckpt_report *ret, struct rtn_error *err) {
        return rt_ckpt(rt_session_idmap(sv->sess), session_fs(sv), op, step,
                       sv->undo ? sv->undo->since : 0, spare, nspare, ret, err);
}

static void step_drop(struct serve *sv, const struct undo_step *s) {
        char name[16];
        struct rtn_error err = {0};
        if (!s->sealed || session_fs(sv) < 0)
                return;
        step_name(name, sizeof name, s);
        (void)ckpt(sv, RT_CKPT_DROP, name, NULL, 0, NULL, &err);
}

/* The oldest step leaves the list; gone: its record is gone already. */
static void drop_oldest(struct serve *sv, bool gone) {
        struct serve_undo *u = sv->undo;
        if (!gone)
                step_drop(sv, &u->v[0]);
        memmove(u->v, u->v + 1, (u->n - 1) * sizeof *u->v);
        u->n--;
        u->pos--;
        u->dropped++;
}

/* Forgets the steps env_undo undid: no more redo. */
static void forget_undone(struct serve *sv) {
        struct serve_undo *u = sv->undo;
        while (u->n > u->pos)
                step_drop(sv, &u->v[--u->n]);
}

/* Every step and the shadow go (a seal or swap failed half way): what is left cannot be
 * trusted to give back an exact state. */
static void drop_all(struct serve *sv) {
        struct serve_undo *u = sv->undo;
        struct rtn_error err = {0};
        if (session_fs(sv) >= 0)
                (void)ckpt(sv, RT_CKPT_CLEAR, NULL, NULL, 0, NULL, &err);
        u->dropped += (unsigned)u->n;
        u->n = u->pos = 0;
        u->shadow = false;
}

void serve_undo_forget(struct serve *sv, bool drop) {
        struct serve_undo *u = sv->undo;
        struct rtn_error err = {0};
        if (!u)
                return;
        if (drop && session_fs(sv) >= 0)
                (void)ckpt(sv, RT_CKPT_CLEAR, NULL, NULL, 0, NULL, &err);
        free(u->v);
        free(u);
        sv->undo = NULL;
}

static uint64_t undo_bytes(const struct serve *sv) {
        return sv->undo_bytes ? sv->undo_bytes : sv->scfg.spec.upper_bytes;
}

/* Brings the shadow up to date with the state: the newest step in effect (its first seal
 * from an empty shadow when nothing had run before it) gets what changed since; changes no
 * step is open for go to a scratch step dropped at once. */
static int seal(struct serve *sv, struct rtn_error *err) {
        struct serve_undo *u = sv->undo;
        struct undo_step *open = u->pos == u->n && u->n ? &u->v[u->n - 1] : NULL;
        if (open && (!open->kept || open->sealed))
                open = NULL; /* a step is sealed once: env_undo and env_redo swap it whole */
        if (session_fs(sv) < 0)
                return 0; /* nothing ran: nothing changed */
        if (!u->shadow && !(open && open->base_empty))
                return 0;
        int r;
        if (!u->shadow) {
                if ((r = ckpt(sv, RT_CKPT_BASE_EMPTY, NULL, NULL, 0, NULL, err)) < 0)
                        return r;
                u->shadow = true;
                u->since = 0;
        }
        int64_t now = rt_ckpt_now();
        char name[16] = SCRATCH, spare_names[SERVE_UNDO_DEPTH_MAX + 1][16];
        const char *spare[SERVE_UNDO_DEPTH_MAX + 1];
        size_t nspare = 0;
        if (open) {
                step_name(name, sizeof name, open);
                for (; nspare + 1 < u->n; nspare++) {
                        step_name(spare_names[nspare], sizeof spare_names[nspare], &u->v[nspare]);
                        spare[nspare] = spare_names[nspare];
                }
        }
        struct rt_ckpt_report rep = {0};
        r = ckpt(sv, RT_CKPT_SEAL, name, spare, nspare, &rep, err);
        for (size_t i = 0; i < rep.dropped && u->n > 1; i++)
                drop_oldest(sv, true); /* open moves down with the list */
        open = open ? &u->v[u->n - 1] : NULL;
        if (!open) {
                struct rtn_error e2 = {0};
                (void)ckpt(sv, RT_CKPT_DROP, SCRATCH, NULL, 0, NULL, &e2);
        }
        if (r < 0)
                return r;
        u->since = now;
        if (open) {
                open->sealed = true;
                open->base_empty = false;
                open->records = rep.records;
                open->bytes = rep.bytes;
        }
        uint64_t total = 0;
        for (size_t i = 0; i < u->n; i++)
                total += u->v[i].bytes;
        while (u->n > 1 && total > undo_bytes(sv)) {
                total -= u->v[0].bytes;
                drop_oldest(sv, false);
        }
        return 0;
}

/* A shadow of the state as it is now, when the tmpfs has room for a second copy of it. */
static int base(struct serve *sv, struct rtn_error *err) {
        uint64_t used = 0;
        struct statvfs v;
        if (rt_upper_usage(session_fs(sv), &used, NULL) == 0 && fstatvfs(session_fs(sv), &v) == 0 &&
            used > (uint64_t)v.f_bavail * v.f_frsize)
                return rtn_errx(err, ENOSPC,
                                "the sandbox's state holds %llu MiB and its --upper-size has %llu "
                                "MiB free, too little for a copy of it",
                                (unsigned long long)(used >> 20),
                                (unsigned long long)(((uint64_t)v.f_bavail * v.f_frsize) >> 20));
        sv->undo->since = rt_ckpt_now();
        int r = ckpt(sv, RT_CKPT_BASE, NULL, NULL, 0, NULL, err);
        if (r < 0) {
                struct rtn_error e2 = {0};
                (void)ckpt(sv, RT_CKPT_CLEAR, NULL, NULL, 0, NULL, &e2);
                return r;
        }
        sv->undo->shadow = true;
        return 0;
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

void serve_undo_exit(struct serve *sv, const void *call, int exit_code) {
        struct serve_undo *u = sv->undo;
        for (size_t i = u ? u->n : 0; i-- > 0;)
                if (u->v[i].call == call) {
                        u->v[i].call = NULL;
                        u->v[i].has_exit = true;
                        u->v[i].exit_code = exit_code;
                        return;
                }
}

void serve_undo_checkpoint(struct serve *sv, const void *call, const char *tool,
                           const struct mcp_args *a) {
        if (!sv->undo_depth || !sv->sess)
                return;
        if (!sv->undo && !(sv->undo = calloc(1, sizeof *sv->undo)))
                return;
        struct serve_undo *u = sv->undo;
        struct rtn_error err = {0};
        forget_undone(sv);
        int r = seal(sv, &err);
        if (r >= 0 && !u->shadow && session_fs(sv) >= 0)
                r = base(sv, &err);
        if (r < 0)
                drop_all(sv);
        while (u->n >= sv->undo_depth)
                drop_oldest(sv, false);
        struct undo_step *s = step_push(u);
        if (!s)
                return;
        snprintf(s->tool, sizeof s->tool, "%s", tool);
        short_args(s->args, sizeof s->args, a);
        s->when_sec = (int64_t)time(NULL);
        s->call = call;
        u->n++;
        u->pos = u->n;
        s->kept = r >= 0;
        s->base_empty = session_fs(sv) < 0; /* nothing ran yet: the state is empty */
        if (r < 0)
                snprintf(s->why, sizeof s->why, "no checkpoint: %s", err.msg);
}

/* ---- the tools ------------------------------------------------------------------------- */

/* A path of the tmpfs (rt_ckpt_list) as the sandbox's commands see it. */
static void json_path(struct rtn_json_buf *b, const char *p) {
        if (!strncmp(p, RT_WS_DIR "/upper", strlen(RT_WS_DIR "/upper")))
                rtn_json_strf(b, "/workspace%s", p + strlen(RT_WS_DIR "/upper"));
        else if (!strncmp(p, "upper", 5))
                rtn_json_strf(b, "%s", p[5] ? p + 5 : "/");
        else
                rtn_json_strf(b, "/%s", p);
}

/* paths (the first SERVE_UNDO_PATHS), paths_total and bytes of a step: the record of a
 * sealed one, a count of what changed so far for the newest. */
static void json_changes(struct rtn_json_buf *b, struct serve *sv, const struct undo_step *s,
                         bool newest) {
        struct rt_ckpt_report rep = {.records = s->records, .bytes = s->bytes};
        struct rtn_error err = {0};
        _cleanup_free_ char *list = NULL;
        size_t len = 0, n = 0;
        char name[16];
        step_name(name, sizeof name, s);
        if (s->sealed)
                (void)rt_ckpt_list(session_fs(sv), name, &list, &len);
        else if (newest && s->kept && sv->undo->shadow && session_fs(sv) >= 0)
                (void)ckpt(sv, RT_CKPT_COUNT, NULL, NULL, 0, &rep, &err);
        rtn_json_key(b, "paths");
        rtn_json_arr_begin(b);
        for (size_t i = 0; i < len && n < SERVE_UNDO_PATHS; i += strlen(list + i + 1) + 2, n++)
                json_path(b, list + i + 1);
        rtn_json_arr_end(b);
        rtn_json_kv_int(b, "paths_total", (int64_t)rep.records);
        rtn_json_kv_int(b, "bytes", (int64_t)rep.bytes);
}

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
                if (s->has_exit)
                        rtn_json_kv_int(&b, "exit_code", s->exit_code);
                rtn_json_kv_bool(&b, "undone", i >= u->pos);
                rtn_json_kv_bool(&b, "undoable", s->kept);
                if (!s->kept)
                        rtn_json_kv_str(&b, "note", s->why);
                json_changes(&b, sv, s, i + 1 == u->n && u->pos == u->n);
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

/* Stops the sandbox (its jobs with it) and swaps steps in until pos is to: undone newest
 * first, redone oldest first. */
static int go_to(struct serve *sv, size_t to, unsigned *ret_killed, unsigned killed_ids[],
                 struct rtn_error *err) {
        struct serve_undo *u = sv->undo;
        unsigned n = 0;
        for (int k = 0; k < SERVE_MAX_JOBS; k++)
                if (sv->jobs[k].cmd && !sv->jobs[k].cmd->done)
                        killed_ids[n++] = sv->jobs[k].num;
        *ret_killed = n;
        serve_drop_jobs(sv);
        rt_session_stop_for(sv->sess, "env_undo restored an earlier state");
        while (u->pos != to) {
                struct undo_step *s = &u->v[to > u->pos ? u->pos : u->pos - 1];
                char name[16];
                step_name(name, sizeof name, s);
                int r = s->sealed ? ckpt(sv, RT_CKPT_SWAP, name, NULL, 0, NULL, err) : 0;
                if (r < 0)
                        return r;
                u->pos = to > u->pos ? u->pos + 1 : u->pos - 1;
        }
        u->since = rt_ckpt_now();
        return 0;
}

/* A checkpoint operation failed: none is trusted any more; the call says what became of
 * the files (HOW) and why. */
static int fail_dropping(struct serve *sv, struct mcp_call *call, bool redo, const char *how,
                         const char *why) {
        drop_all(sv);
        mcp_call_finish_error(call, "%s failed%s, and the checkpoints were dropped: %s",
                              redo ? "redo" : "undo", how, why);
        return 0;
}

static int undo_or_redo(struct serve *sv, struct mcp_call *call, const struct mcp_args *a,
                        bool redo) {
        struct serve_undo *u = sv->undo;
        int64_t steps = 1;
        if (mcp_args_int(a, "steps", &steps) == -EINVAL)
                return -EINVAL;
        struct rtn_error err = {0};
        /* first what changed since the last checkpoint: the newest step's record */
        if (u && session_fs(sv) >= 0 && seal(sv, &err) < 0)
                return fail_dropping(sv, call, redo, ", nothing changed", err.msg);
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
        if (session_fs(sv) < 0) {
                mcp_call_finish_error(call, "nothing to %s: the sandbox has no changes",
                                      redo ? "redo" : "undo");
                return 0;
        }
        unsigned killed = 0, ids[SERVE_MAX_JOBS];
        if (go_to(sv, to, &killed, ids, &err) < 0)
                return fail_dropping(sv, call, redo, " half way", err.msg);
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
