#!/usr/bin/env bash
# `rtn serve` in the MCP 2026-07-28 era and beside it, driven by the official clients from npm
# (tests/mcp-client): the 2.x client pinned to 2026-07-28 (modern), probing with server/discover
# and falling back if it must (auto), and with initialize (legacy), each through
# tests/mcp-client/modern.mjs (discovery, calls, argument errors, cancellation, progress that
# outlasts the client's timeout); the SDK 1.x client over each legacy version
# (tests/mcp-client/legacy.mjs); and Inspector 2.x's CLI with --protocol-era modern and auto:
# tools/list under --strict and a tools/call.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
need_client() {
        command -v node >/dev/null || t_skip "node is not installed"
        [ -d "$client_dir/node_modules/@modelcontextprotocol/$1" ] ||
                t_fail "@modelcontextprotocol/$1 not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
}

client_mode() {
        need_client client
        T_CMD_TIMEOUT=180 t_cmd node "$client_dir/modern.mjs" "$RTN" "$T_TMP/data" "$1"
        t_exit_is 0
        t_stdout_has "modern done [$1]"
}

sdk1_version() {
        need_client sdk
        T_CMD_TIMEOUT=120 t_cmd node "$client_dir/legacy.mjs" "$RTN" "$T_TMP/data" "$1"
        t_exit_is 0
        t_stdout_has "legacy done [$1]"
}

inspector() { # ERA ARGS...: the Inspector CLI against `rtn serve`
        local era=$1
        shift
        # Inspector keeps its catalog and client config under HOME: give it the case's own.
        T_CMD_TIMEOUT=120 t_cmd env HOME="$T_TMP/home" node \
                "$client_dir/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js" \
                --cli --protocol-era "$era" "$@" "$RTN" serve --data-dir "$T_TMP/data"
}

inspector_era() {
        need_client inspector
        mkdir -p "$T_TMP/home"
        inspector "$1" --method tools/list --strict
        t_exit_is 0
        t_stdout_has '"name": "shell_run"'
        t_stderr_has "0 errors"
        inspector "$1" --format json --method tools/call --tool-name shell_run \
                --tool-args-json '{"command":"echo era; exit 4"}'
        t_exit_is 0
        t_stdout_has '"stdout":"era\n"'
        t_stdout_has '"exit_code":4'
        t_stdout_has '"io.modelcontextprotocol/serverInfo":{"name":"rtn"'
}

t_run client_2x_modern client_mode modern
t_run client_2x_auto client_mode auto
t_run client_2x_legacy client_mode legacy
for v in 2024-11-05 2025-03-26 2025-06-18 2025-11-25; do
        t_run "sdk1_$v" sdk1_version "$v"
done
t_run inspector_modern inspector_era modern
t_run inspector_auto inspector_era auto
t_done
