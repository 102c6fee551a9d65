#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/mcp-client/package.json) against `rtn serve --http`: the server scenarios that apply
# to rtn, which has tools and logging but no prompts, resources, completion, nor the
# suite's own test tools (docs/benchmarks.md lists each scenario's result). Its client sends
# no token, so tests/mcp-client/conformance-auth.mjs adds it to each request. Runs on
# loopback only: no network needed.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
cli=$client_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js

conformance() {
        command -v node >/dev/null || t_skip "node is not installed"
        [ -f "$cli" ] || t_skip "@modelcontextprotocol/conformance not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
        head -c 32 /dev/urandom | base64 >"$T_TMP/tok"
        chmod 600 "$T_TMP/tok"
        "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" --data-dir "$T_TMP/data" \
                2>"$T_TMP/srv.log" &
        SRV_PID=$!
        local s url
        trap 'kill $SRV_PID 2>/dev/null; wait $SRV_PID 2>/dev/null' EXIT
        t_wait_for grep -q "listening on" "$T_TMP/srv.log" ||
                t_fail "rtn serve --http did not start: $(head -c 400 "$T_TMP/srv.log")"
        url=$(grep -o 'http://[^ ]*/mcp' "$T_TMP/srv.log" | head -1)
        # Each writes its results under results/ of the working directory: the case's temp dir.
        cd "$T_TMP" || t_fail "no temp dir"
        for s in server-initialize ping tools-list logging-set-level server-sse-multiple-streams; do
                RTN_TOKEN=$(cat "$T_TMP/tok") t_cmd node --import "$client_dir/conformance-auth.mjs" \
                        "$cli" server --url "$url" --scenario "$s"
                [ "$T_RC" = 0 ] && grep -q ", 0 failed" "$T_OUT_FILE" ||
                        t_fail "scenario $s: $(grep -E 'FAILURE|Passed' "$T_OUT_FILE" | head -5) $(tail -c 300 "$T_ERR_FILE")"
        done
        # DNS rebinding: a foreign Host or Origin is refused. (Its other check sends a
        # localhost Host through undici without the token, which the 401 answers.)
        RTN_TOKEN=$(cat "$T_TMP/tok") t_cmd node --import "$client_dir/conformance-auth.mjs" \
                "$cli" server --url "$url" --scenario dns-rebinding-protection
        t_true grep -Eq 'localhost-host-rebinding-rejected.*SUCCESS' "$T_OUT_FILE"
        kill -0 "$SRV_PID" || t_fail "rtn serve --http died"
}
t_run serve_conformance conformance
t_done
