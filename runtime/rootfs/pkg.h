/* Package installs into a sandbox session (docs/tools.md, pkg_install; docs/architecture.md,
 * "Network gate"): name validation, the apt command line pointed at the gate, and the gate.
 * The `rtn pkg install` verb is cli/pkg.c, the MCP tool serve/tools/pkg.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "runtime/runtime.h"

#define RT_PKG_MAX 64

/* A Debian package name (policy 5.6.1: [a-z0-9][a-z0-9+.-]+), optionally with :ARCH and
 * then =VERSION or /RELEASE. Anything else, in particular anything starting with '-', is
 * refused with -EINVAL naming the bad name. */
int rt_pkg_validate(char *const *names, size_t n, struct rtn_error *err);

/* Where an install keeps apt's lists, cache and logs while it runs; removed after. */
#define RT_PKG_APT_DIR "/var/cache/rtn-apt"
/* The install command's exit status when every package named is installed already and
 * nothing was done (apt-get itself exits 0 or 100). */
#define RT_PKG_EXIT_UNCHANGED 3

/* The /bin/sh command that runs apt-get update and install of names (validated) with apt's
 * HTTP and HTTPS proxy set to 127.0.0.1:port (the gate), non-interactive. mode is the
 * sandbox's id mapping: with a single mapping apt's download sandbox user (_apt) does not
 * exist, so downloads run as root inside. Free with free(). */
int rt_pkg_command(char *const *names, size_t n, uint16_t port, enum rt_idmode mode,
                   char **ret_cmd);

/* The sentence appended to a failed install under a single-uid mapping. */
extern const char rt_pkg_single_uid_note[];

/* The gate's proxy for a base: its apt mirrors plus allow[] (--allow-host). */
struct netns_gate;
struct rtn_loop;
int rt_pkg_gate_new(const char *rootfs, const char *const *allow, size_t nallow,
                    struct netns_gate **ret, struct rtn_error *err);
/* Serves sb's gate listener on loop unless *attached already names this sandbox (its pid). */
int rt_pkg_gate_attach(struct netns_gate *g, struct rtn_loop *loop, const struct rt_sandbox *sb,
                       pid_t *attached, struct rtn_error *err);
