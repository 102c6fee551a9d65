#!/usr/bin/env bash
# An MCP stdio server wrapped by `rtn exec`, driven from outside by the official TypeScript
# SDK client (tests/mcp-client: client.mjs outside, server.mjs inside, both on
# @modelcontextprotocol/sdk pinned in package-lock.json). Proves the framing passes through
# unchanged: initialize, tools/list, a 1 MiB tools/call round trip, and a tool reporting
# the sandbox's hostname, interfaces and pid 1 from inside.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

MCP_DIR=$T_ROOT/tests/mcp-client

sdk_client_through_rtn_exec() {
        command -v node >/dev/null || t_fail "node is not installed (tools/install-deps.sh)"
        [ -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ] ||
                t_fail "SDK not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
        local host=mcp-$RANDOM
        t_cmd node "$MCP_DIR/client.mjs" "$RTN" "$host" -- \
                --workspace "$MCP_DIR" --cwd /workspace -- node server.mjs
        [ "$T_RC" = 0 ] || t_fail "$(cat "$T_OUT_FILE" "$T_ERR_FILE" | tail -c 800)"
        t_stdout_has "ok tools/list"
        t_stdout_has "ok tools/call echo 1 MiB"
        t_stdout_has "ok pid 1 is rtn-init"
        t_stdout_has "ok closed"
}

t_run sdk_client_through_rtn_exec sdk_client_through_rtn_exec
t_done
