#!/usr/bin/env bash
# `rtn exec`'s environment options, shared with `rtn serve` (runtime/sandbox/specopt.c):
# --setenv K=V, --setenv K (rtn's own value; an error when it has none) and --env-file FILE
# (docker's format: K=V as written, K alone, # comments, blank lines), later settings winning;
# every bad one refused with exit 125 and a message naming it, before anything runs.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

by_name() {
        FROM_HOST='host value' t_exit_is 0 "$RTN" exec --setenv FROM_HOST -- \
                sh -c 'printf %s "$FROM_HOST"'
        t_stdout_is 'host value'
        t_exit_is 125 env -u RTN_TEST_UNSET "$RTN" exec --setenv RTN_TEST_UNSET -- true
        t_stderr_has "--setenv: RTN_TEST_UNSET is not set in rtn's environment"
}

env_file() {
        printf '# comment\n\n  SPACED=a b \nQUOTED="q"\nFROM_HOST\r\nEQ=x=y\nLATE=file\n' >vars.env
        FROM_HOST=hv t_exit_is 0 "$RTN" exec --env-file vars.env --setenv LATE=option -- \
                sh -c 'printf "%s|" "$SPACED" "$QUOTED" "$FROM_HOST" "$EQ" "$LATE"'
        t_stdout_is 'a b |"q"|hv|x=y|option|'
        t_exit_is 0 "$RTN" exec --env-file <(echo PIPED=1) -- sh -c 'printf %s "$PIPED"'
        t_stdout_is 1
}

env_file_refused() {
        t_exit_is 125 "$RTN" exec --env-file nosuch.env -- true
        t_stderr_has "--env-file nosuch.env: No such file or directory"
        t_exit_is 125 "$RTN" exec --env-file . -- true
        t_stderr_has "--env-file .: is a directory"
        printf 'OK=1\nA B=2\n' >blank.env
        t_exit_is 125 "$RTN" exec --env-file blank.env -- true
        t_stderr_has "--env-file blank.env, line 2: name 'A B' has a blank in it"
        printf '1A=x\n' >bad.env
        t_exit_is 125 "$RTN" exec --env-file bad.env -- true
        t_stderr_has "--env-file bad.env, line 1: invalid environment name: 1A"
        printf 'RTN_TEST_UNSET\n' >unset.env
        t_exit_is 125 env -u RTN_TEST_UNSET "$RTN" exec --env-file unset.env -- true
        t_stderr_has "line 1: RTN_TEST_UNSET is not set in rtn's environment"
        head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >big.env
        t_exit_is 125 "$RTN" exec --env-file big.env -- true
        t_stderr_has "larger than 1 MiB"
}

t_run by_name by_name
t_run env_file env_file
t_run env_file_refused env_file_refused
t_done
