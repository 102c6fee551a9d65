#!/usr/bin/env bash
# Long commands as tasks (the io.modelcontextprotocol/tasks extension, docs/tools.md "Tasks"),
# over stdio (tests/integration/serve_tasks.py) and over HTTP (curl, 2026-07-28 requests to
# the token's state): a long shell_run of a client that declared the extension is answered
# with a task, polled with tasks/get to its result; tasks/cancel kills the command on the host;
# a short call, a client that did not declare it and a legacy session get the plain answer;
# bad ids are -32602, tasks/* without the extension -32021 (HTTP 400). Which state a task
# belongs to is attacked in tests/security/http_state.sh.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

stdio() {
        T_CMD_TIMEOUT=90 t_cmd python3 "$T_ROOT/tests/integration/serve_tasks.py" "$RTN" "$1"
        t_exit_is 0
}

# The command of a cancelled task is gone from the host before the task says cancelled.
stdio_cancel() {
        coproc PY { timeout 90 python3 "$T_ROOT/tests/integration/serve_tasks.py" "$RTN" \
                cancel_kills "$T_UNIQ" 2>"$T_TMP/py.err"; }
        local line
        read -r -t 60 line <&"${PY[0]}" || t_fail "no task: $(cat "$T_TMP/py.err")"
        [[ $line == running* ]] || t_fail "unexpected: $line"
        t_wait_for eval '[ -n "$(t_host_pids sleep "300.$T_UNIQ")" ]' || t_fail "the command never ran"
        echo >&"${PY[1]}"
        read -r -t 60 line <&"${PY[0]}" || t_fail "not cancelled: $(cat "$T_TMP/py.err")"
        [ "$line" = cancelled ] || t_fail "unexpected: $line"
        [ -z "$(t_host_pids sleep "300.$T_UNIQ")" ] || t_fail "the task said cancelled, its command still runs"
        echo >&"${PY[1]}"
        read -r -t 60 line <&"${PY[0]}"
        [ "$line" = ok ] || t_fail "after cancel: $line $(cat "$T_TMP/py.err")"
}

EXT='"extensions":{"io.modelcontextprotocol/tasks":{}}'
# mreq ID METHOD NAME PARAMS-JSON CAPS-JSON: a 2026-07-28 request with every header right
# (Mcp-Name is NAME); $CODE is the status, the body in $T_TMP/body.
mreq() {
        local meta="\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":$5}"
        # --max-time: a server that makes no task fails the case instead of holding it.
        CODE=$(curl -s -m 30 -o "$T_TMP/body" -w '%{http_code}' -X POST -H "Content-Type: application/json" \
                -H "Accept: application/json, text/event-stream" \
                -H "Authorization: Bearer $(cat "$T_TMP/tok")" -H "MCP-Protocol-Version: 2026-07-28" \
                -H "Mcp-Method: $2" -H "Mcp-Name: $3" \
                --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"$2\",\"params\":{$4,$meta}}" "$URL")
}
run() { # ID COMMAND CAPS: shell_run
        mreq "$1" tools/call shell_run "\"name\":\"shell_run\",\"arguments\":{\"command\":\"$2\"}" "$3"
}
tget() { # ID TASK [METHOD [CAPS]]
        mreq "$1" "${3:-tasks/get}" "$2" "\"taskId\":\"$2\"" "${4:-{$EXT\}}"
}
task_id() {
        TID=$(grep -o '"taskId":"[0-9a-f]*"' "$T_TMP/body" | cut -d'"' -f4)
        [ ${#TID} = 32 ] || t_fail "no task: $(head -c 300 "$T_TMP/body")"
}
# poll_until STATUS: tasks/get of $TID until it is no longer working; it must be STATUS.
poll_until() {
        local i
        for i in $(seq 300); do
                tget 9 "$TID"
                code_is 200
                grep -q '"status":"working"' "$T_TMP/body" || break
                sleep 0.2
        done
        body_has "\"status\":\"$1\""
}

http_poll() {
        http_start
        run 1 'sleep 3; echo over-http' "{$EXT}"
        code_is 200
        body_has '"resultType":"task"'
        task_id
        tget 2 "$TID"
        body_has '"status":"working"'
        poll_until completed
        body_has '"stdout":"over-http\n"'
        body_has '"exit_code":0'
        # A short call is answered at once, and so is a client without the extension.
        run 3 'echo quick' "{$EXT}"
        body_has '"resultType":"complete"'
        body_has '"stdout":"quick\n"'
        run 4 'sleep 2; echo plain' '{}'
        code_is 200
        body_has '"stdout":"plain\n"'
        grep -q taskId "$T_TMP/body" && t_fail "a task for a client without the extension"
        # tasks/* without the extension: -32021, HTTP 400; an unknown id: -32602.
        tget 5 "$TID" tasks/get '{}'
        code_is 400
        body_has '"code":-32021'
        tget 6 0123456789abcdef0123456789abcdef
        code_is 200
        body_has '"code":-32602'
        # Mcp-Name must repeat the taskId.
        mreq 7 tasks/get other "\"taskId\":\"$TID\"" "{$EXT}"
        code_is 400
        body_has '"code":-32020'
}

http_cancel() {
        http_start
        run 1 "sleep 300.$T_UNIQ" "{$EXT}"
        task_id
        t_wait_for eval '[ -n "$(t_host_pids sleep "300.$T_UNIQ")" ]' || t_fail "the command never ran"
        tget 2 "$TID" tasks/cancel
        code_is 200
        body_has '"result":{"resultType":"complete"'
        poll_until cancelled
        [ -z "$(t_host_pids sleep "300.$T_UNIQ")" ] || t_fail "the task said cancelled, its command still runs"
        run 3 'echo after' "{$EXT}"
        body_has '"stdout":"after\n"'
}

for s in poll_task short_and_plain bad_requests; do
        t_run "stdio_$s" stdio "$s"
done
t_run stdio_cancel stdio_cancel
t_run http_poll http_poll
t_run http_cancel http_cancel
t_done
