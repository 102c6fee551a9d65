#!/usr/bin/env bash
# `rtn serve --http` cannot be locked out by someone without the token (invariant 27): 1,000
# connections held open by http_hold.py (idle, a half-sent request head, a whole head with a
# wrong token kept alive; each re-opened as soon as the server drops it; or idle ones alone)
# leave room for the token holder, whose initialize and tools/call are answered while they
# are held; connections that
# began a request head and did not finish it with the token are dropped within seconds; one
# that has sent nothing yet (a client its loaded machine has not run) is answered when it
# does.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

command -v curl >/dev/null || t_note "curl is not installed: the cases skip"
HOLD=$T_ROOT/tests/security/http_hold.py
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'

hold() { # N SECONDS [KINDS]
        python3 "$HOLD" "$PORT" "$@" >"$T_TMP/hold.out" 2>"$T_TMP/hold.err" &
        HOLD_PID=$!
        t_wait_for grep -q "^held" "$T_TMP/hold.out" || {
                grep -q "RLIMIT_NOFILE" "$T_TMP/hold.err" && t_skip "$(cat "$T_TMP/hold.err")"
                t_fail "the holder did not start: $(cat "$T_TMP/hold.err")"
        }
        sleep 1 # the server has accepted what it will
}

authed() { # BODY [CURL ARGS...]: $CODE, the body in $T_TMP/body
        CODE=$(curl -s --max-time 30 -o "$T_TMP/body" -D "$T_TMP/hdrs" -w '%{http_code}' \
                -H "Content-Type: application/json" -H "Accept: application/json" \
                -H "Authorization: Bearer $(cat "$T_TMP/tok")" --data-binary "$1" "${@:2}" "$URL")
}

token_holder_gets_in() { # [KINDS]
        http_start
        # Held far longer than curl waits (--max-time 30): a server locked out answers only
        # once they are let go, so an answer while the holder still runs is the check, not
        # a time limit that a loaded machine could miss.
        hold 1000 300 "$@"
        authed "$INIT"
        [ "$CODE" = 200 ] || t_fail "initialize while 1000 connections are held: HTTP $CODE"
        kill -0 "$HOLD_PID" 2>/dev/null ||
                t_fail "initialize was answered only after the held connections were let go"
        local sid
        sid=$(tr -d '\r' <"$T_TMP/hdrs" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
        authed '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"echo in"}}}' \
                -H "Mcp-Session-Id: $sid"
        [ "$CODE" = 200 ] || t_fail "tools/call while 1000 connections are held: HTTP $CODE"
        grep -q '"stdout":"in' "$T_TMP/body" || t_fail "no result: $(head -c 300 "$T_TMP/body")"
        kill -0 "$HOLD_PID" 2>/dev/null ||
                t_fail "tools/call was answered only after the held connections were let go"
}

# A head it never finishes is dropped in seconds, not after libmicrohttpd's idle timeout;
# one trickled a byte at a time is no different.
heads_time_out() {
        http_start
        python3 - "$PORT" <<'PY' || t_fail "a connection without a whole head was kept"
import socket, sys, time
port = int(sys.argv[1])
half = socket.create_connection(("127.0.0.1", port))
half.sendall(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
drip = socket.create_connection(("127.0.0.1", port))
drip.setblocking(False)
line = b"X-Pad: " + b"a" * 4000
start, closed = time.monotonic(), set()
while time.monotonic() - start < 25 and len(closed) < 2:
    for name, s in (("half", half), ("drip", drip)):
        if name in closed:
            continue
        try:
            if s.recv(1, socket.MSG_DONTWAIT) == b"":
                closed.add(name)
        except BlockingIOError:
            pass
        except OSError:
            closed.add(name)
    if "drip" not in closed:
        try:
            drip.send(line[int(time.monotonic() * 2) % len(line):][:1])
        except OSError:
            closed.add("drip")
    time.sleep(0.5)
print(sorted(closed), round(time.monotonic() - start, 1))
sys.exit(0 if len(closed) == 2 and time.monotonic() - start < 25 else 1)
PY
}
# A client whose machine is too busy to run it for longer than the head deadline between
# its connect and its request (node's event loop behind 200 sessions on a loaded machine)
# is answered: a connection that has sent nothing yet is not timed (the cap bounds those).
# Its request went out on a connection the server had closed, and was lost, before.
late_request_answered() {
        http_start
        python3 - "$PORT" "$(cat "$T_TMP/tok")" "$INIT" <<'PY' || t_fail "the late request was not answered"
import socket, sys, time
port, tok, body = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
s = socket.create_connection(("127.0.0.1", port))
time.sleep(12)  # past the 10 s head deadline and the tick after it
head = (f"POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {tok}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n\r\n").encode()
s.sendall(head + body)
s.settimeout(60)
got = b""
while b"\r\n" not in got:
    b = s.recv(4096)
    if not b:
        break
    got += b
print(got[:200])
sys.exit(0 if got.startswith(b"HTTP/1.1 200") else 1)
PY
}

t_run token_holder_gets_in token_holder_gets_in
# Silent connections alone: no deadline frees their room, only the cap's dropping the oldest.
t_run token_holder_gets_in_idle token_holder_gets_in idle
t_run heads_time_out heads_time_out
t_run late_request_answered late_request_answered
t_done
