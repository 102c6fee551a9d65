/* tools/call through the fake backend, across mcp/protocol.c, args.c, offload.c and
 * result.c: results, tool errors, argument validation, calls in flight while other requests
 * are answered, cancellation, progress, limits. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mcp/internal.h"
#include "tests/unit/mcp/harness.h"

static struct harness h;

static void setup(void) {
        h_start(&h, NULL);
        h_init(&h, "2025-06-18");
}
static void teardown(void) {
        h_stop(&h);
}

static void call(int id, const char *tool, const char *args) {
        char req[4096];
        snprintf(req, sizeof req,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/"
                 "call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
                 id, tool, args);
        h_send(&h, req);
}

static const char *recv_id(int id) {
        const char *l = h_recv(&h, 2000);
        cr_assert_not_null(l, "no message for id %d", id);
        cr_assert_eq(h_int(&h, "id"), id, "%s", l);
        return l;
}

Test(mcp_call_finish, result_has_structured_and_text, .init = setup, .fini = teardown) {
        call(1, "shell_run", "{\"command\":\"hello\",\"env\":{\"A\":\"1\"},\"timeout\":5}");
        recv_id(1);
        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "hello");
        cr_assert_eq(h_int(&h, "result.structuredContent.exit_code"), 0);
        cr_assert_str_eq(h_str(&h, "result.content.0.type"), "text");
        int t = h_tok(&h, "result.isError");
        bool b = true;
        cr_assert_eq(rtn_json_get_bool(&h.doc, t, &b), 0);
        cr_assert(!b);
        /* the text is the same JSON */
        const char *text = h_str(&h, "result.content.0.text");
        struct rtn_json_doc d;
        cr_assert_eq(rtn_json_parse(text, strlen(text), 1000, 10, &d, NULL), 0);
        cr_assert(rtn_json_str_eq(&d, rtn_json_obj_get(&d, 0, "stdout"), "hello"));
        rtn_json_doc_free(&d);
        cr_assert_str_eq(h.fb.last_tool, "shell_run");
}

Test(mcp_call_finish_error, is_a_tool_error, .init = setup, .fini = teardown) {
        call(2, "shell_run", "{\"command\":\"fail\"}");
        recv_id(2);
        cr_assert_str_eq(h_str(&h, "result.content.0.text"), "boom: the command failed");
        cr_assert(!h_has(&h, "result.structuredContent"));
        cr_assert(strstr(h.line, "\"isError\":true"));
}

Test(start_call, backend_errno_becomes_tool_error, .init = setup, .fini = teardown) {
        call(3, "shell_run", "{\"command\":\"errno\"}");
        recv_id(3);
        cr_assert_str_eq(h_str(&h, "result.content.0.text"),
                         "shell_run failed: Input/output error");
        cr_assert(strstr(h.line, "\"isError\":true"));
}

Test(mcp_call_reply, invalid_backend_json_is_internal_error, .init = setup, .fini = teardown) {
        call(4, "shell_run", "{\"command\":\"badjson\"}");
        recv_id(4);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INTERNAL_ERROR);
}

/* A result larger than a message may be is cut, never refused: its largest string shortened
 * and the flag that says so set, structuredContent and its text copy both within the limit. */
Test(mcp_call_reply, oversized_result_is_cut) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.limits.max_message = 64 * 1024;
        h_start(&h, &cfg);
        h_init(&h, "2025-06-18");
        call(5, "shell_run", "{\"command\":\"big\"}");
        recv_id(5);
        cr_assert_leq(strlen(h.line), 64 * 1024);
        cr_assert_not(h_bool(&h, "result.isError"));
        cr_assert(h_bool(&h, "result.structuredContent.stdout_truncated"));
        cr_assert_not(h_bool(&h, "result.structuredContent.stderr_truncated"));
        size_t n = strlen(h_str(&h, "result.structuredContent.stdout"));
        cr_assert(n > 1000 && n < 64 * 1024, "stdout kept %zu bytes", n);
        cr_assert(strstr(h_str(&h, "result.content.0.text"), "\"stdout_truncated\":true"));
        h_stop(&h);
}

/* Protocols without structuredContent get the cut result as their one text. */
Test(mcp_call_reply, oversized_text_result_is_cut) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.limits.max_message = 64 * 1024;
        h_start(&h, &cfg);
        h_init(&h, "2025-03-26");
        call(5, "shell_run", "{\"command\":\"big\"}");
        recv_id(5);
        cr_assert_leq(strlen(h.line), 64 * 1024);
        cr_assert_not(h_has(&h, "result.structuredContent"));
        cr_assert(strstr(h_str(&h, "result.content.0.text"), "\"stdout_truncated\":true"));
        h_stop(&h);
}

/* A batch's responses go out as one message: its calls share the limit. */
Test(mcp_call_reply, batch_results_share_the_limit) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.limits.max_message = 64 * 1024;
        h_start(&h, &cfg);
        h_init(&h, "2025-03-26");
        h_send(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"shell_run\",\"arguments\":{\"command\":\"big\"}}},"
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"shell_run\",\"arguments\":{\"command\":\"big\"}}}]");
        cr_assert_not_null(h_recv(&h, 5000));
        cr_assert_leq(strlen(h.line), 64 * 1024);
        for (int i = 0; i < 2; i++) {
                char path[64];
                snprintf(path, sizeof path, "%d.result.content.0.text", i);
                cr_assert(strstr(h_str(&h, path), "\"stdout_truncated\":true"), "%s", path);
        }
        h_stop(&h);
}

Test(call_check, unknown_tool_is_invalid_params, .init = setup, .fini = teardown) {
        call(6, "rm_rf", "{}");
        recv_id(6);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_PARAMS);
        call(7, "http_get", "{\"url\":\"http://example.com/\"}");
        recv_id(7);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_PARAMS, "http tools are off by default");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/"
                   "call\",\"params\":{\"arguments\":{}}}");
        recv_id(8);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_PARAMS);
        cr_assert_eq(h.fb.calls, 0);
}

Test(call_check, bad_arguments_are_invalid_params_with_reason, .init = setup, .fini = teardown) {
        static const struct {
                const char *args, *msg;
        } cases[] = {
                {"{}", "missing required argument \"command\""},
                {"{\"command\":1}", "command: must be a string"},
                {"{\"command\":\"\"}", "command: must be 1..131072 bytes long"},
                {"{\"command\":\"x\",\"timeout\":\"5\"}",
                 "timeout: must be an integer in 1..86400"},
                {"{\"command\":\"x\",\"timeout\":0}", "timeout: must be an integer in 1..86400"},
                {"{\"command\":\"x\",\"timeout\":1.5}", "timeout: must be an integer in 1..86400"},
                {"{\"command\":\"x\",\"env\":[]}", "env: must be an object of strings"},
                {"{\"command\":\"x\",\"env\":{\"A=B\":\"1\"}}", "env: names must be"},
                {"{\"command\":\"x\",\"env\":{\"A\":1}}", "env: values must be strings"},
                {"{\"command\":\"a\\u0000b\"}", "command: must be a string without NUL"},
                {"{\"command\":\"x\",\"colour\":\"red\"}",
                 "unknown argument \"colour\" for tool shell_run"},
                {"[]", "arguments must be an object"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                call((int)i + 10, "shell_run", cases[i].args);
                recv_id((int)i + 10);
                cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_PARAMS, "%s", h.line);
                cr_assert(strstr(h_str(&h, "error.message"), cases[i].msg), "%s: got %s",
                          cases[i].args, h_str(&h, "error.message"));
        }
        cr_assert_eq(h.fb.calls, 0);
}

Test(call_check, bad_arguments_are_tool_errors_in_2025_11_25) {
        h_start(&h, NULL);
        h_init(&h, "2025-11-25");
        call(1, "bind_host_dir",
             "{\"host_path\":\"/x\",\"mount_point\":\"/mnt/x\",\"mode\":\"xx\"}");
        recv_id(1);
        cr_assert(strstr(h.line, "\"isError\":true"), "%s", h.line);
        cr_assert(strstr(h_str(&h, "result.content.0.text"), "mode: must be one of \"ro\" \"rw\""));
        cr_assert_eq(h.fb.calls, 0);
        h_stop(&h);
}

Test(h_tools_call, ping_answered_while_a_call_runs, .init = setup, .fini = teardown) {
        call(1, "shell_run", "{\"command\":\"sleep 300\"}");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        call(3, "env_status", "{}");
        recv_id(2);
        recv_id(3);
        recv_id(1);
        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "slept");
}

Test(handle_notification, cancel_stops_the_call_and_drops_its_response, .init = setup,
     .fini = teardown) {
        call(7, "shell_run", "{\"command\":\"sleep 5000\"}");
        h_pump(&h, 50);
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":7,"
                   "\"reason\":\"user\"}}");
        cr_assert_null(h_recv(&h, 300), "cancelled call answered: %s", h.line);
        cr_assert_eq(h.fb.cancels, 1);
        cr_assert_str_eq(h.fb.last_cancelled, "7");
        /* the id is free again and the server still works */
        call(7, "shell_run", "{\"command\":\"again\"}");
        recv_id(7);
        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "again");
        /* unknown or mistyped ids are ignored */
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":\"7\"}}");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":[]}}");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}");
        recv_id(8);
        cr_assert_eq(h.fb.cancels, 1);
}

Test(h_tools_call, duplicate_id_in_flight_is_invalid_request, .init = setup, .fini = teardown) {
        call(1, "shell_run", "{\"command\":\"sleep 200\"}");
        call(1, "shell_run", "{\"command\":\"x\"}");
        recv_id(1);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_REQUEST);
        recv_id(1);
        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "slept");
}

Test(h_tools_call, max_calls_is_a_tool_error) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.limits.max_calls = 1;
        h_start(&h, &cfg);
        h_init(&h, "2025-06-18");
        call(1, "shell_run", "{\"command\":\"sleep 200\"}");
        call(2, "shell_run", "{\"command\":\"x\"}");
        recv_id(2);
        cr_assert(strstr(h_str(&h, "result.content.0.text"), "too many tool calls in flight"));
        recv_id(1);
        h_stop(&h);
}

Test(mcp_call_progress, notifications_with_token_only, .init = setup, .fini = teardown) {
        h_send(&h,
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
               "call\",\"params\":{\"name\":\"shell_run\","
               "\"arguments\":{\"command\":\"progress\"},\"_meta\":{\"progressToken\":\"tok\"}}}");
        double want[] = {1, 2, 3};
        for (int i = 0; i < 3; i++) {
                cr_assert_not_null(h_recv(&h, 1000));
                cr_assert_str_eq(h_str(&h, "method"), "notifications/progress", "%s", h.line);
                cr_assert_str_eq(h_str(&h, "params.progressToken"), "tok");
                double p;
                cr_assert_eq(rtn_json_get_double(&h.doc, h_tok(&h, "params.progress"), &p), 0);
                cr_assert_eq(p, want[i]);
                cr_assert_eq(h_has(&h, "params.total"), i < 2);
        }
        recv_id(1);
        call(2, "shell_run", "{\"command\":\"progress\"}");
        recv_id(2);
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/"
                   "call\",\"params\":{\"name\":\"shell_run\","
                   "\"arguments\":{\"command\":\"x\"},\"_meta\":{\"progressToken\":{}}}}");
        recv_id(3);
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_PARAMS);
}

/* A call that asked for progress and runs long hears from the server every progress_usec
 * even when its backend says nothing (shell_job_wait, file tools, http): growing elapsed
 * seconds with a message, nothing after the result, nothing without a token. */
Test(mcp_call_progress, server_sends_it_while_a_call_runs) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.progress_usec = 100 * 1000;
        h_start(&h, &cfg);
        h_init(&h, "2025-06-18");
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"shell_run\",\"arguments\":{\"command\":\"sleep 550\"},"
                   "\"_meta\":{\"progressToken\":7}}}");
        double last = 0;
        int n = 0;
        for (;;) {
                cr_assert_not_null(h_recv(&h, 2000));
                if (h_has(&h, "id"))
                        break;
                cr_assert_str_eq(h_str(&h, "method"), "notifications/progress", "%s", h.line);
                cr_assert_eq(h_int(&h, "params.progressToken"), 7);
                double p;
                cr_assert_eq(rtn_json_get_double(&h.doc, h_tok(&h, "params.progress"), &p), 0);
                cr_assert_gt(p, last, "%s", h.line);
                cr_assert_lt(p, 1.0, "elapsed seconds: %s", h.line);
                cr_assert(strstr(h_str(&h, "params.message"), "shell_run still running after"));
                last = p;
                n++;
        }
        cr_assert_eq(h_int(&h, "id"), 1);
        cr_assert_geq(n, 3, "%d notifications in 550 ms at one per 100 ms", n);
        cr_assert_null(h_recv(&h, 300), "nothing after the result: %s", h.line);
        call(2, "shell_run", "{\"command\":\"sleep 350\"}");
        recv_id(2);
        h_stop(&h);
}

Test(mcp_server_shutdown, eof_finishes_pending_calls_and_stops, .init = setup, .fini = teardown) {
        call(1, "shell_run", "{\"command\":\"sleep 10000\"}");
        h_pump(&h, 30);
        close(h.in_w);
        h.in_w = -1;
        recv_id(1);
        cr_assert_str_eq(h_str(&h, "result.content.0.text"), "server shutting down");
        h_pump(&h, 50);
        cr_assert(rtn_loop_stopped(h.loop));
        cr_assert_eq(h.fb.shutdowns, 1);
}

Test(output_lost, vanished_client_shuts_down, .init = setup, .fini = teardown) {
        signal(SIGPIPE, SIG_IGN); /* mcp_serve_main blocks it; this test drives the server bare */
        call(1, "shell_run", "{\"command\":\"sleep 10000\"}");
        h_pump(&h, 20);
        close(h.out_r);
        h.out_r = -1;
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        h_pump(&h, 200);
        cr_assert(rtn_loop_stopped(h.loop));
        cr_assert_eq(h.fb.shutdowns, 1);
        cr_assert_eq(h.fb.pending, NULL);
}
