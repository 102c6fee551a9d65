#!/usr/bin/env bash
# `rtn exec` exit statuses and the end of a sandbox: the command's own code (0, 1, 42); 127
# when the command is not found, 126 when it cannot be executed; 128+N when killed by signal
# N; 124 when --timeout fires, which kills every process inside, grandchildren that ignore
# SIGTERM included; when the command exits, what it left running in the background dies too,
# and so does everything when rtn itself is SIGKILLed.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

exit_0() { t_exit_is 0 "$RTN" exec -- true; }
exit_1() { t_exit_is 1 "$RTN" exec -- false; }
exit_42() { t_exit_is 42 "$RTN" exec -- sh -c 'exit 42'; }
exit_255() { t_exit_is 255 "$RTN" exec -- sh -c 'exit 255'; }

not_found_127() {
        t_exit_is 127 "$RTN" exec -- /nonexistent/rtn-no-such-command
        t_exit_is 127 "$RTN" exec -- rtn-no-such-command-in-path
        t_exit_is 127 "$RTN" exec -- /etc/passwd/rtn-not-a-dir # ENOTDIR
}

not_executable_126() {
        t_exit_is 126 "$RTN" exec -- /etc/passwd
        # A directory cannot be executed either.
        t_exit_is 126 "$RTN" exec -- /usr
}

signal_term_143() { t_exit_is 143 "$RTN" exec -- sh -c 'kill -TERM $$'; }
signal_kill_137() { t_exit_is 137 "$RTN" exec -- sh -c 'kill -KILL $$'; }
signal_segv_139() { t_exit_is 139 "$RTN" exec -- sh -c 'kill -SEGV $$'; }

timeout_124() {
        local start end
        start=$(date +%s)
        t_exit_is 124 "$RTN" exec --timeout 1 -- sleep 60
        end=$(date +%s)
        [ $((end - start)) -lt 15 ] || t_fail "--timeout 1 took $((end - start)) s"
}

# A duration as people write it (common/duration.h): a fraction, a unit; a bad one is a usage
# error that names the option before anything starts.
timeout_takes_durations() {
        t_cmd "$RTN" exec --timeout 0.5s -- sleep 60
        t_exit_is 124
        t_stderr_has "timed out after 0.5 s"
        t_exit_is 0 "$RTN" exec --timeout 1.5 -- true
        t_exit_is 0 "$RTN" exec --timeout 1h30m -- true
        local bad
        for bad in '5 m' 1e9 0x10 -1 0 ''; do
                t_cmd "$RTN" exec --timeout "$bad" -- true
                t_exit_is 125
                t_stderr_has "rtn exec: --timeout"
        done
        t_cmd "$RTN" serve --timeout 366d
        t_exit_is 125
        t_stderr_has "rtn serve: --timeout 366d: at most a year"
}

timeout_not_hit_keeps_status() {
        t_exit_is 3 "$RTN" exec --timeout 30 -- sh -c 'exit 3'
}

# The inner pid is what a pid file inside holds; NSpid in /proc/PID/status (proc(5)) maps
# it to the host pid: its last field is the pid in the innermost namespace.
host_pid_for_inner() {
        local inner=$1 n=$2 p
        for p in $(t_host_pids sleep "$n"); do
                awk -v want="$inner" '/^NSpid:/ { exit !($NF == want && NF > 2) }' \
                        "/proc/$p/status" 2>/dev/null && echo "$p"
        done
        return 0
}

timeout_kills_grandchildren() {
        local n=$((700000 + RANDOM)) ws=$T_TMP/ws
        mkdir "$ws"
        chmod 777 "$ws"
        # The grandchild ignores the polite signals and lives in its own session, as a
        # daemon would; only killing the whole pid namespace ends it.
        "$RTN" exec --timeout 4 --workspace "$ws" -- sh -c \
                "setsid sh -c 'trap \"\" TERM HUP INT; echo \$\$ >/workspace/pid; exec sleep $n' & sleep 600" \
                </dev/null >"$T_TMP/out" 2>"$T_TMP/err" &
        local rtn_pid=$!
        t_wait_for test -s "$ws/pid" || t_fail "no pid file from inside: $(cat "$T_TMP/err")"
        local inner host
        inner=$(cat "$ws/pid")
        # The pid file is written before the exec of sleep, which a loaded machine may run
        # well after it.
        host_found() { host=$(host_pid_for_inner "$inner" "$n") && [ -n "$host" ]; }
        t_wait_for host_found || t_fail "no host process for inner pid $inner (sleep $n)"
        local rc=0
        wait "$rtn_pid" || rc=$?
        [ "$rc" = 124 ] || t_fail "rtn exited $rc, expected 124: $(cat "$T_TMP/err")"
        sleep 0.5
        [ ! -e "/proc/$host" ] || [ -z "$(t_host_pids sleep "$n")" ] ||
                t_fail "grandchild (host pid $host, inner $inner) survived the timeout"
}

background_dies_with_command() {
        local n=$((800000 + RANDOM))
        # The command ends once the background process is the sleep (an exec a loaded machine
        # may not have run 0.3 s later), so the sleep itself is what must die.
        t_exit_is 0 "$RTN" exec -- sh -c "setsid sh -c 'trap \"\" TERM HUP; exec sleep $n' &
                for i in \$(seq 100); do [ \"\$(cat /proc/\$!/comm)\" = sleep ] && exit 0; sleep 0.1; done; exit 1"
        sleep 0.5
        [ -z "$(t_host_pids sleep "$n")" ] || t_fail "background sleep $n outlived the command"
}

sleep_running() { [ -n "$(t_host_pids sleep "$1")" ]; }
sleep_gone() { [ -z "$(t_host_pids sleep "$1")" ]; }

sigkill_of_rtn_ends_sandbox() {
        local n=$((900000 + RANDOM))
        "$RTN" exec -- sleep "$n" </dev/null >/dev/null 2>"$T_TMP/err" &
        local rtn_pid=$!
        t_wait_for sleep_running "$n" || t_fail "sleep $n never started: $(cat "$T_TMP/err")"
        kill -KILL "$rtn_pid"
        wait "$rtn_pid" 2>/dev/null
        t_wait_for sleep_gone "$n" || t_fail "sleep $n still runs 10 s after rtn was SIGKILLed"
}

sigterm_is_forwarded() {
        local n=$((600000 + RANDOM))
        "$RTN" exec -- sh -c "trap 'exit 7' TERM; sleep $n & wait" </dev/null >/dev/null 2>"$T_TMP/err" &
        local rtn_pid=$! rc=0
        # A TERM before the trap is set would end sh itself (143): the sleep starts after it.
        t_wait_for sleep_running "$n" || t_fail "sleep $n never started: $(cat "$T_TMP/err")"
        kill -TERM "$rtn_pid"
        wait "$rtn_pid" || rc=$?
        [ "$rc" = 7 ] || t_fail "rtn exited $rc after SIGTERM, expected the command's 7: $(cat "$T_TMP/err")"
}

t_run exit_0 exit_0
t_run exit_1 exit_1
t_run exit_42 exit_42
t_run exit_255 exit_255
t_run not_found_127 not_found_127
t_run not_executable_126 not_executable_126
t_run signal_term_143 signal_term_143
t_run signal_kill_137 signal_kill_137
t_run signal_segv_139 signal_segv_139
t_run timeout_124 timeout_124
t_run timeout_takes_durations timeout_takes_durations
t_run timeout_not_hit_keeps_status timeout_not_hit_keeps_status
t_run timeout_kills_grandchildren timeout_kills_grandchildren
t_run background_dies_with_command background_dies_with_command
t_run sigkill_of_rtn_ends_sandbox sigkill_of_rtn_ends_sandbox
t_run sigterm_is_forwarded sigterm_is_forwarded
t_done
