/* Lifecycle and protocol: initialize and version negotiation, requests before initialize,
 * every JSON-RPC error code, server/discover, tools/list pagination, logging/setLevel,
 * batches per protocol version. */
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

static void expect_error(int code, const char *id_raw) {
        cr_assert_eq(h_int(&h, "error.code"), code, "%s", h.line);
        int t = h_tok(&h, "id");
        cr_assert_geq(t, 0);
        const char *raw;
        size_t n;
        rtn_json_span(&h.doc, t, &raw, &n);
        cr_assert(strlen(id_raw) == n && !memcmp(raw, id_raw, n), "id %.*s, want %s", (int)n, raw,
                  id_raw);
}

Test(h_initialize, negotiates_every_legacy_version) {
        for (int v = 0; v < MCP_V_FIRST_MODERN; v++) {
                struct harness h2;
                h_start(&h2, NULL);
                h_init(&h2, mcp_versions[v]);
                cr_assert_str_eq(h_str(&h2, "result.protocolVersion"), mcp_versions[v]);
                cr_assert_str_eq(h_str(&h2, "result.serverInfo.name"), "rtn");
                cr_assert(h_has(&h2, "result.capabilities.tools"));
                cr_assert(h_has(&h2, "result.capabilities.logging"));
                cr_assert(h_has(&h2, "result.instructions"));
                cr_assert_str_eq(mcp_server_protocol_version(h2.server), mcp_versions[v]);
                h_stop(&h2);
        }
}

Test(h_initialize, unknown_version_gets_latest, .init = setup, .fini = teardown) {
        h_init(&h, "1999-01-01");
        cr_assert_str_eq(h_str(&h, "result.protocolVersion"), "2025-11-25");
}

/* 2026-07-28 has no handshake: initialize asking for it gets the latest legacy version. */
Test(h_initialize, modern_version_gets_latest_legacy, .init = setup, .fini = teardown) {
        h_init(&h, "2026-07-28");
        cr_assert_str_eq(h_str(&h, "result.protocolVersion"), "2025-11-25");
        cr_assert_str_eq(mcp_server_protocol_version(h.server), "2025-11-25");
}

Test(h_initialize, missing_version_is_invalid_params, .init = setup, .fini = teardown) {
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_PARAMS, "1");
        cr_assert_null(mcp_server_protocol_version(h.server));
}

Test(h_initialize, twice_is_invalid_request, .init = setup, .fini = teardown) {
        h_init(&h, "2025-06-18");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"again\",\"method\":\"initialize\",\"params\":"
                   "{\"protocolVersion\":\"2025-03-26\"}}");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_REQUEST, "\"again\"");
        cr_assert_str_eq(mcp_server_protocol_version(h.server), "2025-06-18");
}

Test(handle_request, before_initialize_only_ping_and_discover, .init = setup, .fini = teardown) {
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_REQUEST, "1");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert(h_has(&h, "result"));
        cr_assert_eq(h_int(&h, "id"), 2);
}

Test(h_discover, answers_and_server_keeps_going, .init = setup, .fini = teardown) {
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{}}");
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_str_eq(h_str(&h, "result.supportedVersions.0"), "2026-07-28");
        cr_assert_str_eq(h_str(&h, "result.supportedVersions.1"), "2025-11-25");
        cr_assert_str_eq(h_str(&h, "result.supportedVersions.4"), "2024-11-05");
        cr_assert(!h_has(&h, "result.supportedVersions.5"));
        cr_assert(h_has(&h, "result.capabilities.tools"));
        cr_assert_str_eq(h_str(&h, "result.resultType"), "complete");
        h_init(&h, "2025-11-25");
        cr_assert_str_eq(h_str(&h, "result.protocolVersion"), "2025-11-25");
}

Test(mcp_dispatch_line, unparsable_is_parse_error_with_null_id, .init = setup, .fini = teardown) {
        static const char *const bad[] = {
                "{bad",    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
                "[1 2]",   "{\"a\" \"b\"}",
                "nul",     "{\"id\":1,}",
                "\"\xff\""};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                h_send(&h, bad[i]);
                cr_assert_not_null(h_recv(&h, 1000), "no answer to %s", bad[i]);
                expect_error(MCP_PARSE_ERROR, "null");
        }
}

Test(mcp_msg_parse, invalid_requests, .init = setup, .fini = teardown) {
        static const struct {
                const char *msg, *id;
        } cases[] = {
                {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "1"},
                {"{\"id\":2,\"method\":\"ping\"}", "2"},
                {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "null"},
                {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "null"},
                {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "null"},
                {"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":7}", "\"s\""},
                {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\"}", "3"},
                {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":\"x\"}", "4"},
                {"{\"jsonrpc\":\"2.0\",\"id\":5}", "5"},
                {"42", "null"},
                {"\"ping\"", "null"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                h_send(&h, cases[i].msg);
                cr_assert_not_null(h_recv(&h, 1000), "no answer to %s", cases[i].msg);
                expect_error(MCP_INVALID_REQUEST, cases[i].id);
        }
}

Test(handle_request, unknown_method, .init = setup, .fini = teardown) {
        h_init(&h, "2025-06-18");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/list\"}");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_METHOD_NOT_FOUND, "9");
        cr_assert(strstr(h_str(&h, "error.message"), "resources/list"));
}

Test(handle_notification, unknown_and_responses_are_ignored, .init = setup, .fini = teardown) {
        h_init(&h, "2025-06-18");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "id"), 1, "%s", h.line);
}

Test(mcp_dispatch_line, limits_are_invalid_request) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.limits.max_depth = 8;
        cfg.limits.max_tokens = 32;
        h_start(&h, &cfg);
        h_send(&h, "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_REQUEST, "null");
        cr_assert(strstr(h_str(&h, "error.message"), "nesting"));
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":[1,2,3,4,5,"
                   "6,7,8,9,10,"
                   "11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30]}}");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_REQUEST, "null");
        cr_assert(strstr(h_str(&h, "error.message"), "tokens"));
        h_stop(&h);
}

static int list_all(const char *version, unsigned flags, unsigned page) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.page_size = page;
        cfg.tool_flags = flags;
        h_start(&h, &cfg);
        h_init(&h, version);
        char cursor[64] = "", req[256];
        int total = 0, pages = 0;
        do {
                if (cursor[0])
                        snprintf(req, sizeof req,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/"
                                 "list\",\"params\":{\"cursor\":\"%s\"}}",
                                 pages + 1, cursor);
                else
                        snprintf(req, sizeof req,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}",
                                 pages + 1);
                h_send(&h, req);
                cr_assert_not_null(h_recv(&h, 1000));
                int t = h_tok(&h, "result.tools");
                cr_assert_geq(t, 0, "%s", h.line);
                cr_assert_leq((unsigned)h.doc.toks[t].size, page);
                total += h.doc.toks[t].size;
                pages++;
                cursor[0] = '\0';
                if (h_has(&h, "result.nextCursor"))
                        snprintf(cursor, sizeof cursor, "%s", h_str(&h, "result.nextCursor"));
        } while (cursor[0]);
        cr_assert_eq(pages, (total + (int)page - 1) / (int)page);
        return total;
}

Test(h_tools_list, paginates_every_tool) {
        /* env_history, env_undo and env_redo are always listed */
        cr_assert_eq(list_all("2025-06-18", 0, 5), 32);
        h_stop(&h);
        cr_assert_eq(list_all("2025-06-18", MCP_TOOLS_HTTP, 4), 34);
        h_stop(&h);
        cr_assert_eq(list_all("2025-06-18", MCP_TOOLS_HTTP, 100), 34);
        h_stop(&h);
}

Test(h_tools_list, invalid_cursor_is_invalid_params, .init = setup, .fini = teardown) {
        h_init(&h, "2025-06-18");
        static const char *const bad[] = {"\"bogus\"",  "\"rtn:0\"", "\"rtn:999\"",
                                          "\"rtn:1x\"", "17",        "\"rtn:-1\""};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                char req[256];
                snprintf(req, sizeof req,
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
                         "list\",\"params\":{\"cursor\":%s}}",
                         bad[i]);
                h_send(&h, req);
                cr_assert_not_null(h_recv(&h, 1000));
                expect_error(MCP_INVALID_PARAMS, "1");
        }
}

Test(mcp_tool_write, fields_follow_the_protocol_version) {
        h_start(&h, NULL);
        h_init(&h, "2024-11-05");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert(h_has(&h, "result.tools.0.inputSchema"));
        cr_assert(!h_has(&h, "result.tools.0.outputSchema"));
        cr_assert(!h_has(&h, "result.tools.0.annotations"));
        cr_assert(!h_has(&h, "result.tools.0.title"));
        h_stop(&h);
        h_start(&h, NULL);
        h_init(&h, "2025-06-18");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_str_eq(h_str(&h, "result.tools.0.name"), "shell_run");
        cr_assert_str_eq(h_str(&h, "result.tools.0.inputSchema.required.0"), "command");
        cr_assert(h_has(&h, "result.tools.0.outputSchema.properties.exit_code"));
        cr_assert(h_has(&h, "result.tools.0.annotations.readOnlyHint"));
        cr_assert(h_has(&h, "result.tools.0.title"));
        h_stop(&h);
}

Test(h_set_level, filters_notifications, .init = setup, .fini = teardown) {
        h_init(&h, "2025-06-18");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/"
                   "setLevel\",\"params\":{\"level\":\"loud\"}}");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_PARAMS, "1");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/"
                   "setLevel\",\"params\":{\"level\":\"error\"}}");
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert(h_has(&h, "result"), "%s", h.line);
        mcp_log(h.server, MCP_LOG_WARNING, "not shown");
        mcp_log(h.server, MCP_LOG_CRITICAL, "shown %d", 42);
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_str_eq(h_str(&h, "method"), "notifications/message");
        cr_assert_str_eq(h_str(&h, "params.level"), "critical");
        cr_assert_str_eq(h_str(&h, "params.data"), "shown 42");
        cr_assert_null(h_recv(&h, 100));
}

Test(mcp_log, nothing_before_initialize, .init = setup, .fini = teardown) {
        mcp_log(h.server, MCP_LOG_EMERGENCY, "too early");
        cr_assert_null(h_recv(&h, 100));
}

Test(handle_batch, refused_from_2025_06_18_on, .init = setup, .fini = teardown) {
        h_init(&h, "2025-06-18");
        h_send(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_REQUEST, "null");
        cr_assert(strstr(h_str(&h, "error.message"), "2025-06-18"));
}

Test(handle_batch, refused_before_initialize, .init = setup, .fini = teardown) {
        h_send(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_REQUEST, "null");
}

Test(handle_batch, served_in_2025_03_26_as_one_array, .init = setup, .fini = teardown) {
        h_init(&h, "2025-03-26");
        h_send(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
                   "call\",\"params\":{\"name\":\"shell_run\","
                   "\"arguments\":{\"command\":\"sleep 50\"}}},"
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}]");
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_eq(rtn_json_kind(&h.doc, 0), 'a', "%s", h.line);
        cr_assert_eq(h.doc.toks[0].size, 3);
        cr_assert_eq(h_int(&h, "0.id"), 1);
        cr_assert_eq(h_int(&h, "1.error.code"), MCP_METHOD_NOT_FOUND);
        cr_assert_eq(h_int(&h, "2.id"), 2);
        cr_assert(!h_has(&h, "2.result.structuredContent"),
                  "no structuredContent before 2025-06-18");
        h_send(&h, "[]");
        cr_assert_not_null(h_recv(&h, 1000));
        expect_error(MCP_INVALID_REQUEST, "null");
        h_send(&h, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "id"), 4, "a batch of notifications has no response");
}
