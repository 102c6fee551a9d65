#!/usr/bin/env bash
# A whole agent session against `rtn serve`, driven by the official MCP TypeScript SDK client
# (tests/mcp-client/serve_e2e.mjs): commands, ping and cancellation during a command, a job's
# loopback HTTP server, commit, restart, rollback, reset.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
e2e() {
        [ -d "$client_dir/node_modules/@modelcontextprotocol/sdk" ] ||
                t_fail "SDK not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
        command -v node >/dev/null || t_skip "node is not installed"
        t_cmd node "$client_dir/serve_e2e.mjs" "$RTN" "$T_TMP/data"
        t_exit_is 0
        t_stdout_has "e2e done"
}
t_run sdk_agent_session e2e
t_done
