/* Fuzzes a whole request stream through the MCP server: framing, parsing, dispatch, argument
 * validation, calls held in flight, cancellation, progress and shutdown, with the sandbox
 * replaced by a stub backend at its interface. The first byte picks the legacy protocol version
 * the session is initialized with (or none), so batch and post-initialize paths are reached;
 * lines naming 2026-07-28 in their _meta take the modern path whatever it picked; a call of
 * one declaring the tasks extension that is held in flight becomes a task at the next line
 * (the loop runs its timers between lines), finished as one at shutdown. The oracle beyond
 * the sanitizers: every line the server writes must be valid JSON. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/loop.h"
#include "fuzz/fuzz.h"
#include "mcp/internal.h"
#include "serve/serve.h"

#define MAX_PENDING 64

struct stub {
        struct mcp_call *pending[MAX_PENDING];
        int n;
};

static int stub_call(void *ctx, struct mcp_call *call, const char *tool,
                     const struct mcp_args *args) {
        struct stub *st = ctx;
        char *cmd = NULL;
        if (mcp_args_str(args, "command", &cmd) == 0 && !strncmp(cmd, "pend", 4) &&
            st->n < MAX_PENDING) {
                mcp_call_progress(call, 1, 2, cmd);
                st->pending[st->n++] = call;
                free(cmd);
                return 0;
        }
        bool fail = cmd && !strcmp(cmd, "fail");
        free(cmd);
        if (fail)
                return -EIO;
        mcp_call_finish(call, "{\"exit_code\":0,\"stdout\":\"\\u00e9\"}", false);
        return 0;
}

static void stub_cancel(void *ctx, struct mcp_call *call) {
        struct stub *st = ctx;
        for (int i = 0; i < st->n; i++)
                if (st->pending[i] == call) {
                        st->pending[i] = st->pending[--st->n];
                        mcp_call_finish_error(call, "cancelled");
                        return;
                }
}

static void stub_shutdown(void *ctx) {
        struct stub *st = ctx;
        while (st->n > 0)
                mcp_call_finish_error(st->pending[--st->n], "shutting down");
}

static const struct mcp_backend_ops stub_ops = {
        .call = stub_call, .cancel = stub_cancel, .shutdown = stub_shutdown};

/* Reads what the server wrote so far and checks that every complete line is JSON. */
static void drain(int fd, char *buf, size_t *len, size_t cap) {
        for (;;) {
                ssize_t n = read(fd, buf + *len, cap - *len);
                if (n <= 0)
                        break;
                *len += (size_t)n;
                char *nl;
                while ((nl = memchr(buf, '\n', *len))) {
                        struct rtn_json_doc d;
                        if (rtn_json_parse(buf, (size_t)(nl - buf), 1u << 22, 256, &d, NULL) < 0)
                                abort();
                        rtn_json_doc_free(&d);
                        *len -= (size_t)(nl + 1 - buf);
                        memmove(buf, nl + 1, *len);
                }
                if (*len == cap)
                        abort(); /* a line longer than max_message */
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char out[1 << 20];
        if (size == 0)
                return 0;
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.tools = &serve_tool_table;
        cfg.limits.max_line = 64 * 1024;
        cfg.limits.max_message = 512 * 1024;
        cfg.limits.max_calls = 8;
        cfg.page_size = 7;
        cfg.task_after_usec = 0;
        cfg.tool_flags = data[0] & 0x80 ? MCP_TOOLS_HTTP : 0;
        int in[2], pout[2];
        struct rtn_loop *loop = NULL;
        struct mcp_server *s = NULL;
        struct stub st = {0};
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC | O_NONBLOCK) < 0 ||
            rtn_loop_new(&loop) < 0 ||
            mcp_server_new(&cfg, loop, in[0], pout[1], &stub_ops, &st, &s, NULL) < 0)
                abort();
        int v = data[0] % 5; /* 4: no initialize */
        if (v < MCP_V_FIRST_MODERN) {
                char init[160];
                int n = snprintf(
                        init, sizeof init,
                        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                        "{\"protocolVersion\":\"%s\"}}",
                        mcp_versions[v]);
                mcp_dispatch_line(s, init, (size_t)n);
        }
        size_t olen = 0;
        /* Lines go straight to dispatch (fuzz_jsonrpc covers the framer). */
        const char *p = (const char *)data + 1, *end = (const char *)data + size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                if (n <= cfg.limits.max_line)
                        mcp_dispatch_line(s, p, n);
                (void)rtn_loop_run_once(loop, 0); /* due timers: calls become tasks */
                drain(pout[0], out, &olen, sizeof out);
                p += n + 1;
        }
        mcp_server_shutdown(s, 0);
        drain(pout[0], out, &olen, sizeof out);
        mcp_server_free(s);
        rtn_loop_free(loop);
        close(in[0]), close(in[1]), close(pout[0]), close(pout[1]);
        return 0;
}
