#!/usr/bin/env bash
# Sandboxes as handles in `rtn serve` (docs/tools.md, "Sandboxes"), through the official MCP
# client 2.x in both protocol eras (tests/mcp-client/sandboxes.mjs): the default sandbox for
# calls that name none, sandbox_fork's copy of the root filesystem's and an overlay
# workspace's changes and /tmp with each side's later writes its own, env_commit from a fork,
# sandbox_new from a commit, closed and unknown handles refused by name, --max-sandboxes,
# and a close that frees the sandbox's processes, session dir and fds. Then the server's exit
# with several sandboxes: the oldest sandbox's unapplied workspace changes are the ones kept.
# And /tmp, which a fork copies, within the upper's --upper-size.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
need_client() {
        command -v node >/dev/null || t_skip "node is not installed"
        [ -d "$client_dir/node_modules/@modelcontextprotocol/client" ] ||
                t_fail "@modelcontextprotocol/client not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
}

sandboxes_era() {
        need_client
        mkdir -p "$T_TMP/ws"
        echo host >"$T_TMP/ws/base"
        T_CMD_TIMEOUT=240 t_cmd node "$client_dir/sandboxes.mjs" "$RTN" "$T_TMP/data" "$T_TMP/ws" "$1"
        t_exit_is 0
        t_stdout_has "sandboxes done [$1]"
        # Left unapplied at exit: sb-1 was closed, so the oldest open sandbox's (sb-5's) are
        # the environment's pending changes once the server is gone.
        local i
        for i in $(seq 100); do
                [ -f "$T_TMP/data/pending/default/ws/upper/late" ] && break
                sleep 0.1
        done
        [ "$(cat "$T_TMP/data/pending/default/ws/upper/late" 2>&1)" = late ] ||
                t_fail "sb-5's workspace changes were not kept at exit"
        [ "$(cat "$T_TMP/ws/base")" = host ] || t_fail "the host workspace changed"
}

bad_cap() {
        t_cmd "$RTN" serve --max-sandboxes 0 </dev/null
        t_exit_is 125 # a usage error (rtn(1), CONVENTIONS)
        t_stderr_has "bad --max-sandboxes value 0"
        t_stderr_has "Try 'rtn serve --help'."
}

# --isolation landlock runs commands on the host: there is no sandbox filesystem to fork.
landlock_fork_refused() {
        printf '%s\n' \
                '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
                '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sandbox_fork","arguments":{}}}' \
                >"$T_TMP/in"
        # t_cmd gives its command /dev/null: the messages go through sh.
        t_cmd sh -c '"$0" serve --data-dir "$1/data" --isolation landlock <"$1/in"' "$RTN" "$T_TMP"
        t_exit_is 0
        t_stdout_has 'sandbox_fork: --isolation landlock runs commands on the host'
}

# rtn serve's /tmp lives on the upper's tmpfs (runtime/sandbox/kept.h), so that a fork
# copies it: the two share one --upper-size (each had a tmpfs of that size before).
tmp_shares_upper_size() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        cat >"$T_TMP/budget.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
from mcp_serve import Serve
s = Serve(sys.argv[1], "--upper-size", "16M")
r = s.sh("head -c 10M /dev/zero >/var/tmp/a && echo upper-ok; "
         "head -c 10M /dev/zero 2>&1 >/tmp/b || echo tmp-refused")
print(r["stdout"])
s.close()
EOF
        t_cmd python3 "$T_TMP/budget.py" "$RTN" "$T_ROOT/tests/integration"
        t_exit_is 0
        t_stdout_has upper-ok
        t_stdout_has "No space left on device"
        t_stdout_has tmp-refused
}

t_run sandboxes_modern sandboxes_era modern
t_run sandboxes_legacy sandboxes_era legacy
t_run max_sandboxes_checked bad_cap
t_run landlock_fork_refused landlock_fork_refused
t_run tmp_shares_upper_size tmp_shares_upper_size
t_done
