#!/usr/bin/env bash
# `rtn env list|rm` (cli/env.c, store_env_list/store_env_remove): every environment of a
# data dir with its tip, base, time and pending changes; rm removes an environment's tip,
# history and pending changes, so its name starts afresh and gc frees what only it held;
# refused, losing nothing, for a name that does not exist or while a sandbox uses it.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

setup() {
        export RTN_DATA_DIR=$T_TMP/data XDG_RUNTIME_DIR=$T_TMP/run
        mkdir -m 700 "$XDG_RUNTIME_DIR"
}

commit_to() { # env file
        t_exec --env "$1" --commit -m "$2" -- sh -c "echo $2 > \$HOME/$2"
        t_exit_is 0
}

lists_environments() {
        setup
        t_exit_is 0 "$RTN" env list
        t_stdout_is "" # no store yet: nothing listed, and nothing made
        t_no_file "$RTN_DATA_DIR"
        commit_to default one
        commit_to other two
        t_exec --env kept --keep -- sh -c 'echo c > $HOME/c'
        t_exit_is 0
        t_exit_is 0 "$RTN" env list
        head -n 1 "$T_OUT_FILE" | grep -Eq '^NAME +TIP +BASE +CHANGED +PENDING$' ||
                t_fail "header: $(cat "$T_OUT_FILE")"
        local tip
        tip=$("$RTN" log --env other | head -n 1 | cut -c1-12) || t_fail "log"
        grep -Eq "^other +$tip +the host +[0-9-]+T[0-9:]+Z +no$" "$T_OUT_FILE" ||
                t_fail "other's line: $(cat "$T_OUT_FILE")"
        grep -Eq '^kept +- +the host +- +yes$' "$T_OUT_FILE" || t_fail "kept: $(cat "$T_OUT_FILE")"
        [ "$(sed 1d "$T_OUT_FILE" | awk '{print $1}' | tr '\n' ' ')" = "default kept other " ] ||
                t_fail "not sorted or not all: $(cat "$T_OUT_FILE")"
}

# PENDING says yes only while something is pending: after rtn apply wrote every change of an
# overlay workspace, and there is nothing else, it says no.
pending_only_while_pending() {
        setup
        mkdir ws
        t_exec --env w --keep --workspace "$T_TMP/ws" --workspace-mode overlay -- sh -c 'echo a > /workspace/a'
        t_exit_is 0
        t_exit_is 0 "$RTN" env list
        grep -Eq '^w +.* yes$' "$T_OUT_FILE" || t_fail "before apply: $(cat "$T_OUT_FILE")"
        t_exit_is 0 "$RTN" apply --env w
        [ "$(cat ws/a)" = a ] || t_fail "not applied"
        t_exit_is 0 "$RTN" env list
        grep -Eq '^w +.* no$' "$T_OUT_FILE" || t_fail "after apply: $(cat "$T_OUT_FILE")"
        # a change outside /workspace stays pending after apply
        t_exec --env w --keep --workspace "$T_TMP/ws" --workspace-mode overlay -- sh -c 'echo b > /workspace/b; echo h > $HOME/h'
        t_exit_is 0
        t_exit_is 0 "$RTN" apply --env w
        t_exit_is 0 "$RTN" env list
        grep -Eq '^w +.* yes$' "$T_OUT_FILE" || t_fail "home change: $(cat "$T_OUT_FILE")"
}

removes_environments() {
        setup
        commit_to default one
        commit_to other two
        commit_to other three
        t_exec --env other --keep -- sh -c 'echo p > $HOME/p'
        t_exit_is 0
        t_exec --env kept --keep -- sh -c 'echo c > $HOME/c'
        t_exit_is 0
        t_exit_is 0 "$RTN" env rm other kept
        t_stdout_is "other
kept"
        t_exit_is 0 "$RTN" env list
        [ "$(sed 1d "$T_OUT_FILE" | awk '{print $1}')" = default ] || t_fail "left: $(cat "$T_OUT_FILE")"
        # gone whole: no history, no reflog, no pending changes, no base record
        t_exit_is 1 "$RTN" log --env other
        t_stderr_has "environment 'other' has no commits"
        t_exit_is 1 "$RTN" reflog --env other
        t_stderr_has "environment 'other' has no commits"
        [ -z "$(ls -A "$RTN_DATA_DIR/pending")" ] || t_fail "pending left: $(ls -A "$RTN_DATA_DIR/pending")"
        [ -z "$(ls -A "$RTN_DATA_DIR/envs" | grep -v default)" ] ||
                t_fail "envs/ left: $(ls -A "$RTN_DATA_DIR/envs")"
        # the name starts afresh, and gc frees what only the removed ones held
        t_exec --env other -- sh -c 'ls $HOME'
        t_exit_is 0
        t_stdout_is ""
        t_exit_is 0 "$RTN" gc
        t_stdout_has "removed 2 commits, 2 layers"
        # the one kept is whole
        t_exec -- sh -c 'cat $HOME/one'
        t_stdout_is one
        t_exit_is 0 "$RTN" store verify
}

refusals_lose_nothing() {
        setup
        commit_to default one
        t_exit_is 1 "$RTN" env rm nope
        t_stderr_has "rtn env rm: no environment 'nope' (rtn env list)"
        t_exit_is 1 "$RTN" env rm ../default
        t_stderr_has "invalid environment name '../default'"
        # one bad name among good ones: the good ones go, the exit says one failed
        commit_to gone two
        t_exit_is 1 "$RTN" env rm gone nope
        t_stdout_is gone
        # in use by a running sandbox: refused, the environment stays
        "$RTN" exec -- sleep 63.5 >/dev/null 2>&1 &
        local ex=$!
        t_wait_for sh -c "'$RTN' ps | grep -q 'sleep 63.5'" || t_fail "exec not running"
        t_exit_is 1 "$RTN" env rm default
        t_stderr_has "environment 'default' is in use by rtn exec (pid $ex): stop it first"
        kill "$ex"
        wait "$ex" 2>/dev/null
        t_exec -- sh -c 'cat $HOME/one'
        t_stdout_is one
        # the pending changes a running rtn exec --keep holds: refused, all kept
        # (rtn ps lists the command before it has run: wait for its word that h is written)
        "$RTN" exec --env held --keep -- sh -c 'echo h > $HOME/h; echo written; sleep 64.5' >held.out 2>&1 &
        ex=$!
        t_wait_for grep -q written held.out || t_fail "keep not running: $(cat held.out)"
        t_exit_is 1 "$RTN" env rm held
        t_stderr_has "is in use by rtn exec (pid $ex)"
        kill "$ex"
        wait "$ex" 2>/dev/null || true
        t_exit_is 0 "$RTN" env list
        grep -Eq '^held +- +the host +- +yes$' "$T_OUT_FILE" || t_fail "held: $(cat "$T_OUT_FILE")"
}

usage() {
        setup
        t_exit_is 0 "$RTN" env --help
        t_stdout_has "usage: rtn env list"
        t_exit_is 0 "$RTN" env rm --help
        t_stdout_has "rtn env rm [--data-dir DIR] NAME..."
        t_exit_is 125 "$RTN" env
        t_stderr_has "rtn env: missing the sub-command (list or rm)"
        t_exit_is 125 "$RTN" env frob
        t_stderr_has "rtn env: unknown sub-command 'frob' (list or rm)"
        t_exit_is 125 "$RTN" env rm
        t_stderr_has "rtn env rm: missing the NAME of an environment"
        t_exit_is 125 "$RTN" env list extra
        t_stderr_has "rtn env list: unexpected operand 'extra'"
        t_exit_is 125 "$RTN" env list --bogus
        t_stderr_has "Try 'rtn env list --help'."
}

t_run lists_environments lists_environments
t_run pending_only_while_pending pending_only_while_pending
t_run removes_environments removes_environments
t_run refusals_lose_nothing refusals_lose_nothing
t_run usage usage
t_done
