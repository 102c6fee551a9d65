/* `rtn enter` (runtime/session/enter.c; docs/architecture.md, "Entering a running sandbox"):
 * the rtn that owns a sandbox listens on a socket beside its registry entry
 * (runtime/session/registry.h: PID-START.sock in the user's private runtime dir), and a
 * caller of the same user who is not itself confined asks it to start a command in that
 * sandbox. The owner has rtn-init spawn it like any other agent command, with the sandbox's
 * policy, environment and working directory: the caller never joins a namespace itself
 * (docs/security-invariants.md, 33).
 *
 * The conversation is the control protocol's (common/initproto.h): the caller sends one
 * INIT_MSG_SPAWN whose id N names the owner's sandbox sb-N (an rtn serve's handle; 1 is an
 * rtn exec's only one) with policy INIT_POLICY_AGENT, no env (the sandbox's own is used),
 * stdin, stdout and stderr with SCM_RIGHTS (none with INIT_SPAWN_PTY, never a terminal),
 * then INIT_MSG_SIGNAL as it likes; the owner's replies, all of id 1, say what rtn-init said
 * of the command: SPAWNED (with the pty master), SPAWN_FAILED, BLOCKED, EXITED. A refusal is a
 * SPAWN_FAILED of step INIT_STEP_ENTER whose message says why. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define RT_ENTER_MAX 16 /* connections at once, waiting or running */
/* The ids the owner gives entered commands with rtn-init, far above its own. */
#define RT_ENTER_ID_BASE (UINT64_C(1) << 40)

struct rt_enter;

/* What the owner does for an accepted request: spawn sends INIT_MSG_SPAWN for id to sandbox
 * sb-N, N being the request's header id (1: the owner's first, an rtn exec's only one), with
 * that sandbox's environment (cwd NULL: its working directory); signal sends a signal to the
 * command id. */
struct rt_enter_ops {
        int (*spawn)(void *ud, unsigned sb, uint64_t id, uint32_t flags, const char *cwd,
                     char *const argv[], const int fds[3], uint16_t rows, uint16_t cols,
                     struct rtn_error *err);
        void (*signal)(void *ud, uint64_t id, int signo);
};

/* Listens on this process's socket (rt_registry_add must have made its entry). */
int rt_enter_listen(const struct rt_enter_ops *ops, void *ud, struct rt_enter **ret,
                    struct rtn_error *err);
/* An fd that polls readable when a connection or a request waits; rt_enter_serve then
 * handles what is ready without blocking. */
int rt_enter_fd(const struct rt_enter *e);
void rt_enter_serve(struct rt_enter *e);
/* A control message of rtn-init's about an entered command (its id >= RT_ENTER_ID_BASE):
 * relayed to its caller. Takes the fds that came with it; true when the message was one. */
bool rt_enter_event(struct rt_enter *e, void *msg, size_t len, int *fds, size_t nfds);
/* Sandbox sb-N ended: the callers of its entered commands learn it (their connections close). */
void rt_enter_drop(struct rt_enter *e, unsigned sb);
/* Closes the socket and every connection (their callers learn that the sandbox ended).
 * NULL-safe. */
void rt_enter_free(struct rt_enter *e);

/* The caller's side: connects to the owner of sandbox pid (its registry entry, its socket:
 * a socket of this user's, not a link, owned by the process the entry names); returns the
 * connection. */
int rt_enter_connect(int pid, struct rtn_error *err);
/* Sends the request for sandbox sb-N (1: the first): flags INIT_SPAWN_PTY or 0, cwd NULL for
 * the sandbox's own. */
int rt_enter_request(int fd, unsigned sb, uint32_t flags, const char *cwd, char *const argv[],
                     const int fds[3], uint16_t rows, uint16_t cols, struct rtn_error *err);
