#!/usr/bin/env bash
# --allow-host-port PORT (docs/network.md, "A service on the host"): a server the test stands
# up on the host's 127.0.0.1 is reached from the sandbox at host.rtn.internal:PORT through
# the gate, over plain HTTP and a CONNECT tunnel; and the attacks (hostport.py probe): every
# other way to the host's loopback — the address in each spelling, [::1], localhost, a name
# that resolves to 127.0.0.1, another port of host.rtn.internal, a Host header naming
# another port, a redirect to another port, a direct connection — is refused, and the host's
# other server never sees a connection. rtn's own listeners are never opened; --allow-net
# refuses, when it reads them, the names and addresses that can never work, and takes a URL
# as its host. The reach and the refusals hold over `rtn serve --http` as well, and the reach
# while the same user's other sandboxes start and end beside it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

LIB=$T_ROOT/tests/security/hostport.py

start_servers() {
        python3 "$LIB" serve "$T_TMP" &
        SERVERS=$!
        t_wait_for test -s "$T_TMP/open" || t_fail "the host's servers did not start"
        OPEN=$(cat "$T_TMP/open") CLOSED=$(cat "$T_TMP/closed")
}

stop_servers() {
        kill "$SERVERS" 2>/dev/null
        wait "$SERVERS" 2>/dev/null
}

# A name the trusted side resolves to 127.0.0.1 (this machine's hostname, when /etc/hosts
# says so): allowed on the open port, it must still be refused.
loopback_name() {
        local n
        n=$(hostname)
        getent ahostsv4 "$n" 2>/dev/null | grep -q '^127\.' && printf '%s' "$n"
}

hostport_reached_and_nothing_else() {
        start_servers
        local name args=()
        name=$(loopback_name)
        [ -n "$name" ] && args=(--allow-net "$name:$OPEN")
        t_exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --allow-host-port "$OPEN" "${args[@]}" \
                -- python3 /mnt/t/hostport.py probe "$OPEN" "$CLOSED" "$name"
        stop_servers
        t_exit_is 0
        t_stdout_has "reached: plain"
        t_stdout_has "reached: tunnel"
        t_stdout_has "blocked: connect-[::1]"
        t_stdout_has "blocked: redirect-followed"
        ! grep -E "ESCAPED|FAILED" "$T_OUT_FILE" || t_fail "$(grep -E "ESCAPED|FAILED" "$T_OUT_FILE")"
        [ ! -s "$T_TMP/accepted" ] || t_fail "the closed port was reached: $(cat "$T_TMP/accepted")"
        ! grep attack "$T_TMP/open.log" || t_fail "an attack reached the open port"
        grep -q "GET /hello HTTP/1.1 host=host.rtn.internal:$OPEN" "$T_TMP/open.log" ||
                t_fail "the open port's log: $(cat "$T_TMP/open.log")"
        t_stderr_has "network denied"
        [ -z "$name" ] && t_note "no hostname resolving to 127.0.0.1: the rebinding case was skipped"
        return 0
}

# The port stays open while the same user's other sandboxes start and end beside it: their rtn
# processes exit, wait to be reaped (each a moment, as under a parent that reaps lazily) and
# change credentials between two reads of /proc, and none of those moments may make rtn take
# the host's service for one of its own, when it starts or at a request.
hostport_reached_while_sandboxes_come_and_go() {
        start_servers
        local secs=5
        python3 "$LIB" churn "$RTN" "$secs" &
        local churn=$!
        t_exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --allow-host-port "$OPEN" \
                -- python3 /mnt/t/hostport.py repeat "$OPEN" "$secs"
        wait "$churn"
        stop_servers
        t_exit_is 0
        t_stdout_has " refused: 0"
}

# The same over `rtn serve --http`: the option reaches a session's sandbox, and nothing else of
# the host's loopback does.
hostport_over_http() {
        start_servers
        http_start --allow-host-port "$OPEN"
        # (no --bind with --http: the probe goes in as the command's stdin)
        local probe cmd
        IFS= read -r -d '' probe <"$LIB"
        cmd=$(json_string "python3 - probe $OPEN $CLOSED <<\"EOF\"
$probe
EOF
") || t_fail "the probe cannot go in as a JSON string"
        http_call shell_run "{\"command\": $cmd}"
        stop_servers
        body_has "reached: plain"
        body_has "reached: tunnel"
        body_has "blocked: connect-[::1]"
        ! grep -E "ESCAPED|FAILED" "$T_TMP/body" || t_fail "$(grep -E "ESCAPED|FAILED" "$T_TMP/body")"
        [ ! -s "$T_TMP/accepted" ] || t_fail "the closed port was reached: $(cat "$T_TMP/accepted")"
        grep -q "GET /hello HTTP/1.1 host=host.rtn.internal:$OPEN" "$T_TMP/open.log" ||
                t_fail "the open port's log: $(cat "$T_TMP/open.log")"
}

# A listener of rtn itself (here a --publish of another rtn exec) is never opened, even by a
# user who names its port: refused when rtn starts, and at each request.
hostport_not_rtns_own() {
        local hp
        hp=$(python3 "$T_ROOT/tests/security/publish_lib.py" freeport)
        "$RTN" exec --publish "$hp:8000" -- sleep 20 >/dev/null 2>"$T_TMP/pub.err" &
        local pub=$!
        t_wait_for t_port_open 127.0.0.1 "$hp"
        t_exec --allow-host-port "$hp" -- true
        local rc=$T_RC
        cp "$T_ERR_FILE" "$T_TMP/start.err"
        # the same port, opened by a sandbox that started before rtn listened there
        t_exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --allow-host-port "$hp" -- python3 -c '
import os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ["http_proxy"])
s = socket.create_connection((u.hostname, u.port))
s.sendall(b"GET http://host.rtn.internal:'"$hp"'/ HTTP/1.1\r\nHost: host.rtn.internal:'"$hp"'\r\n\r\n")
print(s.recv(4096).decode().splitlines()[0])' 2>/dev/null
        kill "$pub" 2>/dev/null
        wait "$pub" 2>/dev/null
        [ "$rc" = 125 ] || t_fail "rtn exec --allow-host-port $hp (rtn's --publish) exited $rc"
        grep -q "rtn's own" "$T_TMP/start.err" || t_fail "no reason: $(cat "$T_TMP/start.err")"
        t_exit_is 125
        # with the same port in one command line
        t_exec --allow-host-port 18089 --publish 18089:80 -- true
        t_exit_is 125
        t_stderr_has "that port is rtn's own (--publish 127.0.0.1:18089:80"
        # rtn serve --http's own port, in each spelling getopt takes
        head -c 32 /dev/urandom | base64 >"$T_TMP/token"
        chmod 600 "$T_TMP/token"
        local a
        for a in "--allow-host-port 18090" "--allow-host-port=18090" "--allow-host-po 18090"; do
                # shellcheck disable=SC2086 # the option and its value, split on purpose
                t_cmd "$RTN" serve --http 127.0.0.1:18090 --token-file "$T_TMP/token" $a
                t_exit_is 125
                t_stderr_has "that port is rtn's own (--http 127.0.0.1:18090"
        done
}

# The gate's answer when a port of rtn's own is reached only after rtn started (serve): a
# 403 with the reason, checked at each request. The order is made, not waited for: the first
# sandbox is up before the second publishes the port, and asks only once the port listens.
hostport_rtns_own_at_request() {
        local hp
        hp=$(python3 "$T_ROOT/tests/security/publish_lib.py" freeport)
        mkdir sig && chmod 777 sig
        trap 'touch "$T_TMP/sig/go"; kill "$PUB" 2>/dev/null' EXIT
        "$RTN" exec --allow-host-port "$hp" --bind "$T_TMP/sig:/mnt/sig" -- sh -c '
touch /mnt/sig/up
'"$(t_hold_until /mnt/sig/go)"'
exec python3 -c "
import os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ[\"http_proxy\"])
s = socket.create_connection((u.hostname, u.port))
s.sendall(b\"CONNECT host.rtn.internal:'"$hp"' HTTP/1.1\r\n\r\n\")
print(s.recv(4096).decode())"' >"$T_TMP/req.out" 2>&1 &
        local ex=$!
        t_wait_for test -e sig/up || t_fail "the asking sandbox never started: $(cat "$T_TMP/req.out")"
        "$RTN" exec --publish "$hp:8000" -- sleep 300.$T_UNIQ >/dev/null 2>&1 &
        PUB=$!
        t_wait_for t_port_open 127.0.0.1 "$hp" || t_fail "port $hp was never published"
        touch sig/go
        wait "$ex"
        kill "$PUB"
        wait "$PUB" 2>/dev/null
        trap - EXIT
        grep -q "403" "$T_TMP/req.out" || t_fail "not refused: $(cat "$T_TMP/req.out")"
        grep -q "one of rtn's own listeners" "$T_TMP/req.out" || t_fail "$(cat "$T_TMP/req.out")"
}

hostport_bad_values() {
        local bad
        for bad in 0 65536 '' 80a -1 localhost:80 0x50; do
                t_exec --allow-host-port "$bad" -- true
                t_exit_is 125
                t_stderr_has "1-65535"
        done
        t_exec --allow-host-port 8080 --allow-host-port 8080 -- true
        t_exit_is 125
        t_stderr_has "port 8080 twice"
        t_exec --net none --allow-host-port 8080 -- true
        t_exit_is 125
        t_stderr_has "not with --net none"
        t_exit_is 125 "$RTN" serve --allow-host-port 0
        t_stderr_has "1-65535"
}

# Names and addresses the gate can never reach, in every spelling, are refused when read,
# with the reason and what to use instead (rtn exec, rtn serve, a --net-policy file).
allow_net_never() {
        local bad
        for bad in localhost LOCALHOST localhost. localhost:11434 app.localhost 127.0.0.1 127.1 \
                0x7f.1 2130706433 '[::1]' '::1' '::ffff:127.0.0.1' '[::ffff:127.0.0.1]' 0.0.0.0 \
                '[::]' 169.254.169.254 '[fe80::1]' 10.1.2.3 host.rtn.internal \
                http://localhost:8080/v1 'http://[::1]:11434/'; do
                t_exec --allow-net "$bad" -- true
                t_exit_is 125
                t_stderr_has "never"
        done
        t_exec --allow-net localhost:11434 -- true
        t_stderr_has "--allow-host-port PORT and reach it at host.rtn.internal:PORT"
        t_exit_is 125 "$RTN" serve --allow-net 0x7f.1
        t_stderr_has "127.0.0.1 (loopback 127.0.0.0/8), which the gate never connects to"
        printf 'deb.debian.org\n127.1:8080\n' >"$T_TMP/policy"
        t_exec --net-policy "$T_TMP/policy" -- true
        t_exit_is 125
        t_stderr_has "policy:2: '127.1:8080' is 127.0.0.1"
}

# A URL is taken as its host (and port): the sandbox starts, and env_status would list the rule.
allow_net_url() {
        t_exec --allow-net https://deb.debian.org --allow-net 'http://mirror.example:8080/debian/' \
                -- sh -c 'echo "$http_proxy"'
        t_exit_is 0
        t_stdout_has "http://127.0.0.1:"
        t_exec --allow-net 'https://user:s3cret-pw@deb.debian.org/' -- true
        t_exit_is 125
        t_stderr_has "user information"
        grep -q s3cret "$T_ERR_FILE" && t_fail "the password was echoed: $(cat "$T_ERR_FILE")"
        t_exec --allow-net 'ssh://git.example.org/' -- true
        t_exit_is 125
        t_stderr_has "only http:// and https:// URLs"
}

hostport_env_status() {
        t_cmd python3 "$LIB" status "$RTN" 11434
        t_exit_is 0
        t_stdout_is ok
}

t_run hostport_reached_and_nothing_else hostport_reached_and_nothing_else
t_run hostport_reached_while_sandboxes_come_and_go hostport_reached_while_sandboxes_come_and_go
t_run hostport_over_http hostport_over_http
t_run hostport_not_rtns_own hostport_not_rtns_own
t_run hostport_rtns_own_at_request hostport_rtns_own_at_request
t_run hostport_bad_values hostport_bad_values
t_run allow_net_never allow_net_never
t_run allow_net_url allow_net_url
t_run hostport_env_status hostport_env_status
t_done
