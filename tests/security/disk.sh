#!/usr/bin/env bash
# Bounded disk (docs/security-invariants.md, 10): every upper that outlives a command (an
# `rtn serve` session, `rtn exec --keep`, `rtn exec --commit`, an overlay workspace's in each)
# is a tmpfs of --upper-size, so filling it fails with ENOSPC inside and the data dir's
# filesystem keeps its free space, also once the changes are kept there as pending ones; a
# commit that would not fit there fails before it writes anything and loses nothing. The
# undo history of --keep runs (a shadow of the pending changes and the steps' old versions)
# counts against the same --upper-size.
# As root the data dir sits on a 64 MiB tmpfs made for the case, used in turn by root, rtntest
# and rtnsub (when they exist); as another user it sits on that user's own filesystem and its
# growth is measured.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

SMALL_MIB=64
LIMIT=16M
ME=$(id -un)
# Root runs each case as itself and as these users, where they exist (looked up once).
OTHERS=
if [ "$EUID" = 0 ]; then
        for u in rtntest rtnsub; do
                id "$u" >/dev/null 2>&1 && OTHERS="$OTHERS $u"
        done
fi

# Sets up where the data dir lives ($FS, $FSPATH) and who runs rtn ($USERS).
disk_setup() {
        USERS=$ME
        PRIVATE=
        FS=$T_TMP/fs
        mkdir -p "$FS"
        if [ "$EUID" = 0 ]; then
                mount -t tmpfs -o size=${SMALL_MIB}m,mode=0755 rtn-test-small "$FS" ||
                        t_fail "cannot mount a ${SMALL_MIB} MiB tmpfs"
                trap 'umount -l "$FS" 2>/dev/null' EXIT
                PRIVATE=1
                USERS=$USERS$OTHERS
        fi
        chmod 755 "$T_TMP"
        mkdir -p "$T_TMP/bin" "$T_TMP/py"
        cp "$RTN" "$T_TMP/bin/rtn"
        cp "$T_ROOT/tests/integration/mcp_serve.py" "$T_ROOT/tests/security/disk_serve.py" "$T_TMP/py/"
        chmod -R a+rX "$T_TMP/bin" "$T_TMP/py"
}

# t_cmd of CMD as user U with a HOME and data dir of its own on $FS.
as_user() {
        local u=$1 h=$FS/$1
        shift
        mkdir -p "$h/data" "$h/tmp"
        local run=(env HOME="$h" TMPDIR="$h/tmp" RTN_DATA_DIR="$h/data" MCP_PY_DIR="$T_TMP/py")
        if [ "$u" != "$ME" ]; then
                chown -R "$u:" "$h"
                run=(setpriv --reuid="$u" --regid="$u" --clear-groups env -i PATH=/usr/bin:/bin
                        HOME="$h" TMPDIR="$h/tmp" RTN_DATA_DIR="$h/data" MCP_PY_DIR="$T_TMP/py"
                        DISK_SERVE_ARGS="${DISK_SERVE_ARGS:-}")
        fi
        t_cmd "${run[@]}" "$@"
}

# The numbers cut out by the shell: df's last line, du's first field (no tail, tr or cut).
free_kib() {
        local v
        v=$(df -k --output=avail "$FS")
        echo "${v##*[!0-9]}"
}

used_kib() {
        local v
        v=$(du -sk "$FS/$1" 2>/dev/null)
        v=${v%%[!0-9]*}
        echo "${v:-0}"
}

# The data dir grew by at most the limit (and some slack for the store's own files), and so
# did the filesystem's use when it is ours alone (others write to a user's).
kept_room() { # user free-before used-before what
        local after used
        after=$(free_kib)
        used=$(used_kib "$1")
        [ -n "$PRIVATE" ] || after=$2
        [ $(($2 - after)) -lt $((17 * 1024 + 1024)) ] || t_fail "$4 as $1: the filesystem of the data dir lost $(($2 - after)) KiB (now $after KiB free)"
        [ $((used - $3)) -lt $((17 * 1024 + 1024)) ] || t_fail "$4 as $1: the data dir grew by $((used - $3)) KiB"
}

exec_fill() { # --keep | --commit
        local mode=$1 u before used
        disk_setup
        for u in $USERS; do
                before=$(free_kib)
                used=$(used_kib "$u")
                as_user "$u" "$T_TMP/bin/rtn" exec "$mode" --upper-size $LIMIT -- \
                        sh -c 'dd if=/dev/zero of=/var/tmp/fill bs=1M count=64 2>&1; ls -l /var/tmp/fill'
                t_has "$T_OUT_FILE" "No space left on device" || t_fail "exec $mode as $u: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
                grep -qE ' 1[0-9]{7} ' "$T_OUT_FILE" || t_fail "exec $mode as $u: file size not near 16M: $(cat "$T_OUT_FILE")"
                # rtn undo's history of a --keep run counts against the same bound: a copy
                # of 16 MiB of pending changes cannot fit, so none is kept, and it says so
                [ "$mode" != --keep ] || t_stderr_has "no undo history is kept: the pending changes (about 16 MiB) and a copy of them would pass --upper-size (16 MiB)"
                kept_room "$u" "$before" "$used" "exec $mode"
        done
}

# An overlay workspace's writes share the limit, run after run: each --keep run may only
# add what the pending changes leave of it, and they stay below it on disk.
exec_ws_fill() {
        local u before used run
        disk_setup
        for u in $USERS; do
                before=$(free_kib)
                used=$(used_kib "$u")
                mkdir -p "$FS/$u/ws"
                for run in 1 2; do
                        as_user "$u" "$T_TMP/bin/rtn" exec --keep --upper-size $LIMIT \
                                --workspace "$FS/$u/ws" --workspace-mode overlay -- \
                                sh -c "dd if=/dev/zero of=/workspace/fill$run bs=1M count=64 2>&1"
                        # the second may also be refused before it starts: no room is left
                        t_has "$T_OUT_FILE" "No space left on device" ||
                                { [ $run = 2 ] && grep -q "take 1[0-9] MiB, --upper-size is 16 MiB" "$T_ERR_FILE"; } ||
                                t_fail "exec --keep run $run as $u: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
                done
                as_user "$u" "$T_TMP/bin/rtn" diff
                grep -q "^A /workspace/fill1" "$T_OUT_FILE" || t_fail "the first run's file is not pending: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
                [ -z "$(ls -A "$FS/$u/ws")" ] || t_fail "the host dir changed: $(ls -A "$FS/$u/ws")"
                kept_room "$u" "$before" "$used" "exec --keep, overlay workspace"
        done
}

serve_fill() { # [where [serve options...]]
        local u before used where=${1:-/var/tmp/fill}
        shift $(($# > 0))
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        disk_setup
        for u in $USERS; do
                before=$(free_kib)
                used=$(used_kib "$u")
                mkdir -p "$FS/$u/ws"
                DISK_SERVE_ARGS="${*//@WS@/$FS/$u/ws}" \
                        as_user "$u" python3 "$T_TMP/py/disk_serve.py" "$T_TMP/bin/rtn" $LIMIT "$where" "$FS"
                [ "$T_RC" = 0 ] || t_fail "serve as $u: $(tail -c 800 "$T_ERR_FILE")"
                grep -q "^dd .*No space left on device" "$T_OUT_FILE" || t_fail "serve as $u: $(cat "$T_OUT_FILE")"
                local during
                during=$(awk '$1 == "free_kib" {print $2}' "$T_OUT_FILE")
                [ -n "$PRIVATE" ] || during=$before
                [ $((before - during)) -lt $((17 * 1024 + 1024)) ] || t_fail "serve as $u: the filesystem lost $((before - during)) KiB while the session held its changes"
                kept_room "$u" "$before" "$used" "serve"
        done
}

# A commit that the data dir's filesystem cannot hold fails before it writes, and the
# session keeps its changes.
serve_commit_no_room() {
        local u before
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        [ "$(id -u)" = 0 ] || t_skip "needs a small filesystem of its own (root makes one)"
        disk_setup
        # leave less room than the 16 MiB the session will hold
        dd if=/dev/zero of="$FS/ballast" bs=1M count=$((SMALL_MIB - 12)) status=none 2>/dev/null
        for u in $USERS; do
                before=$(free_kib)
                as_user "$u" python3 "$T_TMP/py/disk_serve.py" "$T_TMP/bin/rtn" $LIMIT /var/tmp/fill "$FS" commit
                [ "$T_RC" = 0 ] || t_fail "serve as $u: $(tail -c 800 "$T_ERR_FILE")"
                grep -q "^commit error .*nothing was written and the changes are kept" "$T_OUT_FILE" ||
                        t_fail "commit as $u: $(cat "$T_OUT_FILE")"
                grep -q "^dirty_after [1-9]" "$T_OUT_FILE" || t_fail "changes lost as $u: $(cat "$T_OUT_FILE")"
                [ $((before - $(awk '$1 == "free_kib_after" {print $2}' "$T_OUT_FILE"))) -lt 1024 ] ||
                        t_fail "the failed commit as $u took room: $(cat "$T_OUT_FILE")"
        done
}

# An agent that commits in a loop: every tip stays in its environment's reflog, kept by gc,
# so the store only grows. With --store-max (as every user) it meets the budget: a refusal
# with the numbers and how to get room, the last changes kept, the data dir within it.
serve_commit_budget() {
        local u
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        disk_setup
        for u in $USERS; do
                DISK_SERVE_ARGS="--store-max 12M" \
                        as_user "$u" python3 "$T_TMP/py/disk_serve.py" "$T_TMP/bin/rtn" $LIMIT /var/tmp/f "$FS" loop
                [ "$T_RC" = 0 ] || t_fail "serve as $u: $(tail -c 800 "$T_ERR_FILE")"
                grep -q "^commit ok" "$T_OUT_FILE" || t_fail "no commit fit as $u: $(cat "$T_OUT_FILE")"
                grep -q "^commit error .*the store holds [0-9]* MiB and the changes may need [0-9]* MiB more, past --store-max 12 MiB: nothing was written and the changes are kept: rtn gc" "$T_OUT_FILE" ||
                        t_fail "the loop as $u met no budget: $(cat "$T_OUT_FILE")"
                grep -q "^dirty_after [1-9]" "$T_OUT_FILE" || t_fail "changes lost as $u: $(cat "$T_OUT_FILE")"
                [ "$(du -sk "$FS/$u/data" | cut -f1)" -lt $((12 * 1024)) ] ||
                        t_fail "the data dir of $u holds $(du -sk "$FS/$u/data" | cut -f1) KiB"
        done
}

# Without a budget, the same loop meets the filesystem's reserve (here a quarter of the
# 64 MiB tmpfs): refused with the numbers, and the reserve stays free.
serve_commit_reserve() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        [ "$(id -u)" = 0 ] || t_skip "needs a small filesystem of its own (root makes one)"
        disk_setup
        as_user root python3 "$T_TMP/py/disk_serve.py" "$T_TMP/bin/rtn" $LIMIT /var/tmp/f "$FS" loop
        [ "$T_RC" = 0 ] || t_fail "serve: $(tail -c 800 "$T_ERR_FILE")"
        grep -q "^commit error .*the data dir's filesystem has [0-9]* MiB free and keeps 16 MiB of them free" "$T_OUT_FILE" ||
                t_fail "the loop met no reserve: $(cat "$T_OUT_FILE")"
        grep -q "^dirty_after [1-9]" "$T_OUT_FILE" || t_fail "changes lost: $(cat "$T_OUT_FILE")"
        [ "$(awk '$1 == "free_kib_after" {print $2}' "$T_OUT_FILE")" -ge $((16 * 1024)) ] ||
                t_fail "the reserve was not kept: $(cat "$T_OUT_FILE")"
}

t_run disk_exec_keep exec_fill --keep
t_run disk_exec_commit exec_fill --commit
t_run disk_exec_keep_workspace exec_ws_fill
t_run disk_serve serve_fill
t_run disk_serve_workspace serve_fill /workspace/fill --workspace @WS@ --workspace-mode overlay
t_run disk_serve_commit_no_room serve_commit_no_room
t_run disk_serve_commit_budget serve_commit_budget
t_run disk_serve_commit_reserve serve_commit_reserve
t_done
