# bash completion for rtn(1): verbs, each verb's options and the values they take.
# Installed as share/bash-completion/completions/rtn; works without the bash-completion
# package too (source it). The lists follow each verb's --help, and
# tests/integration/cli_completion.sh fails when they drift apart.

_rtn_verbs="exec serve probe ps enter env commit log reflog diff reset undo rollback gc export import apply store rootfs pkg help version"

# The options a verb takes, as its --help lists them.
_rtn_verb_options() {
        local store="--data-dir --env --help"
        local spec="--setenv --env-file --allow-ptrace --user --upper-size --store-max --pids-max --memory-max --isolation --allow-net --allow-host-port --upstream-proxy --net-policy --publish --secret --secret-file --secret-header --protect"
        case $1 in
        exec) echo "--rootfs --workspace --workspace-mode --workspace-git --bind --cwd --net --hostname --timeout $spec -t --tty --quiet --env --keep --undo-depth --undo-bytes --commit -m --message --data-dir --help" ;;
        serve) echo "--data-dir --env --rootfs --allow-host --workspace --workspace-mode --workspace-git --bind --hostname --net --timeout --max-output --http-tools --max-sandboxes --undo-depth --undo-bytes --http --token-file --idle-timeout --max-sessions --allow-origin --http-public --workspace-root $spec --help" ;;
        probe) echo "--json" ;;
        ps) echo "--all --data-dir --help" ;;
        enter) echo "-t --tty --cwd -h --help" ;;
        commit) echo "$store -m --message --upper" ;;
        diff) echo "$store --upper -p --patch" ;;
        apply) echo "$store --dry-run --force --allow-protected" ;;
        undo) echo "$store -l --list" ;;
        gc) echo "$store --reflog-days" ;;
        export) echo "$store -o --output" ;;
        import) echo "$store --max-bytes" ;;
        log | reflog | reset | rollback | store) echo "$store" ;;
        rootfs) echo "--suite --variant --mirror --force --data-dir --help" ;;
        env) echo "--data-dir --help" ;;
        pkg) echo "--rootfs --env --allow-host --upstream-proxy --timeout --data-dir --help" ;;
        esac
}

# The data dir the command line names, as rtn finds it (--data-dir, RTN_DATA_DIR,
# XDG_DATA_HOME, HOME).
_rtn_data_dir() {
        local i
        for ((i = 1; i < COMP_CWORD; i++)); do
                if [[ ${COMP_WORDS[i]} == --data-dir ]]; then
                        echo "${COMP_WORDS[i + 1]}"
                        return
                elif [[ ${COMP_WORDS[i]} == --data-dir=* ]]; then
                        echo "${COMP_WORDS[i]#--data-dir=}"
                        return
                fi
        done
        if [[ -n ${RTN_DATA_DIR-} ]]; then
                echo "$RTN_DATA_DIR"
        elif [[ ${XDG_DATA_HOME-} == /* ]]; then
                echo "$XDG_DATA_HOME/rtn"
        else
                echo "$HOME/.local/share/rtn"
        fi
}

# Names of the entries of data dir's SUB that do not start with a dot.
_rtn_names() {
        local d f
        d=$(_rtn_data_dir)/$1
        [[ -d $d ]] || return 0
        for f in "$d"/*; do
                [[ -e $f ]] && echo "${f##*/}"
        done
}

# The IDs rtn enter takes: the first column rtn ps lists (PID, or PID/sb-N of an rtn serve).
_rtn_running() {
        "${COMP_WORDS[0]}" ps 2>/dev/null | awk 'NR > 1 { print $1 }'
}

# Adds compgen's words to COMPREPLY, one a line (a file name may hold spaces).
_rtn_compgen() {
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen "$@")
}

# True when OPT takes a value (the next word).
_rtn_takes_value() {
        case $1 in
        --workspace | --cwd | --data-dir | --upper | --workspace-mode | --workspace-git | --net | --isolation | --user | \
                --rootfs | --env | -o | --output | --bind | --hostname | --timeout | --setenv | --env-file | \
                --upper-size | --store-max | --pids-max | --memory-max | --allow-host | --max-output | --max-sandboxes | --undo-depth | --undo-bytes | -m | \
                --allow-net | --allow-host-port | --upstream-proxy | --net-policy | --publish | --secret | --secret-file | --secret-header | --http | --token-file | --idle-timeout | \
                --max-sessions | --allow-origin | --workspace-root | \
                --message | --reflog-days | --max-bytes | --suite | --variant | --mirror)
                return 0 ;;
        esac
        return 1
}

# Completes the value of option PREV; returns 1 when PREV takes no value.
_rtn_value() {
        local prev=$1 cur=$2
        _rtn_takes_value "$prev" || return 1
        case $prev in
        --workspace | --cwd | --data-dir | --upper | --workspace-root)
                _rtn_compgen -d -- "$cur" ;;
        --workspace-mode) _rtn_compgen -W "live overlay" -- "$cur" ;;
        --workspace-git) _rtn_compgen -W "ro rw" -- "$cur" ;;
        --net) _rtn_compgen -W "loopback none" -- "$cur" ;;
        --isolation) _rtn_compgen -W "full landlock namespaces" -- "$cur" ;;
        --user) _rtn_compgen -W "root" -- "$cur" ;;
        --rootfs)
                _rtn_compgen -W "host $(_rtn_names rootfs)" -- "$cur"
                _rtn_compgen -d -- "$cur" ;;
        --env) _rtn_compgen -W "$(_rtn_names envs)" -- "$cur" ;;
        -o | --output | --bind | --env-file | --net-policy) _rtn_compgen -f -- "$cur" ;;
        esac
        return 0
}

_rtn() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        local verb=${COMP_WORDS[1]} i first
        COMPREPLY=()
        if ((COMP_CWORD == 1)); then
                _rtn_compgen -W "$_rtn_verbs --help --version" -- "$cur"
                return
        fi
        # rtn exec ... -- CMD ARGS, rtn enter ID -- CMD ARGS: a command, then its arguments'
        # files.
        if [[ $verb == exec || $verb == enter ]]; then
                for ((i = 2; i < COMP_CWORD; i++)); do
                        if [[ ${COMP_WORDS[i]} == -- ]]; then
                                if ((COMP_CWORD == i + 1)); then
                                        _rtn_compgen -c -- "$cur"
                                else
                                        _rtn_compgen -f -- "$cur"
                                fi
                                return
                        fi
                done
        fi
        _rtn_value "$prev" "$cur" && return
        if [[ $cur == -* ]]; then
                _rtn_compgen -W "$(_rtn_verb_options "$verb")" -- "$cur"
                return
        fi
        # The first operand of the verbs that have sub-verbs.
        first=
        for ((i = 2; i < COMP_CWORD; i++)); do
                [[ ${COMP_WORDS[i]} == -* ]] && continue
                _rtn_takes_value "${COMP_WORDS[i - 1]}" && continue
                first=${COMP_WORDS[i]}
                break
        done
        case $verb in
        rootfs)
                if [[ -z $first ]]; then
                        _rtn_compgen -W "bootstrap import list rm" -- "$cur"
                elif [[ $first == import ]]; then
                        _rtn_compgen -f -- "$cur"
                elif [[ $first == rm ]]; then
                        _rtn_compgen -W "$(_rtn_names rootfs)" -- "$cur"
                fi
                ;;
        env)
                if [[ -z $first ]]; then
                        _rtn_compgen -W "list rm" -- "$cur"
                elif [[ $first == rm ]]; then
                        _rtn_compgen -W "$(_rtn_names envs)" -- "$cur"
                fi
                ;;
        store) [[ -z $first ]] && _rtn_compgen -W "verify" -- "$cur" ;;
        pkg) [[ -z $first ]] && _rtn_compgen -W "install" -- "$cur" ;;
        import) _rtn_compgen -f -- "$cur" ;;
        enter) [[ -z $first ]] && _rtn_compgen -W "$(_rtn_running)" -- "$cur" ;;
        esac
}

complete -F _rtn rtn
