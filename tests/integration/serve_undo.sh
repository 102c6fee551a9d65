#!/usr/bin/env bash
# Issue 38 end to end with the official MCP TypeScript SDK client (tests/mcp-client/undo.mjs):
# write, run, break, env_history, env_undo (the files back byte for byte: a deleted tree, a
# chmod, a symlink, an xattr, a hard link), env_redo, env_commit; in the sandbox's upper and
# /tmp, and again with an overlay workspace, whose host dir stays as it was.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
sdk_undo() {
        [ -d "$client_dir/node_modules/@modelcontextprotocol/sdk" ] ||
                t_fail "SDK not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
        command -v node >/dev/null || t_skip "node is not installed"
        local ws=()
        if [ "$1" = overlay ]; then
                mkdir "$T_TMP/ws" && echo host > "$T_TMP/ws/h"
                ws=("$T_TMP/ws")
        fi
        t_cmd node "$client_dir/undo.mjs" "$RTN" "$T_TMP/data" "${ws[@]}"
        [ "$T_RC" = 0 ] || t_fail "$(cat "$T_OUT_FILE" "$T_ERR_FILE" | tail -c 1500)"
        t_stdout_has "the files are back byte for byte"
        t_stdout_has "undo done"
        if [ "$1" = overlay ]; then
                [ "$(ls -A "$T_TMP/ws")" = h ] && [ "$(cat "$T_TMP/ws/h")" = host ] ||
                        t_fail "the workspace's host dir changed: $(ls -A "$T_TMP/ws")"
        fi
}
t_run sdk_undo_upper sdk_undo upper
t_run sdk_undo_overlay_workspace sdk_undo overlay
t_done
