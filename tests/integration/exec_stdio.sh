#!/usr/bin/env bash
# `rtn exec` passes stdio straight through: 50 MiB of random bytes survive `cat` unchanged,
# from a file and from a pipe; EOF on stdin reaches the command; stdout and stderr stay
# apart; fds the caller holds beyond 0-2 do not enter the sandbox. This is what lets a stdio
# MCP server run under rtn unchanged (exec_mcp.sh drives one).
. "$(dirname "$0")/../lib.sh"
t_need_rtn

big_binary_from_file() {
        head -c 50M /dev/urandom >"$T_TMP/in"
        local rc=0
        timeout 120 "$RTN" exec -- cat <"$T_TMP/in" >"$T_TMP/out" 2>"$T_TMP/err" || rc=$?
        [ "$rc" = 0 ] || t_fail "rtn exec -- cat exited $rc: $(head -c 300 "$T_TMP/err")"
        cmp "$T_TMP/in" "$T_TMP/out" >/dev/null 2>&1 ||
                t_fail "output differs: $(stat -c %s "$T_TMP/out") bytes of $(stat -c %s "$T_TMP/in")"
}

big_binary_through_pipes() {
        head -c 50M /dev/urandom >"$T_TMP/in"
        local st
        cat "$T_TMP/in" | timeout 120 "$RTN" exec -- cat 2>"$T_TMP/err" | cmp - "$T_TMP/in" >/dev/null 2>&1
        st=("${PIPESTATUS[@]}")
        [ "${st[1]}" = 0 ] || t_fail "rtn exited ${st[1]}: $(head -c 300 "$T_TMP/err")"
        [ "${st[2]}" = 0 ] || t_fail "piped output differs from the input"
}

eof_reaches_command() {
        printf abc >"$T_TMP/in"
        timeout 60 "$RTN" exec -- wc -c <"$T_TMP/in" >"$T_TMP/out" 2>"$T_TMP/err" ||
                t_fail "rtn exec -- wc -c failed: $(cat "$T_TMP/err")"
        [ "$(tr -d ' ' <"$T_TMP/out")" = 3 ] || t_fail "wc -c printed '$(cat "$T_TMP/out")'"
}

eof_through_a_pipe() {
        local out
        out=$(printf 'one\ntwo\n' | timeout 60 "$RTN" exec -- sort -r) ||
                t_fail "rtn exec -- sort -r failed (hung waiting for EOF?)"
        [ "$out" = $'two\none' ] || t_fail "sort printed '$out'"
}

empty_stdin() {
        t_exit_is 0 "$RTN" exec -- cat
        [ ! -s "$T_OUT_FILE" ] || t_fail "cat of /dev/null printed something"
}

stdout_stderr_apart() {
        t_exit_is 0 "$RTN" exec -- sh -c 'echo to-out; echo to-err >&2'
        t_stdout_is to-out
        t_stderr_has to-err
        grep -q to-err "$T_OUT_FILE" && t_fail "stderr leaked into stdout"
        return 0
}

# The caller holds fd 7 and 9 open (not close-on-exec); the command must see only 0, 1, 2
# (and the fd ls itself opens to read the directory).
no_inherited_fds() {
        t_cmd bash -c 'exec 7</etc/hostname 9>"$1/w"; exec "$2" exec -- ls /proc/self/fd' sh "$T_TMP" "$RTN"
        t_exit_is 0
        local fds
        fds=$(sort -n "$T_OUT_FILE" | tr '\n' ' ')
        [ "$fds" = "0 1 2 3 " ] || t_fail "fds inside: $fds (expected 0 1 2 and ls's own 3)"
}

t_run big_binary_from_file big_binary_from_file
t_run big_binary_through_pipes big_binary_through_pipes
t_run eof_reaches_command eof_reaches_command
t_run eof_through_a_pipe eof_through_a_pipe
t_run empty_stdin empty_stdin
t_run stdout_stderr_apart stdout_stderr_apart
t_run no_inherited_fds no_inherited_fds
t_done
