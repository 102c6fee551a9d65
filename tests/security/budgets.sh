#!/usr/bin/env bash
# Per-user kernel budgets (docs/security-invariants.md, 10): what a sandbox holds is charged
# to its owner (host root for a root-run rtn, else the caller) as well, so each sandbox's user
# namespace gets a share (1/8) of them. A sandbox that uses up its inotify instances, inotify
# watches, message-queue bytes or queued signals leaves its owner able to take more on the
# host while it holds them; the namespaces' own max_* files inside are the shares.
# test.sh: alone (it holds a sandbox's share of per-user kernel budgets and takes one more: no other suite of its stream runs meanwhile)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

# Holds KIND in a sandbox (budget hold; rtn exec options after KIND), then takes one more on
# the host as the same user.
hold_then_host() {
        local kind=$1 bg rc=0
        shift
        sec_need_bin budget
        "$RTN" exec --bind "$SEC_BIN:/mnt/sec:ro" "$@" -- /mnt/sec/budget hold "$kind" \
                >"$T_TMP/out" 2>&1 </dev/null &
        bg=$!
        T_CMD_TIMEOUT=30
        if ! t_wait_for grep -q '^held' "$T_TMP/out"; then
                kill "$bg"
                wait "$bg"
                t_fail "the sandbox never held its $kind: $(head -c 500 "$T_TMP/out")"
        fi
        WATCH_DIR=$T_TMP "$SEC_BIN/budget" one "$kind" >"$T_TMP/host" 2>&1 || rc=$?
        kill "$bg"
        wait "$bg"
        t_note "sandbox: $(grep '^held' "$T_TMP/out")"
        [ "$rc" = 0 ] || t_fail "$(id -un) on the host, while a sandbox holds its $kind: $(cat "$T_TMP/host") (sandbox: $(cat "$T_TMP/out"))"
        grep -q "^held $kind [0-9]*: " "$T_TMP/out" || t_fail "$(cat "$T_TMP/out")"
        grep -q "no limit met" "$T_TMP/out" && t_fail "the sandbox met no limit: $(cat "$T_TMP/out")"
        return 0
}

# Inside, each /proc/sys/user/max_* is an eighth of the host's, and so are the soft limits of
# the rlimit-counted budgets.
shares_set() {
        local f want got
        t_exec -- sh -c 'cd /proc/sys/user && for f in max_*; do echo "$f $(cat "$f")"; done'
        t_exit_is 0
        for f in /proc/sys/user/max_*; do
                want=$(($(cat "$f") / 8))
                [ "$want" -gt 0 ] || want=1
                got=$(awk -v n="${f##*/}" '$1 == n {print $2}' "$T_OUT_FILE")
                [ "$got" = "$want" ] || t_fail "${f##*/} inside is '$got', want $want (host $(cat "$f"))"
        done
        t_exec -- bash -c 'ulimit -q; ulimit -i'
        want=$(($(ulimit -q) / 8))
        got=$(head -1 "$T_OUT_FILE")
        [ "$got" = "$want" ] || t_fail "RLIMIT_MSGQUEUE inside is $got bytes, want $want (host $(ulimit -q))"
        want=$(($(ulimit -i) / 8))
        got=$(sed -n 2p "$T_OUT_FILE")
        [ "$got" = "$want" ] || t_fail "RLIMIT_SIGPENDING inside is $got, want $want (host $(ulimit -i))"
}

# The agent cannot make namespaces at all (seccomp); the share stands behind that.
userns_refused() {
        sec_need_bin budget
        sec_exec -- /mnt/sec/budget one userns
        t_exit_is 1
        t_stdout_has "refused userns: Operation not permitted"
}

t_run budget_shares_set shares_set
t_run budget_inotify_instances hold_then_host inotify
t_run budget_inotify_watches hold_then_host watches
# Landlock denies POSIX message queues to every command of a full sandbox (their filesystem is
# not among its rules); without it they can be used, up to the share.
t_run budget_mqueue hold_then_host mqueue --isolation namespaces
t_run budget_sigpending hold_then_host sigpending
t_run budget_userns_refused userns_refused
t_done
