#!/usr/bin/env bash
# The workspace modes of `rtn serve` through the official MCP TypeScript SDK client
# (tests/mcp-client/serve_workspace.mjs): the overlay round trip (write, diff, reset,
# write, apply, refusal list), what the instructions, the tool descriptions and env_status
# say about a live workspace and that it is so, and a sandbox without a host workspace.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
sdk() {
        [ -d "$client_dir/node_modules/@modelcontextprotocol/sdk" ] ||
                t_fail "SDK not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
        command -v node >/dev/null || t_skip "node is not installed"
        local mode=$1 ws=
        if [ "$mode" != none ]; then
                ws=$T_TMP/proj
                mkdir -p "$ws/d"
                echo hello >"$ws/a"
                echo f >"$ws/d/f"
                echo g >"$ws/d/g"
        fi
        t_cmd node "$client_dir/serve_workspace.mjs" "$RTN" "$T_TMP/data" "$mode" $ws
        t_exit_is 0
        t_stdout_has "workspace done"
}
t_run sdk_overlay_round_trip sdk overlay
t_run sdk_live_texts_are_true sdk live
t_run sdk_no_workspace sdk none
t_done
