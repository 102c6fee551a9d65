/* The two eras of MCP in one server, as the 2026-07-28 revision's versioning page allows
 * ("Backward Compatibility with Initialization-Based Versions"; docs/tools.md, "Protocol
 * eras"). The legacy revisions (2024-11-05 to 2025-11-25) open a session with initialize, and
 * the version it agreed applies to every later request. The modern revision (2026-07-28) has
 * no handshake: each request names its version, its client's capabilities and, optionally,
 * the client in params._meta, and the server answers it on its own.
 *
 * A request claims the modern envelope when its params._meta holds the
 * io.modelcontextprotocol/protocolVersion key, and only then (the official SDK classifies the
 * same way, so a bare progressToken or another io.modelcontextprotocol/ key is no claim). A
 * claim naming a version we do not speak is -32022 with the versions we do; one naming a
 * legacy version is ordinary legacy traffic; one naming 2026-07-28 must carry the rest of the
 * envelope or is -32602 (basic/index, "Per-request protocol fields"). Everything about the
 * request that depends on its version (tool shapes, structuredContent, how bad arguments are
 * reported, the fields a result carries) then follows m->version, not the session's. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "mcp/internal.h"

const char *const mcp_versions[MCP_V_COUNT] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                               "2025-11-25", "2026-07-28"};

#define META_VERSION MCP_META_VERSION
#define META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define META_CLIENT_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

int mcp_version_find(const char *name) {
        for (int i = 0; i < MCP_V_COUNT; i++)
                if (!strcmp(name, mcp_versions[i]))
                        return i;
        return -ENOENT;
}

/* Implementation (schema): an object with string name and version; other fields are free. */
static bool implementation_ok(const struct rtn_json_doc *d, int t) {
        if (rtn_json_kind(d, t) != 'o')
                return false;
        int n = rtn_json_obj_get(d, t, "name"), v = rtn_json_obj_get(d, t, "version");
        return rtn_json_kind(d, n) == 's' && rtn_json_kind(d, v) == 's';
}

/* The rest of a 2026-07-28 envelope: 0, or MCP_INVALID_PARAMS naming the key. clientInfo is
 * optional (a SHOULD); logLevel, when given, must be a level: the least a call's own log
 * messages must be to be sent (server.c, mcp_call_log). */
static int check_envelope(const struct rtn_json_doc *d, int meta, char *why, size_t wl) {
        int caps = rtn_json_obj_get(d, meta, META_CLIENT_CAPS);
        if (rtn_json_kind(d, caps) != 'o') {
                snprintf(why, wl,
                         "Invalid params: _meta[\"" META_CLIENT_CAPS "\"] %s (an object; {} "
                         "declares none)",
                         caps < 0 ? "is missing" : "must be an object");
                return MCP_INVALID_PARAMS;
        }
        int ext = rtn_json_obj_get(d, caps, "extensions");
        int tasks = rtn_json_kind(d, ext) == 'o' ? rtn_json_obj_get(d, ext, MCP_EXT_TASKS) : -1;
        if ((ext >= 0 && rtn_json_kind(d, ext) != 'o') ||
            (tasks >= 0 && rtn_json_kind(d, tasks) != 'o')) {
                snprintf(why, wl,
                         "Invalid params: _meta[\"" META_CLIENT_CAPS "\"].extensions must be an "
                         "object of objects ({} declares an extension)");
                return MCP_INVALID_PARAMS;
        }
        int info = rtn_json_obj_get(d, meta, META_CLIENT_INFO);
        if (info >= 0 && !implementation_ok(d, info)) {
                snprintf(why, wl,
                         "Invalid params: _meta[\"" META_CLIENT_INFO "\"] must be an object with "
                         "string name and version");
                return MCP_INVALID_PARAMS;
        }
        int lvl = rtn_json_obj_get(d, meta, META_LOG_LEVEL);
        char name[16];
        if (lvl >= 0 &&
            (rtn_json_unescape(d, lvl, name, sizeof name) < 0 || mcp_log_level_parse(name) < 0)) {
                snprintf(why, wl,
                         "Invalid params: _meta[\"" META_LOG_LEVEL "\"] must be one of debug, "
                         "info, notice, warning, error, critical, alert, emergency");
                return MCP_INVALID_PARAMS;
        }
        return 0;
}

int mcp_era_claim(const struct rtn_json_doc *d, int params, int *ret_version, char *requested,
                  size_t rl, char *why, size_t wl) {
        int meta = rtn_json_kind(d, params) == 'o' ? rtn_json_obj_get(d, params, "_meta") : -ENOENT;
        int pv = rtn_json_kind(d, meta) == 'o' ? rtn_json_obj_get(d, meta, META_VERSION) : -ENOENT;
        if (rl)
                requested[0] = '\0';
        if (pv < 0) {
                *ret_version = -1;
                return 0; /* no claim: legacy traffic */
        }
        char name[64];
        int n = rtn_json_unescape(d, pv, name, sizeof name);
        if (rtn_json_kind(d, pv) != 's' || n <= 0 || strlen(name) != (size_t)n) {
                snprintf(why, wl,
                         "Invalid params: _meta[\"" META_VERSION "\"] must be a version string "
                         "such as \"%s\"",
                         mcp_versions[MCP_V_COUNT - 1]);
                return MCP_INVALID_PARAMS;
        }
        snprintf(requested, rl, "%s", name);
        int v = mcp_version_find(name);
        if (v < 0) {
                snprintf(why, wl, "Unsupported protocol version");
                return MCP_UNSUPPORTED_VERSION;
        }
        int r = v < MCP_V_FIRST_MODERN ? 0 : check_envelope(d, meta, why, wl);
        if (r == 0)
                *ret_version = v; /* a legacy one is served under the session's rules */
        return r;
}

int mcp_era_classify(const struct mcp_server *s, struct mcp_msg *m, char *requested, size_t rl,
                     char *why, size_t wl) {
        int v = -1;
        m->version = s->version;
        int r = mcp_era_claim(m->doc, m->params, &v, requested, rl, why, wl);
        if (r == 0 && v >= MCP_V_FIRST_MODERN)
                m->version = v;
        return r;
}

int mcp_era_log_level(const struct rtn_json_doc *d, int params) {
        int meta = rtn_json_kind(d, params) == 'o' ? rtn_json_obj_get(d, params, "_meta") : -1;
        int t = rtn_json_kind(d, meta) == 'o' ? rtn_json_obj_get(d, meta, META_LOG_LEVEL) : -1;
        char name[16];
        if (rtn_json_kind(d, t) != 's' || rtn_json_unescape(d, t, name, sizeof name) < 0)
                return -1;
        return mcp_log_level_parse(name) < 0 ? -1 : mcp_log_level_parse(name);
}

bool mcp_era_declares(const struct rtn_json_doc *d, int params, const char *ext) {
        int meta = rtn_json_kind(d, params) == 'o' ? rtn_json_obj_get(d, params, "_meta") : -1;
        int caps = rtn_json_kind(d, meta) == 'o' ? rtn_json_obj_get(d, meta, META_CLIENT_CAPS) : -1;
        int exts = rtn_json_kind(d, caps) == 'o' ? rtn_json_obj_get(d, caps, "extensions") : -1;
        int e = rtn_json_kind(d, exts) == 'o' ? rtn_json_obj_get(d, exts, ext) : -1;
        return rtn_json_kind(d, e) == 'o';
}

void mcp_write_unsupported_version(struct rtn_json_buf *b, const char *id, size_t id_len,
                                   const char *requested) {
        struct rtn_json_buf data = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&data);
        rtn_json_key(&data, "supported");
        mcp_write_versions(&data);
        rtn_json_kv_str(&data, "requested", requested);
        rtn_json_obj_end(&data);
        mcp_write_error_data(b, id, id_len, MCP_UNSUPPORTED_VERSION, "Unsupported protocol version",
                             data.err ? NULL : data.data);
        rtn_json_buf_free(&data);
}

void mcp_write_versions(struct rtn_json_buf *b) {
        rtn_json_arr_begin(b);
        for (int i = MCP_V_COUNT - 1; i >= 0; i--)
                rtn_json_str(b, mcp_versions[i]);
        rtn_json_arr_end(b);
}

/* tools/list and server/discover must carry caching hints from 2026-07-28 on (SEP-2549).
 * Both stay the same for the life of this process, but another `rtn serve` with other options
 * (--http-tools) gives the same serverInfo, by which clients key their caches: so the hint
 * promises nothing ("immediately stale"), and re-fetching costs one local round trip. The
 * content is the same for every user of the server. */
void mcp_write_cache_hints(struct rtn_json_buf *b, int version) {
        if (version < MCP_V_FIRST_MODERN)
                return;
        rtn_json_kv_int(b, "ttlMs", 0);
        rtn_json_kv_str(b, "cacheScope", "public");
}

void mcp_result_end(const struct mcp_server *s, struct rtn_json_buf *b, int version) {
        mcp_result_end_as(s, b, version, "complete");
}

void mcp_result_end_as(const struct mcp_server *s, struct rtn_json_buf *b, int version,
                       const char *result_type) {
        if (version >= MCP_V_FIRST_MODERN) {
                rtn_json_kv_str(b, "resultType", result_type);
                rtn_json_key(b, "_meta");
                rtn_json_obj_begin(b);
                rtn_json_key(b, META_SERVER_INFO);
                rtn_json_obj_begin(b);
                rtn_json_kv_str(b, "name", s->cfg.server_name);
                rtn_json_kv_str(b, "version", s->cfg.server_version);
                rtn_json_obj_end(b);
                rtn_json_obj_end(b);
        }
        rtn_json_obj_end(b);
}
