#!/usr/bin/env bash
# The bash and zsh completions (tools/completion/) against rtn: their verbs are rtn's, every
# option a verb's --help prints completes after that verb, option values and sub-verbs
# complete, and the zsh file parses.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
. "$T_ROOT/tests/cli_lib.sh"

# The bash completion is asked in batches: `want EXPECTED WORDS...` and `ask WORDS...` queue a
# question, `answer` runs them all in one fresh bash that sources the completion once and
# answers each in a subshell of its own (no question sees another's state), then checks
# every `want` and leaves every reply in REPLIES[i] (one a line), i in the order asked.
Q_ARGS=()
Q_WANT=()
Q_CHECK=()
REPLIES=()
Q_END=$'\x1f'
ask() {
        Q_ARGS+=("$@" "$Q_END")
        Q_WANT+=("")
        Q_CHECK+=(0)
}
want() { # EXPECTED (one a line, sorted) WORDS...
        local w=$1
        shift
        ask "$@"
        Q_WANT[${#Q_WANT[@]} - 1]=$w
        Q_CHECK[${#Q_CHECK[@]} - 1]=1
}

# The lines given, each once, sorted (as sort -u would, in the same locale), joined by
# newlines without the trailing ones (as $(...) would) into SORTED.
sort_unique() {
        local -a out=()
        local l i j
        for l in "$@"; do
                for ((i = 0; i < ${#out[@]}; i++)); do
                        [[ ${out[i]} == "$l" ]] && continue 2
                        [[ $l < ${out[i]} ]] && break
                done
                for ((j = ${#out[@]}; j > i; j--)); do out[j]=${out[j - 1]}; done
                out[i]=$l
        done
        SORTED=$(printf '%s\n' "${out[@]}")
}

answer() {
        local line i=0 words='' a
        local -a lines=()
        REPLIES=()
        # shellcheck disable=SC2016
        while IFS= read -r line; do
                if [ "$line" = $'\x1e' ]; then
                        REPLIES[i]=$(printf '%s\n' "${lines[@]}")
                        lines=()
                        i=$((i + 1))
                else
                        lines+=("$line")
                fi
        done < <(Q_END=$Q_END bash -c '. "$1" || exit 1; shift
                words=()
                for a in "$@"; do
                        if [ "$a" != "$Q_END" ]; then words+=("$a"); continue; fi
                        (
                                COMP_WORDS=("${words[@]}"); COMP_CWORD=$((${#words[@]} - 1))
                                COMP_LINE="${words[*]}"; COMP_POINT=${#COMP_LINE}
                                _rtn rtn "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                                printf "%s\n" "${COMPREPLY[@]}"
                        )
                        printf "\x1e\n"
                        words=()
                done' complete "$CLI_BASH_COMPLETION" "${Q_ARGS[@]}")
        [ "$i" = "${#Q_WANT[@]}" ] || t_fail "the completion answered $i of ${#Q_WANT[@]} questions"
        i=0
        for a in "${Q_ARGS[@]}"; do
                if [ "$a" != "$Q_END" ]; then words+="$a "; continue; fi
                if [ "${Q_CHECK[i]}" = 1 ]; then
                        mapfile -t lines <<<"${REPLIES[i]}"
                        sort_unique "${lines[@]}"
                        [ "$SORTED" = "${Q_WANT[i]}" ] ||
                                t_fail "completing '${words% }': got '$(tr '\n' ' ' <<<"$SORTED")', want '$(tr '\n' ' ' <<<"${Q_WANT[i]}")'"
                fi
                words=''
                i=$((i + 1))
        done
        Q_ARGS=() Q_WANT=() Q_CHECK=()
}

# True when LINE is a line of TEXT: is_line TEXT LINE.
is_line() {
        [[ $'\n'$1$'\n' == *$'\n'"$2"$'\n'* ]]
}

# What each verb's --help offers (cli_help_options), read once for the suite: two cases ask.
declare -A HELP_OPTIONS=()
for verb in $(cli_verbs); do
        HELP_OPTIONS[$verb]=$(cli_help_options "$verb")
done

verbs_are_rtn_s() {
        local v list commands missing=''
        list=$(cli_verbs)
        commands=$("$RTN" help | sed -n '/^Commands:/,/^$/p')
        [ -n "$list" ] || t_fail "no verbs in $CLI_BASH_COMPLETION"
        for v in $list; do
                t_cmd "$RTN" "$v" --help
                t_has "$T_ERR_FILE" "unknown command" && missing+=" $v(not a verb)"
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
        want $'exec\nexport' rtn ex
        want $'rollback\nrootfs' rtn ro
        want $'--help\n--version' rtn --
        answer
}
t_run completes_verbs completes_verbs

every_help_option_completes() {
        local verb opt missing='' i=0
        local -a verbs
        mapfile -t verbs < <(cli_verbs)
        for verb in "${verbs[@]}"; do
                ask rtn "$verb" -
        done
        want $'--workspace\n--workspace-git\n--workspace-mode' rtn exec --work
        want '--dry-run' rtn apply --dr
        answer
        for verb in "${verbs[@]}"; do
                for opt in ${HELP_OPTIONS[$verb]}; do
                        # a line of the reply, matched by the shell (no grep per option)
                        is_line "${REPLIES[i]}" "$opt" || missing+=" $verb:$opt"
                done
                i=$((i + 1))
        done
        [ -z "$missing" ] || t_fail "options in --help that do not complete:$missing"
}
t_run every_help_option_completes every_help_option_completes

completes_values_and_sub_verbs() {
        want $'loopback\nnone' rtn exec --net ''
        want overlay rtn serve --workspace-mode o
        want $'ro\nrw' rtn exec --workspace-git r
        want $'full\nlandlock\nnamespaces' rtn exec --isolation ''
        want $'bootstrap\nimport\nlist\nrm' rtn rootfs ''
        want $'bootstrap\nimport\nlist\nrm' rtn rootfs --data-dir /nonexistent ''
        want $'list\nrm' rtn env ''
        want verify rtn store ''
        want install rtn pkg --rootfs x ''
        # After `--`, rtn exec completes a command, then its arguments' files.
        ask rtn exec --net none -- ech
        mkdir -p dir/sub
        want dir/sub rtn exec --workspace dir/s
        want dir/sub rtn exec -- ls dir/s
        answer
        is_line "${REPLIES[9]}" echo || t_fail "no command after --"
}
t_run completes_values_and_sub_verbs completes_values_and_sub_verbs

completes_names_from_the_data_dir() {
        mkdir -p "$RTN_DATA_DIR/envs" "$RTN_DATA_DIR/rootfs/deb" other/envs
        echo x >"$RTN_DATA_DIR/envs/work"
        echo x >"$RTN_DATA_DIR/envs/.work.reflog"
        echo x >other/envs/elsewhere
        want work rtn log --env ''
        want elsewhere rtn log --data-dir other --env ''
        want work rtn env rm ''
        want deb rtn rootfs rm ''
        ask rtn exec --rootfs ''
        answer
        is_line "${REPLIES[4]}" deb || t_fail "rootfs deb does not complete"
        is_line "${REPLIES[4]}" host || t_fail "rootfs host does not complete"
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
        text=$(<"$CLI_ZSH_COMPLETION")
        for verb in $(cli_verbs); do
                [[ $'\n'$text == *$'\n'"    '$verb:"* ]] || missing+=" verb:$verb"
                for opt in ${HELP_OPTIONS[$verb]}; do
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
# The markers are split in what is typed: the terminal echoes a line, and zle may draw it
# again, so a marker whole in the input would match its echo (seen under load: the first
# answer read was the echoed "$*").
zpty -w z 'rtn() { print -r -- "AR""GS[$*]" }; print RE""ADY'
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
