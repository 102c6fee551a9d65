/* rtn serve's background jobs, the shell_job_* tools: up to SERVE_MAX_JOBS commands kept
 * running in the session past their call, whose output is kept (bounded) and read in pieces,
 * waited for by up to SERVE_MAX_WAITERS calls each, and killed with the sandbox. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/initproto.h"
#include "common/json.h"
#include "common/loop.h"
#include "serve/serve.h"

#define JOB_DEFAULT_TIMEOUT_USEC (24ULL * 3600 * 1000 * 1000)
#define JOB_LOG_MAX (4u << 20)

static const char *job_state(const struct rt_cmd *c) {
        if (c->lost)
                return "killed"; /* its sandbox ended: gone, even before its pipes drain */
        if (!c->done)
                return "running";
        if (c->timed_out)
                return "timed_out";
        if (c->killed || c->lost)
                return "killed";
        return "exited";
}

static void json_job(struct rtn_json_buf *b, const struct serve_job *j) {
        const struct rt_cmd *c = j->cmd;
        rtn_json_key(b, "job_id");
        rtn_json_strf(b, "%u", j->num);
        rtn_json_kv_str(b, "command", c->command);
        rtn_json_kv_str(b, "state", job_state(c));
        rtn_json_key(b, "exit_code");
        if (c->done)
                rtn_json_int(b, rt_cmd_exit_code(c));
        else
                rtn_json_null(b);
        rtn_json_key(b, "signal");
        if (c->done && rt_cmd_signal(c))
                rtn_json_int(b, rt_cmd_signal(c));
        else
                rtn_json_null(b);
        uint64_t end = c->done ? c->end_usec : rtn_now_usec();
        rtn_json_kv_int(b, "duration_ms", (int64_t)((end - c->start_usec) / 1000));
        rtn_json_kv_int(b, "output_bytes", (int64_t)c->out.total);
        if (c->done && c->blocked.total > 0)
                rt_blocked_json(b, &c->blocked);
        serve_json_net(b, c);
}

static void answer_job(struct mcp_call *call, const struct serve_job *j, int waiting) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        json_job(&b, j);
        if (waiting >= 0)
                rtn_json_kv_bool(&b, "timed_out_waiting", waiting);
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
}

/* Answers waiter slot; its timer is cancelled unless it is the one firing (from_timer). */
static void job_wake(struct serve *sv, struct serve_job *j, int slot, bool timed_out,
                     bool from_timer) {
        struct mcp_call *call = j->waiters[slot];
        j->waiters[slot] = NULL;
        if (j->wait_timers[slot] && !from_timer)
                rtn_loop_timer_cancel(sv->loop, j->wait_timers[slot]);
        j->wait_timers[slot] = NULL;
        answer_job(call, j, timed_out);
}

static void job_done(struct rt_cmd *c, void *ud) {
        struct serve_job *j = ud;
        for (int i = 0; i < SERVE_MAX_WAITERS; i++)
                if (j->waiters[i])
                        job_wake(j->sv, j, i, false, false);
}

static struct serve_job *job_find(struct serve *sv, const struct mcp_args *a) {
        _cleanup_free_ char *id = NULL;
        if (mcp_args_str(a, "job_id", &id) < 0)
                return NULL;
        char *end;
        unsigned long n = strtoul(id, &end, 10);
        if (*end || n == 0)
                return NULL;
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                if (sv->jobs[i].cmd && sv->jobs[i].num == n)
                        return &sv->jobs[i];
        return NULL;
}

static void job_forget(struct serve *sv, struct serve_job *j) {
        for (int i = 0; i < SERVE_MAX_WAITERS; i++)
                if (j->waiters[i])
                        job_wake(sv, j, i, !j->cmd->done && !j->cmd->lost, false);
        rt_cmd_free(j->cmd);
        memset(j, 0, sizeof *j);
}

/* A free slot, evicting the job that finished longest ago when the table is full. */
static struct serve_job *job_slot(struct serve *sv) {
        struct serve_job *old = NULL;
        for (int i = 0; i < SERVE_MAX_JOBS; i++) {
                struct serve_job *j = &sv->jobs[i];
                if (!j->cmd)
                        return j;
                if (j->cmd->done && (!old || j->cmd->end_usec < old->cmd->end_usec))
                        old = j;
        }
        if (old)
                job_forget(sv, old);
        return old;
}

int serve_job_start(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        _cleanup_free_ char *cmd = NULL, *cwd = NULL, *in = NULL;
        char **env = NULL;
        struct rtn_error err = {0};
        if (mcp_args_str(a, "command", &cmd) < 0)
                return -EINVAL;
        struct serve_job *j = job_slot(sv);
        if (!j) {
                mcp_call_finish_error(call,
                                      "%d jobs are running, the most this server keeps; "
                                      "kill one with shell_job_kill first",
                                      SERVE_MAX_JOBS);
                return 0;
        }
        struct rt_cmd_opts o = {.policy = INIT_POLICY_AGENT,
                                .command = cmd,
                                .job = true,
                                .timeout_usec = JOB_DEFAULT_TIMEOUT_USEC,
                                .max_output = JOB_LOG_MAX};
        serve_read_run_args(a, &o, &cwd, &env, &in);
        int r = rt_session_run(sv->sess, &o, job_done, j, &j->cmd, &err);
        mcp_strv_free(env);
        if (r < 0) {
                j->cmd = NULL;
                mcp_call_finish_error(call, "cannot start the job: %s", err.msg);
                return 0;
        }
        j->num = ++sv->next_job;
        j->sv = sv;
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "job_id");
        rtn_json_strf(&b, "%u", j->num);
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
        return 0;
}

static void on_wait_timeout(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        struct serve_job *j = ud;
        for (int i = 0; i < SERVE_MAX_WAITERS; i++)
                if (j->wait_timers[i] == t) {
                        job_wake(j->sv, j, i, true, true);
                        return;
                }
}

int serve_job_query(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        struct serve_job *j = job_find(sv, a);
        if (!j) {
                mcp_call_finish_error(call, "no such job (shell_job_list shows the jobs kept)");
                return 0;
        }
        if (!strcmp(tool, "shell_job_status")) {
                answer_job(call, j, -1);
        } else if (!strcmp(tool, "shell_job_kill") || !strcmp(tool, "shell_job_wait")) {
                int64_t t = 5; /* a kill answers once the job is gone (SIGKILL: at once) */
                if (!strcmp(tool, "shell_job_kill"))
                        rt_cmd_kill(j->cmd);
                else
                        (void)mcp_args_int(a, "timeout", &t);
                if (j->cmd->done || t == 0) {
                        answer_job(call, j, !j->cmd->done);
                        return 0;
                }
                int slot = -1;
                for (int i = 0; i < SERVE_MAX_WAITERS && slot < 0; i++)
                        if (!j->waiters[i])
                                slot = i;
                if (slot < 0) {
                        mcp_call_finish_error(call, "too many waits on this job at once");
                        return 0;
                }
                if (rtn_loop_add_timer(sv->loop, (uint64_t)t * RTN_USEC_PER_SEC, 0, on_wait_timeout,
                                       j, &j->wait_timers[slot]) < 0)
                        return -ENOMEM;
                j->waiters[slot] = call;
        }
        return 0;
}

int serve_job_output(struct serve *sv, struct mcp_call *call, const char *tool,
                     const struct mcp_args *a) {
        struct serve_job *j = job_find(sv, a);
        if (!j) {
                mcp_call_finish_error(call, "no such job (shell_job_list shows the jobs kept)");
                return 0;
        }
        const struct rt_outbuf *o = &j->cmd->out;
        uint64_t first = o->total - o->len; /* offset of the oldest byte kept */
        int64_t off = -1, tail = -1;
        (void)mcp_args_int(a, "offset", &off);
        (void)mcp_args_int(a, "tail", &tail);
        uint64_t from = off >= 0 ? (uint64_t)off : first;
        if (tail > 0 && o->total - from > (uint64_t)tail)
                from = o->total - (uint64_t)tail;
        uint64_t dropped = from < first ? first - from : 0;
        if (from < first)
                from = first;
        if (from > o->total)
                from = o->total;
        size_t start = (size_t)(from - first), len = (size_t)(o->total - from);
        if (len > 256 * 1024)
                len = 256 * 1024; /* one answer at most; next_offset continues */
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "job_id");
        rtn_json_strf(&b, "%u", j->num);
        rtn_json_key(&b, "output");
        rtn_json_strn(&b, o->data ? o->data + start : "", len);
        rtn_json_kv_int(&b, "offset", (int64_t)from);
        rtn_json_kv_int(&b, "next_offset", (int64_t)(from + len));
        rtn_json_kv_int(&b, "dropped_bytes", (int64_t)dropped);
        rtn_json_kv_bool(&b, "truncated", from + len < o->total);
        if (o->data && !rtn_utf8_valid(o->data + start, len)) /* JSON text is UTF-8 */
                rtn_json_kv_bool(&b, "output_utf8_replaced", true);
        rtn_json_kv_str(&b, "state", job_state(j->cmd));
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
        return 0;
}

int serve_job_list(struct serve *sv, struct mcp_call *call, const char *tool,
                   const struct mcp_args *a) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "jobs");
        rtn_json_arr_begin(&b);
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                if (sv->jobs[i].cmd) {
                        rtn_json_obj_begin(&b);
                        json_job(&b, &sv->jobs[i]);
                        rtn_json_obj_end(&b);
                }
        rtn_json_arr_end(&b);
        rtn_json_obj_end(&b);
        mcp_call_finish_json(call, &b, NULL, false);
        return 0;
}

unsigned serve_running_jobs(const struct serve *sv) {
        unsigned n = 0;
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                n += sv->jobs[i].cmd && !sv->jobs[i].cmd->done;
        return n;
}

unsigned serve_drop_jobs(struct serve *sv) {
        unsigned n = serve_running_jobs(sv);
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                if (sv->jobs[i].cmd)
                        job_forget(sv, &sv->jobs[i]);
        return n;
}

bool serve_job_cancel(struct serve *sv, struct mcp_call *call) {
        for (int i = 0; i < SERVE_MAX_JOBS; i++)
                for (int k = 0; k < SERVE_MAX_WAITERS; k++)
                        if (sv->jobs[i].waiters[k] == call) {
                                job_wake(sv, &sv->jobs[i], k, true, false);
                                return true;
                        }
        return false;
}
