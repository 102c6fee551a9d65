/* rtn serve's tool table (serve/tools.c): every row the server can list has a handler, so
 * none answers "not available", and a row's sandbox argument matches whom it acts on. */
#include <criterion/criterion.h>
#include <string.h>

#include "mcp/internal.h"
#include "serve/serve.h"

Test(serve_tool_find, every_listed_tool_has_a_handler) {
        unsigned all = MCP_TOOLS_HTTP | MCP_TOOLS_WS_OVERLAY;
        size_t n = mcp_tool_count(&serve_tool_table, all);
        cr_assert_gt(n, 0);
        for (size_t i = 0; i < n; i++) {
                const struct mcp_tool *t = mcp_tool_at(&serve_tool_table, all, i);
                const struct mcp_tool *row = serve_tool_find(t->name);
                cr_expect_not_null(row, "no handler for %s", t->name);
                if (row)
                        cr_expect_not_null(row->call, "%s: handler is NULL", t->name);
        }
        cr_expect_null(serve_tool_find("no_such_tool"));
}

static const struct mcp_arg_spec *arg_of(const struct mcp_tool *t, const char *name) {
        for (size_t i = 0; i < t->nargs; i++)
                if (!strcmp(t->args[i].name, name))
                        return &t->args[i];
        return NULL;
}

/* A tool the server runs in a sandbox takes the sandbox argument it is picked by (optional:
 * old clients name none; sandbox_close alone requires it), and one that acts on none (http_*,
 * sandbox_new, sandbox_list) does not offer one it would ignore. */
Test(serve_tool_find, sandbox_argument_matches_the_row) {
        unsigned all = MCP_TOOLS_HTTP | MCP_TOOLS_WS_OVERLAY;
        for (size_t i = 0; i < mcp_tool_count(&serve_tool_table, all); i++) {
                const struct mcp_tool *t = mcp_tool_at(&serve_tool_table, all, i);
                const struct mcp_tool *row = serve_tool_find(t->name);
                cr_assert_not_null(row, "%s", t->name);
                const struct mcp_arg_spec *a = arg_of(t, "sandbox");
                if (row->backend & SERVE_TOOL_ON_HUB) {
                        cr_expect_null(a, "%s acts on no sandbox but takes one", t->name);
                        continue;
                }
                cr_assert_not_null(a, "%s acts on a sandbox but cannot name it", t->name);
                cr_expect_eq(a->type, MCP_ARG_STRING, "%s", t->name);
                cr_expect_eq(a->required, !strcmp(t->name, "sandbox_close"), "%s", t->name);
        }
}
