#!/usr/bin/env bash
# rtn's own options, before any verb: --version and version print "rtn VERSION" on stdout
# with 0; --help, -h and help list every verb on stdout with 0; no verb prints the list on
# stderr with 125; an unknown verb is named on stderr with 125 (as rtn(1) says).
. "$(dirname "$0")/../lib.sh"
t_need_rtn
. "$T_ROOT/tests/cli_lib.sh"

version_on_stdout() {
        local arg first=''
        for arg in --version version; do
                t_cmd "$RTN" "$arg"
                t_exit_is 0
                grep -qxE 'rtn [0-9]+\.[0-9]+\.[0-9]+' "$T_OUT_FILE" ||
                        t_fail "rtn $arg printed '$(cat "$T_OUT_FILE")'"
                [ ! -s "$T_ERR_FILE" ] || t_fail "rtn $arg wrote to stderr: $(cat "$T_ERR_FILE")"
                [ -z "$first" ] || [ "$first" = "$(cat "$T_OUT_FILE")" ] ||
                        t_fail "--version and version differ"
                first=$(cat "$T_OUT_FILE")
        done
        # One definition of the version, where the sources are here, and it is the one printed.
        if [ -f "$T_ROOT/GNUmakefile" ]; then
                local defs
                defs=$(grep -rE --include='*.[ch]' --include=GNUmakefile --exclude-dir=tests \
                        --exclude-dir='build*' --exclude-dir=.git 'RTN_VERSION[ =]' "$T_ROOT")
                [ "$(wc -l <<<"$defs")" = 1 ] || t_fail "RTN_VERSION is defined more than once: $defs"
                [[ $defs == *"\"${first#rtn }\""* ]] ||
                        t_fail "rtn --version ($first) is not the RTN_VERSION defined: $defs"
        fi
}
t_run version_on_stdout version_on_stdout

help_lists_every_verb_on_stdout() {
        local arg v missing=''
        for arg in --help -h help; do
                t_cmd "$RTN" "$arg"
                t_exit_is 0
                t_stdout_has "usage: rtn COMMAND"
                [ ! -s "$T_ERR_FILE" ] || t_fail "rtn $arg wrote to stderr: $(cat "$T_ERR_FILE")"
                for v in $(cli_verbs) help version; do
                        cli_has_word "$(cat "$T_OUT_FILE")" "$v" || missing+=" $arg:$v"
                done
        done
        [ -z "$missing" ] || t_fail "verbs missing from the help:$missing"
}
t_run help_lists_every_verb_on_stdout help_lists_every_verb_on_stdout

no_verb_is_a_usage_error() {
        t_cmd "$RTN"
        t_exit_is 125
        t_stdout_is ""
        t_stderr_has "usage: rtn COMMAND"
}
t_run no_verb_is_a_usage_error no_verb_is_a_usage_error

unknown_verb_is_named_on_stderr() {
        t_cmd "$RTN" frobnicate x
        t_exit_is 125
        t_stdout_is ""
        t_stderr_has "rtn: unknown command 'frobnicate'"
        # rtn has no global options: one before the verb says where options go
        t_cmd "$RTN" --frobnicate x
        t_exit_is 125
        t_stdout_is ""
        t_stderr_has "rtn: unknown option '--frobnicate': options follow the verb (rtn VERB [OPTIONS])"
}
t_run unknown_verb_is_named_on_stderr unknown_verb_is_named_on_stderr

t_done
