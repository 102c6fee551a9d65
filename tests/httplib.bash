# What the suites that drive `rtn serve --http` share (serve_http.sh, serve_conformance.sh,
# http_lockout.sh, http_state.sh, hostport.sh, upstream.sh): a server on a free loopback port with a fresh token, and
# the checks of an answer. Sourced after tests/lib.sh.

# new_token: a fresh bearer token in $T_TMP/tok (a case's first), readable by its owner only
# (the server refuses a token file others can read): 256 bits of bash's $SRANDOM (the
# kernel's getrandom), written under umask 077 by bash itself, where a head, a base64 and a
# chmod were three processes per case.
HTTP_UMASK=$(umask)
new_token() {
        local tok='' i
        [ -n "${SRANDOM:-}" ] || t_fail "bash has no \$SRANDOM (5.1 or later needed)"
        for ((i = 0; i < 8; i++)); do
                printf -v tok '%s%08x' "$tok" "$SRANDOM"
        done
        umask 077
        printf '%s\n' "$tok" >"$T_TMP/tok"
        umask "$HTTP_UMASK"
}

# json_string TEXT: TEXT as a JSON string, quoted, escaped by bash itself (a python3 started
# for it cost more than the call). Fails on a control character other than a newline, tab or
# carriage return, which it does not escape.
json_string() {
        local s=$1
        s=${s//\\/\\\\}
        s=${s//\"/\\\"}
        s=${s//$'\n'/\\n}
        s=${s//$'\t'/\\t}
        s=${s//$'\r'/\\r}
        [[ $s != *[$'\x01'-$'\x1f']* ]] || return 1
        printf '"%s"' "$s"
}

# http_start ARGS...: rtn serve --http on a free loopback port (the token of $T_TMP/tok, made
# when missing); sets URL, PORT and SRV_PID. The server, $HOLD_PID when a case set it, and
# every other job the case left running are stopped when the case ends.
http_start() {
        command -v curl >/dev/null || t_skip "curl is not installed"
        [ -f "$T_TMP/tok" ] || new_token
        "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" --data-dir "$T_TMP/data" \
                "$@" 2>"$T_TMP/srv.log" &
        SRV_PID=$!
        # (every job of the case: a wait on one still running would never end)
        trap 'kill $SRV_PID ${HOLD_PID:-} $(jobs -p) 2>/dev/null; wait 2>/dev/null' EXIT
        t_wait_for http_listening ||
                t_fail "rtn serve --http did not start: $(head -c 400 "$T_TMP/srv.log")"
        PORT=${URL##*:}
        PORT=${PORT%/mcp}
}

# http_listening: the server's log ($T_TMP/srv.log) says where it listens; sets URL. Read by
# bash itself: t_wait_for asks it every tenth of a second.
http_listening() {
        local line re='listening on (http://[^ ]*/mcp)'
        while IFS= read -r line; do
                [[ $line =~ $re ]] && URL=${BASH_REMATCH[1]} && return 0
        done <"$T_TMP/srv.log"
        return 1
}

# code_is STATUS: the last request's HTTP status ($CODE) was STATUS.
code_is() {
        [ "$CODE" = "$1" ] || t_fail "expected HTTP $1, got $CODE: $(head -c 300 "$T_TMP/body")"
}

# body_has TEXT: the last answer's body ($T_TMP/body) holds TEXT (read and matched by bash
# itself: a suite asks this hundreds of times, and a grep is a process).
body_has() {
        local body=
        IFS= read -r -d '' body <"$T_TMP/body"
        [[ $body == *"$1"* ]] || t_fail "body lacks '$1': $(head -c 300 "$T_TMP/body")"
}

# http_call TOOL ARGUMENTS-JSON: one tools/call of TOOL over $URL in a 2025-06-18 session,
# opened (initialize, notifications/initialized) on the first call and kept in $HTTP_SID;
# the answer (JSON or an event stream) in $T_TMP/body, its status checked to be 200.
http_call() {
        local auth tok='' line
        # (read by bash: a cat, and a tr and a sed for the session id, were processes a call)
        IFS= read -r tok <"$T_TMP/tok" || [ -n "$tok" ]
        auth="Authorization: Bearer $tok"
        if [ -z "${HTTP_SID:-}" ]; then
                CODE=$(curl -s -o "$T_TMP/body" -D "$T_TMP/hdrs" -w '%{http_code}' -H "$auth" \
                        -H "Content-Type: application/json" \
                        -H "Accept: application/json, text/event-stream" --data-binary \
                        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
                        "$URL")
                code_is 200
                HTTP_SID=
                while IFS= read -r line || [ -n "$line" ]; do
                        line=${line//$'\r'/}
                        [[ $line == [Mm]cp-[Ss]ession-[Ii]d:\ * ]] && HTTP_SID+=${HTTP_SID:+$'\n'}${line#*: }
                done <"$T_TMP/hdrs"
                [ -n "$HTTP_SID" ] || t_fail "no Mcp-Session-Id in $(cat "$T_TMP/hdrs")"
                curl -s -o /dev/null -H "$auth" -H "Mcp-Session-Id: $HTTP_SID" \
                        -H "MCP-Protocol-Version: 2025-06-18" -H "Content-Type: application/json" \
                        -H "Accept: application/json, text/event-stream" \
                        --data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$URL"
        fi
        CODE=$(curl -s -o "$T_TMP/body" -w '%{http_code}' -H "$auth" -H "Mcp-Session-Id: $HTTP_SID" \
                -H "MCP-Protocol-Version: 2025-06-18" -H "Content-Type: application/json" \
                -H "Accept: application/json, text/event-stream" --data-binary \
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}" \
                "$URL")
        code_is 200
}
