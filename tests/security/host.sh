#!/usr/bin/env bash
# Attacks on the host's processes and network from inside a full sandbox: connect to a host
# TCP listener on 127.0.0.1 and to a host abstract unix socket (the sandbox has its own net
# namespace: ECONNREFUSED, and the listener accepts nothing); kill, ptrace and pidfd_open a
# host process (its pid does not exist in the sandbox's pid namespace: ESRCH; ptrace is
# refused by seccomp first: EPERM). The host process lives on and the listener saw nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

start_listener() {
        sec_need_bin hostlisten
        "$SEC_BIN/hostlisten" "$T_TMP" &
        LISTENER=$!
        t_wait_for test -s "$T_TMP/port" || t_fail "host listener did not start"
        # make sure it works from the host, or the attack proves nothing
        t_exit_is 1 "$SEC_BIN/probe" tcp "$(cat "$T_TMP/port")" ECONNREFUSED
        t_wait_for grep -q tcp "$T_TMP/accepted" || t_fail "the listener does not accept"
        : >"$T_TMP/accepted"
}

stop_listener() {
        kill "$LISTENER" 2>/dev/null
        wait "$LISTENER" 2>/dev/null
        [ ! -s "$T_TMP/accepted" ] || t_fail "the host listener accepted: $(cat "$T_TMP/accepted")"
}

host_tcp() {
        start_listener
        sec_exec -- /mnt/sec/probe tcp "$(cat "$T_TMP/port")" ECONNREFUSED
        stop_listener
        t_exit_is 0
}

host_abstract_unix() {
        start_listener
        sec_exec -- /mnt/sec/probe abstract "$(cat "$T_TMP/abstract")" ECONNREFUSED
        stop_listener
        t_exit_is 0
}

# Host process attacks. Its pid is above the sandbox's pid_max, so it cannot exist inside.
host_process() {
        local how=$1 want=$2
        sec_need_bin probe
        sleep 300 &
        local victim=$!
        sec_exec -- /mnt/sec/probe "$how" "$victim" "$want"
        local alive=0
        kill -0 "$victim" 2>/dev/null && alive=1
        kill "$victim" 2>/dev/null
        wait "$victim" 2>/dev/null
        [ "$alive" = 1 ] || t_fail "the host process died"
        t_exit_is 0
}

# No host process is visible in /proc inside; only the sandbox's own.
host_processes_invisible() {
        sleep 300 &
        local victim=$!
        t_exec -- sh -c 'ls /proc | grep -E "^[0-9]+$" | sort -n | tr "\n" " "'
        kill "$victim"
        t_exit_is 0
        for p in $(cat "$T_OUT_FILE"); do
                [ "$p" -lt 100 ] || t_fail "pid $p visible inside: $(cat "$T_OUT_FILE")"
        done
        grep -qw "$victim" "$T_OUT_FILE" && [ "$victim" -ge 100 ] && t_fail "host pid visible"
        true
}

t_run host_tcp host_tcp
t_run host_abstract_unix host_abstract_unix
t_run host_kill host_process kill ESRCH
t_run host_ptrace host_process ptrace EPERM
t_run host_pidfd host_process pidfd ESRCH
t_run host_processes_invisible host_processes_invisible
t_done
