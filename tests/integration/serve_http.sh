#!/usr/bin/env bash
# `rtn serve --http`: MCP Streamable HTTP with a bearer token, one sandbox per session.
# The official clients (tests/mcp-client/http.mjs: SDK 1.x and the 2.x client pinned to
# 2026-07-28) work with the token and are refused without it; curl tries what a client should
# not do: no or a wrong token, a foreign Origin or Host (DNS rebinding), a token file others
# can read, a public address without --http-public, --workspace shared by every session, bad
# messages and headers (each a clear error, the server going on); a browser's page of an
# allowed origin works (CORS, in headless Chromium too); a connection costs the
# front no fresh pages; sessions are isolated, ended when idle, capped, and 200 of them hold
# at once.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
need_node() {
        command -v node >/dev/null || t_skip "node is not installed"
        [ -d "$client_dir/node_modules/@modelcontextprotocol/sdk" ] ||
                t_fail "@modelcontextprotocol/sdk not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
}
command -v curl >/dev/null || t_note "curl is not installed: the curl cases skip"
need_curl() {
        command -v curl >/dev/null || t_skip "curl is not installed"
}

# req METHOD BODY [CURL ARGS...]: one request with the token; $CODE is the HTTP status, the
# body is in $T_TMP/body, the headers in $T_TMP/hdrs. $ACCEPT replaces the Accept header.
req() {
        local method=$1 body=$2
        shift 2
        CODE=$(curl -s -o "$T_TMP/body" -D "$T_TMP/hdrs" -w '%{http_code}' -X "$method" \
                -H "Content-Type: application/json" \
                -H "Accept: ${ACCEPT:-application/json, text/event-stream}" \
                ${body:+--data-binary "$body"} "$@" "$URL")
}
authed() { # (with an Authorization header of the caller's own, that one alone: one only)
        local tok a
        for a; do
                [[ $a == [Aa]uthorization:* ]] && {
                        req "$@"
                        return
                }
        done
        read -r tok <"$T_TMP/tok"
        req "$@" -H "Authorization: Bearer $tok"
}

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
# init: opens a session; $SID is its id.
init() {
        authed POST "$INIT"
        code_is 200
        local line
        SID=
        while IFS= read -r line; do
                line=${line%$'\r'}
                [[ $line == [Mm]cp-[Ss]ession-[Ii]d:\ * ]] && SID+=${line#*: }
        done <"$T_TMP/hdrs"
        [ ${#SID} = 32 ] || t_fail "no Mcp-Session-Id in $(cat "$T_TMP/hdrs")"
}
call() { # JSON of a tools/call's params [CURL ARGS...], in session $SID
        authed POST "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":$1}" \
                -H "Mcp-Session-Id: $SID" "${@:2}"
}
# A call that progress keeps alive on stdio is kept alive over HTTP: the progress goes on the
# POST's event stream (both eras).
progress_mode() {
        need_node
        http_start
        T_CMD_TIMEOUT=120 t_cmd node "$client_dir/http.mjs" "$URL" "$T_TMP/tok" progress "$1"
        t_exit_is 0
        t_stdout_has "http done [progress]"
}

# A call's log messages go on the POST's event stream, at the level the session (legacy) or
# the request (2026-07-28) asked for, and only then.
logs_mode() {
        need_node
        http_start
        T_CMD_TIMEOUT=120 t_cmd node "$client_dir/http.mjs" "$URL" "$T_TMP/tok" logs "$1"
        t_exit_is 0
        t_stdout_has "http done [logs]"
}

# mcall TOOL ARGUMENTS-JSON [CURL ARGS...]: a 2026-07-28 tools/call, every header right.
MMETA='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
mcall() {
        authed POST "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2,$MMETA}}" \
                -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" -H "Mcp-Name: $1" "${@:3}"
}

node_mode() {
        need_node
        http_start
        T_CMD_TIMEOUT=120 t_cmd node "$client_dir/http.mjs" "$URL" "$T_TMP/tok" "$1"
        t_exit_is 0
        t_stdout_has "http done [$1]"
}

no_token() {
        need_curl
        http_start
        init
        req POST "$INIT"
        code_is 401
        grep -qi '^WWW-Authenticate: Bearer' "$T_TMP/hdrs" || t_fail "no WWW-Authenticate"
        body_has "Unauthorized"
        for bad in "Bearer x$(cat "$T_TMP/tok")" "Bearer $(head -c 20 "$T_TMP/tok")" \
                "Basic $(cat "$T_TMP/tok")" "Bearer"; do
                req POST '{"jsonrpc":"2.0","id":2,"method":"ping"}' -H "Authorization: $bad" \
                        -H "Mcp-Session-Id: $SID"
                code_is 401
        done
        req DELETE "" -H "Mcp-Session-Id: $SID"
        code_is 401
        authed POST '{"jsonrpc":"2.0","id":2,"method":"ping"}' -H "Mcp-Session-Id: $SID"
        code_is 200 # the refusals ended nothing
}

origin_checked() {
        need_curl
        http_start --allow-origin http://app.example
        authed POST "$INIT" -H "Origin: http://evil.example"
        code_is 403
        body_has "Origin not allowed"
        authed POST "$INIT" -H "Origin: http://app.example.evil"
        code_is 403
        authed POST "$INIT" -H "Origin: null"
        code_is 403
        authed POST "$INIT" -H "Origin: http://app.example"
        code_is 200
}

# A page whose name was rebound to 127.0.0.1 reaches the port with its own name as Host.
host_checked() {
        need_curl
        http_start
        authed POST "$INIT" -H "Host: rebound.evil.example:$PORT"
        code_is 403
        body_has "Host must name this machine"
        authed POST "$INIT" -H "Host: localhost:$PORT"
        code_is 200
}

token_file_private() {
        new_token
        chmod 644 "$T_TMP/tok"
        t_cmd "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" --data-dir "$T_TMP/data"
        t_exit_is 1
        t_stderr_has "is accessible by group or others (mode 0644); chmod 600 it"
        chmod 620 "$T_TMP/tok"
        t_exit_is 1 "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok"
        t_stderr_has "mode 0620"
        printf 'short\n' >"$T_TMP/short"
        chmod 600 "$T_TMP/short"
        t_exit_is 1 "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/short"
        t_stderr_has "at least 16 needed"
        t_exit_is 125 "$RTN" serve --http 127.0.0.1:0 # a usage error
        t_stderr_has "--http needs --token-file FILE"
        t_exit_is 1 "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/missing"
        t_stderr_has "No such file"
}

loopback_by_default() {
        new_token
        t_exit_is 1 "$RTN" serve --http 0.0.0.0:0 --token-file "$T_TMP/tok"
        t_stderr_has "is not a loopback address"
        t_stderr_has "add --http-public"
        t_exit_is 1 "$RTN" serve --http localhost:0 --token-file "$T_TMP/tok"
        t_stderr_has "ADDR must be an IPv4 address or [IPv6]"
        "$RTN" serve --http 0.0.0.0:0 --http-public --token-file "$T_TMP/tok" \
                --data-dir "$T_TMP/data" 2>"$T_TMP/pub.log" &
        local pid=$!
        t_wait_for t_has "$T_TMP/pub.log" "listening on" || t_fail "no listener: $(cat "$T_TMP/pub.log")"
        kill $pid
        wait $pid
        t_has "$T_TMP/pub.log" "WARNING: serving plain HTTP on 0.0.0.0:0, beyond this machine" ||
                t_fail "no warning: $(cat "$T_TMP/pub.log")"
}

shared_host_files_refused() {
        new_token
        mkdir -p "$T_TMP/proj"
        for opt in --workspace --works --bind=/x:/mnt/x --bi; do
                t_exit_is 125 "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" "$opt" "$T_TMP/proj"
                t_stderr_has "cannot be used with --http: every session would share the same host files"
                t_stderr_has "--workspace-root DIR"
        done
        # One host port reaches one sandbox: every later session would fail.
        for opt in --publish=18080:80 --pub; do
                t_exit_is 125 "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" "$opt" 18081:80
                t_stderr_has "cannot be used with --http"
        done
        t_exit_is 1 "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" --workspace-root "$T_TMP/none"
        t_stderr_has "--workspace-root $T_TMP/none"
}

# bind_host_dir would let every session bind the same host directory: over HTTP it is not
# offered, and a call names what to use instead. --workspace-root gives each session a
# workspace of its own, made by rtn under DIR.
host_dirs_per_session() {
        need_curl
        mkdir -p "$T_TMP/shared" "$T_TMP/root"
        http_start --workspace-root "$T_TMP/root"
        init
        local a=$SID
        authed POST '{"jsonrpc":"2.0","id":3,"method":"tools/list"}' -H "Mcp-Session-Id: $a"
        code_is 200
        t_has "$T_TMP/body" '"bind_host_dir"' && t_fail "bind_host_dir is listed over HTTP"
        call "{\"name\":\"bind_host_dir\",\"arguments\":{\"host_path\":\"$T_TMP/shared\",\"mount_point\":\"/mnt/s\"}}"
        body_has "--workspace-root"
        call '{"name":"shell_run","arguments":{"command":"echo from-a > /workspace/f; ls /mnt/s 2>&1"}}'
        code_is 200
        init
        local b=$SID
        call '{"name":"shell_run","arguments":{"command":"cat /workspace/f 2>&1; echo from-b > /workspace/g"}}'
        code_is 200
        body_has "No such file"
        [ "$(cat "$T_TMP/root/$a/f")" = from-a ] || t_fail "no workspace of session a: $(ls -R "$T_TMP/root")"
        [ "$(cat "$T_TMP/root/$b/g")" = from-b ] || t_fail "no workspace of session b: $(ls -R "$T_TMP/root")"
        [ ! -e "$T_TMP/root/$a/g" ] || t_fail "session b wrote into a's workspace"
        [ -z "$(ls "$T_TMP/shared")" ] || t_fail "a host directory was bound"
}

# Every bad message is a clear error, and the server goes on serving.
bad_requests() {
        need_curl
        http_start
        init
        local s=(-H "Mcp-Session-Id: $SID")
        authed POST '{"jsonrpc":"2.0","id":2,"method":"ping"}'
        code_is 400
        body_has "Mcp-Session-Id header required"
        authed POST '{"jsonrpc":"2.0","id":2,"method":"ping"}' -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef"
        code_is 404
        authed POST "$INIT" "${s[@]}"
        code_is 400
        body_has "initialize opens a new session"
        authed POST '[{"jsonrpc":"2.0","id":2,"method":"ping"}]' "${s[@]}"
        code_is 400
        body_has "batches are not accepted"
        authed POST '{"jsonrpc":"2.0","id":2,"method":' "${s[@]}"
        code_is 400
        body_has '"code":-32700'
        authed POST '{"id":2,"method":"ping"}' "${s[@]}"
        code_is 400
        authed POST '{"jsonrpc":"2.0","id":2,"method":"ping"}' "${s[@]}" -H "MCP-Protocol-Version: 1999-01-01"
        code_is 400
        body_has '"code":-32022'
        body_has '"supported":["2026-07-28"'
        body_has '"requested":"1999-01-01"' 
        CODE=$(curl -s -o "$T_TMP/body" -w '%{http_code}' -H "Content-Type: text/plain" \
                -H "Authorization: Bearer $(cat "$T_TMP/tok")" "${s[@]}" \
                --data-binary '{"jsonrpc":"2.0","id":2,"method":"ping"}' "$URL")
        code_is 415
        head -c 5000000 /dev/zero | tr '\0' ' ' >"$T_TMP/big"
        authed POST "@$T_TMP/big" "${s[@]}"
        code_is 413
        authed GET "" "${s[@]}"
        code_is 405
        grep -qi '^Allow: POST, DELETE' "$T_TMP/hdrs" || t_fail "no Allow header"
        ACCEPT="text/html" authed POST '{"jsonrpc":"2.0","id":2,"method":"ping"}' "${s[@]}"
        code_is 406
        req POST "" -H "Authorization: Bearer $(cat "$T_TMP/tok")" --request-target /other
        code_is 404
        # A 2026-07-28 request must name its version and method in headers as in its body.
        local modern='{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
        authed POST "$modern"
        code_is 400
        body_has "MCP-Protocol-Version must be 2026-07-28"
        authed POST "$modern" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call"
        code_is 400
        body_has "Mcp-Method must be tools/list"
        authed POST "$modern" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/list"
        code_is 200
        body_has '"name":"shell_run"'
        # SSE when the client takes only that
        ACCEPT="text/event-stream" authed POST '{"jsonrpc":"2.0","id":4,"method":"ping"}' "${s[@]}"
        code_is 200
        grep -q '^event: message' "$T_TMP/body" || t_fail "not SSE: $(cat "$T_TMP/body")"
        call '{"name":"shell_run","arguments":{"command":"echo alive"}}'
        code_is 200
        body_has 'alive'
}

# The idle time leaves room for the next curl under load (at 1 s the session was once
# reaped between init and the call); the call outlasts it.
idle_reaped() {
        need_curl
        http_start --idle-timeout 4
        init
        call '{"name":"shell_run","arguments":{"command":"sleep 6; echo done"}}'
        code_is 200 # a call in flight is not idleness
        body_has 'done'
        t_wait_for t_has "$T_TMP/srv.log" "session ${SID:0:8}… idle for 4 s: ended" ||
                t_fail "never reaped: $(cat "$T_TMP/srv.log")"
        authed POST '{"jsonrpc":"2.0","id":2,"method":"ping"}' -H "Mcp-Session-Id: $SID"
        code_is 404
        body_has "initialize a new one"
}

session_cap() {
        need_curl
        http_start --max-sessions 2
        init
        local first=$SID
        init
        authed POST "$INIT"
        code_is 503
        body_has "too many sessions: 2 are open (--max-sessions)"
        # A modern request without a session needs a sandbox of its own too.
        authed POST '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
                -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/list"
        code_is 503
        authed DELETE "" -H "Mcp-Session-Id: $first"
        code_is 204
        authed DELETE "" -H "Mcp-Session-Id: $first"
        code_is 404
        init
}

# sessions_batch NAME: one curl sends all the requests of $T_TMP/NAME.cfg (a block per
# session, written by the caller) at once and writes "I STATUS" per request to
# $T_TMP/NAME.out; every one of the $N must be answered with status $WANT.
sessions_batch() {
        curl -s --parallel --parallel-immediate --parallel-max 300 -K "$T_TMP/$1.cfg" \
                >"$T_TMP/$1.out" 2>"$T_TMP/$1.err"
        local i code n=0
        while read -r i code; do
                [ "$code" = "$WANT" ] || t_fail "$1 of session $i: HTTP $code: $(head -c 300 "$T_TMP/$1.$i")"
                n=$((n + 1))
        done <"$T_TMP/$1.out"
        [ "$n" = "$N" ] || t_fail "$1: $n of $N requests answered: $(head -c 300 "$T_TMP/$1.err")"
}

# N sessions open at once, each answered by its own sandbox, then each ended. One curl per
# step (every initialize at once, then every call, then every DELETE): what is under load is
# the server. The official clients are the other cases' witnesses; 200 of them in one node
# cost more CPU than the server's work for them. The official client under this load, with
# its latencies, is the benchmark `node tests/mcp-client/http.mjs URL TOKEN_FILE load N`
# (docs/benchmarks.md).
sessions_at_once() {
        need_curl
        http_start --max-sessions 256
        local N=$1 i tok line body
        local -a sids
        read -r tok <"$T_TMP/tok"
        # (curl's config file: a block of options per request, "next" between two blocks)
        block() { # I STEP [OPTION LINES...]
                [ "$1" = 0 ] || echo next
                printf 'url = "%s"\nheader = "Authorization: Bearer %s"\nmax-time = 300\nsilent\n' "$URL" "$tok"
                printf 'header = "Content-Type: application/json"\nheader = "Accept: application/json, text/event-stream"\n'
                printf 'output = "%s"\nwrite-out = "%s %%{http_code}\\n"\n' "$T_TMP/$2.$1" "$1"
                printf '%s\n' "${@:3}"
        }
        for ((i = 0; i < N; i++)); do
                block $i init "dump-header = \"$T_TMP/hdrs.$i\"" \
                        "data-binary = \"${INIT//\"/\\\"}\""
        done >"$T_TMP/init.cfg"
        WANT=200 sessions_batch init
        for ((i = 0; i < N; i++)); do
                sids[i]=
                while IFS= read -r line; do
                        line=${line%$'\r'}
                        [[ $line == [Mm]cp-[Ss]ession-[Ii]d:\ * ]] && sids[i]=${line#*: }
                done <"$T_TMP/hdrs.$i"
                [ ${#sids[i]} = 32 ] || t_fail "session $i has no Mcp-Session-Id: $(cat "$T_TMP/hdrs.$i")"
        done
        for ((i = 0; i < N; i++)); do
                body='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"echo session-'$i'"}}}'
                block $i call "header = \"Mcp-Session-Id: ${sids[i]}\"" "data-binary = \"${body//\"/\\\"}\""
        done >"$T_TMP/call.cfg"
        WANT=200 sessions_batch call
        for ((i = 0; i < N; i++)); do
                body=
                IFS= read -r -d '' body <"$T_TMP/call.$i"
                [[ $body == *'"stdout":"session-'$i'\n"'* ]] ||
                        t_fail "session $i did not get its own answer: ${body:0:300}"
        done
        for ((i = 0; i < N; i++)); do
                block $i end "header = \"Mcp-Session-Id: ${sids[i]}\"" 'request = "DELETE"'
        done >"$T_TMP/end.cfg"
        WANT=204 sessions_batch end
        kill -0 "$SRV_PID" || t_fail "rtn serve --http died"
}

# Bodies arrive at loopback speed, and one over the limit is refused at once: a client that
# asks "Expect: 100-continue" (curl does above 1 MiB) gets its 413 without sending the body,
# one that sends it anyway gets the 413 as soon as the limit is passed, a chunked one at its
# end. A head takes up to
# 24 KiB of a connection's 32 KiB of buffers: 8 KB of one header passes, 40 KB is a 431
# (Request Header Fields Too Large), and the server goes on. A head is answered whole or
# refused before it runs anything: with one header of 23-32 KB, or 450 small ones, each call
# that ran was answered (a head just under 32 KiB ran its call and lost the answer).
big_bodies() {
        need_curl
        http_start
        init
        local n=$((4 * 1024 * 1024 - 4096)) t0 t1
        { printf '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"/tmp/big","content":"'
          head -c $n /dev/zero | tr '\0' a
          printf '"}}}'; } >"$T_TMP/write.json"
        t0=$(date +%s%N)
        authed POST "@$T_TMP/write.json" -H "Mcp-Session-Id: $SID" --max-time 20
        t1=$(date +%s%N)
        code_is 200
        body_has "\"bytes_written\":$n"
        [ $(((t1 - t0) / 1000000)) -lt 5000 ] || t_fail "a 4 MiB body took $(((t1 - t0) / 1000000)) ms"
        head -c 9000000 /dev/zero | tr '\0' ' ' >"$T_TMP/huge"
        t0=$(date +%s%N)
        authed POST "@$T_TMP/huge" -H "Mcp-Session-Id: $SID" --max-time 20
        code_is 413
        body_has "Payload Too Large"
        authed POST "@$T_TMP/huge" -H "Mcp-Session-Id: $SID" -H "Expect:" --max-time 20
        [ "$CODE" = 413 ] || [ "$CODE" = 000 ] || t_fail "expected 413, got $CODE"
        t1=$(date +%s%N)
        [ $(((t1 - t0) / 1000000)) -lt 5000 ] || t_fail "two 413s took $(((t1 - t0) / 1000000)) ms"
        # chunked, its size unannounced: the 413 comes at its end (the connection was closed
        # with no answer)
        authed POST "@$T_TMP/huge" -H "Mcp-Session-Id: $SID" -H "Transfer-Encoding: chunked" --max-time 20
        code_is 413
        body_has "Payload Too Large"
        local pad
        printf -v pad '%8000s' ''
        call '{"name":"shell_run","arguments":{"command":"true"}}' -H "X-Pad: ${pad// /p}"
        code_is 200
        printf -v pad '%40000s' ''
        call '{"name":"shell_run","arguments":{"command":"true"}}' -H "X-Pad: ${pad// /p}"
        code_is 431
        call '{"name":"shell_run","arguments":{"command":"wc -c </tmp/big"}}'
        code_is 200
        body_has "$n"
        local size answered=0 refused=0 many=()
        pad=$(head -c 32000 /dev/zero | tr '\0' p)
        for size in $(seq 23000 1000 31000) $(seq 31700 16 32000); do
                call "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"echo $size >>/tmp/ran\"}}" \
                        -H "X-Pad: ${pad:0:size}"
                case $CODE in
                200) answered=$((answered + 1)) ;;
                431) refused=$((refused + 1)) ;;
                esac
        done
        for ((size = 0; size < 450; size++)); do many+=(-H "a$size: b"); done
        call '{"name":"shell_run","arguments":{"command":"echo many >>/tmp/ran"}}' "${many[@]}"
        case $CODE in
        200) answered=$((answered + 1)) ;;
        431) refused=$((refused + 1)) ;;
        esac
        call '{"name":"shell_run","arguments":{"command":"wc -l </tmp/ran"}}'
        code_is 200
        body_has "\"stdout\":\"$answered\\n\""
        [ "$refused" -gt 0 ] || t_fail "no head of up to 32 KB was refused"
}

# Framing a proxy in front may read otherwise than the server (RFC 9112, 6.3): a request with
# both Transfer-Encoding and Content-Length (the bytes after a chunked body were served as a
# second request), Content-Length twice, whitespace before a field's colon ("Content-Length :"
# was kept as another field), or Host, Origin, Authorization or Mcp-Session-Id twice (the
# first copy was taken) is a 400, and nothing of it runs.
framing_refused() {
        need_curl
        http_start
        init
        local tok
        read -r tok <"$T_TMP/tok"
        python3 - "${URL#http://}" "$tok" "$SID" >"$T_TMP/framing" 2>&1 <<'PY'
import socket, sys
hostport, tok, sid = sys.argv[1].split("/")[0], sys.argv[2], sys.argv[3]
host, port = hostport.rsplit(":", 1)
def call(cmd, i):
    return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"shell_run",'
            '"arguments":{"command":"%s"}}}' % (i, cmd)).encode()
base = ["POST /mcp HTTP/1.1", "Host: " + hostport, "Authorization: Bearer " + tok,
        "Content-Type: application/json", "Accept: application/json, text/event-stream",
        "Mcp-Session-Id: " + sid]
def send(lines, body):
    s = socket.create_connection((host, int(port)), timeout=20)
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
            if got.count(b"HTTP/1.1 ") >= 2:
                break
    except socket.timeout:
        pass
    s.close()
    return [l.split(b" ")[1].decode() for l in got.split(b"\r\n") if l.startswith(b"HTTP/1.1 ")]
inner = call("echo smuggled >>/tmp/ran", 2)
second = b"POST /mcp HTTP/1.1\r\nHost: " + hostport.encode() + b"\r\nAuthorization: Bearer " + \
    tok.encode() + b"\r\nContent-Type: application/json\r\nAccept: application/json\r\n" + \
    b"Mcp-Session-Id: " + sid.encode() + b"\r\nContent-Length: %d\r\n\r\n" % len(inner) + inner
chunked = b"%x\r\n" % len(inner) + inner + b"\r\n0\r\n\r\n"
cases = [
    ("te+cl", base + ["Content-Length: %d" % (len(chunked) + len(second)),
                      "Transfer-Encoding: chunked"], chunked + second),
    ("cl twice", base + ["Content-Length: %d" % len(inner)] * 2, inner),
    ("cl differing", base + ["Content-Length: %d" % len(inner), "Content-Length: 5"], inner),
    ("host twice", base + ["Host: evil.example", "Content-Length: %d" % len(inner)], inner),
    ("origin twice", base + ["Origin: http://" + hostport, "Origin: http://evil.example",
                             "Content-Length: %d" % len(inner)], inner),
    ("authorization twice", base + ["Authorization: Bearer nope",
                                    "Content-Length: %d" % len(inner)], inner),
    ("session twice", base + ["Mcp-Session-Id: " + "0" * 32,
                              "Content-Length: %d" % len(inner)], inner),
    ("space before colon", base + ["Content-Length : 5", "Content-Length: %d" % len(inner)],
     inner),
    ("tab before colon", base + ["Transfer-Encoding\t: chunked",
                                 "Content-Length: %d" % len(inner)], inner),
]
for name, lines, body in cases:
    print(name, " ".join(send(lines, body)) or "none")
PY
        local want
        want="te+cl 400
cl twice 400
cl differing 400
host twice 400
origin twice 400
authorization twice 400
session twice 400
space before colon 400
tab before colon 400"
        [ "$(cat "$T_TMP/framing")" = "$want" ] || t_fail "answers: $(cat "$T_TMP/framing")"
        call '{"name":"shell_run","arguments":{"command":"cat /tmp/ran 2>&1; true"}}'
        code_is 200
        body_has "No such file"
}

# A client gone in the middle of a body (the head with the token, one byte of the 100 its
# Content-Length announced, then its close) leaves no connection behind: 200 of them at once
# left most in CLOSE-WAIT for the authenticated idle timeout (five minutes), holding their
# fds and room, and a burst locked token holders out. They are closed within a few ticks, and
# a token holder is answered.
gone_mid_body() {
        need_curl
        http_start
        init
        local tok n=0 i
        read -r tok <"$T_TMP/tok"
        python3 - "$PORT" "$tok" "$SID" <<'PY' || t_fail "the clients did not run"
import socket, sys
port, tok, sid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        "Mcp-Session-Id: %s\r\nContent-Length: 100\r\n\r\n{" % (port, tok, sid)).encode()
for _ in range(200):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(head)
    s.close()
PY
        for ((i = 0; i < 100; i++)); do
                n=$(ss -Htn state close-wait "sport = :$PORT" | wc -l)
                [ "$n" = 0 ] && break
                sleep 0.1
        done
        [ "$n" = 0 ] || t_fail "$n connections of clients gone mid-body still open after 10 s"
        authed POST '{"jsonrpc":"2.0","id":2,"method":"ping"}' -H "Mcp-Session-Id: $SID" --max-time 20
        code_is 200
}

# A connection costs the front end no fresh pages: libmicrohttpd zeroes a connection's whole
# buffer pool at each request's end, and a pool over 32 KiB is an mmap of its own, so each
# connection faulted in every page of it (64 at 256 KiB: a millisecond of CPU a request
# here). 40 pings in the session, each on a new connection, as a client without keep-alive
# sends them; the front's minor faults (/proc/PID/stat) over them stay under 8 a request.
# front_faults: the front end's minor faults so far (field 10 of /proc/PID/stat) in $FAULTS
front_faults() {
        local stat f
        read -r stat <"/proc/$SRV_PID/stat"
        read -ra f <<<"${stat##*) }" # from field 3 on: comm may hold spaces
        FAULTS=${f[7]}
}
request_pages() {
        need_curl
        # ASan's allocator holds what is freed in quarantine and hands out fresh pages
        LC_ALL=C grep -qa __asan_init "$RTN" && t_skip "a sanitized rtn: its allocator's pages are not ours to count"
        http_start
        init
        local tok i before after
        read -r tok <"$T_TMP/tok"
        for ((i = 0; i < 40; i++)); do
                [ "$i" = 0 ] || echo next
                printf 'url = "%s"\nsilent\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' "$URL"
                printf 'header = "%s"\n' "Authorization: Bearer $tok" "Mcp-Session-Id: $SID" \
                        "Content-Type: application/json" "Accept: application/json, text/event-stream" \
                        "Connection: close"
                printf 'data-binary = "%s"\n' '{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}'
        done >"$T_TMP/pings.cfg"
        front_faults
        before=$FAULTS
        t_cmd curl -K "$T_TMP/pings.cfg"
        front_faults
        after=$FAULTS
        [ "$(grep -c '^200$' "$T_OUT_FILE")" = 40 ] || t_fail "pings not all answered: $(sort "$T_OUT_FILE" | uniq -c)"
        [ $(((after - before) / 40)) -lt 8 ] ||
                t_fail "the front faulted $(((after - before) / 40)) pages a request ($before -> $after)"
}

# The 2026-07-28 HTTP rules (basic/transports, "Server validation"): the headers must agree
# with the body, or HeaderMismatch -32020 with 400, before anything runs; an unsupported
# version, from the header or from _meta alone, is -32022 with data.supported; a method the
# revision does not have is 404 with -32601.
modern_rules() {
        need_curl
        http_start
        local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
        local v=(-H "MCP-Protocol-Version: 2026-07-28")
        mreq() { # METHOD PARAMS-WITHOUT-BRACES [CURL ARGS...]
                authed POST "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"$1\",\"params\":{$2}}" "${@:3}"
        }
        is_mismatch() {
                code_is 400
                body_has '"code":-32020'
                body_has "$1"
        }
        # A file_read header on a shell_run body: refused, the command never runs.
        mreq tools/call "\"name\":\"shell_run\",\"arguments\":{\"command\":\"echo ran\"},$meta" \
                "${v[@]}" -H "Mcp-Method: tools/call" -H "Mcp-Name: file_read"
        is_mismatch "Mcp-Name must be shell_run"
        mreq tools/call "\"name\":\"shell_run\",\"arguments\":{\"command\":\"echo ran\"},$meta" \
                "${v[@]}" -H "Mcp-Method: tools/call"
        is_mismatch "Mcp-Name must be shell_run"
        mreq tools/call "\"name\":\"shell_run\",\"arguments\":{\"command\":\"echo ran\"},$meta" \
                "${v[@]}" -H "Mcp-Method: tools/call" -H "Mcp-Name:   shell_run  "
        code_is 200
        body_has 'ran'
        mreq tools/list "$meta" "${v[@]}" -H "Mcp-Method: TOOLS/LIST"
        is_mismatch "Mcp-Method must be tools/list"
        mreq tools/list "$meta" "${v[@]}"
        is_mismatch "Mcp-Method must be tools/list"
        mreq tools/list "$meta" -H "Mcp-Method: tools/list"
        is_mismatch "MCP-Protocol-Version must be 2026-07-28"
        mreq tools/list "$meta" -H "MCP-Protocol-Version: 2025-11-25" -H "Mcp-Method: tools/list"
        is_mismatch "they must name the same version"
        # The header names the revision, the body no version: invalid params.
        mreq tools/list '"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}' "${v[@]}" \
                -H "Mcp-Method: tools/list"
        code_is 400
        body_has '"code":-32602'
        # An unsupported version, from both the header and _meta, or from _meta alone.
        local v99='"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}'
        mreq tools/list "$v99" -H "MCP-Protocol-Version: 2099-01-01" -H "Mcp-Method: tools/list"
        code_is 400
        body_has '"code":-32022'
        body_has '"supported":["2026-07-28"'
        mreq tools/list '"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}'
        code_is 400
        body_has '"code":-32022'
        body_has '"requested":"2099-01-01"'
        # Methods the revision does not have, and unknown ones: 404 with -32601.
        local m
        for m in initialize ping logging/setLevel resources/subscribe no/such; do
                mreq "$m" "$meta" "${v[@]}" -H "Mcp-Method: $m"
                code_is 404
                body_has '"code":-32601'
        done
        mreq tools/list "$meta" "${v[@]}" -H "Mcp-Method: tools/list"
        code_is 200
        body_has '"name":"shell_run"'
}

# The version and the envelope of a 2026-07-28 request, in the spellings a client or a proxy
# in between may use: header and _meta naming different versions (either one unknown) is
# HeaderMismatch, checked before the version itself; a standard header sent twice is
# HeaderMismatch whatever the copies say (a proxy may route on either one); the optional
# whitespace around a value and the case of a header's name do not matter; a _meta without
# clientCapabilities, or with a key of the wrong JSON type, is 400 with -32602 before anything
# runs.
modern_envelope() {
        need_curl
        http_start
        local caps='"io.modelcontextprotocol/clientCapabilities":{}'
        local meta="\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",$caps}"
        local run='"name":"shell_run","arguments":{"command":"echo ran >>/tmp/ran; echo ran"}'
        mreq() { # METHOD PARAMS-WITHOUT-BRACES [CURL ARGS...]
                authed POST "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"$1\",\"params\":{$2}}" "${@:3}"
        }
        refused() { # CODE TEXT: 400 with that JSON-RPC code and text, and id 5 kept
                code_is 400
                body_has "\"code\":$1"
                body_has "$2"
                body_has '"id":5'
        }
        local lv=(-H "Mcp-Method: tools/list")
        mreq tools/list "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"v999.0.0\",$caps}" \
                -H "MCP-Protocol-Version: 2026-07-28" "${lv[@]}"
        refused -32020 "MCP-Protocol-Version"
        mreq tools/list "$meta" -H "MCP-Protocol-Version: v999.0.0" "${lv[@]}"
        refused -32020 "MCP-Protocol-Version"
        mreq tools/list "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\",$caps}" \
                -H "MCP-Protocol-Version: 2026-07-28" "${lv[@]}"
        refused -32020 "MCP-Protocol-Version"
        mreq tools/list "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"v999.0.0\",$caps}" \
                -H "MCP-Protocol-Version: v999.0.0" "${lv[@]}"
        refused -32022 '"requested":"v999.0.0"'
        body_has '"supported":["2026-07-28"'
        # Repeated standard headers: the call never runs.
        mreq tools/call "$run,$meta" -H "MCP-Protocol-Version: 2026-07-28" \
                -H "Mcp-Method: tools/call" -H "Mcp-Name: shell_run" -H "Mcp-Name: file_read"
        refused -32020 "Mcp-Name"
        mreq tools/call "$run,$meta" -H "MCP-Protocol-Version: 2026-07-28" \
                -H "Mcp-Method: tools/call" -H "mcp-name: shell_run" -H "MCP-NAME: shell_run"
        refused -32020 "Mcp-Name"
        mreq tools/call "$run,$meta" -H "MCP-Protocol-Version: 2026-07-28" \
                -H "Mcp-Method: tools/call" -H "Mcp-Method: tools/list" -H "Mcp-Name: shell_run"
        refused -32020 "Mcp-Method"
        mreq tools/call "$run,$meta" -H "MCP-Protocol-Version: 2026-07-28" \
                -H "MCP-Protocol-Version: 2025-11-25" -H "Mcp-Method: tools/call" \
                -H "Mcp-Name: shell_run"
        refused -32020 "MCP-Protocol-Version"
        # Whitespace around values and the case of names: accepted.
        mreq tools/list "$meta" -H "MCP-Protocol-Version:   2026-07-28  " -H "mcp-method: tools/list"
        code_is 200
        body_has '"name":"shell_run"'
        # The envelope: clientCapabilities missing or not an object, clientInfo or logLevel of
        # the wrong type, the version not a string, _meta not an object.
        local bad
        for bad in '"io.modelcontextprotocol/protocolVersion":"2026-07-28"' \
                '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]' \
                '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"all"' \
                "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",$caps,\"io.modelcontextprotocol/clientInfo\":\"curl\"" \
                "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",$caps,\"io.modelcontextprotocol/logLevel\":7" \
                "\"io.modelcontextprotocol/protocolVersion\":20260728,$caps"; do
                mreq tools/call "$run,\"_meta\":{$bad}" -H "MCP-Protocol-Version: 2026-07-28" \
                        -H "Mcp-Method: tools/call" -H "Mcp-Name: shell_run"
                refused -32602 "Invalid params"
        done
        mreq tools/call "$run,\"_meta\":[]" -H "MCP-Protocol-Version: 2026-07-28" \
                -H "Mcp-Method: tools/call" -H "Mcp-Name: shell_run"
        refused -32602 "Invalid params"
        # None of the refused calls ran: the one accepted call finds no trace of them.
        mreq tools/call '"name":"shell_run","arguments":{"command":"cat /tmp/ran 2>&1 || echo none"},'"$meta" \
                -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" -H "Mcp-Name: shell_run"
        code_is 200
        body_has 'No such file'
        kill -0 "$SRV_PID" || t_fail "rtn serve --http died"
}

# A request's response stream carries its own answer and nothing of another's: while a
# legacy session's call and a 2026-07-28 call run at once (both asking for progress, both
# reading text/event-stream), neither stream holds the other's progress token, a request
# of the server (rtn sends none) or a notifications/message (no logLevel was asked for).
modern_stream_only_answer() {
        need_curl
        http_start
        init
        local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p-modern"}'
        authed POST '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "Mcp-Session-Id: $SID"
        authed POST '{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}' \
                -H "Mcp-Session-Id: $SID"
        code_is 200
        local tok
        tok=$(cat "$T_TMP/tok")
        curl -sN -o "$T_TMP/legacy" -H "Authorization: Bearer $tok" -H "Mcp-Session-Id: $SID" \
                -H "Content-Type: application/json" -H "Accept: text/event-stream" \
                --data-binary '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"sleep 6; echo legacy"},"_meta":{"progressToken":"p-legacy"}}}' \
                "$URL" &
        local legacy=$!
        curl -sN -o "$T_TMP/modern" -H "Authorization: Bearer $tok" \
                -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" \
                -H "Mcp-Name: shell_run" -H "Content-Type: application/json" \
                -H "Accept: text/event-stream" \
                --data-binary '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"sleep 6; echo modern"},'"$meta"'}}' \
                "$URL"
        wait "$legacy"
        local f own other line
        for f in legacy modern; do
                [ $f = legacy ] && own=8 other=p-modern || own=9 other=p-legacy
                t_has "$T_TMP/$f" "\"id\":$own,\"result\"" ||
                        t_fail "no answer on the $f stream: $(head -c 400 "$T_TMP/$f")"
                t_has "$T_TMP/$f" "$other" &&
                        t_fail "the $f stream carries the other call's progress: $(head -c 400 "$T_TMP/$f")"
                t_has "$T_TMP/$f" 'notifications/message' && [ $f = modern ] &&
                        t_fail "a log message on the modern stream: $(head -c 400 "$T_TMP/$f")"
                while IFS= read -r line; do
                        case $line in
                        "data: "*\"id\":$own,\"result\"* | "data: "*notifications/progress* | \
                                "data: "*notifications/message*) ;;
                        "data: "*) t_fail "the $f stream carries another message: ${line:0:300}" ;;
                        esac
                done <"$T_TMP/$f"
        done
        t_has "$T_TMP/modern" 'modern' || t_fail "the modern call did not run"
}

# hdr_is NAME VALUE: the last answer's header NAME is VALUE; hdr_is NAME: it has no NAME.
hdr_is() {
        local line got= seen=
        while IFS= read -r line; do
                line=${line%$'\r'}
                shopt -s nocasematch
                [[ $line == "$1: "* ]] && got=${line#*: } seen=1
                shopt -u nocasematch
        done <"$T_TMP/hdrs"
        if [ $# = 1 ]; then
                [ -z "$seen" ] || t_fail "$1 is in the answer: $(cat "$T_TMP/hdrs")"
        else
                [ "$got" = "$2" ] || t_fail "$1 is '$got', not '$2': $(cat "$T_TMP/hdrs")"
        fi
}

# A browser's page of an allowed origin (--allow-origin, or the server's own) is served as a
# browser needs (CORS): its preflight, which carries no token, is a 204 naming the methods
# and the headers a client sends; every answer to it, a 401, an event stream and an error
# among them, names the origin and lets the page read Mcp-Session-Id. A foreign origin gets
# none of it, a preflight is no way past the Host check, and a public page --allow-origin
# names may reach the loopback server (Private Network Access). Before, no answer named the
# origin and OPTIONS was a 401: no browser client could work.
cors() {
        need_curl
        http_start --allow-origin https://app.example --allow-origin http://127.0.0.1:8
        local pre=(-H "Access-Control-Request-Method: POST"
                -H "Access-Control-Request-Headers: authorization, content-type, mcp-session-id, mcp-protocol-version")
        req OPTIONS "" -H "Origin: https://app.example" "${pre[@]}"
        code_is 204
        hdr_is Access-Control-Allow-Origin https://app.example
        hdr_is Access-Control-Allow-Methods "POST, DELETE, OPTIONS"
        hdr_is Access-Control-Allow-Headers "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID"
        hdr_is Access-Control-Max-Age 600
        hdr_is Vary Origin
        hdr_is Access-Control-Allow-Private-Network
        req OPTIONS "" -H "Origin: https://app.example" "${pre[@]}" \
                -H "Access-Control-Request-Private-Network: true"
        code_is 204
        hdr_is Access-Control-Allow-Private-Network true
        req OPTIONS "" -H "Origin: http://127.0.0.1:$PORT" "${pre[@]}" # its own
        code_is 204
        hdr_is Access-Control-Allow-Origin "http://127.0.0.1:$PORT"
        local o
        for o in https://evil.example http://app.example https://app.example:443 \
                "https://app.example/" http://127.0.0.1:08 null; do
                req OPTIONS "" -H "Origin: $o" "${pre[@]}"
                code_is 403
                hdr_is Access-Control-Allow-Origin
                hdr_is Access-Control-Allow-Methods
        done
        req OPTIONS "" -H "Origin: https://app.example" -H "Host: rebound.example:$PORT" "${pre[@]}"
        code_is 403
        hdr_is Access-Control-Allow-Origin
        req OPTIONS "" # not a browser's: the methods only
        code_is 204
        hdr_is Allow "POST, DELETE, OPTIONS"
        hdr_is Access-Control-Allow-Origin
        # the page's own requests
        req POST "$INIT" -H "Origin: https://app.example"
        code_is 401
        hdr_is Access-Control-Allow-Origin https://app.example
        authed POST "$INIT" -H "Origin: https://app.example"
        code_is 200
        hdr_is Access-Control-Allow-Origin https://app.example
        hdr_is Access-Control-Expose-Headers "Mcp-Session-Id, WWW-Authenticate"
        local sid
        sid=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([0-9a-f]*\).*/\1/p' "$T_TMP/hdrs")
        [ ${#sid} = 32 ] || t_fail "no session: $(cat "$T_TMP/hdrs")"
        authed POST '{"jsonrpc":"2.0","id":2,"method":"nope"}' -H "Origin: https://app.example" \
                -H "Mcp-Session-Id: $sid"
        hdr_is Access-Control-Allow-Origin https://app.example
        ACCEPT="application/json, text/event-stream" authed POST \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"sleep 3; echo streamed"},"_meta":{"progressToken":"p"}}}' \
                -H "Origin: https://app.example" -H "Mcp-Session-Id: $sid"
        code_is 200
        hdr_is Content-Type text/event-stream
        hdr_is Access-Control-Allow-Origin https://app.example
        body_has streamed
        authed DELETE "" -H "Origin: https://app.example" -H "Mcp-Session-Id: $sid"
        hdr_is Access-Control-Allow-Origin https://app.example
        authed POST "$INIT" # not a browser's
        code_is 200
        hdr_is Access-Control-Allow-Origin
        # null is every sandboxed frame's and file: page's: allowed when asked, and said (as
        # the options are read: the bad one after it ends the run there)
        t_cmd "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" --allow-origin null \
                --max-sessions nope
        t_exit_is 125
        t_stderr_has "--allow-origin null lets every page that sends Origin: null through"
        # an origin a browser would never send is no --allow-origin, said at the start
        for o in '*' 'https://*.example' https://app.example/ app.example https://app.example:0 \
                https://app.example:65536 https://app.example:+1 "https://a b"; do
                t_cmd "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" --allow-origin "$o"
                t_exit_is 125
                t_stderr_has "bad --allow-origin"
        done
}

# The same in a real browser (browser_page.py): a page of an --allow-origin origin opened by
# headless Chromium initializes a session, runs shell_run, reads a wrong token's 401 and ends
# its session, with fetch() and the preflights it makes. Before CORS its first fetch failed
# ("TypeError: Failed to fetch").
browser_page() {
        need_curl
        command -v chromium >/dev/null || t_fail "chromium is not installed (tools/deps.txt)"
        new_token
        T_CMD_TIMEOUT=120 t_cmd python3 "$T_ROOT/tests/integration/browser_page.py" "$RTN" \
                chromium "$T_TMP"
        t_exit_is 0
        t_stdout_has 'initialize 200 session 32; initialized 202; shell_run 200 ran; wrong token 401 Bearer realm="rtn"; delete 204'
}

# The server's own origin (scheme, host and port it listens on; localhost for loopback) is
# accepted without --allow-origin: a page it serves itself, or a tool on the same origin.
# Any other origin, port or scheme is refused.
own_origin() {
        need_curl
        http_start
        local o
        for o in "http://localhost:$PORT" "http://127.0.0.1:$PORT" "HTTP://LOCALHOST:$PORT"; do
                authed POST "$INIT" -H "Origin: $o" -H "Host: localhost:$PORT"
                code_is 200
        done
        for o in "http://localhost:$((PORT == 65535 ? 1 : PORT + 1))" "https://localhost:$PORT" \
                "http://localhost" "http://evil.example:$PORT" "http://localhost:$PORT.evil" null \
                "http://localhost:0$PORT" "http://localhost:+$PORT" "http://localhost: $PORT" \
                "http://localhost:$PORT/" "http://localhost:$((PORT + 65536))"; do
                authed POST "$INIT" -H "Origin: $o" -H "Host: localhost:$PORT"
                code_is 403
                body_has "Origin not allowed"
        done
}

# A client that closes the response stream of a call cancels it (2026-07-28 says it MUST):
# the command is killed, in a session and in the 2026-07-28 requests' state alike, and the
# state goes on serving.
closing_cancels() {
        need_curl
        http_start --max-sessions 2
        init
        call '{"name":"shell_run","arguments":{"command":"true"}}'
        call '{"name":"shell_run","arguments":{"command":"sleep 4; echo late > /tmp/late"}}' --max-time 1
        mcall shell_run '{"command":"sleep 4; echo late > /tmp/mlate"}' --max-time 1
        sleep 5
        call '{"name":"shell_run","arguments":{"command":"cat /tmp/late 2>&1; true"}}'
        code_is 200
        body_has "No such file"
        mcall shell_run '{"command":"cat /tmp/mlate 2>&1; true"}'
        code_is 200
        body_has "No such file"
}

# The store of an HTTP server outlives its sessions (environments are per server: one token,
# one principal): a commit made in one session is in the environment the next one starts on.
commits_last() {
        need_curl
        http_start
        init
        local a=$SID
        call '{"name":"shell_run","arguments":{"command":"echo kept > /var/tmp/kept"}}'
        code_is 200
        call '{"name":"env_commit","arguments":{"message":"from a"}}'
        code_is 200
        body_has 'commit_id'
        authed DELETE "" -H "Mcp-Session-Id: $a"
        code_is 204
        init
        call '{"name":"shell_run","arguments":{"command":"cat /var/tmp/kept"}}'
        code_is 200
        body_has '"stdout":"kept'
}

# The official clients keep a file, a job and a sandbox handle across calls, in both eras.
state_mode() {
        need_node
        http_start
        T_CMD_TIMEOUT=120 t_cmd node "$client_dir/http.mjs" "$URL" "$T_TMP/tok" state "$1"
        t_exit_is 0
        t_stdout_has "http done [state]"
}

# Each sandbox of the 2026-07-28 requests has its own idle clock: one no call named for
# --idle-timeout is closed while one in use lives on, a running job keeps its sandbox, and
# requests without the token neither keep a sandbox alive nor close one. With no sandbox left
# and no call, the state ends and the next request starts a new one.
modern_state_idle() {
        need_curl
        http_start --idle-timeout 4
        mcall sandbox_new '{}'
        body_has '"sandbox":"sb-2"' # left to requests without the token
        mcall sandbox_new '{}'
        body_has '"sandbox":"sb-3"' # used
        mcall shell_job_start '{"command":"sleep 60"}'
        body_has '"job_id"' # sb-1's job runs while no call names sb-1
        local i bad=(-H "Authorization: Bearer x$(cat "$T_TMP/tok")")
        # sb-3 is used every half second or so: a loaded machine has 3 s to spare.
        for i in 1 2 3 4 5 6 7 8 9 10; do
                mcall file_read '{"sandbox":"sb-2","path":"/etc/hostname"}' "${bad[@]}"
                code_is 401
                mcall sandbox_close '{"sandbox":"sb-3"}' "${bad[@]}"
                code_is 401
                mcall file_read '{"sandbox":"sb-3","path":"/etc/hostname"}'
                body_has '"content"'
                sleep 0.5
        done
        t_wait_for t_has "$T_TMP/srv.log" "sandbox sb-2 idle for 4 s: closed" ||
                t_fail "sb-2 was not closed: $(cat "$T_TMP/srv.log")"
        mcall file_read '{"sandbox":"sb-2","path":"/etc/hostname"}'
        body_has "sandbox sb-2 was closed"
        mcall shell_job_kill '{"job_id":"1"}'
        body_has '"state":"killed"' # sb-1 lived on by its job
        { t_has "$T_TMP/srv.log" "sb-3 idle" || t_has "$T_TMP/srv.log" "sb-1 idle" ||
                t_has "$T_TMP/srv.log" "no sandbox left"; } &&
                t_fail "a sandbox in use was closed: $(cat "$T_TMP/srv.log")"
        # Nothing more: sb-1 and sb-3 idle out and the state ends with them.
        t_wait_for t_has "$T_TMP/srv.log" "has no sandbox left: ended" ||
                t_wait_for t_has "$T_TMP/srv.log" "has no sandbox left: ended" ||
                t_fail "the state never ended: $(cat "$T_TMP/srv.log")"
        t_has "$T_TMP/srv.log" "sandbox sb-3 idle for 4 s: closed" || t_fail "sb-3 never closed"
        mcall file_read '{"sandbox":"sb-3","path":"/etc/hostname"}'
        code_is 200
        body_has "no sandbox sb-3"
}

# SIGTERM while calls wait on their sessions (a legacy POST, a 2026-07-28 POST, an event
# stream) and a keep-alive connection idles: the server answers or drops each and exits 0,
# never libmicrohttpd's abort on a daemon stopped with connections still suspended.
stops_with_calls_in_flight() {
        need_curl
        http_start
        init
        call '{"name":"shell_run","arguments":{"command":"sleep 60"}}' --max-time 30 &
        local legacy=$!
        mcall shell_run '{"command":"sleep 60"}' --max-time 30 &
        local modern=$!
        ACCEPT="text/event-stream" call '{"name":"shell_run","arguments":{"command":"sleep 60"}}' \
                --max-time 30 -o /dev/null &
        local stream=$!
        # each answered with its own id, a stream's as its last event (the 503 said "id":null,
        # and a stream ended after its progress with nothing)
        local tok
        read -r tok <"$T_TMP/tok"
        curl -s -o "$T_TMP/json.out" -H "Authorization: Bearer $tok" -H "Content-Type: application/json" \
                -H "Accept: application/json, text/event-stream" -H "Mcp-Session-Id: $SID" --max-time 30 \
                --data-binary '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"sleep 61"}}}' \
                "$URL" &
        local json=$!
        curl -s -N -o "$T_TMP/sse.out" -H "Authorization: Bearer $tok" -H "Content-Type: application/json" \
                -H "Accept: text/event-stream" -H "Mcp-Session-Id: $SID" --max-time 30 \
                --data-binary '{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"sleep 62"},"_meta":{"progressToken":"p43"}}}' \
                "$URL" &
        local sse=$!
        t_wait_for t_has "$T_TMP/sse.out" p43 || t_fail "no progress on the stream: $(cat "$T_TMP/sse.out")"
        kill -TERM "$SRV_PID"
        local rc=0 i
        for i in $(seq 1 100); do
                kill -0 "$SRV_PID" 2>/dev/null || break
                sleep 0.2
        done
        kill -0 "$SRV_PID" 2>/dev/null && t_fail "rtn serve --http still runs 20 s after SIGTERM"
        wait "$SRV_PID" || rc=$?
        wait "$legacy" "$modern" "$stream" "$json" "$sse" 2>/dev/null || true
        t_has "$T_TMP/json.out" '"id":41' && t_has "$T_TMP/json.out" "rtn serve is stopping" ||
                t_fail "the JSON answer: $(tr "\n" "|" <"$T_TMP/json.out")"
        t_has "$T_TMP/sse.out" '"id":43,"error"' && t_has "$T_TMP/sse.out" "rtn serve is stopping" ||
                t_fail "the stream's last event: $(tail -c 400 "$T_TMP/sse.out" | tr "\n" "|")"
        ! { t_has "$T_TMP/srv.log" "Fatal error" || t_has "$T_TMP/srv.log" MHD_stop_daemon; } ||
                t_fail "libmicrohttpd aborted: $(tail -c 400 "$T_TMP/srv.log")"
        [ "$rc" = 0 ] || t_fail "rtn serve --http exited $rc after SIGTERM: $(tail -c 400 "$T_TMP/srv.log")"
}

t_run sdk1_client node_mode sdk1
t_run modern_client node_mode modern
t_run sdk_refused_without_token node_mode noauth
t_run sessions_isolated node_mode isolation
t_run no_token_401 no_token
t_run origin_checked origin_checked
t_run own_origin own_origin
t_run cors cors
t_run browser_page browser_page
t_run host_checked host_checked
t_run token_file_private token_file_private
t_run loopback_by_default loopback_by_default
t_run shared_host_files_refused shared_host_files_refused
t_run host_dirs_per_session host_dirs_per_session
t_run bad_requests bad_requests
t_run big_bodies big_bodies
t_run framing_refused framing_refused
t_run gone_mid_body gone_mid_body
t_run request_pages request_pages
t_run modern_rules modern_rules
t_run modern_envelope modern_envelope
t_run modern_stream_only_answer modern_stream_only_answer
t_run closing_cancels closing_cancels
t_run stops_with_calls_in_flight stops_with_calls_in_flight
t_run commits_last commits_last
t_run idle_reaped idle_reaped
t_run session_cap session_cap
t_run state_sdk1 state_mode sdk1
t_run state_legacy state_mode legacy
t_run state_auto state_mode auto
t_run state_modern state_mode modern
t_run modern_state_idle modern_state_idle
t_run progress_sdk1 progress_mode sdk1
t_run progress_modern progress_mode modern
t_run logs_sdk1 logs_mode sdk1
t_run logs_legacy logs_mode legacy
t_run logs_modern logs_mode modern
t_run sessions_200 sessions_at_once 200
t_done
