#!/usr/bin/env bash
# cgroup v2 and the sandbox. Where rtn's own cgroup is writable (root, or a delegated
# subtree) every sandbox runs in a child cgroup rtn-<rtn pid>-<n> of it, seen from the host
# in /proc/<pid>/cgroup of its processes; the cgroup is gone a moment after the run ends (also after
# 50 runs, a --timeout kill, a replaced `rtn serve` sandbox, and a SIGKILLed rtn once the next run has swept), and so is
# any background process the command left. Where a controller is missing or the cgroup is
# not ours, rtn falls back and says why on stderr. The cgroup facts are read here from the
# cgroup2 line of /proc/self/mountinfo and the 0:: line of /proc/self/cgroup (rtn runs in the
# test's cgroup, and finds the same mount, by statfs or through mountinfo).
# A child cgroup is made by default only where a memory or pids controller can enforce a
# limit (RTN_CGROUP=auto); the cases below ask for one in every case (always), so that the
# placement, the removal and the sweep are tested on hosts without those controllers too
# (a hybrid host's v2 hierarchy). The auto_* and never_* cases say what the default does.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
export RTN_CGROUP=always

CG_MOUNT=$(awk '{for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } ; break }}' /proc/self/mountinfo)
CG_SELF=$(sed -n 's/^0:://p' /proc/self/cgroup)
CG_DIR=$CG_MOUNT${CG_SELF%/}
CG_CONTROLLERS=$(cat "$CG_DIR/cgroup.controllers" 2>/dev/null)

cg_need_mount() {
        [ -n "$CG_MOUNT" ] || t_skip "no cgroup2 mount in /proc/self/mountinfo"
        [ -n "$CG_SELF" ] || t_skip "no 0:: line in /proc/self/cgroup"
}

cg_writable() {
        [ -n "$CG_MOUNT" ] && [ -n "$CG_SELF" ] && [ -w "$CG_DIR" ] && [ -w "$CG_DIR/cgroup.procs" ]
}

cg_need_writable() {
        cg_need_mount
        cg_writable && return 0
        t_skip "cgroup $CG_SELF ($CG_DIR) is not writable by uid $(id -u): sandboxes stay in rtn's cgroup (unwritable_cgroup_warns covers it)"
}

# The 0:: cgroup of host pid $1.
cg_of() {
        sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null
}

# rtn's warning names the one host fact that keeps a listed controller off: other
# processes share rtn's non-root cgroup (cgroup v2's no-internal-process rule).
cg_busy() {
        grep -q "holds processes other than rtn" "$1"
}

# rtn exec does not wait for its sandbox's teardown: a cleaner it forks removes the
# cgroup once rtn-init has finished exiting, a moment after rtn itself (10 s at most here).
cgroups_of() {
        compgen -G "$CG_DIR/rtn-$1-*"
}

cgroup_gone() {
        [ -z "$(cgroups_of "$1")" ]
}

no_cgroup_of() {
        t_wait_for cgroup_gone "$1" || t_fail "cgroup left behind: $(cgroups_of "$1")"
}

has_host_pid() {
        [ -n "$(t_host_pids "$@")" ]
}

host_pid_of() {
        local p
        t_wait_for has_host_pid "$@" || t_fail "no host process '$*'"
        p=$(t_host_pids "$@")
        echo "${p%%$'\n'*}"
}

lands_in_child_cgroup() {
        cg_need_writable
        "$RTN" exec -- sh -c "sleep 30.$T_UNIQ; echo done" >"$T_TMP/out" 2>&1 </dev/null &
        local rtn=$! pid want
        pid=$(host_pid_of sleep "30.$T_UNIQ") || exit 1
        want=${CG_SELF%/}/rtn-$rtn-0
        [ "$(cg_of "$pid")" = "$want" ] || t_fail "sleep is in '$(cg_of "$pid")', not $want"
        grep -qx "$pid" "$CG_MOUNT$want/cgroup.procs" || t_fail "$pid not in $CG_MOUNT$want/cgroup.procs"
        # rtn-init, PID 1 of the sandbox, is in it too: nothing of the sandbox ran outside
        local init
        init=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status")
        init=$(awk '/^PPid:/ {print $2}' "/proc/$init/status")
        [ "$(cg_of "$init")" = "$want" ] || t_fail "rtn-init ($init) is in '$(cg_of "$init")'"
        [ "$(cg_of "$rtn")" = "$CG_SELF" ] || t_fail "rtn itself moved to '$(cg_of "$rtn")'"
        kill "$pid"
        wait "$rtn" || t_fail "rtn exec exited $?: $(cat "$T_TMP/out")"
        grep -qx "done" "$T_TMP/out" || t_fail "$(cat "$T_TMP/out")"
        no_cgroup_of "$rtn"
}

# `rtn serve` sessions start their sandboxes the same way (tests/integration/serve_cgroup.py),
# and a sandbox replaced after its rtn-init died leaves no cgroup.
serve_sessions_in_child_cgroups() {
        cg_need_writable
        t_cmd python3 "$T_ROOT/tests/integration/serve_cgroup.py" "$RTN" "$CG_SELF" "$CG_DIR"
        [ "$T_RC" = 0 ] || t_fail "$(cat "$T_ERR_FILE")"
}

# Inside, the cgroup namespace's root is the sandbox's own cgroup: no host path shows.
inside_sees_cgroup_root() {
        t_exec -- cat /proc/self/cgroup
        t_exit_is 0
        grep -qx '0::/' "$T_OUT_FILE" || t_fail "inside: $(cat "$T_OUT_FILE")"
}

fifty_runs_leave_no_cgroup() {
        cg_need_writable
        local i p pids=()
        for i in $(seq 50); do
                "$RTN" exec -- true </dev/null >/dev/null 2>"$T_TMP/err" &
                p=$!
                wait "$p" || t_fail "run $i exited $?: $(cat "$T_TMP/err")"
                pids+=("$p")
        done
        for p in "${pids[@]}"; do
                no_cgroup_of "$p"
        done
}

# (Without a cgroup of its own the processes still go, with the pid namespace.)
timeout_kill_removes_cgroup() {
        "$RTN" exec --timeout 8 -- sh -c "sleep 41.$T_UNIQ & sleep 42.$T_UNIQ" </dev/null >/dev/null 2>&1 &
        local rtn=$! rc=0
        host_pid_of sleep "42.$T_UNIQ" >/dev/null || exit 1
        if cg_writable && ! [ -d "$CG_DIR/rtn-$rtn-0" ]; then
                t_fail "no $CG_DIR/rtn-$rtn-0 while it runs"
        fi
        wait "$rtn" || rc=$?
        [ "$rc" = 124 ] || t_fail "expected exit 124 from --timeout, got $rc"
        no_cgroup_of "$rtn"
        [ -z "$(t_host_pids sleep "41.$T_UNIQ")$(t_host_pids sleep "42.$T_UNIQ")" ] || t_fail "sleeps left on the host"
}

background_process_gone() {
        "$RTN" exec -- sh -c "sleep 51.$T_UNIQ >/dev/null 2>&1 & echo started" >"$T_TMP/out" 2>&1 </dev/null &
        local rtn=$!
        wait "$rtn" || t_fail "rtn exec exited $?: $(cat "$T_TMP/out")"
        grep -qx started "$T_TMP/out" || t_fail "$(cat "$T_TMP/out")"
        [ -z "$(t_host_pids sleep "51.$T_UNIQ")" ] || t_fail "the background sleep outlived the sandbox"
        no_cgroup_of "$rtn"
}

# rtn killed by SIGKILL cannot remove its cgroup; the next rtn that starts a sandbox does.
sigkill_then_swept() {
        cg_need_writable
        "$RTN" exec -- sleep "61.$T_UNIQ" </dev/null >/dev/null 2>&1 &
        local rtn=$!
        host_pid_of sleep "61.$T_UNIQ" >/dev/null || exit 1
        kill -KILL "$rtn"
        wait "$rtn" 2>/dev/null
        t_wait_for eval "! has_host_pid sleep 61.$T_UNIQ" || t_fail "sleep outlived rtn"
        t_exit_is 0 "$RTN" exec -- true
        no_cgroup_of "$rtn"
}

# auto: a child cgroup only where the memory or the pids controller is there to enforce a
# limit with; else the sandbox stays in rtn's cgroup and no rtn-<pid>-* is made.
auto_needs_a_controller() {
        cg_need_writable
        RTN_CGROUP='' "$RTN" exec -- sleep "33.$T_UNIQ" >"$T_TMP/out" 2>&1 </dev/null &
        local rtn=$! pid want=$CG_SELF
        pid=$(host_pid_of sleep "33.$T_UNIQ") || exit 1
        # a listed controller can be enabled in the root cgroup, or where it already is (this
        # shell shares rtn's cgroup: rtn is not alone in it and may not move itself)
        local c
        for c in memory pids; do
                grep -qw "$c" <<<"$CG_CONTROLLERS" &&
                        { [ "$CG_SELF" = / ] || grep -qw "$c" "$CG_DIR/cgroup.subtree_control"; } &&
                        want=${CG_SELF%/}/rtn-$rtn-0
        done
        local got
        got=$(cg_of "$pid")
        kill "$pid"
        wait "$rtn"
        [ "$got" = "$want" ] || t_fail "controllers '$CG_CONTROLLERS': sleep was in '$got', not $want"
        no_cgroup_of "$rtn"
}

# never: the sandbox stays in rtn's cgroup even where it could have one of its own.
never_keeps_rtns_cgroup() {
        cg_need_writable
        RTN_CGROUP=never "$RTN" exec -- sleep "34.$T_UNIQ" >"$T_TMP/out" 2>&1 </dev/null &
        local rtn=$! pid got
        pid=$(host_pid_of sleep "34.$T_UNIQ") || exit 1
        got=$(cg_of "$pid")
        [ -z "$(cgroups_of "$rtn")" ] || t_fail "RTN_CGROUP=never made $(cgroups_of "$rtn")"
        kill "$pid"
        wait "$rtn"
        [ "$got" = "$CG_SELF" ] || t_fail "sleep was in '$got', not rtn's $CG_SELF"
}

bad_mode_refused() {
        RTN_CGROUP=sometimes t_exec -- true
        t_exit_is 125
        t_stderr_has "RTN_CGROUP=sometimes is not auto, always or never"
        # refused before a limit is chosen: no fallback warning that names it first
        RTN_CGROUP=sometimes t_exec --memory-max 64M -- true
        t_exit_is 125
        ! grep -q "warning" "$T_ERR_FILE" || t_fail "warned before refusing: $(cat "$T_ERR_FILE")"
        # --isolation landlock makes no cgroup, and is refused all the same
        RTN_CGROUP=sometimes t_exec --isolation landlock -- true
        t_exit_is 125
        t_stderr_has "RTN_CGROUP=sometimes is not auto, always or never"
}

# flock(1) given a path opens it with O_CREAT, which cgroupfs refuses with EACCES once the
# directory is gone: a lock is "held" only when an fd of our own opens and flock -n says busy.
lock_held() {
        (
                exec 8<"$1" || exit 2
                flock -n -E 75 8
                [ $? = 75 ]
        )
}

# A cgroup whose rtn is gone but whose directory is flock()ed belongs to the cleaner of an
# rtn exec that ended a moment ago: the next rtn's sweep must leave it to it (not wait for
# its teardown, nor race it). Once the lock is gone (a cleaner that died), the sweep removes
# it. As rt_cgroup_release does, the cgroup is locked while the process it is named after
# lives, and that process ends only then: named after a pid already gone, it would be stale
# and unlocked for a moment, which another rtn's sweep (other suites' run at the same time)
# may rightly take.
sweep_leaves_cleaners_cgroup() {
        cg_need_writable
        local d
        # not local, nor left set once reaped: the EXIT trap kills what they name
        sleep "300.$T_UNIQ" </dev/null >/dev/null 2>&1 &
        owner=$!
        d=$CG_DIR/rtn-$owner-0
        [ -e "$d" ] && t_skip "$d exists already"
        mkdir "$d" || t_fail "mkdir $d"
        CLEANER_CG=$d
        trap 'kill $owner $holder 2>/dev/null; wait; rmdir "$CLEANER_CG" 2>/dev/null' EXIT
        # the sleep holds the lock (fd 9) and nothing else does: killing it releases it
        (exec 9<"$d" && flock 9 && exec sleep 300) </dev/null >/dev/null 2>&1 &
        holder=$!
        t_wait_for lock_held "$d" || t_fail "the lock of $d was not taken"
        kill "$owner"
        wait "$owner" 2>/dev/null
        owner=
        t_exit_is 0 "$RTN" exec -- true
        [ -d "$d" ] || t_fail "the sweep removed $d while its lock was held"
        kill "$holder"
        wait "$holder" 2>/dev/null
        holder=
        t_exit_is 0 "$RTN" exec -- true
        [ ! -d "$d" ] || t_fail "$d not swept once its lock was released"
}

# rtn's pid names its cgroups; a predecessor with the same pid (rtn as PID 1 of pid
# namespaces one after another, or pids wrapped) may have left one its cleaner still holds:
# the sweep leaves it alone, and rtn must take the next name rather than fail on it. Run in
# a cgroup of the case's own, so that this rtn's sweep (which sees no host pid alive from
# its pid namespace) touches nothing of anyone else's.
name_held_by_a_cleaner() {
        [ "$(id -u)" = 0 ] || t_skip "a pid namespace for rtn needs root here"
        cg_need_writable
        command -v unshare >/dev/null || t_skip "no unshare"
        PID1_CG=$CG_DIR/t-pid1-$BASHPID
        mkdir "$PID1_CG" "$PID1_CG/rtn-1-0" || t_fail "mkdir $PID1_CG/rtn-1-0"
        trap 'kill $holder 2>/dev/null; wait; rmdir "$PID1_CG"/rtn-* "$PID1_CG" 2>/dev/null' EXIT
        (exec 9<"$PID1_CG/rtn-1-0" && flock 9 && exec sleep 300) </dev/null >/dev/null 2>&1 &
        holder=$!
        t_wait_for lock_held "$PID1_CG/rtn-1-0" || t_fail "the lock was not taken"
        # shellcheck disable=SC2016
        sh -c 'echo $$ >"$1/cgroup.procs" && exec unshare --pid --fork --mount-proc "$2" exec -- true' \
                sh "$PID1_CG" "$RTN" >"$T_TMP/out" 2>"$T_TMP/err" </dev/null
        local rc=$?
        [ "$rc" = 0 ] || t_fail "rtn as PID 1 exited $rc: $(cat "$T_TMP/err")"
        [ -d "$PID1_CG/rtn-1-0" ] || t_fail "the sweep removed a cgroup whose lock was held"
}

# The controllers rtn needs are not in cgroup.controllers (a hybrid host's v2 hierarchy,
# whose memory and pids belong to v1): the warnings say which and where. Where both are
# available there is nothing to warn about, and rtn must not.
missing_controller_warns() {
        cg_need_writable
        t_exec --memory-max 64M --pids-max 500 -- true
        t_exit_is 0
        local c
        for c in memory pids; do
                if grep -qw "$c" <<<"$CG_CONTROLLERS"; then
                        # listed: only the no-internal-process rule may still refuse it
                        ! grep -q "not a cgroup $c.max" "$T_ERR_FILE" || cg_busy "$T_ERR_FILE" ||
                                t_fail "$c is in cgroup.controllers, yet: $(cat "$T_ERR_FILE")"
                else
                        t_stderr_has "the $c controller is not available in cgroup $CG_DIR (cgroup.controllers: ${CG_CONTROLLERS:-empty}"
                fi
        done
        grep -qw memory <<<"$CG_CONTROLLERS" ||
                t_stderr_has "memory limit is RLIMIT_DATA per process, not a cgroup memory.max for the sandbox: "
        grep -qw pids <<<"$CG_CONTROLLERS" ||
                t_stderr_has "process limit is the pid namespace's pid_max, not a cgroup pids.max: "
}

# Where the controllers are ours, the sandbox's cgroup carries the limits asked for.
limits_written() {
        cg_need_writable
        local c
        for c in memory pids; do
                grep -qw "$c" <<<"$CG_CONTROLLERS" ||
                        t_skip "the $c controller is not in $CG_DIR/cgroup.controllers (${CG_CONTROLLERS:-empty})"
        done
        "$RTN" exec --memory-max 64M --pids-max 500 -- sleep "91.$T_UNIQ" >"$T_TMP/out" 2>&1 </dev/null &
        local rtn=$! pid d
        pid=$(host_pid_of sleep "91.$T_UNIQ") || exit 1
        d=$CG_DIR/rtn-$rtn-0
        if grep -q "not a cgroup" "$T_TMP/out"; then
                kill "$pid"
                cg_busy "$T_TMP/out" || t_fail "controllers listed, yet: $(cat "$T_TMP/out")"
                t_skip "cgroup v2's no-internal-process rule: $(cat "$T_TMP/out")"
        fi
        local mem pids swap=0
        mem=$(cat "$d/memory.max") pids=$(cat "$d/pids.max")
        [ -e "$d/memory.swap.max" ] && swap=$(cat "$d/memory.swap.max")
        kill "$pid"
        wait "$rtn"
        [ "$mem" = 67108864 ] || t_fail "memory.max is $mem"
        [ "$swap" = 0 ] || t_fail "memory.swap.max is $swap"
        [ "$pids" = 500 ] || t_fail "pids.max is $pids"
}

# Not asked for, no pid warning: pid_max bounds the sandbox as it always did.
no_pid_warning_unasked() {
        t_exec -- true
        t_exit_is 0
        ! grep -q "pids.max" "$T_ERR_FILE" || t_fail "$(cat "$T_ERR_FILE")"
}

# A cgroup delegated to an unprivileged user the way systemd's Delegate=yes does it (the
# directory, cgroup.procs, cgroup.subtree_control and cgroup.threads chowned to them): rtn
# run by that user inside it puts the sandbox in a child of it, and removes it at the end.
# The user is a uid of this case's own, in no passwd entry (rtn needs none): not rtntest or
# rtnsub, whose own suites may run at the same time and fill the per-user counts (processes,
# inotify instances, queued signals) that every process of a uid shares.
DELEGATE_UID=4190001
delegated_to_user() {
        [ "$(id -u)" = 0 ] || t_skip "delegating a cgroup to uid $DELEGATE_UID needs root"
        cg_need_writable
        getent passwd "$DELEGATE_UID" >/dev/null && t_skip "uid $DELEGATE_UID is someone's: $(getent passwd "$DELEGATE_UID")"
        local name=t-delegated-$BASHPID u=$T_TMP/u d who=$DELEGATE_UID:$DELEGATE_UID
        # not local: the EXIT trap of the case's subshell removes it after a failure too
        DELEGATED=$CG_DIR/$name
        d=$DELEGATED
        mkdir "$d" || t_fail "mkdir $d"
        trap 'kill -KILL $rtn 2>/dev/null; wait; rmdir "$DELEGATED"' EXIT
        chown "$who" "$d" "$d/cgroup.procs" "$d/cgroup.subtree_control" "$d/cgroup.threads"
        mkdir -p "$u/bin" "$u/home" "$u/tmp" "$u/data" "$u/run"
        cp "$RTN" "$u/bin/rtn"
        chown -R "$who" "$u/home" "$u/tmp" "$u/data" "$u/run"
        chmod 755 "$T_TMP" "$u" "$u/bin"
        chmod 700 "$u/run"
        # shellcheck disable=SC2016
        sh -c 'echo $$ >"$1/cgroup.procs" && exec setpriv --reuid="$3" --regid="$3" \
                --clear-groups env -i PATH=/usr/bin:/bin HOME="$2/home" TMPDIR="$2/tmp" \
                XDG_RUNTIME_DIR="$2/run" RTN_DATA_DIR="$2/data" RTN_CGROUP=always \
                "$2/bin/rtn" exec --memory-max 64M -- sleep 95.'"$T_UNIQ" sh "$d" "$u" "$DELEGATE_UID" \
                >"$T_TMP/out" 2>"$T_TMP/err" </dev/null &
        rtn=$!
        local pid want=${CG_SELF%/}/$name/rtn-$rtn-0
        pid=$(host_pid_of sleep "95.$T_UNIQ") || t_fail "no host process 'sleep 95.$T_UNIQ'; rtn's stderr: $(cat "$T_TMP/err")"
        [ "$(cg_of "$pid")" = "$want" ] || t_fail "sleep is in '$(cg_of "$pid")', not $want"
        kill "$pid"
        wait "$rtn"
        t_wait_for eval '[ -z "$(compgen -G "$d/rtn-*")" ]' || t_fail "left in $d: $(compgen -G "$d/rtn-*")"
        grep -qF "the memory controller is not available in cgroup $d (cgroup.controllers: " "$T_TMP/err" ||
                t_fail "stderr: $(cat "$T_TMP/err")"
}

# A container's view: in a mount namespace of its own, the cgroup2 mount point shows a
# subtree (the cgroup rtn runs in) at its top, as a bind mount without a cgroup namespace
# gives it. /proc/self/cgroup still names the full path, which does not exist below that
# mount: rtn must take the mount's root from mountinfo, not assume "/", and put the
# sandbox in a child of the subtree.
subtree_at_mount_point() {
        [ "$(id -u)" = 0 ] || t_skip "bind-mounting over the cgroup2 mount needs root"
        cg_need_writable
        local name=t-subtree-$BASHPID
        SUBTREE=$CG_DIR/$name
        mkdir "$SUBTREE" || t_fail "mkdir $SUBTREE"
        trap 'kill -KILL $rtn 2>/dev/null; wait; rmdir "$SUBTREE"' EXIT
        # shellcheck disable=SC2016
        sh -c 'echo $$ >"$1/cgroup.procs" && exec unshare -m --propagation private sh -c \
                "mount --bind \"\$1\" \"\$2\" && exec \"\$3\" exec -- sleep 97.'"$T_UNIQ"'" sh "$1" "$2" "$3"' \
                sh "$SUBTREE" "$CG_MOUNT" "$RTN" >"$T_TMP/out" 2>"$T_TMP/err" </dev/null &
        rtn=$!
        local pid want=${CG_SELF%/}/$name/rtn-$rtn-0
        pid=$(host_pid_of sleep "97.$T_UNIQ") || exit 1
        [ "$(cg_of "$pid")" = "$want" ] || t_fail "sleep is in '$(cg_of "$pid")', not $want; $(cat "$T_TMP/err")"
        kill "$pid"
        wait "$rtn"
        t_wait_for eval '[ -z "$(compgen -G "$SUBTREE/rtn-*")" ]' ||
                t_fail "left in $SUBTREE: $(compgen -G "$SUBTREE/rtn-*")"
}

# An unprivileged caller whose cgroup is not delegated: the sandbox stays in rtn's cgroup
# and --memory-max is RLIMIT_DATA, with the reason.
unwritable_cgroup_warns() {
        cg_need_mount
        if [ -w "$CG_DIR" ] && [ -w "$CG_DIR/cgroup.procs" ]; then
                t_skip "cgroup $CG_SELF ($CG_DIR) is writable by uid $(id -u): the fallback is not taken"
        fi
        "$RTN" exec --memory-max 64M -- sleep "71.$T_UNIQ" >"$T_TMP/out" 2>"$T_TMP/err" </dev/null &
        local rtn=$! pid
        pid=$(host_pid_of sleep "71.$T_UNIQ") || exit 1
        [ "$(cg_of "$pid")" = "$CG_SELF" ] || t_fail "sleep is in '$(cg_of "$pid")', not rtn's $CG_SELF"
        kill "$pid"
        wait "$rtn"
        grep -qF "memory limit is RLIMIT_DATA per process, not a cgroup memory.max for the sandbox: cgroup $CG_SELF ($CG_DIR) is not writable by uid $(id -u): not delegated to us" "$T_TMP/err" ||
                t_fail "stderr: $(cat "$T_TMP/err")"
}

t_run lands_in_child_cgroup lands_in_child_cgroup
t_run serve_sessions_in_child_cgroups serve_sessions_in_child_cgroups
t_run inside_sees_cgroup_root inside_sees_cgroup_root
t_run fifty_runs_leave_no_cgroup fifty_runs_leave_no_cgroup
t_run timeout_kill_removes_cgroup timeout_kill_removes_cgroup
t_run background_process_gone background_process_gone
t_run sigkill_then_swept sigkill_then_swept
t_run sweep_leaves_cleaners_cgroup sweep_leaves_cleaners_cgroup
t_run auto_needs_a_controller auto_needs_a_controller
t_run never_keeps_rtns_cgroup never_keeps_rtns_cgroup
t_run bad_mode_refused bad_mode_refused
t_run name_held_by_a_cleaner name_held_by_a_cleaner
t_run missing_controller_warns missing_controller_warns
t_run limits_written limits_written
t_run no_pid_warning_unasked no_pid_warning_unasked
t_run delegated_to_user delegated_to_user
t_run subtree_at_mount_point subtree_at_mount_point
t_run unwritable_cgroup_warns unwritable_cgroup_warns
t_done
