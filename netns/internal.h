/* Internals of the netns module that its fuzz target reaches (fuzz/fuzz_gate.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The gate's reading of a request head from inside the sandbox (netns/gate.c): the request
 * line is `CONNECT host[:port]` (port 443 by default) or `METHOD http://host[:port]/...`
 * (80), host maybe a [v6] literal, no userinfo. *ret_host is malloc'd. -EINVAL malformed,
 * -EPERM a port other than 80 and 443, -EPROTONOSUPPORT another scheme, -ENOMEM. head is
 * NUL-terminated; it is not changed. */
int netns_gate_parse_target(char *head, bool *ret_connect, char **ret_host, uint16_t *ret_port);
