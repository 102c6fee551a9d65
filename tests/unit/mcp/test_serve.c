/* rtn serve's tool table (mcp/serve.c) against the protocol's (mcp/tools.c): every tool the
 * server can list has a handler, so none answers "not available" by a missing row. */
#include <criterion/criterion.h>

#include "mcp/internal.h"
#include "mcp/serve.h"

Test(serve_tool_find, every_listed_tool_has_a_handler) {
        unsigned all = MCP_TOOLS_HTTP | MCP_TOOLS_WS_OVERLAY;
        size_t n = mcp_tool_count(all);
        cr_assert_gt(n, 0);
        for (size_t i = 0; i < n; i++) {
                const struct mcp_tool *t = mcp_tool_at(all, i);
                const struct serve_tool *row = serve_tool_find(t->name);
                cr_expect_not_null(row, "no handler for %s", t->name);
                if (row)
                        cr_expect_not_null(row->call, "%s: handler is NULL", t->name);
        }
        cr_expect_null(serve_tool_find("no_such_tool"));
}
