/* The netns module's public interface: the loopback-only network namespace a sandbox gets.
 * rtn creates the namespace itself (unshare(CLONE_NEWNET) in a helper that has joined the
 * sandbox's user namespace, runtime/sandbox/sandbox.c); this module brings its one device, `lo`, up
 * over rtnetlink with libmnl, so no `ip` binary is needed inside or outside. netns_lo_up is
 * safe to call in that helper, which shares rtn's memory while rtn's other threads run, and
 * between clone and execve: no stdio, no allocation, failures described in a struct
 * rtn_error. */
#pragma once

#include "common/err.h"

/* Brings `lo` up (IFF_UP) in the calling thread's current network namespace: looks its
 * index up with RTM_GETLINK, then sends RTM_NEWLINK with IFF_UP and checks the kernel's
 * acknowledgement. Idempotent. Needs CAP_NET_ADMIN over the namespace's owning user
 * namespace (-EPERM otherwise). Returns 0 or -errno; err names the failed step. */
int netns_lo_up(struct rtn_error *err);

/* ---- egress filter (netns/addr.c) ---------------------------------------------------- */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Whether an address may be connected to from the trusted side on an agent's behalf. Refused
 * (-EACCES, *ret_why names the range): unspecified, loopback, private (RFC 1918, fc00::/7),
 * link-local (169.254/16 with the 169.254.169.254 metadata service, fe80::/10), CGNAT
 * (100.64/10), "this network" 0/8, benchmarking 198.18/15, multicast,
 * reserved 240/4 and broadcast, IPv4-mapped/compatible IPv6 (::ffff:0:0/96, ::/96), NAT64
 * 64:ff9b::/96 and 6to4/Teredo (2002::/16, 2001::/32), which embed an IPv4 address. */
int netns_addr_check(const struct sockaddr *sa, socklen_t len, const char **ret_why);

/* Resolves host (a name or a literal address) with getaddrinfo and returns the first address
 * that passes netns_addr_check, with port set. The caller connects to exactly that address
 * (no second lookup, so a rebinding DNS answer cannot swap it). -EACCES when every address
 * is refused, -ENOENT when the name does not resolve; err says which address and why. */
int netns_resolve(const char *host, uint16_t port, struct sockaddr_storage *ret, socklen_t *ret_len,
                  struct rtn_error *err);

/* A host name as the gate and the HTTP tools accept it: 1-253 of [A-Za-z0-9.-], no leading
 * '-' or '.', or a bracketed IPv6 literal. */
bool netns_host_valid(const char *host);
/* "1.2.3.4" / "[::1]" style rendering of sa for messages. */
const char *netns_addr_str(const struct sockaddr *sa, char *buf, size_t len);

/* ---- the provisioning gate's proxy (netns/gate.c) ------------------------------------ */
struct rtn_loop;
struct netns_gate;

/* A proxy for HTTP (absolute-form requests) and CONNECT that admits only the host names in
 * hosts[] (exact, case-insensitive; ".example.org" admits every name under it), ports 80 and
 * 443, and connects to the address netns_resolve checked. Connections are served by one
 * detached thread each (at most NETNS_GATE_MAX_CONN at once) with time limits. */
#define NETNS_GATE_MAX_CONN 32
int netns_gate_new(const char *const *hosts, size_t nhosts, struct netns_gate **ret,
                   struct rtn_error *err);
/* Serves listen_fd (ownership taken) on loop; a previous listener is dropped and closed. */
int netns_gate_attach(struct netns_gate *g, struct rtn_loop *loop, int listen_fd);
void netns_gate_detach(struct netns_gate *g);
/* Detaches and drops the caller's reference; running connections finish on their own. */
void netns_gate_free(struct netns_gate *g);
/* Copies the most recent refusal ("deb.example.org is not on the allowlist") into buf and
 * returns how many requests were refused so far. */
unsigned netns_gate_refusals(struct netns_gate *g, char *buf, size_t len);
