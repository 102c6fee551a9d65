/* `rtn serve --http`: MCP's Streamable HTTP transport in front of one stdio `rtn serve` per
 * MCP session (docs/architecture.md, "MCP over HTTP"). main.c reads the options, the token
 * file and opens the listening socket; mhd.c is the HTTP side (libmicrohttpd, loaded with
 * dlopen only in this mode): authentication, Origin and Host, the methods and headers of the
 * transport, with conns.c (the connections without the token) and stream.c (a request's
 * event stream) beside it, sharing mhd.h; sessions.c runs the children, forwards messages to
 * them over pipes and matches their answers, reaps idle sessions and ends them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common/err.h"

struct rtn_loop;
struct rtn_loop_source;
struct MHD_Connection;

/* The options of the front end, as `rtn serve --help` lists them (one home: the usage text
 * and the parser in main.c both come from here). */
#define MCP_HTTPD_USAGE                                                                            \
        "  --http ADDR:PORT      serve MCP Streamable HTTP at http://ADDR:PORT/mcp instead of\n"   \
        "                        stdio: one sandbox per MCP session ([::1]:PORT for IPv6;\n"       \
        "                        PORT 0 picks a free one, printed on stderr)\n"                    \
        "  --token-file FILE     the bearer token every HTTP request must carry (required\n"       \
        "                        with --http; FILE must not be readable by group or others)\n"     \
        "  --idle-timeout DURATION end an HTTP session idle this long, and each sandbox of\n"      \
        "                        2026-07-28 requests unused this long (default 15m; 30s, 5m,\n"    \
        "                        1h)\n"                                                            \
        "  --max-sessions N      HTTP sessions at once, the 2026-07-28 requests' sandboxes\n"      \
        "                        counted as one (default 64); more are refused (503)\n"            \
        "  --allow-origin ORIGIN accept requests whose Origin is ORIGIN (SCHEME://HOST[:PORT])\n"  \
        "                        too, a browser's page with CORS; repeatable (the server's own\n"  \
        "                        http://ADDR:PORT, or localhost:PORT, always is)\n"                \
        "  --http-public         allow --http on an address other than loopback\n"                 \
        "  --workspace-root DIR  give each HTTP session a workspace of its own, DIR/<session\n"    \
        "                        id>, made by rtn and kept after the session (--workspace,\n"      \
        "                        --bind, --publish and bind_host_dir are not offered there)\n"

#define HTTPD_DEFAULT_IDLE_SECS 900
#define HTTPD_DEFAULT_MAX_SESSIONS 64
#define HTTPD_MAX_SESSIONS 4096
#define HTTPD_MAX_ORIGINS 16
#define HTTPD_TOKEN_MIN 16 /* bytes: shorter is no secret */
#define HTTPD_TOKEN_MAX 512
#define HTTPD_SID_LEN 32 /* hex characters of a session id (128 random bits) */
/* A connection must finish a whole request with the token this soon after its first byte,
 * or it is dropped; at most HTTPD_MAX_UNAUTH connections without the token are held, the
 * oldest dropped for a new one (docs/security-invariants.md, invariant 27). */
#define HTTPD_HEAD_USEC (10ULL * 1000 * 1000)
#define HTTPD_MAX_UNAUTH 512
/* An idle keep-alive connection that carried the token is closed after this long. */
#define HTTPD_AUTHED_IDLE_SECS 300
/* A session's child must end this long after its input closed, or it is killed. */
#define HTTPD_STOP_GRACE_USEC (10ULL * 1000 * 1000)

struct httpd_opts {
        const char *listen; /* ADDR:PORT as given */
        const char *token_file;
        const char *data_dir; /* --data-dir: the store the session stores are made under */
        const char *workspace_root; /* --workspace-root: a directory per session under it */
        uint64_t idle_usec;
        unsigned max_sessions;
        bool public_ok;
        const char *origins[HTTPD_MAX_ORIGINS];
        size_t norigins;
        char **child_argv; /* "serve" and the options passed to every session's rtn serve */
        size_t child_argc;
};

struct httpd;
struct httpd_session;
struct httpd_req;
struct httpd_conn;
/* A list of connections (conns.c), oldest first; a connection is on one at most. */
struct httpd_conns {
        struct httpd_conn *head, *tail;
        unsigned n;
};

/* ---- main.c ---------------------------------------------------------------------------- */

/* True when argv asks for the HTTP front end: --http given (and no --help). */
bool mcp_httpd_requested(int argc, char **argv);
/* `rtn serve --http ...`: returns the exit code. */
int mcp_httpd_cmd(int argc, char **argv);

/* Splits argv into the front end's options and the child's; refuses what would make the
 * sessions share host files (--workspace, --bind). Exposed for the unit test. */
int httpd_parse_opts(int argc, char **argv, struct httpd_opts *o, struct rtn_error *err);
void httpd_opts_free(struct httpd_opts *o);
/* Reads the token: a regular file, owned by the caller or root, with no group or other
 * permission bits, of HTTPD_TOKEN_MIN..HTTPD_TOKEN_MAX visible ASCII characters (a final
 * newline is dropped). */
int httpd_read_token(const char *path, char **ret, struct rtn_error *err);
/* An origin as a browser sends it, SCHEME://HOST[:PORT]: its host's span and its port (0 when
 * none is given); -1 when ORIGIN is not one. */
int httpd_origin_parse(const char *origin, const char **ret_host, size_t *ret_host_len,
                       unsigned *ret_port);
/* ADDR:PORT or [ADDR6]:PORT; *ret_loopback when ADDR is 127.0.0.0/8 or ::1. */
int httpd_parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len,
                       bool *ret_loopback, struct rtn_error *err);
/* Constant-time comparison of a presented token with the expected one: the time depends on
 * the expected token's length only. */
bool httpd_token_equal(const char *given, size_t given_len, const char *want, size_t want_len);

/* ---- the front end's state (shared by mhd.c and sessions.c) ---------------------------- */

struct httpd {
        struct rtn_loop *loop;
        /* The requests whose connections are suspended (httpd_req_suspend): libmicrohttpd
         * aborts when stopped with one left, so httpd_mhd_stop resumes them first. */
        struct httpd_req *suspended;
        const struct httpd_opts *o;
        char *token;
        size_t token_len;
        bool loopback;
        char host[64]; /* the bound address as a Host header names it (no port) */
        unsigned port;
        int exe_fd; /* O_PATH fd of our own binary: every session runs it */
        int wsroot_fd; /* --workspace-root, or -1 */
        char *base; /* the data dir: the store every session's server uses */
        size_t max_body;
        void *mhd; /* struct MHD_Daemon */
        struct httpd_session *sessions;
        struct httpd_session *modern; /* the 2026-07-28 requests' state, or NULL */
        unsigned nsessions; /* all children alive, ending ones included */
        struct rtn_loop_source *tick;
        struct rtn_loop_source *mhd_timer; /* when libmicrohttpd wants to run next */
        struct httpd_conns unauth; /* without the token yet, oldest first */
        struct httpd_conns receiving; /* a request's body coming (httpd_conn_receiving) */
        unsigned max_unauth;
        struct rlimit nofile; /* RLIMIT_NOFILE as we started: the sessions' children get it */
        bool stopping;
};

/* ---- mhd.c ----------------------------------------------------------------------------- */

int httpd_mhd_start(struct httpd *h, int listen_fd, struct rtn_error *err);
void httpd_mhd_stop(struct httpd *h);
/* Drops the connections that did not send a request with the token in time; every second. */
void httpd_mhd_tick(struct httpd *h);
/* Runs libmicrohttpd's work that is ready (after a connection was resumed). */
void httpd_mhd_run(struct httpd *h);
/* A forwarded request's answer is ready (or its session ended): resume its connection. */
void httpd_req_done(struct httpd_req *q, unsigned status, char *body, size_t len);
/* A notification (a JSON text: progress, a log message) for q's request: sent on its event
 * stream when its client takes one (the stream is opened on the first), else dropped. */
void httpd_req_notify(struct httpd_req *q, const char *msg, size_t len);

/* ---- sessions.c ------------------------------------------------------------------------ */

/* A new session with its child running; -EBUSY at the cap. modern: the state of the
 * 2026-07-28 requests instead (h->modern), made on the first one and kept while it has a
 * sandbox or a call came within --idle-timeout. */
int httpd_session_new(struct httpd *h, bool modern, struct httpd_session **ret,
                      struct rtn_error *err);
struct httpd_session *httpd_session_find(struct httpd *h, const char *sid, size_t len);
const char *httpd_session_id(const struct httpd_session *s);
/* Forwards one message (a JSON text, any newlines already gone). When q is not NULL it
 * waits for the response whose id is id (raw JSON, a span of msg), and relays to q the
 * progress notifications for ptok (its _meta.progressToken, a span of msg, or NULL) and the
 * log messages of its call.
 * -EEXIST: that id is in flight. */
int httpd_session_send(struct httpd_session *s, const char *msg, size_t len, const char *id,
                       size_t id_len, const char *ptok, size_t ptok_len, struct httpd_req *q);
/* The client closed the stream of q's call: the call is cancelled (notifications/cancelled
 * to the session's server) and q forgotten. */
void httpd_session_cancel(struct httpd_session *s, struct httpd_req *q);
/* The request's connection went away: forget it. */
void httpd_session_forget(struct httpd_session *s, struct httpd_req *q);
/* Ends the session: its child's input is closed; q (may be NULL) is answered once it is gone. */
void httpd_session_end(struct httpd_session *s, struct httpd_req *q);
/* Idle sessions past the timeout are ended (the token's state ends itself); every second. */
void httpd_sessions_tick(struct httpd *h);
/* Ends every session and returns once all children are gone (or killed). */
void httpd_sessions_stop(struct httpd *h);
