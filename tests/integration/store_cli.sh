#!/usr/bin/env bash
# The store through the CLI, as issue 4 describes it: `rtn exec --commit` then `rtn exec`
# sees the change; deletions are permanent; a no-change commit is harmless; log, rollback by
# short id, export (plain `tar --zstd -tf` lists it) and import into another data dir with
# the same ids; verify; 250 commits deep still mount and run (overlay's lowerdir+).
. "$(dirname "$0")/../lib.sh"
t_need_rtn

commit_then_see() {
        t_exec --commit -- sh -c 'echo hi > /workspace/a'
        t_exit_is 0
        t_stderr_has "rtn exec: committed"
        t_exec -- cat /workspace/a
        t_exit_is 0
        t_stdout_is hi
}
t_run commit_then_see commit_then_see

failed_command_commits_nothing() {
        t_exec --commit -- sh -c 'echo no > /workspace/b; exit 3'
        t_exit_is 3
        t_stderr_has "not committed"
        t_exec -- ls /workspace
        t_stdout_is ""
}
t_run failed_command_commits_nothing failed_command_commits_nothing

deletion_is_permanent() {
        t_exec --commit -- sh -c 'echo x > /workspace/gone; echo y > /workspace/kept'
        t_exec --commit -- rm /workspace/gone
        t_exit_is 0
        t_exec -- ls /workspace
        t_stdout_is kept
}
t_run deletion_is_permanent deletion_is_permanent

noop_commit_is_harmless() {
        t_exec --commit -- sh -c 'echo 1 > /workspace/f'
        t_cmd "$RTN" log
        local before=$(wc -l <"$T_OUT_FILE")
        t_exec --commit -- true
        t_exit_is 0
        t_stderr_has "nothing to commit"
        t_cmd "$RTN" log
        [ "$(wc -l <"$T_OUT_FILE")" = "$before" ] || t_fail "a no-change commit added a commit"
        t_exec -- cat /workspace/f
        t_stdout_is 1
}
t_run noop_commit_is_harmless noop_commit_is_harmless

rollback_short_id() {
        t_exec --commit -m one -- sh -c 'echo 1 > /workspace/v'
        t_exec --commit -m two -- sh -c 'echo 2 > /workspace/v'
        t_cmd "$RTN" log
        local first
        first=$(awk '/ one$/ {print $1}' "$T_OUT_FILE")
        [ -n "$first" ] || t_fail "no commit 'one' in: $(cat "$T_OUT_FILE")"
        t_cmd "$RTN" rollback "${first:0:10}"
        t_exit_is 0
        t_exec -- cat /workspace/v
        t_stdout_is 1
}
t_run rollback_short_id rollback_short_id

export_import_same_ids() {
        t_exec --commit -m a -- sh -c 'mkdir -p /workspace/d && echo a > /workspace/d/a && ln -s a /workspace/d/l'
        t_exec --commit -m b -- sh -c 'rm /workspace/d/a; echo b > /workspace/b'
        t_cmd "$RTN" export -o "$T_TMP/chain.tar.zst"
        t_exit_is 0
        tar --zstd -tf "$T_TMP/chain.tar.zst" >/dev/null || t_fail "tar --zstd -tf cannot list the export"
        t_cmd "$RTN" log
        cp "$T_OUT_FILE" "$T_TMP/log.src"
        RTN_DATA_DIR=$T_TMP/other t_cmd "$RTN" import "$T_TMP/chain.tar.zst"
        t_exit_is 0
        RTN_DATA_DIR=$T_TMP/other t_cmd "$RTN" log
        diff <(cut -d' ' -f1 "$T_TMP/log.src") <(cut -d' ' -f1 "$T_OUT_FILE") >/dev/null ||
                t_fail "imported ids differ: $(cat "$T_TMP/log.src") vs $(cat "$T_OUT_FILE")"
        RTN_DATA_DIR=$T_TMP/other t_exec -- sh -c 'cat /workspace/b; ls /workspace/d'
        t_stdout_is "$(printf 'b\nl')"
        RTN_DATA_DIR=$T_TMP/other t_cmd "$RTN" store verify
        t_exit_is 0
}
t_run export_import_same_ids export_import_same_ids

import_refuses_garbage() {
        printf 'not an archive' >"$T_TMP/bad.tar.zst"
        t_cmd "$RTN" import "$T_TMP/bad.tar.zst"
        [ "$T_RC" != 0 ] || t_fail "garbage import succeeded"
        t_cmd "$RTN" store verify
        t_exit_is 0
}
t_run import_refuses_garbage import_refuses_garbage

# The stack is built without a sandbox per commit (250 sandboxes were most of this suite's
# time, six times per make test): commit 1 by rtn exec, 2-249 from copies of its layer's
# /workspace (the agent's owner and mode, copied inside the caller's subordinate range where
# they are its ids), then commit 250 by rtn exec on 249 layers, and a command on all 250.
# The filling commits are setup: made by one process (commit_uppers: what 248 `rtn commit
# --upper` do, without 248 starts of rtn), unsanitized in the sanitized runs (T_BIN).
deep_stack_of_commits() {
        t_exec --commit -m c1 -- sh -c 'echo 1 > /workspace/f1'
        t_exit_is 0
        local first
        first=$(ls "$RTN_DATA_DIR/layers")
        [ "$(wc -w <<<"$first")" = 1 ] || t_fail "not one layer after one commit: $first"
        # One process makes the 248 uppers (a second try starts clean): each a copy of the
        # layer's workspace as `cp -a` makes it (modes, times, xattrs, owners), and its file.
        local py
        read -r -d '' py <<'PY'
import os, shutil, sys
src = os.path.join(sys.argv[1], "workspace")
for n in os.listdir("."):
    if n.startswith("up") and n[2:].isdigit():
        shutil.rmtree(n)
for i in range(2, 250):
    ws = "up%d/workspace" % i
    os.mkdir("up%d" % i)
    shutil.copytree(src, ws, symlinks=True)
    for d, dirs, files in os.walk(src):
        for n in [""] + dirs + files:
            st = os.lstat(os.path.join(d, n))
            os.lchown(os.path.join(ws, os.path.relpath(d, src), n), st.st_uid, st.st_gid)
    with open("%s/f%d" % (ws, i), "w") as f:
        f.write("%d\n" % i)
PY
        printf '%s\n' "$py" >uppers.py
        python3 uppers.py "$RTN_DATA_DIR/layers/$first" 2>/dev/null ||
                unshare --map-root-user --map-auto python3 uppers.py "$RTN_DATA_DIR/layers/$first" ||
                t_fail "cannot copy the first layer's workspace"
        # 249 layers: past the one-page limit of overlay options
        "$T_BIN/integration/commit_uppers" "$RTN_DATA_DIR" default up 2 249 ||
                t_fail "the filling commits failed"
        t_exec --commit -m c250 -- sh -c 'echo 250 > /workspace/f250'
        t_exit_is 0
        t_exec -- sh -c 'ls /workspace | wc -l; cat /workspace/f1 /workspace/f250'
        t_exit_is 0
        t_stdout_is "$(printf "250\n1\n250")"
        t_cmd "$RTN" log
        [ "$(wc -l <"$T_OUT_FILE")" = 250 ] || t_fail "$(wc -l <"$T_OUT_FILE") commits, not 250"
        t_cmd "$RTN" store verify
        t_exit_is 0
}
t_run deep_stack_of_commits deep_stack_of_commits

pending_changes() {
        t_exec --keep -- sh -c 'echo 1 > /workspace/a'
        t_exit_is 0
        t_exec --keep -- sh -c 'echo 2 > /workspace/b; cat /workspace/a'
        t_stdout_is 1
        t_exec -- ls /workspace          # without --keep: the tip only
        t_stdout_is ""
        t_cmd "$RTN" diff
        t_stdout_is "$(printf 'A /workspace/a\nA /workspace/b')"
        t_cmd "$RTN" commit -m pending
        t_exit_is 0
        t_cmd "$RTN" diff
        t_stdout_is ""
        t_exec -- ls /workspace
        t_stdout_is "$(printf 'a\nb')"
        t_exec --keep -- rm /workspace/a
        t_cmd "$RTN" diff
        t_stdout_is "D /workspace/a"
        t_cmd "$RTN" reset
        t_exit_is 0
        t_exec --keep -- ls /workspace
        t_stdout_is "$(printf 'a\nb')"
        t_cmd "$RTN" commit -m nothing
        t_stdout_has "nothing to commit"
}
t_run pending_changes pending_changes

# The store hashes with nettle and falls back to libcrypto when nettle cannot be loaded
# (store/sha256.h): a libnettle.so.8 that is not a library makes dlopen fail for real. Both
# must give the same ids, and each must verify what the other wrote.
hash_without_nettle_same_ids() {
        mkdir -p "$T_TMP/lib" "$T_TMP/up1/d" "$T_TMP/up2/d"
        : >"$T_TMP/lib/libnettle.so.8"
        printf 'same bytes\n' | tee "$T_TMP/up1/d/f" >"$T_TMP/up2/d/f"
        ln -s d/f "$T_TMP/up1/l"
        ln -s d/f "$T_TMP/up2/l"
        t_cmd "$RTN" commit --data-dir "$T_TMP/a" --upper "$T_TMP/up1"
        t_exit_is 0
        RTN_LOG=debug LD_LIBRARY_PATH=$T_TMP/lib t_cmd "$RTN" commit --data-dir "$T_TMP/b" \
                --upper "$T_TMP/up2"
        t_exit_is 0
        t_stderr_has "dlopen libnettle.so.8" # the fallback was taken, not nettle found elsewhere
        [ "$(ls "$T_TMP/a/layers")" = "$(ls "$T_TMP/b/layers")" ] ||
                t_fail "layer ids differ: $(ls "$T_TMP/a/layers") vs $(ls "$T_TMP/b/layers")"
        LD_LIBRARY_PATH=$T_TMP/lib t_cmd "$RTN" store --data-dir "$T_TMP/a" verify
        t_exit_is 0
        t_cmd "$RTN" store --data-dir "$T_TMP/b" verify
        t_exit_is 0
}
t_run hash_without_nettle_same_ids hash_without_nettle_same_ids

gc_keeps_what_tips_reach() {
        t_exec --commit -m keep -- sh -c 'echo k > /workspace/k'
        t_exec --commit -m drop -- sh -c 'echo d > /workspace/d'
        t_cmd "$RTN" log
        local keep
        keep=$(awk '/ keep$/ {print $1}' "$T_OUT_FILE")
        t_cmd "$RTN" rollback "$keep"
        t_cmd "$RTN" gc
        t_exit_is 0
        t_exec -- ls /workspace
        t_stdout_is k
        t_cmd "$RTN" store verify
        t_exit_is 0
}
t_run gc_keeps_what_tips_reach gc_keeps_what_tips_reach

# --env on a store that does not exist names the directory that was looked at: the one
# --data-dir gave, else the default (RTN_DATA_DIR here).
missing_store_named() {
        t_exec --data-dir "$T_TMP/missing" --env x -- true
        t_exit_is 125
        t_stderr_has "no store at $T_TMP/missing: environment x has no commits"
        t_exec --env x -- true
        t_exit_is 125
        t_stderr_has "no store at $RTN_DATA_DIR: environment x has no commits"
}
t_run missing_store_named missing_store_named
t_done
