/* MCP's JSON-RPC wire, for a front end that carries it over a transport of its own (rtn serve
 * --http, serve/httpd/): the error codes, line framing, message validation and the responses
 * it writes itself (jsonrpc.c), and the protocol versions with the rules of a request's claim
 * to one (era.c). The server behind it is mcp/mcp.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/json.h"

/* JSON-RPC 2.0 error codes (jsonrpc.org/specification section 5.1). */
#define MCP_PARSE_ERROR -32700
#define MCP_INVALID_REQUEST -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS -32602
#define MCP_INTERNAL_ERROR -32603
/* 2026-07-28 (basic/index, "Error Codes"): the requested version is not one we speak. */
#define MCP_UNSUPPORTED_VERSION -32022
/* 2026-07-28 over HTTP (basic/transports, "Server validation"): a standard header
 * (MCP-Protocol-Version, Mcp-Method, Mcp-Name) is missing or disagrees with the body. */
#define MCP_HEADER_MISMATCH -32020
/* 2026-07-28: the request needs a capability its client did not declare (over HTTP: 400). */
#define MCP_MISSING_CAPABILITY -32021

/* The _meta key by which a request claims the 2026-07-28 envelope (era.c). */
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
/* The _meta key by which a call's notifications/message names its request's id for a front end
 * (mcp_config.related_meta; never sent to a client: the front end strips it). */
#define MCP_META_RELATED "rtn/relatedRequest"
#define MCP_ID_MAX 256 /* bytes of a request id as JSON */
#define MCP_METHOD_MAX 128 /* bytes of a method name */

/* ---- framing (jsonrpc.c) --------------------------------------------------------------- */

/* Called per complete line (CR stripped, no '\n'; blank lines are skipped), or with
 * line NULL and len = its size for a line longer than max_line, which was discarded. */
typedef void (*mcp_line_fn)(void *ud, const char *line, size_t len);

struct mcp_framer {
        char *buf;
        size_t len, cap;
        size_t max_line;
        bool discarding; /* inside an over-long line: drop bytes up to the next '\n' */
        size_t discarded; /* bytes of it dropped so far */
};

void mcp_framer_init(struct mcp_framer *f, size_t max_line);
void mcp_framer_free(struct mcp_framer *f);
/* Appends data and delivers every complete line. -ENOMEM only. */
int mcp_framer_feed(struct mcp_framer *f, const char *data, size_t n, mcp_line_fn fn, void *ud);
/* End of input: a final line without '\n' is delivered as a line too. */
void mcp_framer_eof(struct mcp_framer *f, mcp_line_fn fn, void *ud);

/* ---- messages (jsonrpc.c) -------------------------------------------------------------- */

enum mcp_msg_kind { MCP_MSG_REQUEST, MCP_MSG_NOTIFICATION, MCP_MSG_RESPONSE };

struct mcp_msg {
        enum mcp_msg_kind kind;
        const struct rtn_json_doc *doc;
        int tok; /* the message object */
        const char *id; /* raw JSON of the id; NULL for notifications and when unusable */
        size_t id_len;
        char method[MCP_METHOD_MAX];
        int params; /* token of params, -1 when absent */
        int version; /* enum mcp_version it is served under (mcp_era_classify); -1: none yet */
};

/* Validates token tok as a JSON-RPC 2.0 message. Returns 0, or a JSON-RPC error code with
 * *why set; m->id is filled whenever the id itself was valid, so the error can carry it. */
int mcp_msg_parse(const struct rtn_json_doc *d, int tok, struct mcp_msg *m, const char **why);

/* Complete messages into b: {"jsonrpc":"2.0","id":ID,"error":{...}} (id NULL → null) and
 * the opening of a result, {"jsonrpc":"2.0","id":ID,"result": (caller writes the value and
 * the closing brace with rtn_json_obj_end). */
void mcp_write_error(struct rtn_json_buf *b, const char *id, size_t id_len, int code,
                     const char *msg);
/* The same with error.data: data_json is one JSON value, or NULL for none. */
void mcp_write_error_data(struct rtn_json_buf *b, const char *id, size_t id_len, int code,
                          const char *msg, const char *data_json);
void mcp_write_result_open(struct rtn_json_buf *b, const char *id, size_t id_len);
/* The id of a response written by the two above (raw JSON, "null" included), for a front end
 * that relays them: 0, or -ENOMSG when line is no such response (a notification). */
int mcp_response_id(const char *line, size_t len, const char **ret_id, size_t *ret_len);
/* The error code of such a response written by mcp_write_error*, 0 for a result. */
int mcp_response_error_code(const char *line, size_t len);
/* The progressToken of a notifications/progress line written by mcp_call_progress (raw JSON),
 * for a front end that relays it to the request's stream: 0, or -ENOMSG for any other line. */
int mcp_progress_token(const char *line, size_t len, const char **ret_tok, size_t *ret_len);
/* The related request's id of a notifications/message line written by mcp_call_log with
 * related_meta (raw JSON), and the span [*ret_cut, *ret_cut + *ret_cut_len) of line that holds
 * that _meta (cut it, and the message is the one a client gets): 0, or -ENOMSG. */
int mcp_related_request(const char *line, size_t len, const char **ret_id, size_t *ret_len,
                        size_t *ret_cut, size_t *ret_cut_len);

/* ---- protocol versions (era.c) --------------------------------------------------------- */

/* Oldest first. initialize negotiates the legacy ones, below MCP_V_FIRST_MODERN; a modern
 * request names its version in _meta, and no session is made. */
enum mcp_version {
        MCP_V2024_11_05,
        MCP_V2025_03_26,
        MCP_V2025_06_18,
        MCP_V2025_11_25,
        MCP_V2026_07_28,
        MCP_V_COUNT
};
#define MCP_V_FIRST_MODERN MCP_V2026_07_28
extern const char *const mcp_versions[MCP_V_COUNT];

/* The enum mcp_version of a version string, or -ENOENT. */
int mcp_version_find(const char *name);
/* The version params._meta claims, the one rule of what a claim is for stdio and HTTP alike:
 * 0 with *ret_version its enum mcp_version (-1: no claim), requested its name whenever the
 * claim is a string (empty otherwise); or a JSON-RPC error code with the message in why:
 * MCP_INVALID_PARAMS for a claim that is no version string or a 2026-07-28 claim without the
 * rest of its envelope, MCP_UNSUPPORTED_VERSION for a version we do not speak. */
int mcp_era_claim(const struct rtn_json_doc *d, int params, int *ret_version, char *requested,
                  size_t rl, char *why, size_t wl);
/* Whether a request of this method exists in the 2026-07-28 revision (protocol.c's method
 * table, the one home of what each era has). */
bool mcp_method_modern(const char *method);
/* The -32022 error response, listing every version we speak. */
void mcp_write_unsupported_version(struct rtn_json_buf *b, const char *id, size_t id_len,
                                   const char *requested);
/* Every version we speak as a JSON array, newest first. */
void mcp_write_versions(struct rtn_json_buf *b);
