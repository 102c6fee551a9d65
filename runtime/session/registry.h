/* The registry of running sandboxes (runtime/session/registry.c; docs/architecture.md,
 * "Running sandboxes"): one small file per `rtn exec` and `rtn serve` of this user, under its
 * runtime dir, written by rtn before the sandbox starts and removed when rtn exits; `rtn ps`
 * reads it, and drops what a killed rtn left. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct rt_running {
        int pid; /* rtn's own pid: kill it to end the sandbox; `rtn enter PID` enters it */
        unsigned long long start; /* its start time (/proc/PID/stat field 22) */
        char kind[8]; /* "exec" or "serve" */
        int64_t since; /* start, seconds since the epoch */
        char env[64];
        char data_dir[1024];
        char command[1024]; /* control characters already replaced by '?' */
        char sandboxes[1024]; /* an rtn serve's open sandboxes, "sb-1=ENV sb-2=ENV..." (each is
                               * `rtn enter PID/sb-N`); "" for an rtn exec */
};

/* Records this process (pid, start) as running a sandbox, its command "rtn KIND" and the
 * verb's arguments argv[1..] (KIND is the verb); the entry is removed when the process exits
 * (atexit). Best effort: returns < 0 with err set when the registry cannot be
 * written, and the caller goes on without it. */
int rt_registry_add(const char *kind, const char *env, const char *data_dir, int argc, char **argv,
                    struct rtn_error *err);
/* Says why rt_registry_add failed: a warning when a directory of the registry's is not the
 * caller's own and private (another user made /tmp/rtn-UID first, or its mode was
 * changed), which hides every sandbox from `rtn ps` and `rtn enter` until it is mended; else
 * at debug (a registry that cannot be written is no reason not to run). */
void rt_registry_unavailable(const struct rtn_error *err);
/* Calls fn for every live entry, oldest first, removing entries whose process is gone (or
 * is another process now, judged by its start time). */
int rt_registry_list(void (*fn)(const struct rt_running *r, void *arg), void *arg,
                     struct rtn_error *err);
/* Whether two data dirs are one: by their real paths when there are (one named through a
 * link), else as written. */
bool rt_registry_same_dir(const char *a, const char *b);
/* The registry's directory: $XDG_RUNTIME_DIR/rtn/running/PIDNS, else /run/rtn/running/PIDNS
 * for root, else /tmp/rtn-UID/rtn/running/PIDNS, PIDNS the caller's pid namespace's inode
 * (rt_registry_pidns); each made 0700 and refused unless it is ours. */
int rt_registry_dir(char *buf, size_t len, bool create, struct rtn_error *err);
/* The registry's directory, opened (and made when create) and checked as above. */
int rt_registry_open(bool create, struct rtn_error *err);
/* The live entry of pid, read as rt_registry_list reads one: -ENOENT when there is none
 * (no sandbox of this user has that pid, or its rtn is gone). */
int rt_registry_find(int pid, struct rt_running *ret, struct rtn_error *err);
/* The socket `rtn enter` connects to (runtime/session/enter.h) is the entry's name with this
 * suffix, in the same directory, listening before the entry is written; it is removed with
 * the entry, and a dead run's by the next start's sweep. */
#define RT_REGISTRY_SOCK ".sock"
/* Rewrites this process's entry with its open sandboxes (an rtn serve's, as
 * rt_running.sandboxes holds them); -ENOENT before rt_registry_add, else < 0 when it cannot
 * be written (best effort: the listing shows the last one written). */
int rt_registry_set_sandboxes(const char *list);
/* This process's entry name (PID-START), the same before rt_registry_add as after it: its
 * rtn enter socket is bound first, so that every entry listed is one rtn enter reaches. */
int rt_registry_self(char *buf, size_t len);
/* Its parent, which holds every pid namespace's, by name only is rt_registry_path
 * (runtime/sandbox/rundir.h). */
