/* `rtn serve`: the MCP backend that gives an agent one persistent sandbox session. Shared by
 * runtime/serve.c (setup, shell and job tools) and runtime/serve_env.c (environment tools on
 * the store). */
#pragma once

#include <stdbool.h>

#include "mcp/mcp.h"
#include "runtime/session.h"
#include "store/store.h"

#define SERVE_MAX_JOBS 64
#define SERVE_MAX_WAITERS 8

struct serve;

struct serve_job {
        struct serve *sv;
        unsigned num;                  /* job_id is its decimal string */
        struct rt_cmd *cmd;
        struct mcp_call *waiters[SERVE_MAX_WAITERS];
        struct rtn_loop_source *wait_timers[SERVE_MAX_WAITERS];
};

struct serve {
        struct mcp_server *srv;
        struct rtn_loop *loop;
        struct store *store;
        const char *env;
        const char *rootfs;
        struct rt_session_config scfg;
        struct rt_session *sess;
        char *session_dir;
        int session_lock;
        struct serve_job jobs[SERVE_MAX_JOBS];
        unsigned next_job;
        struct rt_idmap idmap; /* the session's, kept to remove its dir at exit */
        bool have_idmap;
};

/* Environment tools (serve_env.c). Each finishes the call. */
int serve_env_call(struct serve *sv, struct mcp_call *call, const char *tool,
                   const struct mcp_args *args);
/* Points the session at the env's current layer stack. */
int serve_load_layers(struct serve *sv, struct rtn_error *err);
unsigned serve_running_jobs(const struct serve *sv);
/* Kills and forgets every job; returns how many were running. */
unsigned serve_drop_jobs(struct serve *sv);
