/* Where rtn keeps what lives only while the user is logged in, apart from the data dir: the
 * registry of running sandboxes (runtime/session/registry.h). The path is a fact of the
 * sandbox's floor because runtime/sandbox/hostpath.c refuses a host bind that holds it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The top the registry hangs from, by name only: $XDG_RUNTIME_DIR when it is absolute and
 * short enough (true: a directory the system made for the user), else /run for root and
 * /tmp/rtn-UID for others (false). */
bool rt_run_base(char *base, size_t len);

/* The registry is one per pid namespace, named by the inode of the caller's
 * (/proc/self/ns/pid, 0 without /proc): an entry names its process by pid, which means
 * another process or none in another pid namespace, whose rtn would sweep it as stale (a
 * container sharing the user's runtime dir). */
unsigned long long rt_registry_pidns(void);

/* The registries' directory, BASE/rtn/running (each pid namespace's is PIDNS below it), by
 * name only (nothing is opened or made): no host bind may hold it or be inside it. */
void rt_registry_path(char *buf, size_t len);

/* The registries rtn uses without $XDG_RUNTIME_DIR (/run/rtn/running for root, else
 * /tmp/rtn-UID/rtn/running), by name only: sandboxes started without it register there
 * while others use $XDG_RUNTIME_DIR's, so no host bind may hold either. */
void rt_registry_fallback_path(char *buf, size_t len);
