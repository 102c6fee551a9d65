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

# The cgroup facts match what the host says: the cgroup2 mount in mountinfo, the 0:: line
# of /proc/self/cgroup, whether that cgroup is writable by us, and the limits that follow.
# A sandbox gets a child cgroup where it is writable and a memory or pids controller is
# there (RTN_CGROUP unset: auto).
probe_cgroup() {
        unset RTN_CGROUP
        local mount self dir writable=false
        mount=$(awk '{for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } ; break }}' /proc/self/mountinfo)
        self=$(sed -n 's/^0:://p' /proc/self/cgroup)
        dir=$mount${self%/}
        [ -n "$mount" ] && [ -w "$dir" ] && [ -w "$dir/cgroup.procs" ] && writable=true
        t_cmd "$RTN" probe --json
        t_exit_is 0
        # A listed controller is usable when it is enabled for our children or can be: in the
        # root cgroup, or in one rtn would be alone in (this shell shares rtn's cgroup, so
        # it is not).
        python3 - "$T_OUT_FILE" "$mount" "$self" "$writable" "$(cat "$dir/cgroup.controllers" 2>/dev/null)" \
                "$(cat "$dir/cgroup.subtree_control" 2>/dev/null)" <<'PY' || t_fail "probe --json cgroup: $(cat "$T_OUT_FILE")"
import json, sys
d = json.load(open(sys.argv[1]))["cgroup"]
mount, self, writable, ctrls = sys.argv[2], sys.argv[3], sys.argv[4] == "true", sys.argv[5].split()
subtree = sys.argv[6].split()
usable = {c: writable and c in ctrls and (c in subtree or self == "/") for c in ("memory", "pids")}
child = usable["memory"] or usable["pids"]
assert d["mount"] == mount and d["cgroup"] == self, d
assert d["writable"] is writable and d["sandbox_cgroup"] is child, d
assert d["controllers"] == " ".join(ctrls), d
assert d["memory_limit"] == ("memory.max" if usable["memory"] else "RLIMIT_DATA"), d
assert d["pids_limit"] == ("pids.max" if usable["pids"] else "pid_max"), d
if not mount:
    assert "no cgroup v2" in d["reason"], d
elif not writable:
    assert "is not writable by uid" in d["reason"], d
PY
        t_cmd "$RTN" probe
        if [ "$writable" = true ]; then
                t_stdout_has "is writable; controllers: "
        else
                t_stdout_has "Sandboxes stay in rtn's cgroup"
        fi
        if [ "$writable" = true ] && ! grep -qwE 'memory|pids' "$dir/cgroup.controllers"; then
                t_stdout_has "no memory or pids controller to enforce a limit with"
        fi
}
t_run probe_cgroup probe_cgroup

# RTN_CGROUP is auto, always or never; anything else is named as the fault.
probe_cgroup_mode() {
        RTN_CGROUP=sometimes t_cmd "$RTN" probe
        t_stdout_has "RTN_CGROUP=sometimes is not auto, always or never"
        RTN_CGROUP=never t_cmd "$RTN" probe --json
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["cgroup"]; assert d["sandbox_cgroup"] is False, d' "$T_OUT_FILE" ||
                t_fail "RTN_CGROUP=never: $(cat "$T_OUT_FILE")"
}
t_run probe_cgroup_mode probe_cgroup_mode

probe_in_sandbox() {
        # Its own dir: $T_TMP holds the data dir, which is never bound.
        mkdir "$T_TMP/bin"
        cp "$RTN" "$T_TMP/bin/rtn"
        chmod 755 "$T_TMP" "$T_TMP/bin" # the agent is not root: let it reach the binary
        # The sandbox's seccomp filter refuses clone3: no user namespace, so rtn picks the
        # Landlock mode by itself, as rtn exec there does, and probe says so, not that the
        # full sandbox runs.
        t_exec --bind "$T_TMP/bin:/mnt/rtn:ro" -- sh -c 'echo "uid=$(id -u)"; /mnt/rtn/rtn probe; echo "rc=$?"; /mnt/rtn/rtn exec -- true; echo "exec rc=$?"; /mnt/rtn/rtn exec --isolation full -- true; echo "full rc=$?"; /mnt/rtn/rtn exec --allow-net example.com -- true; echo "net rc=$?"; /mnt/rtn/rtn exec --hostname h -- true; echo "hostname rc=$?"; /mnt/rtn/rtn exec --user root -- true; echo "user rc=$?"'
        t_true grep -Eq '^missing +user namespaces +user namespaces are denied here \(clone3\(CLONE_NEWUSER\) fails with Function not implemented\): rtn chose --isolation landlock by itself' "$T_OUT_FILE"
        t_true grep -Eq '^missing +isolation +landlock, picked by rtn by itself' "$T_OUT_FILE"
        t_false grep -q "clone3 namespaces, id maps" "$T_OUT_FILE"
        t_stdout_has "full rc=125"
        # an option that needs the namespaces: no fallback, and the start says why
        t_stdout_has "net rc=125"
        t_stderr_has "and --allow-net needs them: the sandbox will not start"
        # so for each option the Landlock mode refuses: named, not that mode's lack of it
        t_stdout_has "hostname rc=125"
        t_stderr_has "and --hostname needs them: the sandbox will not start"
        t_stdout_has "user rc=125"
        t_stderr_has "and --user needs them: the sandbox will not start"
        if grep -qx uid=0 "$T_OUT_FILE"; then
                # A single id mapped (no subordinate ids): the agent is uid 0 of a namespace
                # with no other uid for the Landlock mode's commands; both say why.
                t_stdout_has "rc=1"
                t_true grep -Eq '^missing +sandbox +--isolation landlock as root runs commands as uid [0-9]+, which this user namespace does not map' "$T_OUT_FILE"
                t_stdout_has "rtn cannot run sandboxes here"
                t_stdout_has "exec rc=125"
                t_stderr_has "which this user namespace does not map"
                t_stderr_has "rtn chose --isolation landlock by itself"
        else
                t_stdout_has "rc=0"
                t_true grep -Eq '^ok +sandbox +no namespaces: ' "$T_OUT_FILE"
                t_stdout_has "rtn can run sandboxes here."
                t_stdout_has "exec rc=0"
                t_stderr_has "rtn exec: WARNING: user namespaces are denied here (clone3(CLONE_NEWUSER) fails with Function not implemented): rtn chose --isolation landlock by itself"
                t_stderr_has "rtn exec: there is no /workspace"
        fi
}
t_run probe_landlock_inside_a_sandbox probe_in_sandbox
t_done
