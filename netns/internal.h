/* Internals of the netns module: what its fuzz targets reach (fuzz/fuzz_gate.c,
 * fuzz/fuzz_sni.c, fuzz/fuzz_netpolicy.c), and what the gate's files share (gate.c,
 * denials.c, http.c, intercept.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* The gate's reading of a request head from inside the sandbox (netns/gate.c): the request
 * line is `CONNECT host[:port]` (port 443 by default) or `METHOD http://host[:port]/...`
 * (80), host maybe a [v6] literal, no userinfo, port 1-65535 (the policy decides which).
 * *ret_host is malloc'd. -EINVAL malformed, -EPROTONOSUPPORT another scheme, -ENOMEM. head
 * is NUL-terminated; it is not changed. */
int netns_gate_parse_target(char *head, bool *ret_connect, char **ret_host, uint16_t *ret_port);

/* The value of the one Host header of a request head (NUL-terminated, ending in an empty
 * line), copied into buf without surrounding blanks: 1; 0 when there is none; -EINVAL
 * when there are two or more, or the value does not fit (netns/gate.c). */
int netns_http_host(const char *head, char *buf, size_t len);

/* The server name of the TLS ClientHello at the start of buf (netns/tls.c): 0 with the
 * name in ret ("" when the client sent none); -EAGAIN when more bytes are needed;
 * -EPROTO when buf does not start with a well-formed ClientHello (or it is larger than
 * NETNS_TLS_HELLO_MAX, or its name does not fit rlen). */
#define NETNS_TLS_HELLO_MAX 32768
int netns_tls_sni(const uint8_t *buf, size_t len, char *ret, size_t rlen);

/* Copies both ways between two connected sockets until both sides are done or nothing moves
 * for two minutes; at most a_limit bytes go from a to b (UINT64_MAX: no limit), and a is not
 * read past it (netns/gate.c; the published ports' forwarder uses it too). */
void netns_relay(int a, int b, uint64_t a_limit);

/* The gate's TLS interception for hosts with a secret (netns/intercept.c). A CA made with
 * the object (its key freed once the leaves are signed), a leaf certificate per secret's
 * host, and a verifying client context for the upstream side. OpenSSL is dlopen()ed on the
 * first call. */
struct netns_secrets;
struct netns_intercept;
struct netns_tls_conn;
int netns_intercept_new(const struct netns_secrets *ss, struct netns_intercept **ret,
                        struct rtn_error *err);
void netns_intercept_free(struct netns_intercept *t);
const char *netns_intercept_ca_pem(const struct netns_intercept *t);
/* The TLS handshake with the sandbox's client on fd as host (its leaf); the client's SNI must
 * be host. -EACCES with why for a client that does not speak TLS or names another host. */
int netns_tls_accept(struct netns_intercept *t, int fd, const char *host,
                     struct netns_tls_conn **ret, char *why, size_t wl);
/* The TLS handshake with the upstream on fd, verifying its certificate chain (the host's
 * trust store) and that it names host. -EACCES with why when it is refused. */
int netns_tls_connect(struct netns_intercept *t, int fd, const char *host,
                      struct netns_tls_conn **ret, char *why, size_t wl);
/* Bytes read (0 at the peer's end) or -EIO. */
ssize_t netns_tls_read(struct netns_tls_conn *c, void *buf, size_t len);
int netns_tls_write(struct netns_tls_conn *c, const void *buf, size_t len);
/* netns_relay between two TLS connections; returns when b (the upstream) has ended. */
void netns_tls_relay(struct netns_tls_conn *a, struct netns_tls_conn *b, uint64_t a_limit);
/* Sends close_notify and frees c (not its fd). NULL is fine. */
void netns_tls_close(struct netns_tls_conn *c);

/* ---- the gate's state, shared by its files (gate.c, denials.c) ------------------------- */
#include <pthread.h>
#include <stdatomic.h>

#include "netns/netns.h"

#define NETNS_GATE_LOG_MAX 256 /* refusals kept for per-command reports */
#define NETNS_GATE_TOTALS_MAX 64 /* distinct (host, port, reason) kept for the totals */

struct netns_gate {
        atomic_int refs;
        atomic_int nconn;
        struct netns_policy policy;
        struct rtn_loop *loop;
        int listen_fd;
        pthread_mutex_t mu;
        unsigned refused;
        char last[256];
        uint64_t seq; /* refusals so far; log[seq % NETNS_GATE_LOG_MAX] is the latest */
        struct netns_denial log[NETNS_GATE_LOG_MAX];
        struct netns_denial totals[NETNS_GATE_TOTALS_MAX];
        size_t ntotals;
        struct netns_secrets secrets; /* --secret: the headers added, by host */
        struct netns_intercept *icpt; /* their hosts' TLS interception, or NULL */
};

/* Keeps one refusal: the message the proxy answered with, the log for the reports of the
 * command that made it, the totals for env_status (netns/denials.c). */
void netns_gate_refuse(struct netns_gate *g, const char *host, uint16_t port, const char *why);

/* The head of a request as it goes upstream (netns/http.c): buf[0..head_len) is the client's
 * head (checked); absolute: its target is absolute-form (plain HTTP), else origin-form
 * (inside TLS); with inject, every secret of host replaces any header of its name. Into a
 * malloc'd *ret; its length, or -ENOMEM. Free it with netns_http_head_free, which wipes it. */
ssize_t netns_http_upstream_head(const struct netns_secrets *ss, const char *buf, size_t head_len,
                                 const char *host, uint16_t port, bool absolute, bool inject,
                                 char **ret);
void netns_http_head_free(char *h, size_t len);
