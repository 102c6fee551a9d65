#!/usr/bin/env bash
# The bash and zsh completions (tools/completion/) against rtn: their verbs are rtn's, every
# option a verb's --help prints completes after that verb, option values and sub-verbs
# complete, and the zsh file parses.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
. "$T_ROOT/tests/cli_lib.sh"

# Runs the bash completion for the words given (the last is the one being completed) in a
# fresh bash and prints COMPREPLY, one a line.
complete_words() {
        # shellcheck disable=SC2016
        bash -c '. "$1" || exit 1; shift
                COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                _rtn rtn "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf "%s\n" "${COMPREPLY[@]}"' complete "$CLI_BASH_COMPLETION" "$@"
}

reply_is() { # EXPECTED (one a line, sorted) WORDS...
        local want=$1 got
        shift
        got=$(complete_words "$@" | sort -u)
        [ "$got" = "$want" ] || t_fail "completing '$*': got '$(tr '\n' ' ' <<<"$got")', want '$(tr '\n' ' ' <<<"$want")'"
}

verbs_are_rtn_s() {
        local v list commands missing=''
        list=$(cli_verbs)
        commands=$("$RTN" help | sed -n '/^Commands:/,/^$/p')
        [ -n "$list" ] || t_fail "no verbs in $CLI_BASH_COMPLETION"
        for v in $list; do
                t_cmd "$RTN" "$v" --help
                grep -q "unknown command" "$T_ERR_FILE" && missing+=" $v(not a verb)"
                cli_has_word "$commands" "$v" || missing+=" $v(not in rtn help)"
        done
        # Where the sources are here, the dispatch table's verbs are exactly the list.
        if [ -f "$T_ROOT/cli/main.c" ]; then
                local table
                table=$(grep -oE '\{"[a-z]+", [a-z]+_cmd_' "$T_ROOT/cli/main.c" | cut -d'"' -f2 | sort)
                [ "$table" = "$(sort <<<"$list")" ] ||
                        missing+=" (cli/main.c has: $(tr '\n' ' ' <<<"$table"))"
        fi
        [ -z "$missing" ] || t_fail "completion verbs differ from rtn's:$missing"
}
t_run verbs_are_rtn_s verbs_are_rtn_s

completes_verbs() {
        reply_is $'exec\nexport' rtn ex
        reply_is $'rollback\nrootfs' rtn ro
        reply_is $'--help\n--version' rtn --
}
t_run completes_verbs completes_verbs

every_help_option_completes() {
        local verb opt reply missing=''
        for verb in $(cli_verbs); do
                reply=$(complete_words rtn "$verb" -)
                for opt in $(cli_help_options "$verb"); do
                        # a line of the reply, matched by the shell (no grep per option)
                        [[ $'\n'$reply$'\n' == *$'\n'"$opt"$'\n'* ]] || missing+=" $verb:$opt"
                done
        done
        [ -z "$missing" ] || t_fail "options in --help that do not complete:$missing"
        reply_is $'--workspace\n--workspace-git\n--workspace-mode' rtn exec --work
        reply_is '--dry-run' rtn apply --dr
}
t_run every_help_option_completes every_help_option_completes

completes_values_and_sub_verbs() {
        reply_is $'loopback\nnone' rtn exec --net ''
        reply_is overlay rtn serve --workspace-mode o
        reply_is $'ro\nrw' rtn exec --workspace-git r
        reply_is $'full\nlandlock\nnamespaces' rtn exec --isolation ''
        reply_is $'bootstrap\nimport\nlist\nrm' rtn rootfs ''
        reply_is $'bootstrap\nimport\nlist\nrm' rtn rootfs --data-dir /nonexistent ''
        reply_is $'list\nrm' rtn env ''
        reply_is verify rtn store ''
        reply_is install rtn pkg --rootfs x ''
        # After `--`, rtn exec completes a command, then its arguments' files.
        complete_words rtn exec --net none -- ech | grep -qx echo || t_fail "no command after --"
        mkdir -p dir/sub
        reply_is dir/sub rtn exec --workspace dir/s
        reply_is dir/sub rtn exec -- ls dir/s
}
t_run completes_values_and_sub_verbs completes_values_and_sub_verbs

completes_names_from_the_data_dir() {
        mkdir -p "$RTN_DATA_DIR/envs" "$RTN_DATA_DIR/rootfs/deb" other/envs
        echo x >"$RTN_DATA_DIR/envs/work"
        echo x >"$RTN_DATA_DIR/envs/.work.reflog"
        echo x >other/envs/elsewhere
        reply_is work rtn log --env ''
        reply_is elsewhere rtn log --data-dir other --env ''
        reply_is work rtn env rm ''
        reply_is deb rtn rootfs rm ''
        complete_words rtn exec --rootfs '' | grep -qx deb || t_fail "rootfs deb does not complete"
        complete_words rtn exec --rootfs '' | grep -qx host || t_fail "rootfs host does not complete"
}
t_run completes_names_from_the_data_dir completes_names_from_the_data_dir

zsh_completion_parses_and_names_every_option() {
        [ -f "$CLI_ZSH_COMPLETION" ] || t_fail "no $CLI_ZSH_COMPLETION"
        command -v zsh >/dev/null || t_skip "zsh is not installed"
        t_cmd zsh -n "$CLI_ZSH_COMPLETION"
        t_exit_is 0
        [ ! -s "$T_ERR_FILE" ] || t_fail "zsh -n: $(cat "$T_ERR_FILE")"
        # Every verb is described, every option of its --help named.
        local verb opt missing='' text
        text=$(cat "$CLI_ZSH_COMPLETION")
        for verb in $(cli_verbs); do
                grep -q "^    '$verb:" <<<"$text" || missing+=" verb:$verb"
                for opt in $(cli_help_options "$verb"); do
                        cli_has_word "$text" "$opt" || missing+=" $verb:$opt"
                done
        done
        [ -z "$missing" ] || t_fail "missing from _rtn:$missing"
        # compinit loads it as the completion of rtn.
        # shellcheck disable=SC2016
        t_cmd zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2/zcompdump"
                print -r -- ${_comps[rtn]}' zsh "$(dirname "$CLI_ZSH_COMPLETION")" "$T_TMP"
        t_exit_is 0
        t_stdout_is _rtn
}
t_run zsh_completion_parses_and_names_every_option zsh_completion_parses_and_names_every_option

# Types each line given, a tab and " x" into an interactive zsh (under zpty) whose rtn is a
# function printing its arguments, and prints what rtn was called with, one a line: what
# the tab completed, as a user would see it.
zsh_complete() {
        cat >"$T_TMP/drive.zsh" <<'ZSH'
zmodload zsh/zpty || exit 1
zpty z zsh -f -i
zpty -w z "PS1='> '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -d $2/zcompdump"
zpty -w z 'rtn() { print -r -- "ARGS[$*]" }; print READY'
zpty -r z out '*READY*' || exit 1
shift 2
for line in "$@"; do
        zpty -n -w z "$line"$'\t'
        sleep 1
        zpty -n -w z 'x'$'\n'
        zpty -r z out '*ARGS\[*\]*' || exit 1
        print -r -- "${${out##*ARGS\[}%%\]*}"
done
zpty -d z
ZSH
        t_cmd zsh -f "$T_TMP/drive.zsh" "$(dirname "$CLI_ZSH_COMPLETION")" "$T_TMP" "$@"
}

zsh_completes_verbs_options_and_values() {
        command -v zsh >/dev/null || t_skip "zsh is not installed"
        zsh_complete 'rtn ser' 'rtn exec --workspace-m' 'rtn serve --net n' 'rtn rootfs b' \
                'rtn store v' 'rtn apply --dr'
        t_exit_is 0
        t_stdout_is "serve x
exec --workspace-mode x
serve --net none x
rootfs bootstrap x
store verify x
apply --dry-run x"
}
t_run zsh_completes_verbs_options_and_values zsh_completes_verbs_options_and_values

t_done
