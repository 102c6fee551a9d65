/* What the files of the HTTP side share (mhd.c, conns.c, stream.c): libmicrohttpd's functions,
 * looked up with dlsym by mhd.c, a request and a connection as they are handled. */
#pragma once

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/httpd/httpd.h"

struct mcp_msg;

struct mhd_fns {
        struct MHD_Daemon *(*start)(unsigned, uint16_t, MHD_AcceptPolicyCallback, void *,
                                    MHD_AccessHandlerCallback, void *, ...);
        void (*stop)(struct MHD_Daemon *);
        enum MHD_Result (*run)(struct MHD_Daemon *);
        enum MHD_Result (*get_timeout)(struct MHD_Daemon *, MHD_UNSIGNED_LONG_LONG *);
        const union MHD_DaemonInfo *(*info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
        const char *(*lookup)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
        int (*values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
        struct MHD_Response *(*from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
        struct MHD_Response *(*from_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *,
                                              MHD_ContentReaderFreeCallback);
        enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
        enum MHD_Result (*queue)(struct MHD_Connection *, unsigned, struct MHD_Response *);
        void (*destroy)(struct MHD_Response *);
        void (*suspend)(struct MHD_Connection *);
        void (*resume)(struct MHD_Connection *);
        const union MHD_ConnectionInfo *(*conn_info)(struct MHD_Connection *,
                                                     enum MHD_ConnectionInfoType, ...);
        enum MHD_Result (*conn_set)(struct MHD_Connection *, enum MHD_CONNECTION_OPTION, ...);
};
extern struct mhd_fns httpd_mhd_fns;
#define M httpd_mhd_fns /* short, as the calls read best */

struct httpd_req {
        struct httpd *h;
        struct MHD_Connection *conn;
        struct httpd_session *s; /* waiting on it, while not done */
        char *body;
        size_t len, cap;
        size_t dropped; /* of a body past the limit, read and thrown away */
        char *id; /* the forwarded request's JSON-RPC id as it came, for an answer of our own */
        size_t id_len;
        bool too_big, suspended, done, sse, set_sid;
        /* The client takes text/event-stream: progress opens an event stream (streaming),
         * whose events wait in ev until the connection sends them. */
        bool sse_ok, streaming, stream_queued;
        /* The request's Origin when it was allowed (a browser's page): every answer names it
         * (CORS, httpd_cors), in libmicrohttpd's copy, which lives as long as the request. */
        const char *origin;
        char *ev;
        size_t ev_len, ev_off;
        int watch_fd; /* the connection's socket, watched for the client going away, or -1 */
        char sid[HTTPD_SID_LEN + 1];
        unsigned status;
        char *resp;
        size_t resp_len;
        struct httpd_req *sus_prev, *sus_next; /* on h->suspended while suspended */
};

/* One TCP connection (libmicrohttpd's socket context). Until it has carried a request with
 * the token it is on h->unauth, oldest first; then on h->receiving while a body comes. */
struct httpd_conn {
        struct httpd_conn *prev, *next;
        struct httpd_conns *on; /* h->unauth until it carried the token, h->receiving while a
                                 * request's body comes after that, else NULL */
        int fd;
        uint64_t first_usec; /* when its first byte was seen, or 0: none yet */
        bool authed;
};

/* ---- mhd.c ----------------------------------------------------------------------------- */

/* Watch the connection's socket for the client going away while it is suspended; stop. */
/* An answer to a request of an allowed Origin names it, exposes what a client reads
 * (CORS; mhd.c). */
void httpd_cors(const struct httpd_req *q, struct MHD_Response *r);
void httpd_req_watch(struct httpd_req *q);
void httpd_req_unwatch(struct httpd_req *q);
/* The connection goes on: libmicrohttpd handles it again (and notices a peer gone). */
void httpd_req_wake(struct httpd_req *q);
/* The connection waits (MHD_suspend_connection) until httpd_req_wake or httpd_req_done; it is
 * listed on h->suspended meanwhile. */
void httpd_req_suspend(struct httpd_req *q);

/* ---- conns.c --------------------------------------------------------------------------- */

/* The request's connection is receiving its body (from the head's acceptance to the body's
 * end), or no longer: httpd_mhd_tick closes one whose client has gone meanwhile. */
void httpd_conn_receiving(struct httpd_req *q, bool on);

/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION: a new connection is listed (past the cap
 * the oldest without the token is dropped), a closed one forgotten. */
void httpd_conn_notify(void *cls, struct MHD_Connection *c, void **ctx,
                       enum MHD_ConnectionNotificationCode why);
/* The connection carried a request with the token: off the list, kept alive while idle. */
void httpd_conn_authed(struct httpd_req *q);

/* ---- stream.c -------------------------------------------------------------------------- */

/* Queues the event stream as q's answer (after its first progress). */
enum MHD_Result httpd_stream_queue(struct httpd_req *q);
/* The answer of a streaming q: its last event, and the stream ends. False when q does not
 * stream (nothing done). */
bool httpd_stream_done(struct httpd_req *q, unsigned status, char *body, size_t len);
/* _meta.progressToken of a request (raw JSON, a span of the body), or NULL. */
const char *httpd_progress_token(const struct mcp_msg *m, size_t *ret_len);
