#!/usr/bin/env bash
# One convention for every verb and sub-verb (rtn(1), CONVENTIONS): --help and -h print the
# usage on stdout and exit 0; a usage error (a bogus option, a missing or extra operand)
# prints "rtn VERB: MESSAGE" and "Try 'rtn VERB --help'." on stderr, nothing on stdout, and
# exits 125. The verbs are read from cli/main.c's table where the sources are here (else the
# completion's list), the sub-verbs from each verb's usage lines, so a new one cannot drift.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
. "$T_ROOT/tests/cli_lib.sh"

# The verbs of cli/main.c's verbs[] table (and mcp's serve) into CONV_VERBS. The shell's own
# matching, as `sed -n '/^static const struct verb verbs\[\]/,/^};/p' | grep -oE '\{"[a-z]...'`
# would answer: the suite reads the table once, and every sed or grep is a fork and an exec.
CONV_VERBS=()
conv_read_verbs() {
        local line in=0 re='^[^{]*\{"([a-z][a-z0-9-]*)"(.*)$'
        if [ -f "$T_ROOT/cli/main.c" ]; then
                while IFS= read -r line || [ -n "$line" ]; do
                        if [ "$in" = 0 ]; then
                                [[ $line == 'static const struct verb verbs[]'* ]] && in=1
                        fi
                        [ "$in" = 1 ] || continue
                        while [[ $line =~ $re ]]; do
                                CONV_VERBS+=("${BASH_REMATCH[1]}")
                                line=${BASH_REMATCH[2]}
                        done
                        [[ $line == '};'* ]] && break
                done <"$T_ROOT/cli/main.c"
        elif [ -f "$CLI_BASH_COMPLETION" ]; then
                mapfile -t CONV_VERBS < <(cli_verbs)
        fi
}

# VERB's sub-verbs into CONV_SUBVERBS: the lowercase words after "rtn VERB" on its usage
# lines, each once.
conv_read_subverbs() {
        local line s seen=' '
        local re="^(usage:| +)[[:space:]]*rtn $1 ([a-z][a-z0-9-]*)([[:space:]].*)?\$"
        CONV_SUBVERBS=()
        while IFS= read -r line; do
                [[ $line =~ $re ]] || continue
                s=${BASH_REMATCH[2]}
                [[ $seen == *" $s "* ]] && continue
                seen+="$s "
                CONV_SUBVERBS+=("$s")
        done < <("$RTN" "$1" --help 2>/dev/null)
}

# The words of every verb and sub-verb, "exec", "rootfs bootstrap", ..., into CONV_ALL: read
# once for the suite (rtn VERB --help writes nothing anywhere).
CONV_ALL=()
conv_read_all() {
        local v s
        conv_read_verbs
        for v in "${CONV_VERBS[@]}"; do
                CONV_ALL+=("$v")
                conv_read_subverbs "$v"
                for s in "${CONV_SUBVERBS[@]}"; do
                        CONV_ALL+=("$v $s")
                done
        done
}
conv_read_all

# True when WORDS is one of CONV_ALL.
conv_has() {
        local w
        for w in "${CONV_ALL[@]}"; do
                [ "$w" = "$1" ] && return 0
        done
        return 1
}

# Checks the last command was a usage error of "rtn WORDS".
conv_usage_error() {
        local words=$1
        t_exit_is 125
        [ ! -s "$T_OUT_FILE" ] || t_fail "wrote to stdout: $(head -c 200 "$T_OUT_FILE"): $(t_last)"
        local first='' last='' line
        # The first and the last line of stderr (as head -n 1 and tail -n 1 would).
        { IFS= read -r first || [ -n "$first" ]; } <"$T_ERR_FILE"
        last=$first
        while IFS= read -r line || [ -n "$line" ]; do last=$line; done <"$T_ERR_FILE"
        [[ $first == "rtn $words: "* ]] || t_fail "first line is not 'rtn $words: ...': '$first': $(t_last)"
        [ "$last" = "Try 'rtn $words --help'." ] || t_fail "last line is '$last': $(t_last)"
}

table_is_read() {
        local n
        [ ${#CONV_VERBS[@]} -gt 0 ] || t_skip "neither cli/main.c nor the completion is in this copy of the tests"
        n=${#CONV_ALL[@]}
        [ "$n" -ge 15 ] || t_fail "only $n verbs found: $(printf '%s,' "${CONV_ALL[@]}")"
        conv_has 'rootfs bootstrap' || t_fail "rootfs's sub-verbs not found"
        conv_has 'pkg install' || t_fail "pkg's sub-verbs not found"
        conv_has 'store verify' || t_fail "store's sub-verbs not found"
}
t_run table_is_read table_is_read

help_on_stdout_with_0() {
        [ ${#CONV_VERBS[@]} -gt 0 ] || t_skip "no verb list in this copy of the tests"
        local words bad='' opt first
        for words in "${CONV_ALL[@]}"; do
                for opt in --help -h; do
                        # shellcheck disable=SC2086 # words are split on purpose
                        t_cmd "$RTN" $words $opt
                        first=''
                        { IFS= read -r first || [ -n "$first" ]; } <"$T_OUT_FILE"
                        if [ "$T_RC" != 0 ] || [ -s "$T_ERR_FILE" ] ||
                                [[ $first != "usage: rtn ${words%% *}"* ]]; then
                                bad+=" [rtn $words $opt: exit $T_RC, stdout '$first', stderr '$(head -c 100 "$T_ERR_FILE")']"
                        fi
                done
        done
        [ -z "$bad" ] || t_fail "help not on stdout with 0:$bad"
}
t_run help_on_stdout_with_0 help_on_stdout_with_0

bogus_option_is_a_usage_error() {
        [ ${#CONV_VERBS[@]} -gt 0 ] || t_skip "no verb list in this copy of the tests"
        local words
        # The case runs in a subshell of its own: the export ends with it.
        export RTN_DATA_DIR="$T_TMP/no-store"
        for words in "${CONV_ALL[@]}"; do
                # shellcheck disable=SC2086
                t_cmd "$RTN" $words --bogus-option
                conv_usage_error "$words"
                t_stderr_has "--bogus-option"
                # shellcheck disable=SC2086
                t_cmd "$RTN" $words -Z
                conv_usage_error "$words"
        done
        [ ! -e "$T_TMP/no-store" ] || t_fail "a usage error created the data dir"
}
t_run bogus_option_is_a_usage_error bogus_option_is_a_usage_error

bad_operands_are_usage_errors() {
        local v
        # Verbs that take no operand, given one (rtn diff and rtn apply take paths).
        for v in log reflog reset gc commit; do
                t_cmd "$RTN" "$v" extra-operand
                conv_usage_error "$v"
        done
        # rtn apply PATH where nothing is pending: that path has no change, a user's error.
        t_cmd "$RTN" apply extra-operand
        t_exit_is 1
        t_stderr_has "rtn apply: /workspace/extra-operand: no pending change"
        # Verbs that need one, given none.
        for v in rollback import export rootfs pkg store; do
                t_cmd "$RTN" "$v"
                conv_usage_error "$v"
        done
        t_cmd "$RTN" store frob
        conv_usage_error store
        t_cmd "$RTN" rootfs frob
        conv_usage_error rootfs
        t_cmd "$RTN" rootfs list extra
        conv_usage_error "rootfs list"
        t_cmd "$RTN" probe extra
        conv_usage_error probe
        t_cmd "$RTN" exec
        conv_usage_error exec
        t_cmd "$RTN" serve extra
        conv_usage_error serve
        t_cmd "$RTN" exec --timeout 0 -- true
        conv_usage_error exec
        t_stderr_has "--timeout"
        t_cmd "$RTN" gc --reflog-days -1
        conv_usage_error gc
}
t_run bad_operands_are_usage_errors bad_operands_are_usage_errors

# rtn's own: no verb and an unknown verb are usage errors of "rtn".
top_level_usage_errors() {
        t_cmd "$RTN" frobnicate
        t_exit_is 125
        t_stderr_has "rtn: unknown command 'frobnicate'"
        local last='' line
        while IFS= read -r line || [ -n "$line" ]; do last=$line; done <"$T_ERR_FILE"
        [ "$last" = "Try 'rtn --help'." ] || t_fail "no Try line: $(cat "$T_ERR_FILE")"
}
t_run top_level_usage_errors top_level_usage_errors


# No global options: one before the verb is a usage error that says where options go.
option_before_the_verb() {
        t_cmd "$RTN" --data-dir "$T_TMP/d" log
        t_exit_is 125
        t_stdout_is ""
        t_stderr_has "rtn: unknown option '--data-dir': options follow the verb"
        t_stderr_has "Try 'rtn --help'."
        t_no_file "$T_TMP/d"
}
t_run option_before_the_verb option_before_the_verb

t_done
