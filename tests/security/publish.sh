#!/usr/bin/env bash
# --publish [ADDR:]HOSTPORT:SANDBOXPORT (docs/network.md, "Published ports"): a connection to
# the host's port reaches a server on the sandbox's loopback (IPv4 and IPv6), rtn serve's
# reaches its session's sandbox across env_reset and env_status lists the ports, and what the
# sandbox sent before rtn exec's command or rtn serve ended still reaches its client; and the
# attacks: the forwarder never reaches the host's own loopback (a host service on
# SANDBOXPORT sees nothing), a sandboxed process cannot connect to the published host port,
# and bad values fail before anything runs (port in use, bad syntax, privileged port as a
# user, --net none, --isolation landlock).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

LIB=$T_ROOT/tests/security/publish_lib.py
# freeport [N]: N free ports on one line, from one start of python3.
freeport() { python3 "$LIB" freeport "$@"; }

# rtn exec --publish HP:SP running the one-shot server of publish_lib.py on HOST inside.
exec_serving() { # HOST HP SP [rtn options...]
        local host=$1 hp=$2 sp=$3
        shift 3
        "$RTN" exec --bind "$T_ROOT/tests/security:/mnt/t:ro" "$@" --publish "$hp:$sp" -- \
                python3 /mnt/t/publish_lib.py serve-once "$host" "$sp" \
                >"$T_TMP/exec.out" 2>"$T_TMP/exec.err" &
        EXEC_PID=$!
}

publish_forwards() {
        local host=$1 hp sp
        read -r hp sp < <(freeport 2)
        exec_serving "$host" "$hp" "$sp"
        t_cmd python3 "$LIB" ask "$hp"
        wait "$EXEC_PID"
        local rc=$?
        [ "$(cat "$T_OUT_FILE")" = "sandbox:ping" ] ||
                t_fail "asked, got '$(cat "$T_OUT_FILE")'; rtn exec exited $rc: $(head -c 300 "$T_TMP/exec.err")"
        [ "$rc" = 0 ] || t_fail "rtn exec exited $rc: $(head -c 300 "$T_TMP/exec.err")"
}

publish_addr_v6() {
        python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null ||
                t_skip "no IPv6 loopback on the host"
        local hp sp
        read -r hp sp < <(freeport 2)
        "$RTN" exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --publish "[::1]:$hp:$sp" -- \
                python3 /mnt/t/publish_lib.py serve-once 127.0.0.1 "$sp" \
                >"$T_TMP/exec.out" 2>"$T_TMP/exec.err" &
        EXEC_PID=$!
        t_cmd python3 "$LIB" ask "$hp" ::1
        wait "$EXEC_PID"
        local rc=$?
        [ "$(cat "$T_OUT_FILE")" = "sandbox:ping" ] ||
                t_fail "asked, got '$(cat "$T_OUT_FILE")'; rtn exec exited $rc: $(head -c 300 "$T_TMP/exec.err")"
        [ "$rc" = 0 ] || t_fail "rtn exec exited $rc: $(head -c 300 "$T_TMP/exec.err")"
}

# What the sandbox's server sent before its command ended reaches the client, though the
# client reads it only after rtn has closed the listener: rtn exec relays what is on its way
# before it exits (a one-shot server's answer was lost when rtn exited first, and the
# client's retries then met a closed port). serve-fill sends until the buffers are full, so
# nearly all of it is still on the way when the command ends.
publish_answer_outlives_command() {
        local pub=$1 addr=$2 hp sp
        read -r hp sp < <(freeport 2)
        "$RTN" exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --publish "$pub$hp:$sp" -- \
                python3 /mnt/t/publish_lib.py serve-fill 127.0.0.1 "$sp" \
                >"$T_TMP/exec.out" 2>"$T_TMP/exec.err" &
        EXEC_PID=$!
        t_cmd python3 "$LIB" ask-late "$hp" "$addr" "$T_TMP/exec.out" "$EXEC_PID"
        wait "$EXEC_PID"
        local rc=$? want
        want=$(cat "$T_TMP/exec.out")
        [ "$rc" = 0 ] || t_fail "rtn exec exited $rc: $(head -c 300 "$T_TMP/exec.err")"
        [ -n "$want" ] && [ "$(cat "$T_OUT_FILE")" = "got $want of $want" ] ||
                t_fail "the sandbox sent $want bytes, the client: $(cat "$T_OUT_FILE")"
}

# A host service listens on 127.0.0.1:SP and nothing inside does: the forwarder must
# connect in the sandbox's namespace, so the host's client gets a closed connection and the
# host service accepts nothing.
publish_never_reaches_host() {
        sec_need_bin hostlisten
        "$SEC_BIN/hostlisten" "$T_TMP" &
        local listener=$! hp
        t_wait_for test -s "$T_TMP/port" || t_fail "host listener did not start"
        local sp
        sp=$(cat "$T_TMP/port")
        hp=$(freeport)
        # Asked while the sandbox runs, however slowly it started: a sandbox already gone (or
        # not yet publishing) also refuses the client, and the case would then test nothing.
        mkdir "$T_TMP/sig" && chmod 777 "$T_TMP/sig"
        "$RTN" exec --publish "$hp:$sp" --bind "$T_TMP/sig:/mnt/sig" -- \
                sh -c "touch /mnt/sig/up; $(t_hold_until /mnt/sig/go)" \
                >/dev/null 2>"$T_TMP/exec.err" &
        local ex=$!
        t_wait_for test -e "$T_TMP/sig/up" || t_fail "the sandbox never ran: $(cat "$T_TMP/exec.err")"
        t_cmd python3 "$LIB" ask "$hp" 127.0.0.1 2
        touch "$T_TMP/sig/go"
        wait "$ex"
        kill "$listener" 2>/dev/null
        wait "$listener" 2>/dev/null
        [ ! -s "$T_TMP/accepted" ] || t_fail "the host's own service was reached: $(cat "$T_TMP/accepted")"
        grep -q sandbox: "$T_OUT_FILE" && t_fail "an answer came back: $(cat "$T_OUT_FILE")"
        # the client reached rtn's forwarder, which closed on it: a refused connect means
        # nothing was published, and the case would have tested nothing
        grep -q "^connect:" "$T_OUT_FILE" && t_fail "the published port refused: $(cat "$T_OUT_FILE")"
        return 0
}

# From inside, the published host port is not there: the sandbox's 127.0.0.1 is its own.
publish_no_way_out() {
        sec_need_bin probe
        local hp
        local sp
        read -r hp sp < <(freeport 2)
        sec_exec --publish "$hp:$sp" -- /mnt/sec/probe tcp "$hp" ECONNREFUSED
        t_exit_is 0
        t_stdout_has blocked
}

publish_port_in_use() {
        local hp
        hp=$(freeport)
        python3 -c 'import socket,sys,time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(30)' "$hp" &
        local holder=$!
        t_wait_for t_port_open 127.0.0.1 "$hp"
        t_exec --publish "$hp:8000" -- true
        kill "$holder"
        wait "$holder" 2>/dev/null
        t_exit_is 125
        t_stderr_has "host port $hp is in use on 127.0.0.1"
        # The same port twice on one command line is the same error.
        hp=$(freeport)
        t_exit_is 125 "$RTN" exec --publish "$hp:1" --publish "$hp:2" -- true
        t_stderr_has "is in use"
}

publish_bad_syntax() {
        local bad
        for bad in 8080 :8080:80 8080:0 8080:65536 80a:80 1.2.3:80:80 '[::1:80:80' 'host:1:2' \
                '127.0.0.1:80' 8080:80: '' '[::ffff:127.0.0.1]:8080:80' '[fe80::1%lo]:8080:80' ; do
                t_exec --publish "$bad" -- true
                t_exit_is 125
                t_stderr_has "expected [ADDR:]HOSTPORT:SANDBOXPORT"
        done
        t_exit_is 125 "$RTN" serve --publish 8080 # a usage error
        t_stderr_has "expected [ADDR:]HOSTPORT:SANDBOXPORT"
}

publish_privileged_port() {
        [ "$(id -u)" = 0 ] && t_skip "root may listen on any port"
        local start
        start=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)
        [ "$start" -gt 1 ] || t_skip "ip_unprivileged_port_start is $start: no port is privileged"
        t_exec --publish "$((start - 1)):8000" -- true
        t_exit_is 125
        t_stderr_has "port $((start - 1)) is privileged"
}

publish_conflicts() {
        t_exec --net none --publish 18080:80 -- true
        t_exit_is 125
        t_stderr_has "not with --net none"
        t_exec --isolation landlock --publish 18080:80 -- true
        t_exit_is 125
        t_stderr_has "not with --isolation landlock"
}

publish_serve() {
        local hp sp
        read -r hp sp < <(freeport 2)
        t_cmd python3 "$LIB" serve "$RTN" "$hp" "$sp"
        t_exit_is 0
        t_stdout_is ok
}

# rtn serve's end: what its sandbox sent reaches the client that reads it after.
publish_serve_drain() {
        local hp sp
        read -r hp sp < <(freeport 2)
        t_cmd python3 "$LIB" serve-drain "$RTN" "$hp" "$sp"
        t_exit_is 0
        t_stdout_is ok
}

t_run publish_forwards publish_forwards 127.0.0.1
t_run publish_forwards_v6_inside publish_forwards ::1
t_run publish_addr_v6 publish_addr_v6
t_run publish_answer_outlives_command publish_answer_outlives_command '' 127.0.0.1
t_run publish_answer_outlives_command_v6 publish_answer_outlives_command '[::1]:' ::1
t_run publish_never_reaches_host publish_never_reaches_host
t_run publish_no_way_out publish_no_way_out
t_run publish_port_in_use publish_port_in_use
t_run publish_bad_syntax publish_bad_syntax
t_run publish_privileged_port publish_privileged_port
t_run publish_conflicts publish_conflicts
t_run publish_serve publish_serve
t_run publish_serve_answer_outlives_it publish_serve_drain
t_done
