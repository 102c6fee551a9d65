#!/usr/bin/env bash
# `rtn serve`'s resource options, shared with `rtn exec` (runtime/sandbox/specopt.c): --upper-size,
# --pids-max, --memory-max, --setenv, --env-file and --isolation reach every sandbox of the session and
# env_status reports them; bad values are refused before anything starts. Driven over stdio
# by a small Python MCP client (mcp_serve.py; the scenarios are in serve_limits.py).
. "$(dirname "$0")/../lib.sh"
t_need_rtn

PY=$T_ROOT/tests/integration/serve_limits.py

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        t_cmd python3 "$PY" "$RTN" "$1"
        [ "$T_RC" = 0 ] || t_fail "$(tail -c 1500 "$T_ERR_FILE")"
}

for s in options defaults isolation landlock env_by_name refused; do
        t_run "serve_limits_$s" scenario "$s"
done
t_done
