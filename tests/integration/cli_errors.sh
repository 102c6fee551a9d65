#!/usr/bin/env bash
# Errors that name what the user got wrong, and checks made before any work: a bad --cwd
# (rtn exec and shell_run's cwd) names the directory, not the command; --workspace "" and
# --env NAME=VALUE say what they want; rtn log --env with a typo is an error; log and diff
# neither create a data dir nor need to write one; import and export name the file or
# directory at fault, and export -o - writes to stdout; an export cut off by SIGINT leaves no
# file; a bind whose mount point cannot be made fails the start of rtn serve and rtn exec.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

MCP=$T_ROOT/tests/integration/mcp_calls.py

cwd_names_the_directory() {
        t_cmd "$RTN" exec --cwd /nope -- pwd
        t_exit_is 125
        t_stderr_has "rtn exec: chdir /nope: No such file or directory"
        printf '%s\n' 'shell_run {"command":"pwd","cwd":"/nope"}' >calls
        t_cmd python3 "$MCP" calls -- "$RTN" serve
        t_exit_is 0
        t_stdout_has 'chdir /nope: No such file or directory'
        grep -q 'chdir /bin/sh' "$T_OUT_FILE" && t_fail "names the shell: $(cat "$T_OUT_FILE")"
        true
}
t_run cwd_names_the_directory cwd_names_the_directory

workspace_and_env_say_what_they_want() {
        t_cmd "$RTN" exec --workspace "" -- true
        t_exit_is 125
        t_stderr_has "rtn exec: --workspace wants a directory"
        t_cmd "$RTN" serve --workspace ""
        t_exit_is 125
        t_stderr_has "rtn serve: --workspace wants a directory"
        local v
        for v in exec serve log; do
                if [ "$v" = exec ]; then
                        t_cmd "$RTN" exec --env A=1 -- true
                else
                        t_cmd "$RTN" "$v" --env A=1
                fi
                t_stderr_has "rtn $v: invalid environment name 'A=1'"
                t_stderr_has "a variable is --setenv NAME=VALUE"
        done
}
t_run workspace_and_env_say_what_they_want workspace_and_env_say_what_they_want

readers_create_nothing() {
        export RTN_DATA_DIR=$T_TMP/data
        local v
        for v in log reflog diff; do
                t_exit_is 0 "$RTN" "$v"
                t_stdout_is ""
        done
        t_no_file "$RTN_DATA_DIR"
        t_cmd "$RTN" log --env typo
        t_exit_is 1
        t_stderr_has "rtn log: environment 'typo' has no commits"
        t_no_file "$RTN_DATA_DIR"
}
t_run readers_create_nothing readers_create_nothing

log_env_typo_is_an_error() {
        export RTN_DATA_DIR=$T_TMP/data
        t_exit_is 0 "$RTN" exec --commit -m one -- sh -c "echo 1 >/workspace/f"
        t_exit_is 0 "$RTN" log
        t_stdout_has " one"
        t_cmd "$RTN" log --env defualt
        t_exit_is 1
        t_stdout_is ""
        t_stderr_has "rtn log: environment 'defualt' has no commits"
        t_cmd "$RTN" reflog --env defualt
        t_exit_is 1
}
t_run log_env_typo_is_an_error log_env_typo_is_an_error

# As root the mode bits do not stop a write: a read-only bind mount does (a mount
# namespace of its own); as another user, a data dir without write permission.
readers_on_a_read_only_data_dir() {
        export RTN_DATA_DIR=$T_TMP/data
        t_exit_is 0 "$RTN" exec --commit -m one -- sh -c "echo 1 >/workspace/f"
        t_exit_is 0 "$RTN" exec --keep -- sh -c 'echo x >/workspace/p'
        local run=()
        if [ "$(id -u)" = 0 ]; then
                run=(unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"' "$RTN_DATA_DIR")
        else
                # Files of subordinate ids (the pending upper) keep their mode: the dirs
                # the user owns are what a writer would need.
                chmod -R a-w "$RTN_DATA_DIR" 2>/dev/null || true
        fi
        t_cmd "${run[@]}" touch "$RTN_DATA_DIR/probe"
        [ "$T_RC" != 0 ] || t_fail "the data dir is writable: the case tests nothing"
        t_cmd "${run[@]}" "$RTN" log
        t_exit_is 0
        t_stdout_has " one"
        t_cmd "${run[@]}" "$RTN" diff
        t_exit_is 0
        t_stdout_has "A /workspace/p"
        [ "$(id -u)" = 0 ] || chmod -R u+w "$RTN_DATA_DIR" 2>/dev/null || true
}
t_run readers_on_a_read_only_data_dir readers_on_a_read_only_data_dir

import_export_name_the_file() {
        export RTN_DATA_DIR=$T_TMP/data
        t_exit_is 0 "$RTN" exec --commit -m one -- sh -c "echo 1 >/workspace/f"
        t_cmd "$RTN" export -o "$T_TMP/nodir/x.tar.zst"
        t_exit_is 1
        t_stderr_has "directory $T_TMP/nodir: No such file or directory"
        t_cmd sh -c '"$0" export -o - >"$1"' "$RTN" "$T_TMP/out.tar.zst"
        t_exit_is 0
        t_no_file "$T_TMP/-"
        t_exit_is 0 tar --zstd -tf "$T_TMP/out.tar.zst"
        t_stdout_has "rtn-export"
        echo garbage >"$T_TMP/g"
        t_cmd "$RTN" import "$T_TMP/g"
        t_exit_is 1
        t_stderr_has "is not an rtn export"
        t_cmd "$RTN" import "$T_TMP/nope"
        t_exit_is 1
        t_stderr_has "open $T_TMP/nope: No such file or directory"
        ls "$T_TMP" | grep -q tmp && t_fail "temp files left: $(ls "$T_TMP")"
        true
}
t_run import_export_name_the_file import_export_name_the_file

# An export of a big environment interrupted half-way leaves nothing in the target
# directory: the archive is an unnamed file until complete. A background job of a
# non-interactive shell ignores SIGINT, hence env --default-signal.
export_interrupted_leaves_nothing() {
        export RTN_DATA_DIR=$T_TMP/data
        mkdir out
        local try rc=
        # The signal must come while the export writes: on a loaded machine the export can
        # end before this shell has seen it hold the lock. Then the store grows and it is
        # tried again (an export that ended is no test of an interrupted one).
        for try in 1 2 3; do
                t_exit_is 0 "$RTN" exec --commit -m "big$try" -- \
                        sh -c "head -c 200M /dev/urandom >/workspace/big$try"
                rm -rf out/* out/.[!.]* 2>/dev/null
                export_interrupt && break
        done
        [ "$rc" = 130 ] || t_fail "the export was never interrupted in $try tries (exit $rc): make it bigger"
        [ -z "$(ls -A out)" ] || t_fail "left in the target directory: $(ls -lA out)"
        t_exit_is 0 "$RTN" log
        t_stdout_has " big1"
}

# One export, interrupted as the terminal's ^C would once it holds the store's lock: true
# when the signal reached it while it ran (its exit in rc).
export_interrupt() {
        # Its own process group, all of which the terminal's ^C would reach: as a user with
        # subordinate ids a helper in a user namespace writes the archive.
        setsid env --default-signal=INT "$RTN" export -o out/x.tar.zst &
        local pid=$! i lock
        # Until the export holds the store's lock (it opens the archive right after), seen in
        # /proc/locks: the helper's fds are another uid's, out of this user's sight.
        lock=":$(stat -c %i "$RTN_DATA_DIR/lock") "
        for i in $(seq 2000); do
                grep -q -- "$lock" /proc/locks && break
                sleep 0.005
        done
        sleep 0.05
        if ! kill -INT -- "-$pid" 2>/dev/null; then
                wait "$pid" 2>/dev/null
                rc=ended
                return 1
        fi
        wait "$pid"
        rc=$?
        [ "$rc" = 130 ]
}
t_run export_interrupted_leaves_nothing export_interrupted_leaves_nothing

# A bind's mount point is made as the sandbox starts; one the agent cannot make (in a
# read-only directory of the workspace) fails rtn serve's start, naming the bind, rather
# than every call after it; rtn exec fails before the command, naming it too.
bind_mount_point_fails_the_start() {
        mkdir -p ws/ro ws/rw src
        touch ws/file
        # A directory cannot be mounted on a file: a failure for every user.
        t_cmd "$RTN" exec --workspace ws --bind src:/workspace/file -- echo ran
        t_exit_is 125
        t_stdout_is ""
        t_stderr_has "rtn exec: bind $T_TMP/src: bind destination /workspace/file: the source is a directory"
        t_cmd timeout 60 "$RTN" serve --workspace ws --bind src:/workspace/file
        t_exit_is 1
        t_stderr_has "rtn serve: bind $T_TMP/src: bind destination /workspace/file: the source is a directory"
        grep -q "MCP backend" "$T_ERR_FILE" && t_fail "said twice: $(cat "$T_ERR_FILE")"
        # A read-only directory of the workspace stops root's agent (an idmapped workspace);
        # a user's own sandbox root may write its own directories.
        chmod 555 ws/ro
        if [ "$(id -u)" = 0 ]; then
                t_cmd "$RTN" exec --workspace ws --bind src:/workspace/ro/x -- echo ran
                t_exit_is 125
                t_stderr_has "rtn exec: bind $T_TMP/src: create mountpoint /workspace/ro/x: Permission denied"
                t_cmd timeout 60 "$RTN" serve --workspace ws --bind src:/workspace/ro/x
                t_exit_is 1
                t_stderr_has "rtn serve: bind $T_TMP/src: create mountpoint /workspace/ro/x: Permission denied"
        fi
        # A mount point that can be made: the server starts and its calls see the bind.
        echo in-src >src/f
        printf '%s\n' 'shell_run {"command":"cat /workspace/rw/x/f"}' >calls
        t_cmd timeout 60 python3 "$MCP" calls -- "$RTN" serve --workspace ws --bind src:/workspace/rw/x
        t_exit_is 0
        t_stdout_has 'in-src'
        chmod 755 ws/ro
}
t_run bind_mount_point_fails_the_start bind_mount_point_fails_the_start

# A commit message too long is refused before the command runs, not after.
long_message_refused_first() {
        export RTN_DATA_DIR=$T_TMP/data
        t_cmd "$RTN" exec --commit -m "$(head -c 5000 /dev/zero | tr '\0' x)" -- sh -c 'echo ran >/workspace/ran'
        t_exit_is 125
        t_stderr_has "at most 4096"
        grep -q "rtn exec: committed\|not committed" "$T_ERR_FILE" && t_fail "the command ran: $(cat "$T_ERR_FILE")"
        true
}
t_run long_message_refused_first long_message_refused_first

limits_checked_and_shown() {
        local v
        for v in exec serve; do
                if [ "$v" = exec ]; then
                        t_cmd "$RTN" exec --memory-max 0 -- true
                else
                        t_cmd "$RTN" serve --memory-max 0
                fi
                t_exit_is 125
                t_stderr_has "rtn $v: --memory-max wants a size above 0"
                "$RTN" "$v" --help | grep -q "at least 301" || t_fail "rtn $v --help lacks the --pids-max minimum"
        done
}
t_run limits_checked_and_shown limits_checked_and_shown

t_done
