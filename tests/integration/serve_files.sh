#!/usr/bin/env bash
# The file tools and bind_host_dir of `rtn serve`, driven over stdio by a small Python MCP
# client (mcp_serve.py; the scenarios are in serve_files.py): reads with offsets, CRLF,
# empty, large, binary and unicode-named files; edits matching zero, one or many times;
# listings and searches; /etc/shadow unreadable even to root's rtn; symlinks and magic links
# that would leave the sandbox; a sandbox job swapping symlinks and directories while the
# tools run a thousand times (4000 under make stress); host binds: what may be bound,
# protected rc files, binds kept across restarts.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

PY=$T_ROOT/tests/integration/serve_files.py

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        t_cmd python3 "$PY" "$RTN" "$1"
        [ "$T_RC" = 0 ] || t_fail "$(tail -c 1500 "$T_ERR_FILE")"
        grep '^#' "$T_ERR_FILE" | while read -r l; do t_note "${l#\# }"; done
}

for s in read_write edit list_search shadow escapes race binds; do
        t_run "serve_files_$s" scenario "$s"
done
t_done
