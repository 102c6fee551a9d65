# shellcheck shell=bash disable=SC2034 # T_RC, T_OUT_FILE... are the case's, as t_cmd sets them
# The suite's side of runner.mjs: the client scripts of tests/mcp-client/ run in one node
# process per suite, which loads the MCP SDKs once (about a second of CPU a node start saves).
# Sourced after tests/lib.sh. Register a case that calls mcp_node with mcp_t_run, and end the
# suite with mcp_runner_stop before t_done:
#   mcp_t_run NAME FUNC [ARGS...]   t_run, with a runner alive: the suite's shell starts it
#                                   (again, after a run that failed ended it) and reaps it,
#                                   so its CPU counts as the suite's
#   mcp_node SCRIPT ARGS...         in a case: `t_cmd node SCRIPT ARGS...`, run by the runner
#                                   in the case's cwd and environment ($T_RC, $T_OUT_FILE,
#                                   $T_ERR_FILE and T_CMD_TIMEOUT as t_cmd has them)
#   mcp_runner_stop                 ends the runner and removes its directory

mcp_runner_ensure() {
        command -v node >/dev/null || return 0 # the case skips by itself
        if [ -n "${MCP_RUNNER_PID:-}" ]; then
                # a case saw it end (a run failed, timed out, or it died): reap it
                [ ! -e "$MCP_RUNNER_DIR/ended" ] && kill -0 "$MCP_RUNNER_PID" 2>/dev/null && return 0
                wait "$MCP_RUNNER_PID" 2>/dev/null
                rm -f -- "$MCP_RUNNER_DIR/ended"
        fi
        if [ -z "${MCP_RUNNER_DIR:-}" ]; then
                MCP_RUNNER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mcp-runner.XXXXXX") || return 0
                mkfifo "$MCP_RUNNER_DIR/req" || return 0
                # held open read-write: a request never blocks, whether a runner reads or not
                exec {MCP_RUNNER_FD}<>"$MCP_RUNNER_DIR/req"
        fi
        node "$T_ROOT/tests/mcp-client/runner.mjs" "$MCP_RUNNER_DIR" "$T_MAIN_PID" </dev/null \
                >/dev/null 2>>"$MCP_RUNNER_DIR/log" &
        MCP_RUNNER_PID=$!
}

mcp_t_run() {
        mcp_runner_ensure
        t_run "$@"
}

mcp_runner_stop() {
        [ -n "${MCP_RUNNER_PID:-}" ] || return 0
        kill "$MCP_RUNNER_PID" 2>/dev/null
        wait "$MCP_RUNNER_PID" 2>/dev/null
        exec {MCP_RUNNER_FD}<&-
        rm -rf -- "$MCP_RUNNER_DIR"
        MCP_RUNNER_PID='' MCP_RUNNER_DIR=''
}

mcp_node() {
        T_OUT_FILE=$T_TMP/.t_out
        T_ERR_FILE=$T_TMP/.t_err
        T_RC=0
        T_LAST_CMD="node $*"
        [ -n "${MCP_RUNNER_PID:-}" ] || t_fail "no client runner: register the case with mcp_t_run"
        local reply=$T_TMP/.mcp_reply fd name rc='' waited=0 envs=()
        rm -f -- "$reply"
        mkfifo "$reply" || t_fail "mkfifo $reply failed"
        exec {fd}<>"$reply"
        for name in $(compgen -e); do
                envs+=("$name=${!name}")
        done
        printf '%s\0' $((5 + ${#envs[@]} + $#)) "$reply" "$T_OUT_FILE" "$T_ERR_FILE" "$PWD" \
                ${#envs[@]} "${envs[@]}" "$@" >&"$MCP_RUNNER_FD"
        until read -r -t 1 -u "$fd" rc; do
                waited=$((waited + 1))
                if ! kill -0 "$MCP_RUNNER_PID" 2>/dev/null && read -r -t 0.1 -u "$fd" rc; then
                        break # it answered, then ended (a failed run ends it)
                elif ! kill -0 "$MCP_RUNNER_PID" 2>/dev/null; then
                        # it died without an answer, as a node that crashed
                        printf 'the client runner died: %s\n' "$(tail -c 400 "$MCP_RUNNER_DIR/log")" >>"$T_ERR_FILE"
                        rc=1
                        break
                elif [ "$waited" -ge "${T_CMD_TIMEOUT%%[!0-9]*}" ]; then
                        kill "$MCP_RUNNER_PID" 2>/dev/null # timeout(1)'s code; the suite starts another
                        rc=124
                        break
                fi
        done
        exec {fd}<&-
        [ "$rc" = 0 ] || : >"$MCP_RUNNER_DIR/ended" # a failed run ends the runner
        T_RC=$rc
}
