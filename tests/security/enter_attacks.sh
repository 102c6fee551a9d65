#!/usr/bin/env bash
# Attacks on `rtn enter` from outside the sandbox (docs/security-invariants.md, 9 and 33):
# what the caller hands the owner with SCM_RIGHTS as the command's stdio is the one channel
# from the host into the sandbox, so the owner passes on only anonymous pipes and /dev/null,
# never a directory, an O_PATH fd, a socket (one of the host's network namespace connected out
# past the sandbox's loopback-only network), a file (whose mode a user's own sandbox could
# change) or another device; rtn enter and rtn exec pump such a stdio through pipes, as they
# do a terminal. The entered command holds no fd but its three, and a caller that vanishes
# takes its command with it.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

FDS=$T_ROOT/tests/security/enter_fds.py

# rtn exec in the background: SB is its pid, SOCK the socket rtn enter reaches it by.
start_sandbox() {
        export XDG_RUNTIME_DIR=$T_TMP/run
        mkdir -p -m 700 "$XDG_RUNTIME_DIR"
        "$RTN" exec "$@" </dev/null >"$T_TMP/sb.out" 2>"$T_TMP/sb.err" &
        SB=$!
        local reg
        reg=$(t_registry)
        t_wait_for compgen -G "$reg/$SB-*.sock" >/dev/null ||
                t_fail "sandbox $SB never listened: $(cat "$T_TMP/sb.err")"
        SOCK=$(compgen -G "$reg/$SB-*.sock")
}

entered() { timeout 20 "$RTN" enter "$SB" -- "$@" </dev/null >/dev/null 2>&1; }

# Asked again on each try of t_wait_for (an argument would be expanded once).
host_pid() { [ -n "$(t_host_pids "$@")" ]; }
no_host_pid() { [ -z "$(t_host_pids "$@")" ]; }
host_pids_are() {
        local n=$1
        shift
        [ "$(t_host_pids "$@" | wc -l)" = "$n" ]
}

end_sandbox() {
        kill "$SB" 2>/dev/null
        wait "$SB" 2>/dev/null || true
}

host_fds_refused() {
        start_sandbox -- sleep 81.$T_UNIQ
        mkdir -p "$T_TMP/secret"
        local kind
        echo data >"$T_TMP/file"
        t_cmd python3 "$FDS" "$SOCK" "dir=$T_TMP/secret" "opath=$T_TMP/secret" inet unix zero \
                "file=$T_TMP/file" "fifo=$T_TMP/fifo" null pipe -- true
        for kind in dir opath inet unix zero file fifo; do
                grep -q "^$kind: refused: stdin " "$T_OUT_FILE" ||
                        t_fail "a stdin of kind '$kind' reached the sandbox: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        done
        for kind in null pipe; do
                grep -qx "$kind: exited 0" "$T_OUT_FILE" ||
                        t_fail "a stdin of kind '$kind' did not run the command: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        done
        end_sandbox
}

odd_stdio_is_pumped() {
        start_sandbox -- sleep 82.$T_UNIQ
        local got
        got=$(timeout 20 "$RTN" enter "$SB" -- sh -c 'test -p /proc/self/fd/0 && echo pipe' <"$T_TMP" 2>&1)
        [ "$got" = pipe ] || t_fail "a directory as stdin: '$got'"
        # a socket pair, as asyncio gives a child: its bytes arrive, through a pipe
        got=$(python3 -c 'import socket, subprocess, sys
a, b = socket.socketpair()
a.sendall(b"through-a-socket\n"); a.shutdown(socket.SHUT_WR)
sys.stdout.write(subprocess.run(sys.argv[1:], stdin=b, capture_output=True, timeout=20,
                                text=True).stdout)' "$RTN" enter "$SB" -- sh -c 'test -p /proc/self/fd/0 && cat')
        [ "$got" = through-a-socket ] || t_fail "a socket as stdin: '$got'"
        # a file for stdout and stderr keeps their order
        timeout 20 "$RTN" enter "$SB" -- sh -c 'echo a; echo b >&2; echo c; echo d >&2' >"$T_TMP/both" 2>&1
        [ "$(tr '\n' ' ' <"$T_TMP/both")" = "a b c d " ] || t_fail "2>&1 to a file: $(cat "$T_TMP/both")"
        timeout 20 "$RTN" exec -- sh -c 'echo a; echo b >&2; echo c; echo d >&2' >"$T_TMP/both" 2>&1
        [ "$(tr '\n' ' ' <"$T_TMP/both")" = "a b c d " ] || t_fail "rtn exec 2>&1 to a file: $(cat "$T_TMP/both")"
        # rtn exec makes its command's stdio the same way (cli/exec_io.c)
        got=$(timeout 20 "$RTN" exec -- sh -c 'test -p /proc/self/fd/0 && echo pipe' <"$T_TMP" 2>&1)
        [ "$got" = pipe ] || t_fail "a directory as rtn exec's stdin: '$got'"
        end_sandbox
}

# Where the sandbox's user owns the caller's files (a user without subordinate ids), a
# read-only stdin was enough to change a host file's mode, times and xattrs.
host_file_metadata_untouched() {
        start_sandbox -- sleep 86.$T_UNIQ
        local f=$T_TMP/mine attack='import os
for fn in (lambda: os.fchmod(0, 0o666), lambda: os.utime(0, (0, 0)),
           lambda: os.setxattr(0, "user.rtn", b"1")):
    try:
        fn()
    except OSError:
        pass'
        echo data >"$f"
        chmod 600 "$f"
        local before
        before=$(stat -c '%a %Y' "$f")
        timeout 20 "$RTN" enter "$SB" -- python3 -c "$attack" <"$f" >/dev/null 2>&1
        timeout 20 "$RTN" exec -- python3 -c "$attack" <"$f" >/dev/null 2>&1
        [ "$(stat -c '%a %Y' "$f")" = "$before" ] ||
                t_fail "a command changed its stdin's file on the host: $(stat -c '%a %Y' "$f"), was $before"
        python3 -c 'import os, sys; sys.exit("user.rtn" in os.listxattr(sys.argv[1]))' "$f" ||
                t_fail "a command set an xattr on its stdin's file"
        end_sandbox
}

no_fd_leaks_in() {
        start_sandbox -- sleep 83.$T_UNIQ
        t_exit_is 0 "$RTN" enter "$SB" -- sh -c 'ls /proc/self/fd; ls -l /proc/self/fd >&2'
        [ "$(tr '\n' ' ' <"$T_OUT_FILE")" = "0 1 2 3 " ] ||
                t_fail "the entered command holds more than its stdio: $(cat "$T_ERR_FILE")"
        end_sandbox
}

caller_gone_takes_its_command() {
        start_sandbox -- sleep 84.$T_UNIQ
        "$RTN" enter "$SB" -- sleep 85.$T_UNIQ </dev/null >/dev/null 2>"$T_TMP/caller.err" &
        local caller=$!
        t_wait_for host_pid sleep 85.$T_UNIQ ||
                t_fail "never entered: $(cat "$T_TMP/caller.err")"
        kill -KILL "$caller"
        wait "$caller" 2>/dev/null || true
        t_wait_for no_host_pid sleep 85.$T_UNIQ ||
                t_fail "the command of a killed rtn enter still runs"
        t_exit_is 0 "$RTN" enter "$SB" -- echo still-serving
        t_stdout_is still-serving
        end_sandbox
}

# RT_ENTER_MAX (16) commands at once; the next is refused, and a slot frees when one ends.
many_at_once_bounded() {
        start_sandbox -- sleep 87.$T_UNIQ
        local i pids=()
        for i in $(seq 16); do
                "$RTN" enter "$SB" -- sleep 88.$T_UNIQ </dev/null >/dev/null 2>&1 &
                pids+=($!)
        done
        t_wait_for host_pids_are 16 sleep 88.$T_UNIQ ||
                t_fail "16 entered commands never ran together"
        t_exit_is 125 "$RTN" enter "$SB" -- true
        t_stderr_has "16 commands entered at once already"
        kill -KILL "${pids[0]}"
        wait "${pids[0]}" 2>/dev/null
        t_wait_for entered true || t_fail "no slot freed when a caller left"
        kill "${pids[@]}" 2>/dev/null
        wait "${pids[@]}" 2>/dev/null
        end_sandbox
}

t_run host_fds_refused host_fds_refused
t_run odd_stdio_is_pumped odd_stdio_is_pumped
t_run host_file_metadata_untouched host_file_metadata_untouched
t_run no_fd_leaks_in no_fd_leaks_in
t_run caller_gone_takes_its_command caller_gone_takes_its_command
t_run many_at_once_bounded many_at_once_bounded
t_done
