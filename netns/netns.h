/* The netns module's public interface: the loopback-only network namespace a sandbox gets.
 * rtn creates the namespace itself (unshare(CLONE_NEWNET) in a helper that has joined the
 * sandbox's user namespace, runtime/sandbox/sandbox.c); this module brings its one device, `lo`, up
 * over rtnetlink with libmnl, so no `ip` binary is needed inside or outside. netns_lo_up is
 * safe to call in that helper, which shares rtn's memory while rtn's other threads run, and
 * between clone and execve: no stdio, no allocation, failures described in a struct
 * rtn_error. */
#pragma once

#include "common/err.h"

/* The largest TCP segment the kernel builds and merges on a sandbox's `lo` (GSO and GRO,
 * IPv4 and IPv6; 64 KiB by default): the gate's relay into the sandbox passes bulk data in
 * fewer, larger segments (netns/lo.c). */
#define NETNS_LO_SEGMENT_MAX (256u << 10)

/* Brings `lo` up (IFF_UP) in the calling thread's current network namespace: looks its
 * index up with RTM_GETLINK, then sends RTM_NEWLINK with IFF_UP (and, where the kernel takes
 * them, segments of up to NETNS_LO_SEGMENT_MAX) and checks the kernel's acknowledgement.
 * Idempotent. Needs CAP_NET_ADMIN over the namespace's owning user
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

/* Whether sa (IPv4 or IPv6) is assigned to an interface of this machine's network namespace
 * now, comparing an IPv4-mapped or -compatible IPv6 address as the IPv4 address it embeds:
 * 1 yes, 0 no, -errno when the interfaces' addresses cannot be read (getifaddrs(3), called
 * each time, so an address added after rtn started counts). */
int netns_addr_own(const struct sockaddr *sa);

/* A host name as the gate and the HTTP tools accept it: 1-253 of [A-Za-z0-9.-], no leading
 * '-' or '.', or a bracketed IPv6 literal. */
bool netns_host_valid(const char *host);
/* "1.2.3.4" / "[::1]" style rendering of sa for messages. */
const char *netns_addr_str(const struct sockaddr *sa, char *buf, size_t len);

/* ---- the network policy of agent commands (netns/policy.c) --------------------------- */
#include <netinet/in.h>

#define NETNS_POLICY_MAX_RULES 1024
#define NETNS_POLICY_LINE_MAX 512
#define NETNS_POLICY_FILE_MAX (256 * 1024)

union netns_ip {
        struct in_addr v4;
        struct in6_addr v6;
};

/* One rule: an exact name, a domain (the name and every name under it) or an address. */
struct netns_rule {
        char host[256]; /* lower-case, no trailing dot; "1.2.3.4" or "[v6]" for an address */
        bool domain; /* written ".example.org" */
        int family; /* AF_INET/AF_INET6 for an address, else 0 */
        union netns_ip ip;
        uint16_t port; /* 0: ports 80 and 443 */
};

/* A rule that names no port admits these, the web's two (the one home of that rule: the
 * policy's check and the gate's refusal message both ask it). */
static inline bool netns_port_default(uint16_t port) {
        return port == 80 || port == 443;
}
#define NETNS_PORTS_DEFAULT "80 and 443"

/* The name the sandbox reaches a port of the host's loopback by, through the gate, once
 * --allow-host-port opens it: host.rtn.internal:PORT. No rule names it; no DNS answer for
 * it is ever asked. */
#define NETNS_HOST_NAME "host.rtn.internal"
#define NETNS_HOST_PORTS_MAX 16

struct netns_policy {
        struct netns_rule *rules;
        size_t n, cap;
        uint16_t host_ports[NETNS_HOST_PORTS_MAX]; /* --allow-host-port, in the given order */
        size_t nhost_ports;
};

/* Adds one rule written HOST[:PORT] (HOST: name, .domain, IPv4 address or [IPv6] address;
 * the forms of --allow-net and of a policy file's lines), or an http:// or https:// URL,
 * taken as its HOST[:PORT]. -EINVAL (err says why) or -E2BIG past NETNS_POLICY_MAX_RULES.
 * A host no request through the gate can reach is refused here with the reason and what to
 * use instead: a name of the loopback (localhost, *.localhost, ...), NETNS_HOST_NAME, and an
 * address netns_addr_check refuses, in any spelling. */
int netns_policy_add(struct netns_policy *p, const char *spec, struct rtn_error *err);
/* Opens port arg (decimal 1-65535) of the host's loopback to NETNS_HOST_NAME:arg (the gate
 * connects to 127.0.0.1:PORT, then [::1]:PORT). -EINVAL, -EEXIST for a port given twice,
 * -E2BIG past NETNS_HOST_PORTS_MAX. */
int netns_policy_add_host_port(struct netns_policy *p, const char *arg, struct rtn_error *err);
/* Whether --allow-host-port opened port. */
bool netns_policy_host_port(const struct netns_policy *p, uint16_t port);
/* Whether something listening on port of this network namespace (any address) is held by a
 * process called rtn (netns/hostport.c): 1, 0, or -errno when the socket tables cannot be
 * read. An rtn process that has exited or is exiting holds nothing; one whose descriptors
 * stay unreadable (another user's, a non-dumpable one) holds the listeners of its user, after
 * a wait of some milliseconds for a change of credentials to show. */
int netns_port_rtns(uint16_t port);
/* Adds the rules of a policy file's text: one HOST[:PORT] a line, '#' starts a comment,
 * blank lines skipped (docs/network.md, "The policy file"). name is for messages
 * ("FILE:LINE: ..."). The first bad line fails the whole file. */
int netns_policy_parse(struct netns_policy *p, const char *text, size_t len, const char *name,
                       struct rtn_error *err);
/* Reads path (at most NETNS_POLICY_FILE_MAX bytes) and parses it. */
int netns_policy_load(struct netns_policy *p, const char *path, struct rtn_error *err);
void netns_policy_free(struct netns_policy *p);
/* *ret becomes a copy of src that lives on its own; -ENOMEM. */
int netns_policy_copy(const struct netns_policy *src, struct netns_policy *ret);
/* Whether some rule admits host (as a request names it) on port. */
bool netns_policy_allows(const struct netns_policy *p, const char *host, uint16_t port);
/* Whether a rule is the address of sa with an explicit port, port: the one kind of rule
 * that admits an address of this machine (netns_resolve). */
bool netns_policy_names_addr(const struct netns_policy *p, const struct sockaddr *sa,
                             uint16_t port);
/* The one resolver of every connection rtn makes on an agent's behalf (the gate, the HTTP
 * tools): resolves host (a name or a literal address) with getaddrinfo and returns the first
 * address, with port set, that passes netns_addr_check and is not assigned to an interface
 * of this machine (rtn's network namespace; netns_addr_own, read at each call), as loopback
 * is not: an allowed name that resolves to it would reach a service the host listens with on
 * 0.0.0.0 or [::] and keeps from the outside by a firewall. Such an address passes only when
 * p (may be NULL: none does) has a rule ADDR:PORT that names that address with that port
 * explicitly. The caller connects to exactly that address (no second lookup, so a rebinding
 * DNS answer cannot swap it). -EACCES when every address is refused, -ENOENT when the name
 * does not resolve; err says which address, why, and for an address of this machine the
 * rule that admits it. */
int netns_resolve(const char *host, uint16_t port, const struct netns_policy *p,
                  struct sockaddr_storage *ret, socklen_t *ret_len, struct rtn_error *err);
/* Rule i written back as HOST[:PORT] into buf; 0 past the last rule. */
size_t netns_policy_describe(const struct netns_policy *p, size_t i, char *buf, size_t len);
/* host as rules and requests are compared: an address (bracketed IPv6, or any form
 * inet_aton(3) takes: "127.1" and "0x7f000001" are addresses) in canonical text with
 * *ret_family AF_INET/AF_INET6 and *ret_ip set; else a DNS name, lower-cased, one trailing
 * dot dropped, *ret_family 0. -EINVAL for anything else. */
int netns_host_canon(const char *host, char *buf, size_t len, union netns_ip *ret_ip,
                     int *ret_family);

/* ---- secrets the gate adds to requests (netns/secret.c) ------------------------------ */
#define NETNS_SECRETS_MAX 16
#define NETNS_SECRET_NAME_MAX 128
#define NETNS_SECRET_VALUE_MAX 8192
#define NETNS_SECRET_HEADER_MAX 256
#define NETNS_SECRET_HEADER_DEFAULT "Authorization: Bearer {}"
/* The prefix of HOST that lets a secret go over plain HTTP too, to whatever answers there. */
#define NETNS_SECRET_CLEARTEXT "http://"

/* One --secret: the header line (its template, "{}" the value) the gate adds to requests
 * for host, replacing any header of that name the sandbox sent. Agent commands see
 * NETNS_SECRET_PLACEHOLDER_PREFIX NAME in the environment variable NAME instead. */
#define NETNS_SECRET_PLACEHOLDER_PREFIX "rtn-placeholder-"
struct netns_secret {
        char name[NETNS_SECRET_NAME_MAX]; /* the environment variable's name */
        char host[256]; /* a name, canonical (netns_host_canon) */
        char header[NETNS_SECRET_HEADER_MAX]; /* "Authorization: Bearer {}" */
        char *value; /* malloc'd; wiped when freed */
        bool cleartext; /* written NAME@http://HOST: also sent over plain HTTP, unverified */
};
struct netns_secrets {
        struct netns_secret s[NETNS_SECRETS_MAX];
        size_t n;
};
/* Adds NAME@HOST (the value: rtn's environment variable NAME) or, from_file,
 * NAME@HOST=FILE (FILE's content without its last newline); HOST written http://HOST also
 * lets it go over plain HTTP. The value is printable ASCII, at most NETNS_SECRET_VALUE_MAX
 * bytes. -EINVAL/-ENOENT/-EEXIST/-E2BIG with err saying why; err never holds the value, nor
 * a part of arg that failed its check (it may be the value, given by mistake). */
int netns_secret_add(struct netns_secrets *ss, const char *arg, bool from_file,
                     struct rtn_error *err);
/* NAME=TEMPLATE ("X-Api-Key: {}") for the secrets named NAME added before. */
int netns_secret_header(struct netns_secrets *ss, const char *arg, struct rtn_error *err);
int netns_secrets_copy(const struct netns_secrets *src, struct netns_secrets *dst);
void netns_secrets_free(struct netns_secrets *ss);
/* Whether some secret is for host (canonical). */
bool netns_secrets_for(const struct netns_secrets *ss, const char *host);
/* Whether every secret for host (canonical) may go over plain HTTP (NAME@http://HOST). */
bool netns_secrets_cleartext(const struct netns_secrets *ss, const char *host);
/* The header line of s with its value and CRLF into buf: its length, 0 when it does not fit. */
size_t netns_secret_line(const struct netns_secret *s, char *buf, size_t len);
/* The length of its header's name. */
size_t netns_secret_header_name(const struct netns_secret *s);

/* ---- the operator's proxy the gate goes out through (netns/upstream.c) ---------------- */
#define NETNS_UPSTREAM_NOPROXY_MAX 64
struct netns_upstream {
        bool set;
        char host[256]; /* the proxy's host: a name, an IPv4 address or [IPv6] */
        uint16_t port;
        char auth[704]; /* base64 of USER:PASSWORD for Proxy-Authorization, or "" */
        char shown[300]; /* the URL with its credentials masked: what messages show */
        char noproxy[NETNS_UPSTREAM_NOPROXY_MAX][256]; /* env's no_proxy: these go direct */
        size_t nnoproxy;
        bool noproxy_all; /* no_proxy=*: nothing goes through the proxy */
};
/* --upstream-proxy ARG: an http://[USER:PASSWORD@]HOST[:PORT] URL (port 80 by default), or
 * "env": the first of rtn's https_proxy, HTTPS_PROXY, http_proxy, HTTP_PROXY, with
 * no_proxy (else NO_PROXY) naming hosts that go direct. -EINVAL/-ENOENT with err saying
 * why; neither err nor u->shown ever holds the credentials. */
int netns_upstream_parse(struct netns_upstream *u, const char *arg, struct rtn_error *err);
/* Whether a request for host goes through u (u may be NULL or unset: no). */
bool netns_upstream_for(const struct netns_upstream *u, const char *host);
/* A connection to host:port through u's CONNECT: the socket, past the proxy's 200, or
 * -errno with why (the URL masked). */
int netns_upstream_connect(const struct netns_upstream *u, const char *host, uint16_t port,
                           char *why, size_t wl);

/* ---- the gate's proxy (netns/gate.c) ------------------------------------------------- */
struct rtn_loop;
struct netns_gate;

/* A proxy for HTTP (absolute-form requests) and CONNECT (TLS only) that admits what a
 * policy admits (netns/policy.c), and connects to the address netns_resolve checked.
 * Connections are served by one detached thread each (at most NETNS_GATE_MAX_CONN at once)
 * with time limits. netns_gate_new takes plain rules (the provisioning gate's mirrors);
 * netns_gate_new_policy copies a policy. */
#define NETNS_GATE_MAX_CONN 32
int netns_gate_new(const char *const *hosts, size_t nhosts, struct netns_gate **ret,
                   struct rtn_error *err);
int netns_gate_new_policy(const struct netns_policy *p, struct netns_gate **ret,
                          struct rtn_error *err);

/* The secrets the gate adds (copied): for their hosts, plain HTTP requests get the header
 * and CONNECT tunnels are intercepted (netns/intercept.c): a per-gate CA is made here, and
 * OpenSSL is loaded only now, when there is a secret. */
int netns_gate_set_secrets(struct netns_gate *g, const struct netns_secrets *ss,
                           struct rtn_error *err);
/* The proxy every request the gate admits goes out through (--upstream-proxy; copied), but
 * for the hosts of its no_proxy and the host's ports of --allow-host-port. */
void netns_gate_set_upstream(struct netns_gate *g, const struct netns_upstream *u);
/* The CA certificate (PEM) of the gate's interception, or NULL without secrets. Its key
 * never leaves rtn's memory. */
const char *netns_gate_ca_pem(const struct netns_gate *g);

/* The per-host decision the gate makes for each request (netns/gate.c, gate_verdict):
 * refuse it, tunnel it to the checked address untouched, intercept it (a host with a
 * secret: add its header; for TLS, terminate it with the gate's CA to do so), or connect it
 * to the host's loopback on the one port --allow-host-port opened (NETNS_HOST_NAME:PORT). */
enum netns_verdict {
        NETNS_VERDICT_REFUSE,
        NETNS_VERDICT_TUNNEL,
        NETNS_VERDICT_INTERCEPT,
        NETNS_VERDICT_HOST, /* NETNS_HOST_NAME on a port --allow-host-port opened */
};

/* Serves listen_fd (ownership taken) on loop; a previous listener is dropped and closed. */
int netns_gate_attach(struct netns_gate *g, struct rtn_loop *loop, int listen_fd);
/* The same for a caller with its own poll(2) loop (rtn exec): takes listen_fd and returns
 * it (non-blocking now); the caller calls netns_gate_accept when it is readable. */
int netns_gate_listen(struct netns_gate *g, int listen_fd);
void netns_gate_accept(struct netns_gate *g);
void netns_gate_detach(struct netns_gate *g);
/* Detaches and drops the caller's reference; running connections finish on their own. */
void netns_gate_free(struct netns_gate *g);
/* Copies the most recent refusal ("deb.example.org is not on the allowlist") into buf and
 * returns how many requests were refused so far. */
unsigned netns_gate_refusals(struct netns_gate *g, char *buf, size_t len);

/* A refused request, and how many like it (same host, port and reason). */
struct netns_denial {
        char host[256];
        uint16_t port;
        char reason[160];
        uint64_t count;
};
/* The refusals' sequence number now: pass it to netns_gate_denials later to get the ones
 * made since (those of one command). */
uint64_t netns_gate_seq(struct netns_gate *g);
/* The refusals from sequence number since up to until (NETNS_GATE_ALL: all the gate's
 * life), merged by (host, port, reason) into out[0..max), the number returned; *ret_more
 * counts those that did not fit (or were no longer kept). */
#define NETNS_GATE_ALL UINT64_MAX
size_t netns_gate_denials(struct netns_gate *g, uint64_t since, uint64_t until,
                          struct netns_denial *out, size_t max, uint64_t *ret_more);

/* ---- published ports (netns/publish.c) ----------------------------------------------- */
#define NETNS_PUBLISH_MAX 16
#define NETNS_PUBLISH_MAX_CONN 64

/* One --publish [ADDR:]HOSTPORT:SANDBOXPORT. */
struct netns_port {
        char addr[48]; /* as given: "127.0.0.1" (the default) or "[::1]" */
        uint16_t host_port;
        uint16_t sandbox_port;
};
/* Parses arg; -EINVAL (err says the form) for anything but an IPv4 or [IPv6] ADDR and
 * decimal ports 1-65535. */
int netns_port_parse(const char *arg, struct netns_port *ret, struct rtn_error *err);

struct netns_publish;
/* Listens on every ports[i] on the host now, so a port in use (EADDRINUSE), a privileged
 * port as a user (EACCES) or an address not on the host (EADDRNOTAVAIL) fails here with a
 * message that says which. Connections wait in the backlog until one of the calls below
 * serves them. */
int netns_publish_new(const struct netns_port *ports, size_t n, struct netns_publish **ret,
                      struct rtn_error *err);
/* rtn serve: accepts on loop; at each connection target(ud) names the sandbox to forward to
 * by the pidfd of its rtn-init (borrowed; -1 when none runs: the connection is closed). */
typedef int (*netns_publish_target_fn)(void *ud);
int netns_publish_attach(struct netns_publish *p, struct rtn_loop *loop,
                         netns_publish_target_fn target, void *ud, struct rtn_error *err);
/* rtn exec: accepts on a thread of its own for the one sandbox of pidfd (dup'ed). */
int netns_publish_run(struct netns_publish *p, int pidfd, struct rtn_error *err);
/* Stops accepting and closes the listeners; connections already made go on. Idempotent. */
void netns_publish_stop(struct netns_publish *p);
/* Stops accepting, then waits for the connections still relaying to deliver what the
 * sandbox sent them, at most a few seconds for a client that does not read, and frees p.
 * Called once the sandbox has ended (its servers are gone): rtn exits after, and a relay
 * still running would die with it, its answer lost. */
void netns_publish_free(struct netns_publish *p);
