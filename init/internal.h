/* rtn-init internals: its state and the spawn path (init/spawn.c). */
#pragma once

#include <stdbool.h>

#include "common/err.h"
#include "common/initproto.h"

#define INIT_MAX_JOBS 1024

struct init_job {
        uint64_t id;
        pid_t pid; /* 0: free slot */
        bool final; /* INIT_SPAWN_FINAL */
};

/* One command's seccomp listener (init/notify.c). It stays open after the command exits as
 * long as any process still runs under its filter (the kernel then reports POLLHUP), so that a
 * background process's denied call still gets EPERM, not the ENOSYS a closed listener would
 * give; only what was blocked until the exit is reported. */
struct init_notif {
        int fd; /* the listener */
        bool reported; /* the report went out with the command's exit */
        bool hung; /* POLLHUP seen before that: out of the epoll set, closed once reported */
        pid_t last_pid; /* comm cache: a looping caller costs one /proc read */
        char last_comm[INIT_COMM_LEN];
        bool shared; /* the confined loop's listener: rep unused, calls go to each job's */
        struct init_blocked rep; /* hdr.id is the command's id */
};

/* Room for the host directories' paths (init_state.host), copied out of the configuration
 * message: the provisioning ruleset is rebuilt when the gate opens. */
#define INIT_HOST_STRS 8192

struct init_state {
        struct init_config cfg; /* fixed part of the configuration (strings dropped) */
        const char *host[INIT_MAX_WRITABLE]; /* cfg.host_writable's paths, into host_strs */
        uint32_t nhost;
        char host_strs[INIT_HOST_STRS];
        int ruleset_fd[3]; /* Landlock per enum init_policy; -1 in the weaker mode */
        int gate_netns; /* netns of the provisioning gate, or -1 (none opened) */
        uint16_t gate_port;
        bool spawned; /* a command was asked for: the gate may no longer open (init/gate.c) */
        struct init_job jobs[INIT_MAX_JOBS];
        pid_t files_pid; /* the file server (init/file_server.c), 0 when none */
        struct init_notif *notifs[INIT_MAX_JOBS]; /* allocated while a listener is open */
        size_t nnotifs;
        struct init_notif *shared_notif; /* the confined loop's listener, or NULL */
        int epfd; /* rtn-init's event loop: control socket, signalfd, listeners */
};

/* Every message to rtn goes out through init_ctl_send (init/ctl.c), after what is held:
 * 0 or -errno. init_ctl_hold keeps a small message (at most an init_status) back until the
 * next send or init_ctl_flush, which the loop calls before it waits; init_ctl_holding says
 * whether something is held. */
int init_ctl_send(const void *msg, size_t len, const int *fds, size_t nfds);
int init_ctl_hold(const void *msg, size_t len);
int init_ctl_flush(void);
bool init_ctl_holding(void);

int init_policy_prepare(struct init_state *st, const struct init_config_view *v,
                        struct rtn_error *err);
/* Keeps the paths of writable[] that cfg.host_writable marks in st->host (-E2BIG when they
 * do not fit). */
int init_keep_host_paths(struct init_state *st, const char *const writable[], uint32_t n);
/* Confines the calling thread as an agent command's child confines itself: credentials,
 * no_new_privs, Landlock, the reporting filter (its listener in *ret_listener, or -1). */
int init_confine_agent(const struct init_state *st, int *ret_listener, struct rtn_error *err);
/* ---- rtn-init's two threads (init/privileged.c) ----
 * Starts the privileged thread, which keeps the caller's credentials and serves
 * init_privileged. 0, or -1 when it could not start (the loop then stays unconfined). */
int init_privileged_start(void);
/* The calling thread, which runs the loop, has just confined itself: from now on
 * init_privileged hands its calls to the privileged thread. */
void init_loop_confined(void);
/* Whether it has: agent commands then inherit the loop thread's policy. */
bool init_loop_is_confined(void);
/* Runs fn(arg) on the privileged thread and waits for it; inline on any other thread, or
 * when the loop is not confined. */
void init_privileged(void (*fn)(void *), void *arg);
/* Handles one SPAWN message; takes ownership of fds. */
void init_spawn(struct init_state *st, const void *msg, size_t len, int *fds, size_t nfds);
/* setgroups, setresgid, setresuid to the policy's ids; for the agent, every capability
 * dropped (init_caps_drop_all). */
int init_set_creds(const struct init_state *st, uint32_t policy, struct rtn_error *err);
/* Handles INIT_MSG_FILES_START: kills a previous file server, forks a new one and answers
 * INIT_MSG_FILES_STARTED with its socket. */
void init_files_start(struct init_state *st, uint64_t id);
pid_t init_job_pid(const struct init_state *st, uint64_t id);
/* The id of the live command whose pid is pid. */
bool init_job_id(const struct init_state *st, pid_t pid, uint64_t *ret_id);
/* INIT_MSG_GATE_OPEN: creates the gate's netns and listener, rebuilds the provisioning
 * Landlock ruleset to allow connect to its port only, and answers INIT_MSG_GATE (init/gate.c). */
void init_gate_open(struct init_state *st);
/* Frees the slot of the live command pid: its id, and whether it was INIT_SPAWN_FINAL. */
bool init_job_take(struct init_state *st, pid_t pid, uint64_t *ret_id, bool *ret_final);

/* ---- seccomp listeners (init/notify.c) ----
 * epoll tags: the control socket and the signalfd use these, a listener its slot + base. */
#define INIT_EV_CTL 0
#define INIT_EV_SIGCHLD 1
#define INIT_EV_SHARED 2
#define INIT_EV_NOTIF_BASE 3
/* Whether a new command may get the reporting filter: a listener slot is free and rtn-init
 * has fds to spare (RLIMIT_NOFILE). Otherwise it gets the plain filter: EPERM, no report. */
bool init_notify_has_room(const struct init_state *st);
/* Takes ownership of a new command's listener fd. Should epoll refuse it (ENOMEM), it is
 * closed and the command's notified calls fail with ENOSYS instead of EPERM. */
void init_notify_add(struct init_state *st, uint64_t id, int fd);
/* Takes ownership of the confined loop's listener (init/main.c): every agent command runs
 * under that one filter, and each blocked call is reported with the command it came
 * from. */
void init_notify_add_shared(struct init_state *st, int fd);
/* Answers what is pending on the shared listener, while the jobs it may come from are all
 * still in the job table (before a reaped one leaves it). */
void init_notify_drain_shared(struct init_state *st);
/* The shared listener is readable (answer what is pending) or hung up (close it). */
void init_notify_event_shared(struct init_state *st, uint32_t events);
/* A listener is readable or hung up: answer what is pending; close it on POLLHUP. */
void init_notify_event(struct init_state *st, size_t slot, uint32_t events);
/* The command id exited (its job left the table after init_notify_drain_shared): answer
 * what is still pending on its own listener, then send its INIT_MSG_BLOCKED if
 * anything was blocked. Returns < 0 when the control socket failed. */
int init_notify_exited(struct init_state *st, uint64_t id);
/* Answers one pending notification on fd with EPERM and records it in n. 0, or -errno
 * (-EAGAIN: nothing pending; -EPIPE: nothing pending and no task uses the filter any more;
 * -ENOENT: the caller went away meanwhile, nothing recorded). */
int init_notify_answer(struct init_notif *n);
/* Adds one blocked call to rep (pure; unit-tested). */
void init_blocked_add(struct init_blocked *rep, uint32_t nr, pid_t pid, const char *comm);
