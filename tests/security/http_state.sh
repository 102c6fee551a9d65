#!/usr/bin/env bash
# The state of 2026-07-28 requests in `rtn serve --http` (invariant 28): its sandboxes are
# reached only through the handles it minted and only with the server's token (a legacy
# session's handle, a guessed or a forged one reaches nothing of its own; another token gets
# the same 401 whether the handle it names exists or not), it holds at most --max-sandboxes
# (past that a clear tool error, nothing lost), and clients whose request ids collide each
# get their own answer.
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
        req "$@" -H "Authorization: Bearer $(cat "$T_TMP/tok")"
}
init() {
        authed "$INIT"
        code_is 200
        SID=$(tr -d '\r' <"$T_TMP/hdrs" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
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
        local other=(-H "Authorization: Bearer x$(cat "$T_TMP/tok")")
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

t_run modern_handles_owned modern_handles_owned
t_run modern_handles_capped modern_handles_capped
t_run modern_ids_collide modern_ids_collide
t_done
