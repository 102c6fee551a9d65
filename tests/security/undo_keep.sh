#!/usr/bin/env bash
# Invariant 31 for rtn undo (docs/security-invariants.md): the undo history of rtn exec
# --keep lives on the host, in the data dir, and what a run planted in its step (a symlink to
# a host directory where a tree was, a tree where a symlink was, a FIFO where a file was and
# the other way round, a hard link) never makes rtn undo write, chmod or remove outside the
# environment's pending dir, open a FIFO, or hang: each entry comes back as what it was.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
export RTN_DATA_DIR

planted() {
        RTN_DATA_DIR=$T_TMP/data
        local host=$T_TMP/host
        mkdir "$host" && echo mine > "$host/keep" && chmod 777 "$host"
        t_exec --keep -- sh -c "cd \$HOME && mkdir -p d/sub && echo secret > d/sub/f &&
                echo p > p && mkfifo q && ln -s $host s && echo h > h1 && ln h1 h2"
        t_exit_is 0
        # Each entry replaced by what would lead a restore astray.
        t_exec --keep -- sh -c "cd \$HOME && rm -r d && ln -s $host d && rm p && mkfifo p &&
                rm q && echo x > q && rm s && mkdir s && echo in > s/keep && rm h2 &&
                ln -s $host/keep h2"
        t_exit_is 0
        t_exit_is 0 "$RTN" undo
        t_exec --keep -- sh -c 'cd $HOME && cat d/sub/f p h2 && stat -c "%F %h" d p q s h1 &&
                readlink s'
        t_exit_is 0
        t_stdout_is "$(printf 'secret\np\nh\ndirectory 3\nregular file 1\nfifo 1\nsymbolic link 1\nregular file 2\n%s' "$host")"
        # and back past the first run: the symlink to the host directory goes as a link
        t_exit_is 0 "$RTN" undo
        [ "$(ls -A "$host")" = keep ] || t_fail "the host directory holds $(ls -A "$host")"
        [ "$(cat "$host/keep")" = mine ] || t_fail "the host's file was written"
        [ "$(stat -c %a "$host")" = 777 ] || t_fail "the host directory's mode became $(stat -c %a "$host")"
}

# A step's command line reaches the terminal as text (invariant 19): no escape sequence.
terminal() {
        RTN_DATA_DIR=$T_TMP/data
        t_exec --keep -- sh -c "echo > \$HOME/a # $(printf '\033]0;owned\007\033[2J')"
        t_exit_is 0
        t_exit_is 0 "$RTN" undo --list
        grep -q "$(printf '\033')" "$T_OUT_FILE" && t_fail "an escape sequence reached the terminal"
        t_exit_is 0 "$RTN" undo
        grep -q "$(printf '\033')" "$T_OUT_FILE" && t_fail "an escape sequence reached the terminal"
        t_stdout_has "undid run 1"
}

t_run undo_keep_planted planted
t_run undo_keep_terminal terminal
t_done
