/* The HTTP side of `rtn serve --http`: MCP's Streamable HTTP transport (basic/transports,
 * "Streamable HTTP") on libmicrohttpd, whose header gives the types and constants only; its
 * functions are looked up by common/dl.h's loader when --http is used, so nothing else of
 * rtn loads it (or the TLS library it links). libmicrohttpd runs in "external epoll" mode on our
 * event loop; a POST whose answer comes from a session's child is suspended until it arrives.
 *
 * Every request passes, in this order: the path (/mcp), the Host header (loopback only: a
 * DNS-rebinding page names its own host), the Origin header (absent, the server's own, or
 * one of --allow-origin), OPTIONS (a browser's preflight, which carries no token), the bearer
 * token (constant-time compare; 401 with WWW-Authenticate), then the method: POST carries one
 * JSON-RPC message (batches are refused), DELETE ends a session, GET is 405 (no
 * server-initiated stream is offered). An answer to an allowed Origin names it (CORS). */
#include <errno.h>
#include <microhttpd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include "common/clock.h"
#include "common/dl.h"
#include "common/json.h"
#include "common/log.h"
#include "common/loop.h"
#include "serve/httpd/httpd.h"
#include "serve/httpd/mhd.h"
#include "mcp/mcp.h"
#include "mcp/wire.h"

struct mhd_fns httpd_mhd_fns;

/* Rounds of MHD_run while libmicrohttpd has work ready, before the loop serves others. */
#define MHD_RUN_ROUNDS 16
/* At most this many waits of 10 ms for the answers of a stopping server to go out. */
#define HTTPD_STOP_FLUSH_ROUNDS 50
/* A connection's buffers: a body is read this much at a time. No more than 32 KiB, its
 * default: a larger pool is an mmap of its own per connection, which libmicrohttpd zeroes
 * whole at each request's end, so every connection faulted in every page of it (at 256 KiB,
 * 64 pages and about a millisecond of CPU a request here, for no faster a 1 MiB body: make
 * bench's http group). This one comes from malloc's heap, its pages reused
 * (serve_http.sh request_pages). */
#define MHD_CONN_MEMORY (32u << 10)

static const struct rtn_dl_sym mhd_syms[] = {
        {"MHD_start_daemon", (void **)&M.start},
        {"MHD_stop_daemon", (void **)&M.stop},
        {"MHD_run", (void **)&M.run},
        {"MHD_get_timeout", (void **)&M.get_timeout},
        {"MHD_get_daemon_info", (void **)&M.info},
        {"MHD_lookup_connection_value", (void **)&M.lookup},
        {"MHD_get_connection_values", (void **)&M.values},
        {"MHD_create_response_from_buffer", (void **)&M.from_buffer},
        {"MHD_create_response_from_callback", (void **)&M.from_callback},
        {"MHD_add_response_header", (void **)&M.add_header},
        {"MHD_queue_response", (void **)&M.queue},
        {"MHD_destroy_response", (void **)&M.destroy},
        {"MHD_suspend_connection", (void **)&M.suspend},
        {"MHD_resume_connection", (void **)&M.resume},
        {"MHD_get_connection_info", (void **)&M.conn_info},
        {"MHD_set_connection_option", (void **)&M.conn_set},
};
static struct rtn_dl mhd_lib = RTN_DL_INIT("libmicrohttpd.so.12", mhd_syms);

static const char *header(struct MHD_Connection *c, const char *name) {
        return M.lookup(c, MHD_HEADER_KIND, name);
}

/* ---- answers --------------------------------------------------------------------------- */

/* The methods /mcp answers (405's Allow, OPTIONS). */
#define HTTPD_METHODS "POST, DELETE, OPTIONS"
/* A browser page of an allowed origin (the server's own, or one of --allow-origin) may send
 * these beyond the CORS-safelisted ones (basic/transports: the token, the session, the
 * standard headers of 2026-07-28, a stream's resumption), and read these of an answer. A
 * preflight's answer is kept by the browser this many seconds. */
#define CORS_ALLOW_HEADERS                                                                         \
        "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, "  \
        "Mcp-Name, Last-Event-ID"
#define CORS_EXPOSE_HEADERS "Mcp-Session-Id, WWW-Authenticate"
#define CORS_MAX_AGE "600"

void httpd_cors(const struct httpd_req *q, struct MHD_Response *r) {
        if (!q->origin)
                return;
        M.add_header(r, "Access-Control-Allow-Origin", q->origin);
        M.add_header(r, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
        M.add_header(r, "Vary", "Origin");
}

static enum MHD_Result send_reply(struct httpd_req *q, unsigned status, char *body, size_t len) {
        const char *ctype = "application/json";
        if (body && q->sse && status == 200) {
                char *ev = NULL;
                int n = asprintf(&ev, "event: message\ndata: %.*s\n\n", (int)len, body);
                free(body);
                body = n < 0 ? NULL : ev;
                len = n < 0 ? 0 : (size_t)n;
                ctype = "text/event-stream";
        }
        struct MHD_Response *r = body ? M.from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
                                      : M.from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!r) {
                free(body);
                return MHD_NO;
        }
        if (len)
                M.add_header(r, "Content-Type", ctype);
        if (q->set_sid && status == 200)
                M.add_header(r, "Mcp-Session-Id", q->sid);
        if (status == MHD_HTTP_UNAUTHORIZED)
                M.add_header(r, "WWW-Authenticate", "Bearer realm=\"rtn\"");
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                M.add_header(r, "Allow", HTTPD_METHODS);
        httpd_cors(q, r);
        enum MHD_Result ret = M.queue(q->conn, status, r);
        M.destroy(r);
        return ret;
}

/* An HTTP error with a JSON-RPC error body (id null unless the request's is known). */
static enum MHD_Result send_error(struct httpd_req *q, unsigned status, const char *id,
                                  size_t id_len, int code, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));
static enum MHD_Result send_error(struct httpd_req *q, unsigned status, const char *id,
                                  size_t id_len, int code, const char *fmt, ...) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        mcp_write_error(&b, id, id_len, code, msg);
        size_t len = b.len;
        char *body = b.err ? NULL : rtn_json_buf_steal(&b);
        rtn_json_buf_free(&b);
        q->sse = false;
        return send_reply(q, status, body, body ? len : 0);
}

void httpd_req_unwatch(struct httpd_req *q) {
        if (q->watch_fd >= 0)
                (void)rtn_loop_del_fd(q->h->loop, q->watch_fd);
        q->watch_fd = -1;
}

void httpd_req_suspend(struct httpd_req *q) {
        struct httpd *h = q->h;
        q->suspended = true;
        q->sus_prev = NULL;
        q->sus_next = h->suspended;
        if (h->suspended)
                h->suspended->sus_prev = q;
        h->suspended = q;
        M.suspend(q->conn);
}

/* Off h->suspended; false when it was not suspended. */
static bool req_unlink(struct httpd_req *q) {
        if (!q->suspended)
                return false;
        q->suspended = false;
        if (q->sus_prev)
                q->sus_prev->sus_next = q->sus_next;
        else
                q->h->suspended = q->sus_next;
        if (q->sus_next)
                q->sus_next->sus_prev = q->sus_prev;
        q->sus_prev = q->sus_next = NULL;
        return true;
}

static void req_resume(struct httpd_req *q) {
        if (req_unlink(q))
                M.resume(q->conn);
}

void httpd_req_wake(struct httpd_req *q) {
        httpd_req_unwatch(q);
        req_resume(q);
}

void httpd_req_done(struct httpd_req *q, unsigned status, char *body, size_t len) {
        if (httpd_stream_done(q, status, body, len))
                return;
        httpd_req_unwatch(q);
        if (q->done) {
                free(body);
                return;
        }
        q->s = NULL;
        q->done = true;
        q->status = status;
        q->resp = body;
        q->resp_len = body ? len : 0;
        req_resume(q);
}

/* The answer to initialize opens the session: only a result does. */
static bool initialize_ok(const char *resp, size_t len) {
        const char *id;
        size_t il;
        if (!resp || mcp_response_id(resp, len, &id, &il) < 0)
                return false;
        const char *after = id + il;
        return (size_t)(resp + len - after) > 10 && !strncmp(after, ",\"result\":", 10);
}

static enum MHD_Result send_done(struct httpd_req *q) {
        char *body = q->resp;
        q->resp = NULL;
        if (q->set_sid && !initialize_ok(body, q->resp_len)) {
                struct httpd_session *s = httpd_session_find(q->h, q->sid, strlen(q->sid));
                if (s)
                        httpd_session_end(s, NULL);
                q->set_sid = false;
        }
        return send_reply(q, q->status, body, q->resp_len);
}

/* ---- checks before the method ---------------------------------------------------------- */

/* Loopback only: the Host a client used must name this machine. A page whose own name was
 * rebound to 127.0.0.1 sends its name here. */
static bool host_ok(struct httpd *h, const char *host) {
        if (!h->loopback)
                return true;
        if (!host)
                return false;
        size_t n = strlen(host);
        const char *colon = strrchr(host, ':');
        if (colon && (host[0] != '[' || colon > strchr(host, ']')))
                n = (size_t)(colon - host);
        static const char *const names[] = {"localhost", "127.0.0.1", "[::1]"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                if (n == strlen(names[i]) && !strncasecmp(host, names[i], n))
                        return true;
        return n == strlen(h->host) && !strncasecmp(host, h->host, n);
}

/* The server's own origin: http, the address it listens on (or localhost when that is
 * loopback) and its port (RFC 6454: all three, compared as ASCII case-insensitive). */
static bool own_origin(struct httpd *h, const char *origin) {
        const char *host;
        size_t n;
        unsigned port;
        if (strncasecmp(origin, "http://", 7) || httpd_origin_parse(origin, &host, &n, &port) < 0)
                return false;
        bool name_ok = (n == strlen(h->host) && !strncasecmp(host, h->host, n)) ||
                       (h->loopback && n == 9 && !strncasecmp(host, "localhost", 9));
        return name_ok && (port ? port : 80) == h->port;
}

static bool origin_ok(struct httpd *h, const char *origin) {
        if (!origin)
                return true; /* not a browser: the token decides */
        if (own_origin(h, origin))
                return true;
        for (size_t i = 0; i < h->o->norigins; i++)
                if (!strcasecmp(origin, h->o->origins[i]))
                        return true;
        return false;
}

static bool auth_ok(struct httpd *h, const char *a) {
        if (!a || strncasecmp(a, "Bearer ", 7))
                return false;
        a += 7;
        while (*a == ' ')
                a++;
        size_t n = strlen(a);
        while (n && a[n - 1] == ' ')
                n--;
        return httpd_token_equal(a, n, h->token, h->token_len);
}

/* A head must leave HEAD_ROOM of the connection's pool: libmicrohttpd builds the answer's
 * head there too, and reads a body through what is left. Just under the pool's size a head
 * was taken, its call run and its answer lost ("failed to create response header"): a client
 * that retried ran it twice, and an initialize made a session nobody could reach. */
#define HEAD_ROOM (8u << 10)
#define HEAD_ENTRY 64 /* libmicrohttpd's record of one header in the pool, rounded up */

/* What the head holds, for head_refused. */
struct head_scan {
        size_t n, bytes;
        unsigned te, cl, host, origin, auth, sid;
        bool space; /* whitespace in a field's name, as "Content-Length :" leaves there */
};

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
        (void)kind;
        struct head_scan *s = cls;
        static const struct {
                const char *name;
                size_t off;
        } once[] = {
                {"Transfer-Encoding", offsetof(struct head_scan, te)},
                {"Content-Length", offsetof(struct head_scan, cl)},
                {"Host", offsetof(struct head_scan, host)},
                {"Origin", offsetof(struct head_scan, origin)},
                {"Authorization", offsetof(struct head_scan, auth)},
                {"Mcp-Session-Id", offsetof(struct head_scan, sid)},
        };
        s->n++;
        s->bytes += (key ? strlen(key) : 0) + (value ? strlen(value) : 0) + 4;
        if (key && key[strcspn(key, " \t")])
                s->space = true;
        for (size_t i = 0; key && i < sizeof once / sizeof once[0]; i++)
                if (!strcasecmp(key, once[i].name))
                        (*(unsigned *)((char *)s + once[i].off))++;
        return MHD_YES;
}

/* A head that leaves too little of the pool (431), or whose framing or deciding headers a
 * proxy in front may read otherwise than libmicrohttpd, which takes the first copy, lets
 * chunked win over a length and keeps "Content-Length :" as another field (400):
 * Transfer-Encoding with Content-Length, either twice (RFC 9112, 6.3: request smuggling),
 * whitespace between a field's name and its colon (RFC 9112, 5.1), or Host, Origin,
 * Authorization or Mcp-Session-Id twice. Returns MHD_YES after queueing the refusal, else
 * -1. */
static int head_refused(struct httpd_req *q, const char *url) {
        struct head_scan s = {0};
        (void)M.values(q->conn, MHD_HEADER_KIND, scan_header, &s);
        const union MHD_ConnectionInfo *i =
                M.conn_info(q->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
        size_t raw = i ? i->header_size : strlen(url) + 32 + s.bytes;
        if (raw + s.n * HEAD_ENTRY + HEAD_ROOM > MHD_CONN_MEMORY)
                return send_error(q, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, NULL, 0,
                                  MCP_INVALID_REQUEST,
                                  "Request Header Fields Too Large: at most %u KiB of head",
                                  (MHD_CONN_MEMORY - HEAD_ROOM) >> 10);
        const char *twice = s.te > 1       ? "Transfer-Encoding"
                            : s.cl > 1     ? "Content-Length"
                            : s.host > 1   ? "Host"
                            : s.origin > 1 ? "Origin"
                            : s.auth > 1   ? "Authorization"
                            : s.sid > 1    ? "Mcp-Session-Id"
                                           : NULL;
        if (twice)
                return send_error(q, MHD_HTTP_BAD_REQUEST, NULL, 0, MCP_INVALID_REQUEST,
                                  "Bad Request: %s more than once", twice);
        if (s.te && s.cl)
                return send_error(q, MHD_HTTP_BAD_REQUEST, NULL, 0, MCP_INVALID_REQUEST,
                                  "Bad Request: Transfer-Encoding and Content-Length together");
        if (s.space)
                return send_error(q, MHD_HTTP_BAD_REQUEST, NULL, 0, MCP_INVALID_REQUEST,
                                  "Bad Request: whitespace in a header field's name");
        return -1;
}

/* OPTIONS: the methods, and to a browser's preflight (an allowed Origin asking with
 * Access-Control-Request-Method) what its page may send: 204, with no token asked, since a
 * browser sends none with a preflight (Fetch, "CORS-preflight request"). A page of a public
 * origin that --allow-origin names may reach this loopback server (Private Network Access). */
static enum MHD_Result send_options(struct httpd_req *q) {
        struct MHD_Response *r = M.from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!r)
                return MHD_NO;
        M.add_header(r, "Allow", HTTPD_METHODS);
        if (q->origin && header(q->conn, "Access-Control-Request-Method")) {
                M.add_header(r, "Access-Control-Allow-Methods", HTTPD_METHODS);
                M.add_header(r, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
                M.add_header(r, "Access-Control-Max-Age", CORS_MAX_AGE);
                const char *pna = header(q->conn, "Access-Control-Request-Private-Network");
                if (pna && !strcasecmp(pna, "true"))
                        M.add_header(r, "Access-Control-Allow-Private-Network", "true");
        }
        httpd_cors(q, r);
        enum MHD_Result ret = M.queue(q->conn, MHD_HTTP_NO_CONTENT, r);
        M.destroy(r);
        return ret;
}

/* Returns MHD_YES after queueing a refusal or OPTIONS' answer, or -1 when the request may go
 * on. */
static int refuse(struct httpd_req *q, const char *url, const char *method) {
        struct httpd *h = q->h;
        struct MHD_Connection *c = q->conn;
        int r = head_refused(q, url);
        if (r >= 0)
                return r;
        if (strcmp(url, "/mcp"))
                return send_error(q, MHD_HTTP_NOT_FOUND, NULL, 0, MCP_INVALID_REQUEST,
                                  "Not found: the MCP endpoint is /mcp");
        if (!host_ok(h, header(c, "Host")))
                return send_error(q, MHD_HTTP_FORBIDDEN, NULL, 0, MCP_INVALID_REQUEST,
                                  "Forbidden: Host must name this machine (localhost, %s)",
                                  h->host);
        if (!origin_ok(h, header(c, "Origin")))
                return send_error(q, MHD_HTTP_FORBIDDEN, NULL, 0, MCP_INVALID_REQUEST,
                                  "Forbidden: Origin not allowed (rtn serve --allow-origin)");
        q->origin = header(c, "Origin");
        if (!strcmp(method, "OPTIONS"))
                return send_options(q);
        if (!auth_ok(h, header(c, "Authorization")))
                return send_error(q, MHD_HTTP_UNAUTHORIZED, NULL, 0, MCP_INVALID_REQUEST,
                                  "Unauthorized: send Authorization: Bearer <the token of "
                                  "--token-file>");
        httpd_conn_authed(q);
        return -1;
}

/* ---- POST ------------------------------------------------------------------------------ */

static bool accepts(const char *accept, const char *type) {
        return accept && (strcasestr(accept, type) || strstr(accept, "*/*"));
}

struct header_count {
        const char *name;
        unsigned n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
        (void)kind;
        (void)value;
        struct header_count *c = cls;
        if (key && !strcasecmp(key, c->name))
                c->n++;
        return MHD_YES;
}

/* A standard header of 2026-07-28 (basic/transports, "Standard headers"), its name in any
 * case, its value without the optional whitespace around it (RFC 9110, 5.5), into buf: 1, 0
 * when absent, -EEXIST when the request carries it more than once (a proxy may route on
 * either copy, or on both joined), -E2BIG when it does not fit. */
static int std_header(struct MHD_Connection *c, const char *name, char *buf, size_t bl) {
        struct header_count count = {.name = name};
        (void)M.values(c, MHD_HEADER_KIND, count_header, &count);
        if (count.n > 1)
                return -EEXIST;
        const char *h = header(c, name);
        if (!h)
                return 0;
        while (*h == ' ' || *h == '\t')
                h++;
        size_t n = strlen(h);
        while (n && (h[n - 1] == ' ' || h[n - 1] == '\t'))
                n--;
        if (n >= bl)
                return -E2BIG;
        memcpy(buf, h, n);
        buf[n] = '\0';
        return 1;
}

/* -32022 with the versions we speak (400). */
static enum MHD_Result send_unsupported(struct httpd_req *q, const struct mcp_msg *m,
                                        const char *requested) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        mcp_write_unsupported_version(&b, m->id, m->id_len, requested);
        size_t len = b.len;
        char *body = b.err ? NULL : rtn_json_buf_steal(&b);
        rtn_json_buf_free(&b);
        q->sse = false;
        return send_reply(q, MHD_HTTP_BAD_REQUEST, body, body ? len : 0);
}

/* The body's value the Mcp-Name header must repeat (basic/transports, "Standard headers"),
 * unescaped into buf; NULL when the method has none. */
static const char *name_in_body(const struct rtn_json_doc *d, const struct mcp_msg *m, char *buf,
                                size_t bl) {
        static const struct {
                const char *method, *key;
        } keyed[] = {{"tools/call", "name"},     {"prompts/get", "name"},
                     {"resources/read", "uri"},  {"tasks/get", "taskId"},
                     {"tasks/cancel", "taskId"}, {"tasks/update", "taskId"}};
        for (size_t i = 0; i < sizeof keyed / sizeof keyed[0]; i++) {
                if (strcmp(m->method, keyed[i].method))
                        continue;
                int t = m->params >= 0 && rtn_json_kind(d, m->params) == 'o'
                                ? rtn_json_obj_get(d, m->params, keyed[i].key)
                                : -1;
                if (t < 0 || rtn_json_kind(d, t) != 's' || rtn_json_unescape(d, t, buf, bl) < 0)
                        return NULL;
                return buf;
        }
        return NULL;
}

static enum MHD_Result send_mismatch(struct httpd_req *q, const struct mcp_msg *m, const char *fmt,
                                     ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result send_mismatch(struct httpd_req *q, const struct mcp_msg *m, const char *fmt,
                                     ...) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        return send_error(q, MHD_HTTP_BAD_REQUEST, m->id, m->id_len, MCP_HEADER_MISMATCH,
                          "Bad Request: %s", msg);
}

/* The version of a request, from the MCP-Protocol-Version header and the claim of its
 * params._meta (era.c's rule, the same as on stdio). When both are sent they must name the
 * same version, whichever of them is unknown (a proxy routes on the header): HeaderMismatch
 * otherwise, before the version itself is judged; one we do not speak is -32022 with those we
 * do; a claim that is no version string, or a 2026-07-28 one without the rest of its
 * envelope, is 400 with -32602 before anything runs. A request is of the 2026-07-28 revision
 * when _meta says so, or, outside a session, when the header does (check_modern then wants
 * the claim). Returns -1 with *ret_claim (the version _meta names, -1: none) and *ret_modern,
 * or an answer already queued. */
static int check_version(struct httpd_req *q, const struct rtn_json_doc *d, const struct mcp_msg *m,
                         int *ret_claim, bool *ret_modern) {
        char hv[64], requested[64] = "", why[512] = "";
        int has_hv = std_header(q->conn, "MCP-Protocol-Version", hv, sizeof hv), claim = -1;
        if (has_hv == -EEXIST)
                return send_mismatch(q, m, "MCP-Protocol-Version is sent more than once");
        if (has_hv == -E2BIG) {
                has_hv = 1;
                snprintf(hv, sizeof hv, "(a value too long)");
        }
        int code = m->kind == MCP_MSG_RESPONSE ? 0
                                               : mcp_era_claim(d, m->params, &claim, requested,
                                                               sizeof requested, why, sizeof why);
        if (has_hv && requested[0] && strcmp(hv, requested))
                return send_mismatch(q, m,
                                     "MCP-Protocol-Version is %.60s but _meta[\"" MCP_META_VERSION
                                     "\"] is %.60s: they must name the same version",
                                     hv, requested);
        int hvi = has_hv ? mcp_version_find(hv) : -1;
        if ((has_hv && hvi < 0) || code == MCP_UNSUPPORTED_VERSION)
                return send_unsupported(q, m, has_hv && hvi < 0 ? hv : requested);
        if (code && m->kind == MCP_MSG_REQUEST)
                return send_error(q, MHD_HTTP_BAD_REQUEST, m->id, m->id_len, code, "%s", why);
        if (claim < 0 && requested[0])
                claim = mcp_version_find(requested); /* a notification's malformed envelope */
        *ret_claim = claim;
        *ret_modern = claim >= MCP_V_FIRST_MODERN ||
                      (hvi >= MCP_V_FIRST_MODERN && !header(q->conn, "Mcp-Session-Id"));
        return -1;
}

/* SEP-2243: a 2026-07-28 request names its version, method and (for a call) the tool in
 * headers too, each once, and they must agree with the body (a proxy routes on them):
 * HeaderMismatch otherwise, before anything runs. claim is the _meta version (-1: none); a
 * request the revision does not have is 404 with -32601. */
static int check_modern(struct httpd_req *q, const struct rtn_json_doc *d, const struct mcp_msg *m,
                        int claim) {
        const char *want = mcp_versions[MCP_V_FIRST_MODERN];
        char hv[64], hm[MCP_METHOD_MAX], hn[1024], name[1024];
        if (claim < 0)
                return send_error(q, MHD_HTTP_BAD_REQUEST, m->id, m->id_len, MCP_INVALID_PARAMS,
                                  "Invalid params: _meta[\"" MCP_META_VERSION "\"] is missing: "
                                  "protocol %s names its version in every request",
                                  want);
        if (std_header(q->conn, "MCP-Protocol-Version", hv, sizeof hv) != 1)
                return send_mismatch(q, m, "MCP-Protocol-Version must be %s, as in _meta",
                                     mcp_versions[claim]);
        int r = std_header(q->conn, "Mcp-Method", hm, sizeof hm);
        if (r == -EEXIST)
                return send_mismatch(q, m, "Mcp-Method is sent more than once");
        if (r != 1 || strcmp(hm, m->method))
                return send_mismatch(q, m, "Mcp-Method must be %s, as in the body", m->method);
        const char *bn = name_in_body(d, m, name, sizeof name);
        r = std_header(q->conn, "Mcp-Name", hn, sizeof hn);
        if (r == -EEXIST)
                return send_mismatch(q, m, "Mcp-Name is sent more than once");
        if ((bn && (r != 1 || strcmp(hn, bn))) || (!bn && r))
                return send_mismatch(q, m, "Mcp-Name must be %.200s, as in the body",
                                     bn ? bn : "absent: the body names nothing");
        if (!mcp_method_modern(m->method))
                return send_error(q, MHD_HTTP_NOT_FOUND, m->id, m->id_len, MCP_METHOD_NOT_FOUND,
                                  "Method not found: %s is not part of protocol %s", m->method,
                                  want);
        return -1;
}

/* Finds or makes the session a message goes to. Returns -1 with *ret set (NULL: a modern
 * notification without one, accepted and dropped), or an answer already queued. */
static int route(struct httpd_req *q, const struct mcp_msg *m, bool modern,
                 struct httpd_session **ret) {
        struct httpd *h = q->h;
        const char *sid = header(q->conn, "Mcp-Session-Id");
        bool init = m->kind == MCP_MSG_REQUEST && !strcmp(m->method, "initialize") && !modern;
        struct rtn_error err = {0};
        *ret = NULL;
        if (init && sid)
                return send_error(q, MHD_HTTP_BAD_REQUEST, m->id, m->id_len, MCP_INVALID_REQUEST,
                                  "Bad Request: initialize opens a new session; send it "
                                  "without Mcp-Session-Id");
        if (sid) {
                if ((*ret = httpd_session_find(h, sid, strlen(sid))))
                        return -1;
                return send_error(q, MHD_HTTP_NOT_FOUND, m->id, m->id_len, MCP_INVALID_REQUEST,
                                  "Not found: no session %.40s (ended, or idle too long); "
                                  "initialize a new one",
                                  sid);
        }
        if (!init && !modern)
                return send_error(q, MHD_HTTP_BAD_REQUEST, m->id, m->id_len, MCP_INVALID_REQUEST,
                                  "Bad Request: Mcp-Session-Id header required (initialize "
                                  "first)");
        if (modern && m->kind != MCP_MSG_REQUEST)
                return -1;
        if (httpd_session_new(h, modern, ret, &err) < 0)
                return send_error(q,
                                  err.code == EBUSY || err.code == ESHUTDOWN
                                          ? MHD_HTTP_SERVICE_UNAVAILABLE
                                          : MHD_HTTP_INTERNAL_SERVER_ERROR,
                                  m->id, m->id_len, MCP_INTERNAL_ERROR, "rtn serve: %s", err.msg);
        if (init) {
                q->set_sid = true;
                snprintf(q->sid, sizeof q->sid, "%s", httpd_session_id(*ret));
        }
        return -1;
}

/* The client closed the connection while its call ran: libmicrohttpd polls no suspended
 * connection, so we watch its socket. Closing the response stream cancels the call
 * (basic/transports, "Cancellation"): the session's server, or the modern state's, is told
 * and kills the command; the connection is resumed to be closed. */
static void on_gone(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        (void)l;
        (void)fd;
        (void)ev;
        struct httpd_req *q = ud;
        httpd_req_unwatch(q);
        if (q->s)
                httpd_session_cancel(q->s, q);
        httpd_req_done(q, MHD_HTTP_OK, NULL, 0);
        httpd_mhd_run(q->h);
}

void httpd_req_watch(struct httpd_req *q) {
        const union MHD_ConnectionInfo *i = M.conn_info(q->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (i && rtn_loop_add_fd(q->h->loop, i->connect_fd, EPOLLRDHUP, on_gone, q) == 0)
                q->watch_fd = i->connect_fd;
}

static enum MHD_Result forward(struct httpd_req *q, struct httpd_session *s,
                               const struct mcp_msg *m) {
        for (size_t i = 0; i < q->len; i++)
                if (q->body[i] == '\n' || q->body[i] == '\r')
                        q->body[i] = ' '; /* whitespace between tokens: the child reads lines */
        bool wait = m->kind == MCP_MSG_REQUEST;
        size_t pl = 0;
        const char *ptok = wait ? httpd_progress_token(m, &pl) : NULL;
        int r = httpd_session_send(s, q->body, q->len, m->id, m->id_len, ptok, pl, wait ? q : NULL);
        if (r == -EEXIST)
                return send_error(q, MHD_HTTP_CONFLICT, m->id, m->id_len, MCP_INVALID_REQUEST,
                                  "Conflict: a request with this id is in flight in the "
                                  "session");
        if (r < 0)
                return send_error(q, MHD_HTTP_INTERNAL_SERVER_ERROR, m->id, m->id_len,
                                  MCP_INTERNAL_ERROR, "rtn serve: the session's server: %s",
                                  strerror(-r));
        if (!wait)
                return send_reply(q, MHD_HTTP_ACCEPTED, NULL, 0);
        if (m->id && (q->id = malloc(m->id_len + 1))) {
                memcpy(q->id, m->id, m->id_len);
                q->id[m->id_len] = '\0';
                q->id_len = m->id_len;
        }
        q->s = s;
        if (q->done)
                return send_done(q);
        httpd_req_suspend(q);
        httpd_req_watch(q);
        return MHD_YES;
}

static enum MHD_Result do_post(struct httpd_req *q) {
        struct httpd *h = q->h;
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        const char *ct = header(q->conn, "Content-Type");
        if (!ct || strncasecmp(ct, "application/json", 16))
                return send_error(q, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL, 0, MCP_INVALID_REQUEST,
                                  "Unsupported Media Type: POST one JSON-RPC message as "
                                  "application/json");
        if (q->too_big)
                return send_error(q, MHD_HTTP_CONTENT_TOO_LARGE, NULL, 0, MCP_INVALID_REQUEST,
                                  "Payload Too Large: at most %zu bytes a message", h->max_body);
        struct rtn_json_doc d = {0};
        const char *why = NULL;
        int r = rtn_json_parse(q->body ? q->body : "", q->len, cfg.limits.max_tokens,
                               cfg.limits.max_depth, &d, &why);
        if (r < 0)
                return send_error(q, MHD_HTTP_BAD_REQUEST, NULL, 0, MCP_PARSE_ERROR,
                                  "Parse error: %s", why ? why : strerror(-r));
        enum MHD_Result ret;
        struct mcp_msg m = {0};
        if (rtn_json_kind(&d, 0) == 'a') {
                ret = send_error(q, MHD_HTTP_BAD_REQUEST, NULL, 0, MCP_INVALID_REQUEST,
                                 "Invalid Request: batches are not accepted over HTTP; POST "
                                 "one message at a time");
                goto out;
        }
        if ((r = mcp_msg_parse(&d, 0, &m, &why)) != 0) {
                ret = send_error(q, MHD_HTTP_BAD_REQUEST, m.id, m.id_len, r, "%s", why);
                goto out;
        }
        const char *accept = header(q->conn, "Accept");
        if (m.kind == MCP_MSG_REQUEST && !accepts(accept, "application/json")) {
                if (!accepts(accept, "text/event-stream")) {
                        ret = send_error(q, MHD_HTTP_NOT_ACCEPTABLE, m.id, m.id_len,
                                         MCP_INVALID_REQUEST,
                                         "Not Acceptable: Accept application/json and "
                                         "text/event-stream");
                        goto out;
                }
                q->sse = true;
        }
        q->sse_ok = m.kind == MCP_MSG_REQUEST && strcmp(m.method, "initialize") &&
                    accepts(accept, "text/event-stream");
        int claim = -1;
        bool modern = false;
        if ((r = check_version(q, &d, &m, &claim, &modern)) >= 0) {
                ret = (enum MHD_Result)r;
                goto out;
        }
        struct httpd_session *s;
        if ((modern && m.kind == MCP_MSG_REQUEST && (r = check_modern(q, &d, &m, claim)) >= 0) ||
            (r = route(q, &m, modern, &s)) >= 0) {
                ret = (enum MHD_Result)r;
                goto out;
        }
        ret = s ? forward(q, s, &m) : send_reply(q, MHD_HTTP_ACCEPTED, NULL, 0);
out:
        rtn_json_doc_free(&d);
        return ret;
}

/* ---- the handler ----------------------------------------------------------------------- */

static enum MHD_Result do_delete(struct httpd_req *q) {
        const char *sid = header(q->conn, "Mcp-Session-Id");
        if (!sid)
                return send_error(q, MHD_HTTP_BAD_REQUEST, NULL, 0, MCP_INVALID_REQUEST,
                                  "Bad Request: DELETE needs the Mcp-Session-Id to end");
        struct httpd_session *s = httpd_session_find(q->h, sid, strlen(sid));
        if (!s)
                return send_error(q, MHD_HTTP_NOT_FOUND, NULL, 0, MCP_INVALID_REQUEST,
                                  "Not found: no session %.40s", sid);
        q->s = s;
        httpd_session_end(s, q);
        if (q->done)
                return send_done(q);
        httpd_req_suspend(q);
        return MHD_YES;
}

/* A body announced larger than a message may be is refused before it is sent: a client that
 * asked "Expect: 100-continue" gets the 413 instead of the go-ahead. */
static bool body_too_big(struct httpd_req *q) {
        const char *cl = header(q->conn, "Content-Length");
        if (!cl)
                return false;
        errno = 0;
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        return end != cl && (errno == ERANGE || n > q->h->max_body);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **ctx) {
        (void)version;
        struct httpd_req *q = *ctx;
        if (!q) {
                if (!(q = calloc(1, sizeof *q)))
                        return MHD_NO;
                q->h = cls;
                q->conn = c;
                q->watch_fd = -1;
                *ctx = q;
                int r = refuse(q, url, method);
                if (r < 0 && body_too_big(q))
                        r = send_error(q, MHD_HTTP_CONTENT_TOO_LARGE, NULL, 0, MCP_INVALID_REQUEST,
                                       "Payload Too Large: at most %zu bytes a message",
                                       q->h->max_body);
                if (r < 0)
                        httpd_conn_receiving(q, true);
                return r >= 0 ? (enum MHD_Result)r : MHD_YES;
        }
        if (q->streaming)
                return q->stream_queued ? MHD_YES : httpd_stream_queue(q);
        if (q->done)
                return send_done(q);
        if (*upload_size) {
                size_t n = *upload_size;
                *upload_size = 0;
                if (q->too_big || q->len + n > q->h->max_body) {
                        /* Answered now, not after the rest of the body: libmicrohttpd sends
                         * it and closes the connection. A chunked body's answer it will not
                         * queue before the body's end (the call fails): the rest is read and
                         * dropped, up to four times the limit (then the connection is
                         * closed), and do_post answers 413 at its end. */
                        if (!q->too_big) {
                                q->too_big = true;
                                if (send_error(q, MHD_HTTP_CONTENT_TOO_LARGE, NULL, 0,
                                               MCP_INVALID_REQUEST,
                                               "Payload Too Large: at most %zu bytes a message",
                                               q->h->max_body) == MHD_YES)
                                        return MHD_YES;
                        }
                        q->dropped += n;
                        return q->dropped > 4 * q->h->max_body ? MHD_NO : MHD_YES;
                }
                if (q->len + n + 1 > q->cap) {
                        size_t cap = (q->len + n + 1) * 2;
                        char *b = realloc(q->body,
                                          cap < q->h->max_body + 1 ? cap : q->h->max_body + 1);
                        if (!b)
                                return MHD_NO;
                        q->body = b;
                        q->cap = cap < q->h->max_body + 1 ? cap : q->h->max_body + 1;
                }
                memcpy(q->body + q->len, upload, n);
                q->len += n;
                q->body[q->len] = '\0';
                return MHD_YES;
        }
        httpd_conn_receiving(q, false); /* the body is whole */
        if (!strcmp(method, "POST"))
                return do_post(q);
        if (!strcmp(method, "DELETE"))
                return do_delete(q);
        return send_error(q, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, 0, MCP_INVALID_REQUEST,
                          "Method Not Allowed: POST messages, DELETE to end a session (no "
                          "server stream is offered)");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode why) {
        (void)cls;
        (void)c;
        (void)why;
        struct httpd_req *q = *ctx;
        if (!q)
                return;
        httpd_conn_receiving(q, false);
        httpd_req_unwatch(q);
        (void)req_unlink(q); /* libmicrohttpd ends a suspended connection only when stopping */
        /* A stream the client closed before its answer cancels the call, as on_gone does for
         * a suspended one. */
        if (q->s && q->streaming && !q->done)
                httpd_session_cancel(q->s, q);
        else if (q->s)
                httpd_session_forget(q->s, q);
        free(q->body);
        free(q->resp);
        free(q->ev);
        free(q->id);
        free(q);
        *ctx = NULL;
}

/* ---- the daemon on our loop ------------------------------------------------------------ */

static void on_mhd_timer(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        (void)l;
        (void)t;
        struct httpd *h = ud;
        h->mhd_timer = NULL;
        httpd_mhd_run(h);
}

/* libmicrohttpd in external mode must be run again within the time MHD_get_timeout names,
 * whatever its fds say: its epoll is edge-triggered and it reads a connection's data a
 * buffer at a time, so a body still queued on a socket raises no new event. 0 means work is
 * ready now (the timer's next round); no timeout means nothing is due until an fd is ready. */
void httpd_mhd_run(struct httpd *h) {
        if (!h->mhd)
                return;
        if (h->mhd_timer) {
                rtn_loop_timer_cancel(h->loop, h->mhd_timer);
                h->mhd_timer = NULL;
        }
        MHD_UNSIGNED_LONG_LONG ms = 0;
        /* Ready work is done now, a bounded number of rounds, so a body streams without an
         * event loop round per buffer; the rest waits for the timer's next round. */
        for (int i = 0; i < MHD_RUN_ROUNDS && ms == 0; i++) {
                (void)M.run(h->mhd);
                if (M.get_timeout(h->mhd, &ms) != MHD_YES)
                        return;
        }
        uint64_t usec = ms > UINT64_MAX / 1000 ? UINT64_MAX : (uint64_t)ms * 1000;
        (void)rtn_loop_add_timer(h->loop, usec ? usec : 1, 0, on_mhd_timer, h, &h->mhd_timer);
}

static void on_epoll(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        (void)l;
        (void)fd;
        (void)ev;
        httpd_mhd_run(ud);
}

int httpd_mhd_start(struct httpd *h, int listen_fd, struct rtn_error *err) {
        int r = rtn_dl_load(&mhd_lib);
        if (r < 0)
                return rtn_errx(err, -r,
                                "--http needs libmicrohttpd (libmicrohttpd.so.12: apt install "
                                "libmicrohttpd12)");
        /* Connections without the token are capped apart (h->max_unauth, set from the fd
         * limit in main.c): the rest of the limit is for token holders. Their head deadline
         * is httpd_mhd_tick's, which spares a request we have not read yet; libmicrohttpd's
         * own idle timeout, which does not, is the keep-alive one and the end of a
         * connection that never sent a byte (the cap drops those sooner when room is
         * needed). */
        unsigned limit = h->max_unauth + h->o->max_sessions * 4 + 64;
        h->mhd = M.start(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, NULL,
                         NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, listen_fd,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
                         httpd_conn_notify, h, MHD_OPTION_CONNECTION_LIMIT, limit,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MHD_CONN_MEMORY,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTPD_AUTHED_IDLE_SECS,
                         MHD_OPTION_END);
        if (!h->mhd)
                return rtn_errx(err, EIO, "start libmicrohttpd on %s", h->o->listen);
        const union MHD_DaemonInfo *i = M.info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        if (!i || (r = rtn_loop_add_fd(h->loop, i->epoll_fd, EPOLLIN, on_epoll, h)) < 0)
                return rtn_errx(err, EIO, "watch libmicrohttpd's epoll fd");
        return 0;
}

void httpd_mhd_stop(struct httpd *h) {
        if (!h->mhd)
                return;
        const union MHD_DaemonInfo *i = M.info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
        if (i)
                (void)rtn_loop_del_fd(h->loop, i->epoll_fd);
        if (h->mhd_timer)
                rtn_loop_timer_cancel(h->loop, h->mhd_timer);
        h->mhd_timer = NULL;
        /* libmicrohttpd aborts when stopped with a connection suspended, and a resumed one
         * leaves its suspended list only in MHD_run: every waiting request is answered (the
         * server is stopping; its call is cancelled) or its stream ended, then run. */
        while (h->suspended) {
                struct httpd_req *q = h->suspended;
                httpd_req_unwatch(q);
                if (q->done) {
                        req_resume(q);
                        continue;
                }
                if (q->s)
                        httpd_session_cancel(q->s, q);
                struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
                mcp_write_error(&b, q->id, q->id_len, MCP_INTERNAL_ERROR, "rtn serve is stopping");
                size_t len = b.len;
                char *body = b.err ? NULL : rtn_json_buf_steal(&b);
                rtn_json_buf_free(&b);
                httpd_req_done(q, MHD_HTTP_SERVICE_UNAVAILABLE, body, body ? len : 0);
                if (q->suspended) /* a stream whose answer httpd_stream_done took */
                        req_resume(q);
        }
        /* A resumed stream's last event (httpd_stream_done) and its end go out over a few
         * rounds: run while the connections have work, for at most HTTPD_STOP_FLUSH_ROUNDS
         * waits of 10 ms. */
        int efd = i ? i->epoll_fd : -1;
        for (int n = 0; n < HTTPD_STOP_FLUSH_ROUNDS; n++) {
                struct epoll_event ev;
                (void)M.run(h->mhd);
                if (efd < 0 || epoll_wait(efd, &ev, 1, 10) <= 0)
                        break;
        }
        (void)M.run(h->mhd);
        M.stop(h->mhd);
        h->mhd = NULL;
}
