#!/usr/bin/env bash
# The state of 2026-07-28 requests in `rtn serve --http` (invariant 28): its sandboxes are
# reached only through the handles it minted and only with the server's token (a legacy
# session's handle, a guessed or a forged one reaches nothing of its own; another token gets
# the same 401 whether the handle it names exists or not), it holds at most --max-sandboxes
# (past that a clear tool error, nothing lost), and clients whose request ids collide each
# get their own answer. A task (io.modelcontextprotocol/tasks) is the state's or session's that
# made it (invariant 29): another session's, the state's, a guessed one and another token's
# request reach none.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

command -v curl >/dev/null || t_note "curl is not installed: the cases skip"
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
MMETA='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'

# req BODY [CURL ARGS...]: a POST; $CODE is the status, the body is in $T_TMP/body.
req() {
        CODE=$(curl -s -o "$T_TMP/body" -D "$T_TMP/hdrs" -w '%{http_code}' -X POST \
                -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" \
                --data-binary "$1" "${@:2}" "$URL")
}
authed() {
        req "$@" -H "Authorization: Bearer $(<"$T_TMP/tok")"
}
init() {
        authed "$INIT"
        code_is 200
        # Every Mcp-Session-Id line's value, CRs dropped, read by the shell (no tr, no sed).
        local l p='[Mm]cp-[Ss]ession-[Ii]d: '
        SID=
        while IFS= read -r l || [ -n "$l" ]; do
                l=${l//$'\r'/}
                # shellcheck disable=SC2053 # $p is a pattern
                [[ $l == $p* ]] && SID=${SID:+$SID$'\n'}${l#$p}
        done <"$T_TMP/hdrs"
        [ ${#SID} = 32 ] || t_fail "no Mcp-Session-Id in $(cat "$T_TMP/hdrs")"
}
call() { # a tools/call's params in session $SID
        authed "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":$1}" \
                -H "Mcp-Session-Id: $SID" "${@:2}"
}
# mcall TOOL ARGUMENTS-JSON [CURL ARGS...]: a 2026-07-28 tools/call, every header right.
mcall() {
        authed "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2,$MMETA}}" \
                -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" -H "Mcp-Name: $1" "${@:3}"
}

# The sandboxes of 2026-07-28 requests belong to the token's state and to nothing else: a
# handle a legacy session minted, a guessed one or a forged one reaches nothing of theirs,
# and a request with another token learns nothing of the handle it names (the same 401 as
# for one that does not exist).
modern_handles_owned() {
        http_start
        init
        call '{"name":"sandbox_new","arguments":{}}'
        code_is 200
        body_has '"sandbox":"sb-2"'
        call '{"name":"file_write","arguments":{"sandbox":"sb-2","path":"/tmp/s","content":"session-secret"}}'
        code_is 200
        mcall sandbox_new '{}'
        code_is 200
        body_has '"sandbox":"sb-2"'
        mcall file_write '{"sandbox":"sb-2","path":"/tmp/m","content":"modern-own"}'
        code_is 200
        mcall file_read '{"sandbox":"sb-2","path":"/tmp/s"}'
        body_has '"isError":true'
        grep -q session-secret "$T_TMP/body" && t_fail "a modern request read the session's sandbox"
        call '{"name":"file_read","arguments":{"sandbox":"sb-2","path":"/tmp/m"}}'
        body_has '"isError":true'
        grep -q modern-own "$T_TMP/body" && t_fail "the session read the modern state's sandbox"
        local h
        for h in sb-3 sb-99 sb-0 "sb-2 " ../sb-2 "$SID" sb-2x; do
                mcall file_read "{\"sandbox\":\"$h\",\"path\":\"/tmp/m\"}"
                code_is 200
                body_has '"isError":true'
                grep -q modern-own "$T_TMP/body" && t_fail "handle '$h' reached sb-2"
        done
        mcall file_read '{"sandbox":"sb-99","path":"/tmp/m"}'
        body_has "no sandbox sb-99"
        mcall file_read '{"sandbox":"sb-2","path":"/tmp/m"}'
        code_is 200
        body_has modern-own
        # Another token: the same answer whether the handle exists or not.
        local other=(-H "Authorization: Bearer x$(<"$T_TMP/tok")")
        local body
        for h in sb-2 sb-99; do
                req "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"file_read\",\"arguments\":{\"sandbox\":\"$h\",\"path\":\"/tmp/m\"},$MMETA}}" \
                        -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" -H "Mcp-Name: file_read" "${other[@]}"
                code_is 401
                if [ -z "${body-}" ]; then
                        body=$(cat "$T_TMP/body")
                else
                        [ "$(cat "$T_TMP/body")" = "$body" ] || t_fail "another token tells sb-2 from sb-99"
                fi
        done
        mcall file_read '{"sandbox":"sb-2","path":"/tmp/m"}'
        body_has modern-own
}

# The 2026-07-28 state is one of the server's sessions (--max-sessions) and holds at most
# --max-sandboxes handles: past it sandbox_new is refused, clearly, and nothing is lost.
modern_handles_capped() {
        http_start --max-sandboxes 2
        mcall file_write '{"path":"/tmp/one","content":"one"}'
        code_is 200
        mcall sandbox_new '{}'
        body_has '"sandbox":"sb-2"'
        mcall file_write '{"sandbox":"sb-2","path":"/tmp/two","content":"two"}'
        code_is 200
        mcall sandbox_new '{}'
        code_is 200
        body_has '"isError":true'
        body_has "2 sandboxes are open, the most this server keeps (--max-sandboxes 2); close one with sandbox_close first"
        mcall sandbox_fork '{}'
        body_has "(--max-sandboxes 2)"
        mcall file_read '{"path":"/tmp/one"}'
        body_has '\tone"'
        mcall file_read '{"sandbox":"sb-2","path":"/tmp/two"}'
        body_has '\ttwo"'
        mcall sandbox_close '{"sandbox":"sb-2"}'
        code_is 200
        mcall sandbox_new '{}'
        body_has '"sandbox":"sb-3"'
}

# Independent 2026-07-28 clients may use the same request id at once: each gets its own
# answer, under its own id.
modern_ids_collide() {
        http_start
        local i pids=()
        for i in 1 2 3; do
                (T_TMP=$T_TMP/$i && mkdir "$T_TMP" && cp "${T_TMP%/*}/tok" "$T_TMP/" &&
                        mcall shell_run "{\"command\":\"sleep 0.$i; echo answer-$i\"}") &
                pids+=($!)
        done
        wait "${pids[@]}"
        for i in 1 2 3; do
                grep -q "\"id\":1,.*answer-$i" "$T_TMP/$i/body" || t_fail "request $i: $(cat "$T_TMP/$i/body")"
                grep -q "answer-$(((i % 3) + 1))" "$T_TMP/$i/body" && t_fail "request $i got another's answer"
        done
        true
}

# treq ID METHOD TASK [CURL ARGS...]: a 2026-07-28 tasks/* request declaring the extension.
TMETA='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}'
treq() {
        local tok=(-H "Authorization: Bearer $(<"$T_TMP/tok")")
        [ "${OTHER-}" ] && tok=(-H "Authorization: Bearer x$(<"$T_TMP/tok")")
        req "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"$2\",\"params\":{\"taskId\":\"$3\",$TMETA}}" \
                -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: $2" -H "Mcp-Name: $3" "${tok[@]}" "${@:4}"
}
tcall() { # COMMAND [CURL ARGS...]: a shell_run that becomes a task; $TID its id
        authed "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"shell_run\",\"arguments\":{\"command\":\"$1\"},$TMETA}}" \
                -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" -H "Mcp-Name: shell_run" -m 30 "${@:2}"
        code_is 200
        TID=$(grep -o '"taskId":"[0-9a-f]*"' "$T_TMP/body" | cut -d'"' -f4)
        [ ${#TID} = 32 ] || t_fail "no task: $(head -c 300 "$T_TMP/body")"
}
unknown_task() {
        code_is 200
        body_has '"code":-32602'
        grep -q '"status"' "$T_TMP/body" && t_fail "reached task $1: $(head -c 300 "$T_TMP/body")"
        true
}

# A task reaches only the process that made it: a session's task is unknown to another
# session and to the token's state, the state's to every session; neither get nor cancel
# reaches it (the command runs on), nor a guessed id; another token gets the same 401 for a
# real task as for an unknown one.
modern_tasks_owned() {
        http_start
        init
        local a=$SID
        init
        local b=$SID
        tcall "sleep 60.$T_UNIQ" -H "Mcp-Session-Id: $a"
        local ta=$TID
        tcall "sleep 61.$T_UNIQ"
        local tm=$TID
        treq 2 tasks/get "$ta" -H "Mcp-Session-Id: $a"
        body_has '"status":"working"'
        local m guess=${ta:0:31}0
        [ "$guess" = "$ta" ] && guess=${ta:0:31}1 # one digit off the real id
        for m in tasks/get tasks/cancel; do
                treq 3 $m "$ta" -H "Mcp-Session-Id: $b"
                unknown_task "$ta"
                treq 4 $m "$ta"
                unknown_task "$ta"
                treq 5 $m "$tm" -H "Mcp-Session-Id: $a"
                unknown_task "$tm"
                treq 6 $m "$guess" -H "Mcp-Session-Id: $a"
                unknown_task guessed
        done
        [ -n "$(t_host_pids sleep "60.$T_UNIQ")" ] || t_fail "another session's cancel killed the task"
        [ -n "$(t_host_pids sleep "61.$T_UNIQ")" ] || t_fail "a session's cancel killed the state's task"
        local body=
        for t in "$tm" 0123456789abcdef0123456789abcdef; do
                OTHER=1 treq 7 tasks/cancel "$t"
                code_is 401
                if [ -z "$body" ]; then
                        body=$(cat "$T_TMP/body")
                else
                        [ "$(cat "$T_TMP/body")" = "$body" ] || t_fail "another token tells a task from none"
                fi
        done
        [ -n "$(t_host_pids sleep "61.$T_UNIQ")" ] || t_fail "another token's cancel killed the task"
        treq 8 tasks/get "$tm"
        body_has '"status":"working"'
        treq 9 tasks/cancel "$ta" -H "Mcp-Session-Id: $a"
        body_has '"resultType":"complete"'
        treq 10 tasks/cancel "$tm"
        body_has '"resultType":"complete"'
}

t_run modern_handles_owned modern_handles_owned
t_run modern_handles_capped modern_handles_capped
t_run modern_ids_collide modern_ids_collide
t_run modern_tasks_owned modern_tasks_owned
t_done
