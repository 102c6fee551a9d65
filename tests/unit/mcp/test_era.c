/* The 2026-07-28 era beside the legacy ones (mcp/era.c, mcp/protocol.c): requests that name
 * their version in _meta are served without initialize and get the modern result fields;
 * unknown versions are -32022 with the list; a malformed envelope is -32602; methods the
 * revision removed are -32601; a legacy session in the same process is not touched. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mcp/internal.h"
#include "tests/unit/mcp/harness.h"

static struct harness h;

static void setup(void) {
        h_start(&h, NULL);
}
static void teardown(void) {
        h_stop(&h);
}

#define ENVELOPE                                                                                   \
        "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                              \
        "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"},"               \
        "\"io.modelcontextprotocol/clientCapabilities\":{}"

/* A request with id, method, a _meta of meta (NULL: the full envelope) and more params. */
static void send_req(int id, const char *method, const char *meta, const char *more) {
        char req[4096];
        snprintf(
                req, sizeof req,
                "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{\"_meta\":{%s}%s%s}}",
                id, method, meta ? meta : ENVELOPE, more ? "," : "", more ? more : "");
        h_send(&h, req);
}

static void recv_id(int id) {
        const char *l = h_recv(&h, 2000);
        cr_assert_not_null(l, "no message for id %d", id);
        cr_assert_eq(h_int(&h, "id"), id, "%s", l);
}

static void call(int id, const char *args) {
        char more[1024];
        snprintf(more, sizeof more, "\"name\":\"shell_run\",\"arguments\":%s", args);
        send_req(id, "tools/call", NULL, more);
}

/* The fields every modern result carries: resultType and the server's identity in _meta. */
static void expect_modern_result(void) {
        cr_assert_str_eq(h_str(&h, "result.resultType"), "complete", "%s", h.line);
        int meta = h_tok(&h, "result._meta");
        cr_assert_geq(meta, 0, "%s", h.line);
        int info = rtn_json_obj_get(&h.doc, meta, "io.modelcontextprotocol/serverInfo");
        cr_assert(rtn_json_str_eq(&h.doc, rtn_json_obj_get(&h.doc, info, "name"), "rtn"), "%s",
                  h.line);
        cr_assert_eq(rtn_json_kind(&h.doc, rtn_json_obj_get(&h.doc, info, "version")), 's');
}

Test(mcp_era_classify, tools_list_without_initialize, .init = setup, .fini = teardown) {
        send_req(1, "tools/list", NULL, NULL);
        recv_id(1);
        expect_modern_result();
        cr_assert_str_eq(h_str(&h, "result.tools.0.name"), "shell_run");
        cr_assert(h_has(&h, "result.tools.0.outputSchema"), "2026-07-28 tools carry outputSchema");
        cr_assert(h_has(&h, "result.tools.0.title"));
        cr_assert_eq(h_int(&h, "result.ttlMs"), 0);
        cr_assert_str_eq(h_str(&h, "result.cacheScope"), "public");
        /* no session was made: the legacy side is still before initialize */
        cr_assert_null(mcp_server_protocol_version(h.server));
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
        recv_id(2);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_REQUEST);
}

Test(mcp_era_classify, tools_call_result_fields, .init = setup, .fini = teardown) {
        call(3, "{\"command\":\"hi\"}");
        recv_id(3);
        expect_modern_result();
        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "hi");
        cr_assert(strstr(h.line, "\"isError\":false"), "%s", h.line);
        /* bad arguments are a tool error the model can read, with the modern fields */
        call(4, "{\"command\":7}");
        recv_id(4);
        expect_modern_result();
        cr_assert(strstr(h.line, "\"isError\":true"), "%s", h.line);
        cr_assert(strstr(h_str(&h, "result.content.0.text"),
                         "command: must be a string, got a number"));
        /* an unknown tool stays a protocol error */
        send_req(5, "tools/call", NULL, "\"name\":\"nope\",\"arguments\":{}");
        recv_id(5);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_PARAMS);
}

Test(mcp_era_classify, unknown_version_lists_the_supported, .init = setup, .fini = teardown) {
        static const char *const asked[] = {"1900-01-01", "v999.0.0", "2027-01-01"};
        for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
                char meta[512];
                snprintf(meta, sizeof meta,
                         "\"io.modelcontextprotocol/protocolVersion\":\"%s\","
                         "\"io.modelcontextprotocol/clientCapabilities\":{}",
                         asked[i]);
                send_req(10 + (int)i, i == 1 ? "server/discover" : "tools/list", meta, NULL);
                recv_id(10 + (int)i);
                cr_assert_eq(h_int(&h, "error.code"), MCP_UNSUPPORTED_VERSION, "%s", h.line);
                cr_assert_str_eq(h_str(&h, "error.data.requested"), asked[i]);
                for (int v = 0; v < MCP_V_COUNT; v++) {
                        char path[64];
                        snprintf(path, sizeof path, "error.data.supported.%d", v);
                        cr_assert_str_eq(h_str(&h, path), mcp_versions[MCP_V_COUNT - 1 - v]);
                }
        }
}

Test(mcp_era_classify, malformed_envelope_is_invalid_params, .init = setup, .fini = teardown) {
        static const struct {
                const char *meta, *names;
        } cases[] = {
                {"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"",
                 "clientCapabilities\"] is missing"},
                {"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                 "\"io.modelcontextprotocol/clientCapabilities\":[]",
                 "clientCapabilities\"] must be an object"},
                {"\"io.modelcontextprotocol/protocolVersion\":20260728,"
                 "\"io.modelcontextprotocol/clientCapabilities\":{}",
                 "protocolVersion\"] must be a version string"},
                {"\"io.modelcontextprotocol/protocolVersion\":\"\","
                 "\"io.modelcontextprotocol/clientCapabilities\":{}",
                 "protocolVersion\"] must be a version string"},
                {ENVELOPE ",\"io.modelcontextprotocol/clientInfo\":\"me\"", "clientInfo"},
                {ENVELOPE ",\"io.modelcontextprotocol/logLevel\":\"loud\"", "logLevel"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                send_req(20 + (int)i, "tools/list", cases[i].meta, NULL);
                recv_id(20 + (int)i);
                cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_PARAMS, "%s", h.line);
                cr_assert(strstr(h_str(&h, "error.message"), cases[i].names), "%s", h.line);
        }
        /* clientInfo is a SHOULD: a request without it is served */
        send_req(30, "tools/list",
                 "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                 "\"io.modelcontextprotocol/clientCapabilities\":{}",
                 NULL);
        recv_id(30);
        expect_modern_result();
}

Test(dispatch, removed_methods_are_not_found, .init = setup, .fini = teardown) {
        static const char *const gone[] = {"initialize",       "ping",
                                           "logging/setLevel", "subscriptions/listen",
                                           "resources/list",   "no/such/method"};
        for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
                send_req(40 + (int)i, gone[i], NULL, NULL);
                recv_id(40 + (int)i);
                cr_assert_eq(h_int(&h, "error.code"), MCP_METHOD_NOT_FOUND, "%s: %s", gone[i],
                             h.line);
        }
        cr_assert_null(mcp_server_protocol_version(h.server), "initialize with a claim is modern");
}

Test(h_discover, modern_shape, .init = setup, .fini = teardown) {
        send_req(1, "server/discover", NULL, NULL);
        recv_id(1);
        expect_modern_result();
        cr_assert_str_eq(h_str(&h, "result.supportedVersions.0"), "2026-07-28");
        cr_assert(h_has(&h, "result.capabilities.tools"));
        cr_assert(!h_has(&h, "result.capabilities.logging"), "no request-scoped logging");
        cr_assert(h_has(&h, "result.instructions"));
        cr_assert_eq(h_int(&h, "result.ttlMs"), 0);
        cr_assert(!h_has(&h, "result.serverInfo"), "identity is in _meta from 2026-07-28 on");
}

/* A claim naming a legacy version is legacy traffic: it needs the session. */
Test(mcp_era_classify, legacy_version_claim_is_legacy, .init = setup, .fini = teardown) {
        send_req(1, "tools/list",
                 "\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\","
                 "\"io.modelcontextprotocol/clientCapabilities\":{}",
                 NULL);
        recv_id(1);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_REQUEST, "%s", h.line);
        h_init(&h, "2025-06-18");
        send_req(2, "tools/list",
                 "\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\","
                 "\"io.modelcontextprotocol/clientCapabilities\":{}",
                 NULL);
        recv_id(2);
        cr_assert(h_has(&h, "result.tools"));
        cr_assert(!h_has(&h, "result.resultType"), "%s", h.line);
}

/* One process, both eras at once: each request is answered in its own. */
Test(mcp_era_classify, both_eras_side_by_side, .init = setup, .fini = teardown) {
        h_init(&h, "2025-03-26");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"old\"}}}");
        recv_id(1);
        cr_assert(!h_has(&h, "result.structuredContent"), "2025-03-26 has none");
        cr_assert(!h_has(&h, "result.resultType"));
        call(2, "{\"command\":\"new\"}");
        recv_id(2);
        expect_modern_result();
        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "new");
        cr_assert_str_eq(mcp_server_protocol_version(h.server), "2025-03-26");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
        recv_id(3);
        cr_assert(h_has(&h, "result"), "the legacy session still pings");
        /* a modern request inside a 2025-03-26 batch is refused on its own */
        h_send(&h, "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"},"
                   "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/"
                   "list\",\"params\":{\"_meta\":{" ENVELOPE "}}}]");
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_eq(h_int(&h, "0.id"), 4);
        cr_assert(h_has(&h, "0.result"));
        cr_assert_eq(h_int(&h, "1.id"), 5);
        cr_assert_eq(h_int(&h, "1.error.code"), MCP_INVALID_REQUEST);
}

/* Progress for a modern call carries its message; no notifications/message ever reaches a
 * modern client, which gets no logging capability. */
Test(mcp_call_progress, modern_call, .init = setup, .fini = teardown) {
        send_req(1, "tools/call",
                 ENVELOPE ",\"progressToken\":\"p\",\"io.modelcontextprotocol/logLevel\":\"debug\"",
                 "\"name\":\"shell_run\",\"arguments\":{\"command\":\"progress\"}");
        int seen = 0;
        for (;;) {
                cr_assert_not_null(h_recv(&h, 2000));
                if (h_has(&h, "id"))
                        break;
                cr_assert_str_eq(h_str(&h, "method"), "notifications/progress", "%s", h.line);
                cr_assert_str_eq(h_str(&h, "params.progressToken"), "p");
                seen += h_has(&h, "params.message");
        }
        cr_assert_eq(h_int(&h, "id"), 1);
        cr_assert_geq(seen, 1, "a 2026-07-28 progress notification may carry a message");
        mcp_log(h.server, MCP_LOG_EMERGENCY, "not for a modern client");
        cr_assert_null(h_recv(&h, 200), "%s", h.line);
}

/* A call's own log messages reach a modern client at the level its request asked for, before
 * the result, and not at all when it asked for none; no _meta names the request over stdio. */
Test(mcp_call_log, modern_at_the_requests_level, .init = setup, .fini = teardown) {
        send_req(1, "tools/call", ENVELOPE ",\"io.modelcontextprotocol/logLevel\":\"info\"",
                 "\"name\":\"shell_run\",\"arguments\":{\"command\":\"log\"}");
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_str_eq(h_str(&h, "method"), "notifications/message", "%s", h.line);
        cr_assert_str_eq(h_str(&h, "params.level"), "warning");
        cr_assert_str_eq(h_str(&h, "params.data"), "high 2");
        cr_assert_not(h_has(&h, "params._meta"), "%s", h.line);
        recv_id(1);
        send_req(2, "tools/call", NULL,
                 "\"name\":\"shell_run\",\"arguments\":{\"command\":\"log\"}");
        recv_id(2);
        send_req(3, "tools/call", ENVELOPE ",\"io.modelcontextprotocol/logLevel\":\"debug\"",
                 "\"name\":\"shell_run\",\"arguments\":{\"command\":\"log\"}");
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_str_eq(h_str(&h, "params.data"), "low", "%s", h.line);
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_str_eq(h_str(&h, "params.data"), "high 2", "%s", h.line);
        recv_id(3);
}

/* With related_meta (a session of rtn serve --http) the message names its request first in
 * params, as the front end's reader expects; a legacy session's level filters it. */
Test(mcp_call_log, related_meta_for_a_front_end) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.related_meta = true;
        h_start(&h, &cfg);
        h_init(&h, "2025-06-18");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"tools/call\",\"params\":"
                   "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"log\"}}}");
        const char *l = h_recv(&h, 2000);
        cr_assert_not_null(l);
        const char *id;
        size_t il, cut, cut_len;
        cr_assert_eq(mcp_related_request(l, strlen(l), &id, &il, &cut, &cut_len), 0, "%s", l);
        cr_assert_eq(il, 5);
        cr_assert(!memcmp(id, "\"r-1\"", 5));
        char rest[512];
        snprintf(rest, sizeof rest, "%.*s%s", (int)cut, l, l + cut + cut_len);
        cr_assert_str_eq(rest, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                               "\"params\":{\"level\":\"warning\",\"logger\":\"rtn\",\"data\":"
                               "\"high 2\"}}");
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_str_eq(h_str(&h, "id"), "r-1", "the info level lets debug pass: %s", h.line);
        h_stop(&h);
}

/* mcp_era_claim, the rule the HTTP front end shares: the claimed name comes back whenever the
 * claim is a string, also when the version or the envelope is refused (the front end compares
 * it with MCP-Protocol-Version first); a claim of another JSON type names nothing. */
Test(mcp_era_claim, names_the_claim_whenever_it_is_a_string) {
        static const struct {
                const char *params;
                int code, version;
                const char *requested;
        } cases[] = {
                {"{}", 0, -1, ""},
                {"{\"_meta\":[]}", 0, -1, ""},
                {"{\"_meta\":{" ENVELOPE "}}", 0, MCP_V2026_07_28, "2026-07-28"},
                {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\"}}", 0,
                 MCP_V2025_06_18, "2025-06-18"},
                {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"v999.0.0\"}}",
                 MCP_UNSUPPORTED_VERSION, -1, "v999.0.0"},
                {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}",
                 MCP_INVALID_PARAMS, -1, "2026-07-28"},
                {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":{}}}", MCP_INVALID_PARAMS,
                 -1, ""},
                {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":true}}",
                 MCP_INVALID_PARAMS, -1, ""},
                {"{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":null}}",
                 MCP_INVALID_PARAMS, -1, ""},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct rtn_json_doc d;
                const char *p = cases[i].params;
                cr_assert_eq(rtn_json_parse(p, strlen(p), 256, 16, &d, NULL), 0, "%s", p);
                char requested[64] = "x", why[256] = "";
                int v = -1;
                int code = mcp_era_claim(&d, 0, &v, requested, sizeof requested, why, sizeof why);
                cr_assert_eq(code, cases[i].code, "%s: %d %s", p, code, why);
                cr_assert_eq(v, cases[i].version, "%s: version %d", p, v);
                cr_assert_str_eq(requested, cases[i].requested, "%s", p);
                rtn_json_doc_free(&d);
        }
}
