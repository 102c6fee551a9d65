/* A request's event stream (basic/transports, "Streamable HTTP"): when the client takes
 * text/event-stream, the first notification of its call (progress, a log message) turns the
 * answer into an SSE stream that carries each notification as it comes and ends with the result. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "serve/httpd/httpd.h"
#include "serve/httpd/mhd.h"
#include "mcp/wire.h"

/* One SSE event carrying msg, queued for the stream. */
static int event_add(struct httpd_req *q, const char *msg, size_t len) {
        static const char head[] = "event: message\ndata: ";
        size_t hl = sizeof head - 1, need = q->ev_len + hl + len + 2;
        char *b = realloc(q->ev, need);
        if (!b)
                return -ENOMEM;
        q->ev = b;
        memcpy(b + q->ev_len, head, hl);
        memcpy(b + q->ev_len + hl, msg, len);
        memcpy(b + q->ev_len + hl + len, "\n\n", 2);
        q->ev_len = need;
        return 0;
}

void httpd_req_notify(struct httpd_req *q, const char *msg, size_t len) {
        if (q->done || !q->sse_ok || event_add(q, msg, len) < 0)
                return;
        q->streaming = true;
        httpd_req_wake(q);
}

bool httpd_stream_done(struct httpd_req *q, unsigned status, char *body, size_t len) {
        if (!q->streaming)
                return false;
        /* The answer is the stream's last event, an error one too (the server stopping):
         * the stream's 200 is sent, so what the status says goes as a JSON-RPC error. */
        (void)status;
        if (!q->done && body)
                (void)event_add(q, body, len);
        free(body);
        q->s = NULL;
        q->done = true;
        httpd_req_wake(q);
        return true;
}

/* The event stream's bytes as they come: what is queued, else the connection waits
 * (suspended, its socket watched) until httpd_req_notify or httpd_req_done wakes it; the
 * stream ends after the answer. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
        (void)pos;
        struct httpd_req *q = cls;
        if (q->ev_off < q->ev_len) {
                size_t n = q->ev_len - q->ev_off < max ? q->ev_len - q->ev_off : max;
                memcpy(buf, q->ev + q->ev_off, n);
                q->ev_off += n;
                if (q->ev_off == q->ev_len)
                        q->ev_off = q->ev_len = 0;
                return (ssize_t)n;
        }
        if (q->done)
                return MHD_CONTENT_READER_END_OF_STREAM;
        httpd_req_suspend(q);
        httpd_req_watch(q);
        return 0;
}

/* The first progress of a call whose client takes text/event-stream: the answer becomes an
 * event stream (basic/transports: the server may send the request's notifications on it
 * before its response). */
enum MHD_Result httpd_stream_queue(struct httpd_req *q) {
        struct MHD_Response *r = M.from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, q, NULL);
        if (!r)
                return MHD_NO;
        M.add_header(r, "Content-Type", "text/event-stream");
        M.add_header(r, "Cache-Control", "no-cache");
        httpd_cors(q, r);
        enum MHD_Result ret = M.queue(q->conn, MHD_HTTP_OK, r);
        M.destroy(r);
        q->stream_queued = true;
        return ret;
}

/* _meta.progressToken of a request (raw JSON, a span of the body), or NULL. */
const char *httpd_progress_token(const struct mcp_msg *m, size_t *ret_len) {
        const struct rtn_json_doc *d = m->doc;
        int meta = m->params >= 0 && rtn_json_kind(d, m->params) == 'o'
                           ? rtn_json_obj_get(d, m->params, "_meta")
                           : -1;
        int t = meta >= 0 && rtn_json_kind(d, meta) == 'o'
                        ? rtn_json_obj_get(d, meta, "progressToken")
                        : -1;
        char k = t >= 0 ? rtn_json_kind(d, t) : 0;
        if (k != 's' && k != 'd')
                return NULL;
        const char *raw;
        rtn_json_span(d, t, &raw, ret_len);
        return raw;
}
