/* JSON-RPC 2.0 over stdio: newline framing with a bounded line length, validation of one
 * message object, and the envelopes of responses. The MCP stdio transport says messages are
 * delimited by newlines and MUST NOT contain embedded newlines, so a line is a message; a
 * CR before the LF is tolerated (clients on Windows), blank lines are ignored. A line over
 * the limit is never buffered whole: its bytes are dropped as they arrive up to the next
 * newline, then reported once, so memory stays bounded by max_line whatever the peer sends. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/internal.h"

void mcp_framer_init(struct mcp_framer *f, size_t max_line) {
        *f = (struct mcp_framer){.max_line = max_line ? max_line : 4u << 20};
}

void mcp_framer_free(struct mcp_framer *f) {
        free(f->buf);
        f->buf = NULL;
        f->len = f->cap = 0;
}

static bool blank(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
                        return false;
        return true;
}

static void deliver(const char *line, size_t n, mcp_line_fn fn, void *ud) {
        if (n > 0 && line[n - 1] == '\r')
                n--;
        if (!blank(line, n))
                fn(ud, line, n);
}

static int append(struct mcp_framer *f, const char *data, size_t n) {
        if (f->len + n > f->cap) {
                size_t ncap = f->cap ? f->cap : 4096;
                while (ncap < f->len + n)
                        ncap *= 2;
                char *p = realloc(f->buf, ncap);
                if (!p)
                        return -ENOMEM;
                f->buf = p;
                f->cap = ncap;
        }
        memcpy(f->buf + f->len, data, n);
        f->len += n;
        return 0;
}

int mcp_framer_feed(struct mcp_framer *f, const char *data, size_t n, mcp_line_fn fn, void *ud) {
        while (n > 0) {
                const char *nl = memchr(data, '\n', n);
                size_t chunk = nl ? (size_t)(nl - data) : n;
                if (f->discarding) {
                        f->discarded += chunk;
                } else if (f->len + chunk > f->max_line) {
                        /* too long: drop what we hold and everything up to the newline */
                        f->discarding = true;
                        f->discarded = f->len + chunk;
                        f->len = 0;
                } else if (nl && f->len == 0) {
                        deliver(data, chunk, fn, ud); /* common case: no copy */
                } else {
                        int r = append(f, data, chunk);
                        if (r < 0)
                                return r;
                        if (nl) {
                                size_t total = f->len;
                                f->len = 0;
                                deliver(f->buf, total, fn, ud);
                        }
                }
                if (!nl)
                        break;
                if (f->discarding) {
                        size_t d = f->discarded;
                        f->discarding = false;
                        f->discarded = 0;
                        fn(ud, NULL, d);
                }
                data = nl + 1;
                n -= chunk + 1;
        }
        return 0;
}

void mcp_framer_eof(struct mcp_framer *f, mcp_line_fn fn, void *ud) {
        if (f->discarding) {
                size_t d = f->discarded;
                f->discarding = false;
                f->discarded = 0;
                fn(ud, NULL, d);
        } else if (f->len > 0) {
                size_t n = f->len;
                f->len = 0;
                deliver(f->buf, n, fn, ud);
        }
}

/* id: string or number (MCP forbids null; JSON-RPC discourages fractions but allows them). */
static int parse_id(const struct rtn_json_doc *d, int obj, struct mcp_msg *m, const char **why) {
        int t = rtn_json_obj_get(d, obj, "id");
        if (t < 0)
                return 0; /* a notification */
        char k = rtn_json_kind(d, t);
        if (k != 's' && k != 'd') {
                *why = "id must be a string or a number";
                return MCP_INVALID_REQUEST;
        }
        const char *raw;
        size_t n;
        rtn_json_span(d, t, &raw, &n);
        if (n > MCP_ID_MAX) {
                *why = "id is too long";
                return MCP_INVALID_REQUEST;
        }
        m->id = raw;
        m->id_len = n;
        return 0;
}

int mcp_msg_parse(const struct rtn_json_doc *d, int tok, struct mcp_msg *m, const char **why) {
        *m = (struct mcp_msg){.doc = d, .tok = tok, .params = -1, .version = -1};
        if (rtn_json_kind(d, tok) != 'o') {
                *why = "a message must be a JSON object";
                return MCP_INVALID_REQUEST;
        }
        int r = parse_id(d, tok, m, why);
        if (r < 0)
                return r;
        int v = rtn_json_obj_get(d, tok, "jsonrpc");
        if (v < 0 || !rtn_json_str_eq(d, v, "2.0")) {
                *why = "jsonrpc must be \"2.0\"";
                return MCP_INVALID_REQUEST;
        }
        int meth = rtn_json_obj_get(d, tok, "method");
        if (meth < 0) {
                if (m->id && (rtn_json_obj_get(d, tok, "result") >= 0 ||
                              rtn_json_obj_get(d, tok, "error") >= 0)) {
                        m->kind = MCP_MSG_RESPONSE;
                        return 0;
                }
                *why = "method is missing";
                return MCP_INVALID_REQUEST;
        }
        int n = rtn_json_unescape(d, meth, m->method, sizeof m->method);
        if (n <= 0 || strlen(m->method) != (size_t)n) {
                *why = n == -ENOBUFS ? "method name is too long"
                                     : "method must be a non-empty string";
                return MCP_INVALID_REQUEST;
        }
        int p = rtn_json_obj_get(d, tok, "params");
        if (p >= 0) {
                char k = rtn_json_kind(d, p);
                if (k != 'o' && k != 'a') {
                        *why = "params must be an object or an array";
                        return MCP_INVALID_REQUEST;
                }
                m->params = p;
        }
        m->kind = m->id ? MCP_MSG_REQUEST : MCP_MSG_NOTIFICATION;
        return 0;
}

static void envelope(struct rtn_json_buf *b, const char *id, size_t id_len) {
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "jsonrpc", "2.0");
        rtn_json_key(b, "id");
        if (id)
                rtn_json_raw(b, id, id_len);
        else
                rtn_json_null(b);
}

/* The readers of what envelope() and mcp_call_progress wrote: a response starts
 * {"jsonrpc":"2.0","id":ID, a progress notification {"jsonrpc":"2.0","method":
 * "notifications/progress","params":{"progressToken":TOKEN, each value a string or a number as
 * the request had it (or null). value_after finds the raw value after the fixed head, up to
 * the terminator (",", or "}," where an object ends with the value) that must follow it. */
static int value_after(const char *line, size_t len, const char *head, size_t hl, const char *term,
                       const char **ret, size_t *ret_len) {
        size_t i = hl, tl = strlen(term);
        if (len <= hl || memcmp(line, head, hl))
                return -ENOMSG;
        if (line[i] == '"') {
                for (i++; i < len && line[i] != '"'; i++)
                        if (line[i] == '\\')
                                i++;
                i++;
        } else
                while (i < len && line[i] != ',' && line[i] != '}')
                        i++;
        if (i >= len || len - i < tl || memcmp(line + i, term, tl))
                return -ENOMSG;
        *ret = line + hl;
        *ret_len = i - hl;
        return 0;
}

int mcp_response_id(const char *line, size_t len, const char **ret_id, size_t *ret_len) {
        static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
        return value_after(line, len, head, sizeof head - 1, ",", ret_id, ret_len);
}

int mcp_response_error_code(const char *line, size_t len) {
        static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
        static const char err[] = ",\"error\":{\"code\":";
        const char *id;
        size_t il;
        if (value_after(line, len, head, sizeof head - 1, ",", &id, &il) < 0)
                return 0;
        size_t at = (size_t)(id - line) + il;
        if (len - at <= sizeof err - 1 || memcmp(line + at, err, sizeof err - 1))
                return 0;
        return atoi(line + at + sizeof err - 1); /* ours: an integer, then ',' */
}

int mcp_progress_token(const char *line, size_t len, const char **ret_tok, size_t *ret_len) {
        static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                                   "\"params\":{\"progressToken\":";
        return value_after(line, len, head, sizeof head - 1, ",", ret_tok, ret_len);
}

int mcp_related_request(const char *line, size_t len, const char **ret_id, size_t *ret_len,
                        size_t *ret_cut, size_t *ret_cut_len) {
        static const char params[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                                     "\"params\":{";
        static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                                   "\"params\":{\"_meta\":{\"" MCP_META_RELATED "\":";
        int r = value_after(line, len, head, sizeof head - 1, "},", ret_id, ret_len);
        if (r < 0)
                return r;
        *ret_cut = sizeof params - 1;
        *ret_cut_len = sizeof head - 1 + *ret_len + 2 - (sizeof params - 1);
        return 0;
}

void mcp_write_error_data(struct rtn_json_buf *b, const char *id, size_t id_len, int code,
                          const char *msg, const char *data_json) {
        envelope(b, id, id_len);
        rtn_json_key(b, "error");
        rtn_json_obj_begin(b);
        rtn_json_kv_int(b, "code", code);
        rtn_json_kv_str(b, "message", msg);
        if (data_json)
                rtn_json_kv_raw(b, "data", data_json, strlen(data_json));
        rtn_json_obj_end(b);
        rtn_json_obj_end(b);
}

void mcp_write_error(struct rtn_json_buf *b, const char *id, size_t id_len, int code,
                     const char *msg) {
        mcp_write_error_data(b, id, id_len, code, msg, NULL);
}

void mcp_write_result_open(struct rtn_json_buf *b, const char *id, size_t id_len) {
        envelope(b, id, id_len);
        rtn_json_key(b, "result");
}
