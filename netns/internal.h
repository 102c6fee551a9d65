/* Internals of the netns module: what its fuzz targets reach (fuzz/fuzz_gate.c,
 * fuzz/fuzz_sni.c, fuzz/fuzz_netpolicy.c), and what the gate's files share (gate.c,
 * denials.c, http.c, intercept.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* ---- the gate's one reading of a request head (netns/http.c) --------------------------
 * RFC 9112 held strictly: lines end in CRLF (no bare CR or LF), no obs-fold, field names are
 * tokens with no blank before the colon, values hold no CTL but HTAB, at most one Host (and
 * one for HTTP/1.1 but CONNECT), one Content-Length of digits, Transfer-Encoding only with
 * chunked last and never beside Content-Length, HTTP/1.0 or HTTP/1.1 only. The target is
 * origin-form
 * ("/..."), absolute-form ("http://host[:port]/...", no userinfo, 80 by default) or, for
 * CONNECT only, authority-form ("host:port"). Pointers of the result point into the head. */
#define NETNS_HTTP_FIELDS_MAX 100
struct netns_http_field {
        const char *name, *value; /* value without surrounding blanks */
        size_t nl, vl;
};
enum netns_http_form { NETNS_HTTP_ORIGIN, NETNS_HTTP_ABSOLUTE, NETNS_HTTP_AUTHORITY };
struct netns_http_req {
        const char *method, *target, *path; /* path: origin-form's path and query */
        size_t ml, tl, pl;
        int minor; /* HTTP/1.minor */
        enum netns_http_form form;
        char host[256]; /* absolute- and authority-form: the target's host, [v6] bracketed */
        uint16_t port;
        const char *hostv; /* the Host field's value, or NULL */
        size_t hostl;
        bool has_cl, chunked;
        uint64_t content_length;
        size_t head_len, nfields;
        struct netns_http_field f[NETNS_HTTP_FIELDS_MAX];
};

/* The length of the head at the start of buf up to its first empty line by any server's
 * reading (LF CRLF or LF LF): 0 when there is none yet. */
size_t netns_http_head_end(const char *buf, size_t len);
/* Parses the head buf[0..len) (len from netns_http_head_end). 0; -EINVAL with why for a head
 * that breaks the grammar above; -EPROTONOSUPPORT for a target of another scheme. */
int netns_http_parse(const char *buf, size_t len, struct netns_http_req *q, char *why, size_t wl);
/* Whether q's Host names host:port (def: the port a Host without one means). */
bool netns_http_host_is(const struct netns_http_req *q, const char *host, uint16_t port,
                        uint16_t def);

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
/* A blocking TCP connection to a, made within the gate's connect timeout: the socket or
 * -errno (netns/gate.c; the upstream proxy's too). */
#include <sys/socket.h>
int netns_connect(const struct sockaddr_storage *a, socklen_t len);
/* send(2) of all of buf with MSG_NOSIGNAL: 0 or -errno. */
int netns_send_all(int fd, const void *buf, size_t len);

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
/* netns_relay between two TLS connections; returns when b (the upstream) has ended, leaving a
 * open (its next request may follow), with what is left of a_limit. */
uint64_t netns_tls_relay(struct netns_tls_conn *a, struct netns_tls_conn *b, uint64_t a_limit);
/* Whether c has more to read now (decrypted already, or on its socket). */
bool netns_tls_pending(struct netns_tls_conn *c);
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
        struct netns_upstream upstream; /* --upstream-proxy, or unset */
};

/* Keeps one refusal: the message the proxy answered with, the log for the reports of the
 * command that made it, the totals for env_status (netns/denials.c). */
void netns_gate_refuse(struct netns_gate *g, const char *host, uint16_t port, const char *why);

/* The head of a request as it goes upstream (netns/http.c), written from the parse q: the
 * request line in origin-form, `Host: host[:port]` (no port when it is def), q's fields but
 * Host, the framing and the hop-by-hop ones (Connection and what it names, Proxy-*,
 * Keep-Alive, TE, Upgrade, Trailer, "close"), Content-Length from the parse, `Connection: close`;
 * with inject, every secret of host replaces any field of its name. Into a malloc'd *ret;
 * its length, or -ENOMEM. Free it with netns_http_head_free, which wipes it. */
struct netns_secrets;
ssize_t netns_http_upstream_head(const struct netns_secrets *ss, const struct netns_http_req *q,
                                 const char *host, uint16_t port, uint16_t def, bool inject,
                                 char **ret);
void netns_http_head_free(char *h, size_t len);
