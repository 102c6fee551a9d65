#!/usr/bin/env bash
# `rtn probe`: on this machine every required check passes and it exits 0; --json is one
# JSON object saying the same; where namespaces are forbidden (inside an rtn sandbox, whose
# seccomp filter refuses new user namespaces) it names the failing step and exits non-zero.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

probe_ok() {
        t_cmd "$RTN" probe
        t_exit_is 0
        t_stdout_has "rtn can run sandboxes here."
        t_stdout_has "landlock"
}
t_run probe_ok probe_ok

probe_json() {
        t_cmd "$RTN" probe --json
        t_exit_is 0
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["can_run"] is True; assert {c["name"] for c in d["checks"]} >= {"sandbox","landlock","seccomp","id mapping"}' "$T_OUT_FILE" ||
                t_fail "probe --json: $(cat "$T_OUT_FILE")"
}
t_run probe_json probe_json

probe_refused() {
        cp "$RTN" "$T_TMP/rtn"
        chmod 755 "$T_TMP" # the agent is not root: let it reach the binary
        t_exec --bind "$T_TMP:/mnt/rtn:ro" -- /mnt/rtn/rtn probe
        t_exit_is 1
        t_stdout_has "missing  sandbox"
        t_stdout_has "rtn cannot run sandboxes here"
}
t_run probe_refused_inside_a_sandbox probe_refused
t_done
