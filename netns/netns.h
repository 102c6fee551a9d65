/* The netns module's public interface: the loopback-only network namespace a sandbox gets.
 * rtn creates the namespace itself (CLONE_NEWNET in clone3); this module brings its one
 * device, `lo`, up over rtnetlink with libmnl, so no `ip` binary is needed inside or
 * outside. Everything here is safe to call in the child between clone3 and execve: no
 * stdio, no allocation, failures described in a struct rtn_error. */
#pragma once

#include "common/err.h"

/* Brings `lo` up (IFF_UP) in the calling thread's current network namespace: looks its
 * index up with RTM_GETLINK, then sends RTM_NEWLINK with IFF_UP and checks the kernel's
 * acknowledgement. Idempotent. Needs CAP_NET_ADMIN over the namespace's owning user
 * namespace (-EPERM otherwise). Returns 0 or -errno; err names the failed step. */
int netns_lo_up(struct rtn_error *err);
