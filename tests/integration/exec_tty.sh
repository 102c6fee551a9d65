#!/usr/bin/env bash
# rtn exec -t: the command gets a pty from the sandbox's own devpts (never the host's
# terminal), the host window size, an interactive shell works through it, and the host
# terminal is back in canonical mode afterwards; -t without a terminal on stdin is refused.
# script(1) provides the host terminal.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

tty_inside() {
        command -v script >/dev/null || t_skip "script(1) (util-linux) is not installed"
        t_cmd script -qec "stty rows 40 cols 100; '$RTN' exec -t -- sh -c 'tty; stty size; readlink /proc/self/fd/0'; stty -a" /dev/null
        t_exit_is 0
        t_stdout_has "/dev/pts/0"
        t_stdout_has "40 100"
        grep -q -- ' icanon' "$T_OUT_FILE" || t_fail "host terminal left in raw mode: $(cat "$T_OUT_FILE")"
}
t_run pty_from_the_sandbox tty_inside

interactive_shell() {
        command -v script >/dev/null || t_skip "script(1) (util-linux) is not installed"
        printf 'echo typed-$((6*7))\nexit 3\n' >"$T_TMP/in"
        t_cmd sh -c "script -qec \"'$RTN' exec -t -- sh -i\" /dev/null <'$T_TMP/in'"
        t_exit_is 3
        t_stdout_has "typed-42"
}
t_run interactive_shell_exit_status interactive_shell

no_host_tty_without_t() {
        command -v script >/dev/null || t_skip "script(1) (util-linux) is not installed"
        # stdin/stdout are the host terminal, yet the command sees pipes, not a tty.
        t_cmd script -qec "'$RTN' exec -- sh -c 'test -t 0 && echo in-tty; test -t 1 && echo out-tty; echo checked'" /dev/null
        t_exit_is 0
        t_stdout_has checked
        grep -q -- '-tty' "$T_OUT_FILE" && t_fail "a host terminal reached the command: $(cat "$T_OUT_FILE")"
        return 0
}
t_run no_host_tty_without_t no_host_tty_without_t

# A pipe or a file behind -t: the pty would echo the input and never pass its end, so the
# command printed it twice and never ended. Refused before anything starts, as docker does.
tty_without_a_terminal() {
        t_cmd timeout 20 sh -c 'echo hi | "$0" exec -t -- cat' "$RTN"
        t_exit_is 125
        t_stdout_is ""
        t_stderr_has "rtn exec: -t: the input device is not a TTY"
        t_stderr_has "Try 'rtn exec --help'."
        t_cmd timeout 20 "$RTN" exec -t -- cat # stdin /dev/null
        t_exit_is 125
        t_stderr_has "the input device is not a TTY"
}
t_run tty_refused_without_a_terminal tty_without_a_terminal
t_done
