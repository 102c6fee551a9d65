# shellcheck shell=bash
# What the CLI suites (tests/integration/cli_*.sh) share, sourced after tests/lib.sh: the
# verbs rtn has and the options a verb's --help names. The verbs are the bash completion's
# list; cli_completion.sh checks that list against rtn itself.

# shellcheck disable=SC2034 # read by the suites that source this
CLI_MAN=$T_ROOT/docs/rtn.1
CLI_BASH_COMPLETION=$T_ROOT/tools/completion/rtn.bash
# shellcheck disable=SC2034
CLI_ZSH_COMPLETION=$T_ROOT/tools/completion/_rtn

# The verbs, one a line, without help and version.
cli_verbs() {
        # shellcheck disable=SC1090,SC2154
        (
                . "$CLI_BASH_COMPLETION" || exit
                for v in $_rtn_verbs; do
                        [[ $v == help || $v == version ]] || printf '%s\n' "$v"
                done
        )
}

# The options (long, and short such as -m) the text on stdin names, each once: what
# `grep -oE -- '(^|[^a-zA-Z0-9_.-])--?[a-zA-Z][a-zA-Z0-9-]*' | sed -E 's/^[^-]*//' | sort -u`
# would answer, in the order first named, matched by the shell (the suites ask for every
# verb, and each grep, sed and sort is a fork and an exec).
cli_options_in() {
        local LC_ALL=C line seen=' ' opt
        local re='(^|[^a-zA-Z0-9_.-])(--?[a-zA-Z][a-zA-Z0-9-]*)'
        while IFS= read -r line || [ -n "$line" ]; do
                while [[ $line =~ $re ]]; do
                        opt=${BASH_REMATCH[2]}
                        # On after the match, where ^ no longer matches (as grep -o goes on):
                        # the x stands for the text before, a character of a word.
                        line=x${line#*"${BASH_REMATCH[0]}"}
                        [[ $seen == *" $opt "* ]] && continue
                        seen+="$opt "
                        printf '%s\n' "$opt"
                done
        done
}

# The options VERB's --help offers (on stdout or stderr, whatever its exit status): those
# of its usage lines and those that begin a line of the list (indented by at most four
# spaces: a deeper one continues the text above, which may name another verb's option).
cli_help_options() {
        local LC_ALL=C line re='^ {1,4}((-[a-zA-Z], )?--?[a-zA-Z][a-zA-Z0-9-]*)'
        "$RTN" "$1" --help 2>&1 |
                while IFS= read -r line || [ -n "$line" ]; do
                        [[ $line == *usage:* ]] && printf '%s\n' "$line"
                        [[ $line =~ $re ]] && printf '%s\n' "${BASH_REMATCH[1]}"
                done | cli_options_in
}

# True when WORD stands alone in TEXT: cli_has_word TEXT WORD. The shell's own match, as
# `grep -qE "(^|[^a-zA-Z0-9_-])WORD([^a-zA-Z0-9_-]|$)"` line by line would answer (a newline
# is a non-word character on either side): the suites call it hundreds of times, and a grep
# is a fork and an exec.
cli_has_word() {
        local LC_ALL=C re="[^a-zA-Z0-9_-]$2[^a-zA-Z0-9_-]"
        [[ $'\n'$1$'\n' =~ $re ]]
}
