#!/usr/bin/env bash
# rtn undo (docs/rtn.1): each rtn exec --keep run is a step of the environment's pending
# changes, and `rtn undo [N]` puts them back as they were before the last N runs, byte for
# byte (contents, modes, owners, xattrs, deleted trees, symlinks, hard links, FIFOs, an
# overlay workspace's changes); nothing to undo, or more than is kept, changes nothing and
# exits 1; a commit ends the history; a run that changed nothing is no step; --undo-depth
# bounds it; a running --keep run holds it.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
export RTN_DATA_DIR

# What the pending changes hold below $HOME and /var/tmp, as one text: every entry's type,
# mode, owner, size, link target, xattrs and content hash, and which names share an inode.
# Run in a --keep run that changes nothing (no step), by $T_RTN_SETUP (tests/lib.sh): a look
# at the changes, not what the case tests (bounded runs a no-change --keep by $RTN).
SNAP='import hashlib, os, stat
for top in (os.environ["HOME"], "/var/tmp"):
    ino = {}
    for r, ds, fs in sorted(os.walk(top)):
        ds.sort()
        for n in sorted(ds + fs):
            p = os.path.join(r, n)
            st = os.lstat(p)
            x = sorted((k, os.getxattr(p, k, follow_symlinks=False))
                       for k in os.listxattr(p, follow_symlinks=False))
            what = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
            if stat.S_ISREG(st.st_mode):
                what = hashlib.sha256(open(p, "rb").read()).hexdigest()[:16]
                ino.setdefault(st.st_ino, []).append(p)
            size = "" if stat.S_ISDIR(st.st_mode) else st.st_size
            print(p, oct(st.st_mode), st.st_uid, st.st_gid, size, st.st_nlink, what, x)
    print(sorted(v for v in ino.values() if len(v) > 1))'

snap() {
        t_cmd "$T_RTN_SETUP" exec --keep -- python3 -c "$SNAP"
        t_exit_is 0
        cp "$T_OUT_FILE" "$1"
}

same() {
        cmp -s "$1" "$2" || t_fail "the pending changes differ from $1: $(diff "$1" "$2" | head -20)"
}

FIRST='cd $HOME && mkdir -p tree/sub/deep && echo a > tree/sub/deep/f && echo b > tree/g &&
        echo hello > x && python3 -c "import os; os.setxattr(\"x\", \"user.k\", b\"v1\")" &&
        ln -s x lnk && chmod 640 x && ln x hl && mkfifo pipe && mkdir -p /var/tmp/keep &&
        echo t > /var/tmp/keep/t && chmod 711 /var/tmp/keep'
SECOND='cd $HOME && rm -rf tree && chmod 600 x && rm lnk && ln -s tree lnk && echo more >> x &&
        python3 -c "import os; os.setxattr(\"x\", \"user.k\", b\"v2\"); os.setxattr(\"hl\", \"user.n\", b\"1\")" &&
        rm pipe && echo p > pipe && rm -r /var/tmp/keep && echo new > new'

# Two runs, then rtn undo: the files are back byte for byte, rtn undo names the run it took
# back, --list names the one left.
roundtrip() {
        RTN_DATA_DIR=$T_TMP/data
        t_exec --keep -- sh -c "$FIRST"
        t_exit_is 0
        snap "$T_TMP/one"
        t_exec --keep -- sh -c "$SECOND"
        t_exit_is 0
        snap "$T_TMP/two"
        cmp -s "$T_TMP/one" "$T_TMP/two" && t_fail "the second run changed nothing"
        t_exit_is 0 "$RTN" undo
        t_stdout_has "undid run 2 ("
        t_stdout_has "rm -rf tree"
        snap "$T_TMP/back"
        same "$T_TMP/one" "$T_TMP/back"
        t_exit_is 0 "$RTN" undo --list
        t_stdout_has "mkdir -p tree/sub/deep"
        grep -q "rm -rf tree" "$T_OUT_FILE" && t_fail "--list still names the undone run"
        t_exit_is 0 "$RTN" undo
        snap "$T_TMP/none"
        grep -q "tree" "$T_TMP/none" && t_fail "the first run's files are still pending"
        t_exit_is 1 "$RTN" undo
        t_stderr_has "nothing to undo"
}

# rtn undo 2 takes back two runs at once; more than are kept is refused and changes nothing.
undo_two() {
        RTN_DATA_DIR=$T_TMP/data
        t_exec --keep -- sh -c 'echo 1 > $HOME/a'
        snap "$T_TMP/one"
        t_exec --keep -- sh -c 'echo 2 > $HOME/a && echo b > $HOME/b'
        t_exec --keep -- sh -c 'rm $HOME/a && mkdir $HOME/c'
        t_exit_is 1 "$RTN" undo 4
        t_stderr_has "cannot undo 4 runs: 3 of environment default can be undone"
        t_exit_is 125 "$RTN" undo 0
        t_exit_is 0 "$RTN" undo 2
        t_stdout_has "undid run 3"
        t_stdout_has "undid run 2"
        snap "$T_TMP/back"
        same "$T_TMP/one" "$T_TMP/back"
}

# A commit ends the history: rtn undo goes back to it, never past it; rtn reset too.
past_commit() {
        RTN_DATA_DIR=$T_TMP/data
        t_exit_is 1 "$RTN" undo
        t_stderr_has "nothing to undo"
        t_exec --keep -- sh -c 'echo 1 > $HOME/a'
        t_exit_is 0 "$RTN" commit -m one
        t_exec --keep -- sh -c 'echo 2 > $HOME/a'
        t_exit_is 1 "$RTN" undo 2
        t_stderr_has "1 of environment default can be undone"
        t_exit_is 0 "$RTN" undo
        t_exec -- sh -c 'cat $HOME/a'
        t_stdout_is 1
        t_exit_is 1 "$RTN" undo
        t_exec --keep -- sh -c 'echo 3 > $HOME/a'
        t_exit_is 0 "$RTN" reset
        t_exit_is 1 "$RTN" undo
        t_stderr_has "nothing to undo"
}

# A run that changed nothing is no step; --undo-depth keeps the newest N and says how many
# went; --undo-depth 0 keeps none.
bounded() {
        RTN_DATA_DIR=$T_TMP/data
        for i in 1 2 3; do
                t_exec --keep --undo-depth 2 -- sh -c "echo $i > \$HOME/f$i"
                t_exit_is 0
        done
        t_exec --keep -- ls /
        t_exit_is 0 "$RTN" undo --list
        t_stdout_has "(1 older runs dropped"
        [ "$(grep -c 'echo' "$T_OUT_FILE")" = 2 ] || t_fail "not two runs: $(cat "$T_OUT_FILE")"
        t_exit_is 125 "$RTN" exec --undo-depth 2 -- true
        t_stderr_has "need --keep"
        t_exit_is 125 "$RTN" exec --keep --undo-depth 1001 -- true
        t_exec --keep --undo-depth 0 -- sh -c 'echo 4 > $HOME/f4'
        t_exit_is 1 "$RTN" undo
        t_stderr_has "nothing to undo"
}

# An overlay workspace's pending changes are steps too.
workspace() {
        RTN_DATA_DIR=$T_TMP/data
        mkdir -p "$T_TMP/ws/keep" && echo host > "$T_TMP/ws/h"
        echo k > "$T_TMP/ws/keep/k"
        local ws=(--workspace "$T_TMP/ws" --workspace-mode overlay --keep)
        t_exec "${ws[@]}" -- sh -c 'echo one > /workspace/h && echo n > /workspace/n'
        t_exit_is 0
        t_exec "${ws[@]}" -- sh -c 'echo two > /workspace/h && rm -r /workspace/keep /workspace/n'
        t_exit_is 0
        t_exit_is 0 "$RTN" undo
        t_exec "${ws[@]}" -- sh -c 'cat /workspace/h /workspace/n /workspace/keep/k'
        t_stdout_is "$(printf 'one\nn\nk')"
        [ "$(cat "$T_TMP/ws/h")" = host ] || t_fail "the host's workspace changed"
        # what rtn apply wrote is pending no more: the history ends there
        t_exit_is 0 "$RTN" apply
        [ "$(cat "$T_TMP/ws/h")" = one ] || t_fail "rtn apply did not write h"
        t_exit_is 1 "$RTN" undo
        t_stderr_has "nothing to undo"
        # the changes an rtn serve leaves pending are no run's: the history ends there too
        t_exec --keep -- sh -c 'echo 1 > $HOME/a'
        t_exit_is 0 "$RTN" reset
        t_exec --keep -- sh -c 'echo 2 > $HOME/a'
        printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
                '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"echo s > /workspace/s"}}}' \
                >"$T_TMP/calls"
        replied() { grep -q '"id":2' "$T_TMP/serve.out"; }
        # stdin stays open until the call is answered: at its end rtn serve stops what runs
        { cat "$T_TMP/calls" && t_wait_for replied; } |
                "$RTN" serve --workspace "$T_TMP/ws" --workspace-mode overlay >"$T_TMP/serve.out" 2>"$T_TMP/serve.err"
        grep -q "are kept as the pending changes" "$T_TMP/serve.err" || t_fail "rtn serve kept nothing: $(cat "$T_TMP/serve.err")"
        t_exit_is 1 "$RTN" undo
        t_stderr_has "nothing to undo"
}

# A running --keep run holds the pending changes: rtn undo is refused meanwhile, and the
# run is a step once it has ended.
busy() {
        RTN_DATA_DIR=$T_TMP/data
        mkdir "$T_TMP/w"
        t_exec --keep -- sh -c 'echo 1 > $HOME/a'
        "$RTN" exec --keep --workspace "$T_TMP/w" -- sh -c \
                "echo 2 > \$HOME/a; $(t_hold_until /workspace/go) # $T_UNIQ" \
                </dev/null >/dev/null 2>"$T_TMP/run.err" &
        local pid=$!
        held() {
                t_cmd "$RTN" undo 999 # a count no history holds: never changes anything
                [ "$T_RC" = 1 ] && grep -q "in use by a running rtn exec --keep" "$T_ERR_FILE"
        }
        t_wait_for held || t_fail "rtn undo was not refused while a --keep run held them: $(t_last); the run $(kill -0 "$pid" 2>/dev/null && echo "still runs" || echo "has ended"), its stderr: $(head -c 600 "$T_TMP/run.err")"
        touch "$T_TMP/w/go"
        wait "$pid" || t_fail "the --keep run failed"
        t_exit_is 0 "$RTN" undo --list
        t_stdout_has "workspace/go"
}

# The pending lock is also held for a moment by what only reads or checks the pending
# changes (rtn undo, whose refusal exec_undo_busy polls for, rtn undo --list, a commit that
# finds nothing): an rtn exec --keep started in that moment waits for it rather than taking
# it for a running --keep run; one held longer is refused as before.
short_holder() {
        RTN_DATA_DIR=$T_TMP/data
        t_exec --keep -- true
        local lock=$RTN_DATA_DIR/pending/default/lock
        [ -e "$lock" ] || t_fail "no pending lock at $lock"
        locked() { ! flock -xn "$lock" true; }
        flock -x "$lock" sleep 0.4 &
        local holder=$!
        t_wait_for locked || t_fail "the test's holder never took the lock"
        t_exec --keep -- sh -c 'echo 1 > $HOME/a'
        t_exit_is 0
        wait "$holder"
        flock -x "$lock" sleep 8 &
        holder=$!
        t_wait_for locked || t_fail "the test's holder never took the lock"
        t_exec --keep -- true
        t_exit_is 125
        t_stderr_has "in use by a running rtn exec --keep"
        kill "$holder" 2>/dev/null
        wait "$holder" 2>/dev/null || true
}

t_run exec_undo_roundtrip roundtrip
t_run exec_undo_two undo_two
t_run exec_undo_past_commit past_commit
t_run exec_undo_bounded bounded
t_run exec_undo_workspace workspace
t_run exec_undo_busy busy
t_run exec_undo_short_holder short_holder
t_done
