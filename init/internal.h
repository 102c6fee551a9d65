/* rtn-init internals: its state and the spawn path (init/spawn.c). */
#pragma once

#include <stdbool.h>

#include "common/err.h"
#include "init/init.h"

#define INIT_MAX_JOBS 1024

struct init_job {
        uint64_t id;
        pid_t pid; /* 0: free slot */
};

struct init_state {
        struct init_config cfg; /* fixed part of the configuration (strings dropped) */
        int ruleset_fd[2]; /* Landlock per enum init_policy; -1 in the weaker mode */
        int gate_netns; /* netns of the provisioning gate, or -1 (none opened) */
        uint16_t gate_port;
        struct init_job jobs[INIT_MAX_JOBS];
        pid_t files_pid; /* the file server (init/files.c), 0 when none */
};

int init_policy_prepare(struct init_state *st, const char *const writable[], uint32_t n,
                        struct rtn_error *err);
/* Handles one SPAWN message; takes ownership of fds. */
void init_spawn(struct init_state *st, const void *msg, size_t len, int *fds, size_t nfds);
/* setgroups, setresgid, setresuid to the policy's ids; for the agent, every capability
 * dropped (init_caps_drop_all). */
int init_set_creds(const struct init_state *st, uint32_t policy, struct rtn_error *err);
/* Handles INIT_MSG_FILES_START: kills a previous file server, forks a new one and answers
 * INIT_MSG_FILES_STARTED with its socket. */
void init_files_start(struct init_state *st, uint64_t id);
pid_t init_job_pid(const struct init_state *st, uint64_t id);
/* INIT_MSG_GATE_OPEN: creates the gate's netns and listener, rebuilds the provisioning
 * Landlock ruleset to allow connect to its port only, and answers INIT_MSG_GATE (init/gate.c). */
void init_gate_open(struct init_state *st);
bool init_job_take(struct init_state *st, pid_t pid, uint64_t *ret_id);
