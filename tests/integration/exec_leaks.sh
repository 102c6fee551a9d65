#!/usr/bin/env bash
# 50 `rtn exec` runs in a row (200 under make stress) leave nothing behind: no process (the
# runs execute under a child subreaper, tests/integration/subreaper.c, so anything orphaned
# is re-parented to it and counted), no mount in the caller's mount namespace, no fd in the
# caller, and no file or directory in TMPDIR, XDG_RUNTIME_DIR or the data dir beyond what the
# first run created.
# The same after rtn is SIGKILLed mid-run, once the next run has had its chance to recover.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

RUNS=${RTN_LEAK_RUNS:-$(t_stress 50 200)}

isolate_dirs() {
        export TMPDIR=$T_TMP/tmpdir RTN_DATA_DIR=$T_TMP/data XDG_RUNTIME_DIR=$T_TMP/run
        mkdir -p "$TMPDIR" "$RTN_DATA_DIR" "$XDG_RUNTIME_DIR"
        chmod 700 "$XDG_RUNTIME_DIR"
}

# As root the caller's mount namespace is the host's, where suites running beside this one
# (test network namespaces, podman) mount and unmount: count in a private copy of it, which
# still holds every mount rtn would leave in its caller's namespace.
# An unprivileged caller's namespace is the host's too, where it can mount nothing itself: a
# mount rtn left there would lie in its own dirs, so only those are counted.
own_mounts=()
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
        own_mounts=(unshare -m --propagation private)
fi
# leak_env: what the helper is run under (set in each case, where $T_TMP is known)
leak_env() {
        [ ${#own_mounts[@]} -gt 0 ] || echo "LEAK_MOUNTS_UNDER=$T_TMP"
}

snapshot() {
        (cd "$T_TMP" && find tmpdir data run -mindepth 1 -printf '%p %y\n' 2>&1 | sort)
}

runs_leave_nothing() {
        local helper=$T_BIN/integration/subreaper
        [ -x "$helper" ] || t_fail "test helper $helper not built (make tests)"
        isolate_dirs
        t_exit_is 0 "$RTN" exec -- true
        local before
        before=$(snapshot)
        t_cmd "${own_mounts[@]}" env $(leak_env) "$helper" "$RUNS" "$RTN" exec -- sh -c 'echo x >/tmp/f; exit 0'
        [ "$T_RC" = 0 ] || t_fail "$(cat "$T_ERR_FILE" "$T_OUT_FILE" | head -c 800)"
        t_stdout_has "leftover_processes=0"
        local after
        after=$(snapshot)
        [ "$before" = "$after" ] ||
                t_fail "left behind: $(diff <(echo "$before") <(echo "$after") | head -20 | tr '\n' ' ')"
}

# As root, every mount of the caller's (private copy of its) namespace is listed; an
# unprivileged caller's namespace is the host's, where suites beside this one (podman,
# test network namespaces) mount and unmount, and where the caller itself can mount
# nothing: there the mounts under its own dirs (the case's temp dir, which holds TMPDIR,
# the data dir and XDG_RUNTIME_DIR, and its home) are listed. A mount rtn left is one whose
# ID was not there before: the private copy loses the mounts of other suites when they
# remove their mount points (a tmpfs in a case's temp dir), so a count can go down.
mounts_unchanged_in_caller() {
        isolate_dirs
        local under=
        [ ${#own_mounts[@]} -gt 0 ] || under="$T_TMP $HOME"
        t_cmd "${own_mounts[@]}" bash -c '
                ids() {
                        if [ -z "$1" ]; then awk "{ print \$1 }" /proc/self/mountinfo; return; fi
                        local d
                        for d in $1; do
                                awk -v d="$d" "index(\$5, d) == 1 { print \$1 }" /proc/self/mountinfo
                        done
                }
                before=$(ids "$2" | sort)
                for i in $(seq 20); do
                        "$1" exec -- true </dev/null >/dev/null 2>&1 || { echo "run $i failed"; exit 1; }
                done
                new=$(comm -13 <(echo "$before") <(ids "$2" | sort))
                [ -z "$new" ] || { echo "new mounts: $(grep -E "^($(echo $new | tr " " "|")) " /proc/self/mountinfo)"; exit 1; }' \
                _ "$RTN" "$under"
        [ "$T_RC" = 0 ] || t_fail "$(cat "$T_OUT_FILE")"
}

sigkill_leaves_nothing() {
        isolate_dirs
        t_exit_is 0 "$RTN" exec -- true
        local before
        before=$(snapshot)
        "$RTN" exec -- sh -c 'echo x >/tmp/f; sleep 600' </dev/null >/dev/null 2>&1 &
        local pid=$!
        sleep 1
        kill -KILL "$pid"
        wait "$pid" 2>/dev/null
        # Whatever the killed run left, the next run may clean up (design: recovered on start).
        t_exit_is 0 "$RTN" exec -- true
        sleep 0.5
        local after
        after=$(snapshot)
        [ "$before" = "$after" ] ||
                t_fail "left behind: $(diff <(echo "$before") <(echo "$after") | head -20 | tr '\n' ' ')"
}

t_run runs_leave_nothing runs_leave_nothing
t_run mounts_unchanged_in_caller mounts_unchanged_in_caller
t_run sigkill_leaves_nothing sigkill_leaves_nothing
t_done
