#!/usr/bin/env bash
# The store against its live users, its bases and its reflog (docs/store.md, invariants 20
# and 21 of docs/security-invariants.md): a commit or reset of an upper a running sandbox
# writes is refused; gc keeps the layers of a running sandbox; two servers on one
# environment do not stack each other's commits unless told; an environment made on one base
# refuses a run on another; a rollback can be undone, and an empty id is an error.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

PY=$T_ROOT/tests/integration/store_live.py

# A sandbox in the background: its stdout and stderr go to bg.out/bg.err, its pid to $BG.
bg_exec() {
        "$RTN" exec "$@" </dev/null >bg.out 2>bg.err &
        BG=$!
}

bg_wait() { # expected exit code of the background sandbox
        local rc=0
        touch sig/go
        wait "$BG" || rc=$?
        [ "$rc" = "$1" ] || t_fail "background sandbox exited $rc: $(head -c 400 bg.err)"
}

# A running sandbox says it is up through a bound dir: its changes are on a tmpfs of its own
# until it ends (docs/architecture.md, "Bounded disk"), so nothing on disk shows it.
sig_dir() {
        mkdir -p sig && chmod 777 sig
}

# What the background sandbox runs once it is up: it says so, then holds until bg_wait lets
# it go, so the case's steps meanwhile (a commit, a reset, a rollback and a gc, each an rtn
# that a loaded machine may run slowly) happen while it runs, however long they take.
HOLD="touch /mnt/sig/up; $(t_hold_until /mnt/sig/go)"

commit_during_keep_is_refused() {
        sig_dir
        bg_exec --keep --bind "$T_TMP/sig:/mnt/sig" -- \
                sh -c "echo 1 > /workspace/a; $HOLD; echo 2 > /workspace/b"
        t_wait_for test -e sig/up || t_fail "the --keep run never wrote: $(cat bg.err)"
        t_exit_is 1 "$RTN" commit -m during
        t_stderr_has "in use by a running rtn exec --keep"
        bg_wait 0
        t_exit_is 0 "$RTN" commit -m after
        t_exit_is 0 "$RTN" store verify
        t_exec -- sh -c 'cat /workspace/a /workspace/b'
        t_stdout_is "$(printf '1\n2')"
}

reset_during_keep_is_refused() {
        sig_dir
        bg_exec --keep --bind "$T_TMP/sig:/mnt/sig" -- \
                sh -c "mkdir /workspace/d; echo 1 > /workspace/d/a; $HOLD; echo 2 > /workspace/d/b"
        t_wait_for test -e sig/up || t_fail "the --keep run never wrote: $(cat bg.err)"
        t_exit_is 1 "$RTN" reset
        t_stderr_has "in use"
        bg_wait 0
        t_exit_is 0 "$RTN" diff
        t_stdout_is "$(printf 'A /workspace/d\nA /workspace/d/a\nA /workspace/d/b')"
        t_exit_is 0 "$RTN" reset
        t_exit_is 0 "$RTN" diff
        t_stdout_is ""
}

# The session dir of a running `rtn exec --commit` gets its upper only when the sandbox ends
# and rtn copies the tmpfs there; one planted meanwhile, and committed by another rtn, must
# be refused by the session's lock.
commit_of_a_running_sessions_upper_is_refused() {
        sig_dir
        bg_exec --commit --bind "$T_TMP/sig:/mnt/sig" -- \
                sh -c "echo 1 > /workspace/a; $HOLD; echo 2 > /workspace/b"
        t_wait_for test -e sig/up || t_fail "the sandbox never started: $(cat bg.err)"
        local sess
        sess=$(ls -d "$RTN_DATA_DIR"/sessions/*/ 2>/dev/null | head -n1)
        [ -n "$sess" ] || t_fail "no session dir appeared"
        mkdir -p "$sess/upper/workspace" && echo stolen > "$sess/upper/workspace/x"
        t_exit_is 1 "$RTN" commit --upper "${sess%/}/upper" -m theft
        t_stderr_has "in use"
        bg_wait 0
        grep -q "rtn exec: committed" bg.err || t_fail "the sandbox's own commit failed: $(cat bg.err)"
        t_exit_is 0 "$RTN" store verify
        t_exec -- sh -c 'cat /workspace/a /workspace/b; ls /workspace'
        t_stdout_is "$(printf '1\n2\na\nb')"
}

# gc after a rollback, with the reflog's expiry at 0 (a tip left long ago), while a sandbox
# still runs on the layer rolled away from: the layer stays until the sandbox ends.
gc_keeps_the_layers_of_a_running_sandbox() {
        t_exec --commit -m a -- sh -c 'echo a > /workspace/a'
        t_exec --commit -m b -- sh -c 'echo b > /workspace/b'
        t_cmd "$RTN" log
        local a
        a=$(awk '/ a$/ {print $1}' "$T_OUT_FILE")
        # It says when it runs (and has mounted its layers) through a bound dir.
        sig_dir
        bg_exec --bind "$T_TMP/sig:/mnt/sig" -- sh -c "$HOLD; cat /workspace/b"
        t_wait_for test -e sig/up || t_fail "the sandbox never started: $(cat bg.err)"
        t_exit_is 0 "$RTN" rollback "$a"
        t_exit_is 0 "$RTN" gc --reflog-days 0
        t_stdout_has "kept 1 unreachable layers running sandboxes use"
        bg_wait 0
        [ "$(cat bg.out)" = b ] || t_fail "the running sandbox lost its layer: $(cat bg.out bg.err)"
        t_exit_is 0 "$RTN" gc --reflog-days 0
        t_stdout_has "1 layers"
        t_exit_is 0 "$RTN" store verify
}

# A tree that runs sh and cat, for --rootfs DIR.
make_tree() {
        local lib
        mkdir -p tree/bin tree/etc tree/lib64 tree/lib/x86_64-linux-gnu
        cp /bin/dash tree/bin/sh
        cp /bin/cat /bin/true tree/bin/
        for lib in $(ldd /bin/dash /bin/cat | awk '$3 ~ /^\// {print $3} $1 ~ /^\/lib/ {print $1}' | sort -u); do
                mkdir -p "tree$(dirname "$lib")"
                cp "$lib" "tree$lib"
        done
        echo "root:x:0:0:root:/root:/bin/sh" >tree/etc/passwd
}

# Layers committed on a rootfs: a run without --rootfs runs on it, a run on the host base
# (--rootfs host) is refused.
base_is_recorded_and_another_refused() {
        make_tree
        t_exec --rootfs ./tree --commit -- sh -c 'echo on-tree > /workspace/f'
        t_exit_is 0
        t_exec --rootfs host -- cat /workspace/f
        t_exit_is 125
        t_stderr_has "environment 'default' was made on rootfs $T_TMP/tree [rootfs:"
        t_stderr_has "this run's base is the host [host]"
        t_exec --rootfs ./tree -- cat /workspace/f
        t_exit_is 0
        t_stdout_is on-tree
        t_exec --env other --commit -- sh -c 'echo on-host > /workspace/f'
        t_exit_is 0
        t_exec --env other --rootfs ./tree -- cat /workspace/f
        t_exit_is 125
        t_stderr_has "was made on the host"
        # rtn serve refuses to start on another base, before any sandbox exists.
        t_cmd "$RTN" serve --env other --rootfs ./tree
        [ "$T_RC" != 0 ] || t_fail "serve started on another base"
        t_stderr_has "was made on the host"
}

# An environment remembers its base: a run without --rootfs (exec, serve) is on it, whether
# it was given as a directory or as a NAME; a base that changed or is gone is named.
base_is_the_default() {
        export RTN_DATA_DIR=$T_TMP/data # store_live.py's
        make_tree
        t_exec --rootfs ./tree --commit -- sh -c 'echo on-tree > /workspace/f'
        t_exit_is 0
        t_exec -- sh -c 'cat /workspace/f; test -e /bin/dash || echo not-the-host'
        t_exit_is 0
        t_stdout_is $'on-tree\nnot-the-host'
        t_exec --commit -- sh -c 'echo again >> /workspace/f'
        t_exit_is 0
        t_exec --env default -- cat /workspace/f
        t_stdout_is $'on-tree\nagain'
        # serve starts on it too and says so
        scenario base_of_the_env
        # the tree changed: another base, named
        echo x >tree/etc/hostname
        cp /bin/true tree/bin/true2
        mkdir -p tree/var/lib/dpkg && echo changed >tree/var/lib/dpkg/status
        t_exec -- true
        t_exit_is 125
        t_stderr_has "environment 'default' was made on rootfs $T_TMP/tree [rootfs:"
        t_stderr_has "give --rootfs"
        rm -rf tree
        t_exec -- true
        t_exit_is 125
        t_stderr_has "which cannot be had now"
        # a new environment is still on the host
        t_exec --env fresh -- test -e /bin/dash
        t_exit_is 0
}

# Environments from before the record (or imported) take the base of their first run; a
# --keep run records at once, and rtn reset of an env without commits forgets it.
base_migration_and_keep() {
        make_tree
        mkdir -p up/workspace
        echo old >up/workspace/f
        t_exit_is 0 "$RTN" commit --upper "$T_TMP/up" -m old
        t_exec --rootfs ./tree -- cat /workspace/f
        t_exit_is 0
        t_stdout_is old
        t_exec --rootfs host -- cat /workspace/f
        t_exit_is 125
        t_stderr_has "was made on rootfs"
        t_exec --env k --keep --rootfs ./tree -- sh -c 'echo k > /workspace/k'
        t_exit_is 0
        t_exec --env k --keep --rootfs host -- true
        t_exit_is 125
        t_stderr_has "environment 'k' was made on rootfs"
        t_exit_is 0 "$RTN" reset --env k
        t_exec --env k --keep -- true
        t_exit_is 0
}

# The issue's case: after rollback to A, B (the tip just left) is listed, reachable and kept.
rollback_can_be_undone() {
        t_exec --commit -m a -- sh -c 'echo a > /workspace/v'
        t_exec --commit -m b -- sh -c 'echo b > /workspace/v'
        t_cmd "$RTN" log
        local a b
        a=$(awk '/ a$/ {print $1}' "$T_OUT_FILE")
        b=$(awk '/ b$/ {print $1}' "$T_OUT_FILE")
        t_exit_is 0 "$RTN" rollback "$a"
        t_exit_is 0 "$RTN" reflog
        [ "$(cut -d' ' -f1,3 "$T_OUT_FILE")" = "$(printf '%s rollback\n%s commit\n%s commit' "$a" "$b" "$a")" ] ||
                t_fail "reflog: $(cat "$T_OUT_FILE")"
        t_exit_is 0 "$RTN" gc
        t_exit_is 0 "$RTN" rollback "${b:0:8}"
        t_exec -- cat /workspace/v
        t_stdout_is b
        t_exit_is 1 "$RTN" rollback ''
        t_stderr_has "empty commit id"
        t_exit_is 0 "$RTN" store verify
}

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        t_cmd python3 "$PY" "$RTN" "$1"
        [ "$T_RC" = 0 ] || t_fail "$(tail -c 1500 "$T_ERR_FILE")"
}

t_run commit_during_keep_is_refused commit_during_keep_is_refused
t_run reset_during_keep_is_refused reset_during_keep_is_refused
t_run commit_of_a_running_sessions_upper_is_refused commit_of_a_running_sessions_upper_is_refused
t_run gc_keeps_the_layers_of_a_running_sandbox gc_keeps_the_layers_of_a_running_sandbox
t_run base_is_recorded_and_another_refused base_is_recorded_and_another_refused
t_run base_is_the_default base_is_the_default
t_run base_migration_and_keep base_migration_and_keep
t_run rollback_can_be_undone rollback_can_be_undone
for s in two_servers reflog_rollback; do
        t_run "serve_$s" scenario "$s"
done
t_done
