/* The tasks extension of the protocol core (mcp/tasks.c) through the fake backend: a call
 * still running after task_after_usec becomes a task polled to its result, a protocol error
 * of its call makes it failed, and past MCP_TASKS_MAX kept a call is answered as it ends.
 * The same through the real server, over stdio and HTTP: tests/integration/serve_tasks.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mcp/internal.h"
#include "tests/unit/mcp/harness.h"

static struct harness h;

#define META                                                                                       \
        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
        "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{\"" MCP_EXT_TASKS         \
        "\":{}}}}"

static void setup(void) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.task_after_usec = 100 * 1000;
        h_start(&h, &cfg);
}
static void teardown(void) {
        h_stop(&h);
}

static void call(int id, const char *cmd) {
        char req[1024];
        snprintf(req, sizeof req,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"shell_run\",\"arguments\":{\"command\":\"%s\"}," META "}}",
                 id, cmd);
        h_send(&h, req);
}

static void task_get(int id, const char *tid) {
        char req[1024];
        snprintf(req, sizeof req,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tasks/get\",\"params\":{\"taskId\":"
                 "\"%s\"," META "}}",
                 id, tid);
        h_send(&h, req);
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_eq(h_int(&h, "id"), id, "%s", h.line);
}

/* The CreateTaskResult of the call with id into tid. */
static void created(int id, char *tid) {
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_eq(h_int(&h, "id"), id, "%s", h.line);
        cr_assert_str_eq(h_str(&h, "result.resultType"), "task", "%s", h.line);
        cr_assert_str_eq(h_str(&h, "result.status"), "working");
        cr_assert(!h_has(&h, "result.content"));
        snprintf(tid, 2 * MCP_TASK_ID_BYTES + 1, "%s", h_str(&h, "result.taskId"));
        cr_assert_eq(strlen(tid), 2 * MCP_TASK_ID_BYTES);
}

Test(mcp_tasks, polled_to_its_result, .init = setup, .fini = teardown) {
        char tid[2 * MCP_TASK_ID_BYTES + 1];
        call(1, "sleep 400");
        created(1, tid);
        task_get(2, tid);
        cr_assert_str_eq(h_str(&h, "result.status"), "working");
        cr_assert_str_eq(h_str(&h, "result.resultType"), "complete");
        cr_assert(!h_has(&h, "result.result"));
        h_pump(&h, 500);
        task_get(3, tid);
        cr_assert_str_eq(h_str(&h, "result.status"), "completed", "%s", h.line);
        cr_assert_str_eq(h_str(&h, "result.result.structuredContent.stdout"), "slept");
        cr_assert_str_eq(h_str(&h, "result.result.resultType"), "complete");
        cr_assert(h_int(&h, "result.ttlMs") >= (long long)(MCP_TASK_KEEP_USEC / 1000));
}

Test(mcp_tasks, short_call_is_answered_at_once, .init = setup, .fini = teardown) {
        call(1, "sleep 10");
        cr_assert_not_null(h_recv(&h, 2000));
        cr_assert_str_eq(h_str(&h, "result.resultType"), "complete");
        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "slept");
}

/* A call its backend takes long to start (rtn serve starts a sandbox before a session's first
 * command, seconds on a loaded machine) becomes a task with no progress before or after it,
 * although the heartbeat, counted from when the call began, is due before the task timer,
 * counted from when the backend's call returned. */
Test(mcp_tasks, slow_start_becomes_a_task_before_any_progress, .fini = teardown) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.task_after_usec = 100 * 1000;
        cfg.progress_usec = 200 * 1000;
        h_start(&h, &cfg);
        h_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                   "\"name\":\"shell_run\",\"arguments\":{\"command\":\"slowstart 300\"},"
                   "\"_meta\":{\"progressToken\":\"p\","
                   "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                   "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{"
                   "\"" MCP_EXT_TASKS "\":{}}}}}}");
        char tid[2 * MCP_TASK_ID_BYTES + 1];
        created(1, tid);
        cr_assert_null(h_recv(&h, 500), "after the task: %s", h.line);
        task_get(2, tid);
        cr_assert_str_eq(h_str(&h, "result.status"), "completed", "%s", h.line);
}

Test(mcp_tasks, protocol_error_is_failed, .init = setup, .fini = teardown) {
        char tid[2 * MCP_TASK_ID_BYTES + 1];
        call(1, "sleepbad 300");
        created(1, tid);
        h_pump(&h, 400);
        task_get(2, tid);
        cr_assert_str_eq(h_str(&h, "result.status"), "failed", "%s", h.line);
        cr_assert_eq(h_int(&h, "result.error.code"), MCP_INTERNAL_ERROR);
        cr_assert(!h_has(&h, "result.result"));
}

Test(mcp_tasks, past_the_cap_answered_as_it_ends, .init = setup, .fini = teardown) {
        char tid[2 * MCP_TASK_ID_BYTES + 1];
        for (int i = 1; i <= MCP_TASKS_MAX + 1; i++)
                call(i, "sleep 1500");
        int tasks = 0, plain = 0;
        for (int i = 0; i < MCP_TASKS_MAX + 1; i++) {
                cr_assert_not_null(h_recv(&h, 3000), "after %d tasks, %d plain", tasks, plain);
                if (!strcmp(h_str(&h, "result.resultType"), "task")) {
                        snprintf(tid, sizeof tid, "%s", h_str(&h, "result.taskId"));
                        tasks++;
                } else {
                        cr_assert_str_eq(h_str(&h, "result.structuredContent.stdout"), "slept");
                        plain++;
                }
        }
        cr_assert_eq(tasks, MCP_TASKS_MAX);
        cr_assert_eq(plain, 1);
        h_pump(&h, 300);
        task_get(100, tid); /* nothing kept was dropped for it */
        cr_assert_str_eq(h_str(&h, "result.status"), "completed", "%s", h.line);
}
