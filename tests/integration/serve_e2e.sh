#!/usr/bin/env bash
# A whole agent session against `rtn serve`, driven by the official MCP TypeScript SDK client
# (tests/mcp-client/serve_e2e.mjs): commands, ping and cancellation during a command, a job's
# loopback HTTP server, commit, restart, rollback, reset. Then the largest results rtn can
# give, read by both official clients, 1.x and 2.x (tests/mcp-client/big_results.mjs): each
# closes its transport on a message over 10 MiB, so each result must arrive cut and flagged.
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

big_results() {
        [ -d "$client_dir/node_modules/@modelcontextprotocol/client" ] ||
                t_fail "SDK 2 not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
        command -v node >/dev/null || t_skip "node is not installed"
        # What is tested is that every result arrives whole or cut and flagged, not how fast:
        # the client's own guard is 240 s, and t_cmd's 120 s, which the sanitized rtn under
        # the load of the other streams has outrun, must not end it first.
        # node alone (big_results.mjs starts rtn without them) keeps the memory it frees: each
        # SDK reads a message of many MiB by concatenating its chunks, a fresh buffer each
        # time, and glibc's mmap and trim of each cost a third of the case's CPU in page faults.
        GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=536870912 \
                T_CMD_TIMEOUT=300 t_cmd node "$client_dir/big_results.mjs" "$RTN" "$T_TMP/data" "$1"
        [ "$T_RC" = 0 ] || t_fail "$(cat "$T_OUT_FILE" "$T_ERR_FILE" | tail -c 800)"
        t_stdout_has "big results done (SDK $1)"
}
t_run sdk1_big_results big_results 1
t_run sdk2_big_results big_results 2
t_done
