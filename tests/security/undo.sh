#!/usr/bin/env bash
# env_undo and env_redo of `rtn serve` (docs/security-invariants.md, 31), driven by a Python
# MCP client (undo.py, over tests/integration/mcp_serve.py). A checkpoint walks the sandbox's
# state against a shadow of it on its own tmpfs and keeps the old versions of what changed;
# an undo swaps them back, on rtn's side, in a helper user namespace mapped like the sandbox
# (runtime/session/ckpt.c, rt_ckpt; copies by runtime/session/copy.c):
#   roundtrip  symlinks (to a host file, out of the tree), a FIFO, hard links, odd names, a
#              tree 400 deep, 000 modes, a sticky dir and a whiteout, in the upper, an
#              overlay /workspace and /tmp, come back exactly after a call that deleted
#              them and planted a link to a host directory, a FIFO and a link to /etc in
#              their place: the restore follows none (the host directory keeps its files)
#              and blocks on none; a device node and a set-id bit cannot be planted;
#              env_redo brings the broken state back
#   sparse     a 1 TiB sparse file and 200 links of one file are restored as such: holes stay
#              holes, the tmpfs is not charged, links stay one inode
#   bounded    --undo-depth keeps the newest steps; a checkpoint that fits the upper's
#              --upper-size once older steps go drops them; one that does not fit at all
#              lets the call run without one and env_history says so; --undo-bytes drops
#              the oldest steps
#   jobs       env_undo of the first call empties the state; env_undo kills running jobs
#              and names them; a fork's history is empty; env_commit forgets it
#   default_on checkpoints and the three tools without options, a step's exit status and
#              paths; --undo-depth 0 keeps none
#   incremental  six calls beside a 12 MiB file in a 32 MiB upper keep every step (a
#              checkpoint copies only what changed; a call that changed nothing, none), and
#              each undo gives back the state before its call exactly: a deleted tree,
#              chmods, symlinks, xattrs, directories swapped by name, a hard link, a
#              whiteout; a fork undoes its own first step
# Every case also checks that a host file and a host directory the agent's links name are
# unchanged.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

PY=$T_ROOT/tests/security/undo.py

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        export HOSTSECRET=$T_TMP/host-secret HOSTDIR=$T_TMP/host-dir
        echo host-secret >"$HOSTSECRET"
        mkdir "$HOSTDIR" && echo keep >"$HOSTDIR/keep"
        chmod 644 "$HOSTSECRET" "$HOSTDIR/keep"
        chmod 755 "$T_TMP" "$HOSTDIR"
        host_snapshot "$HOSTSECRET" "$HOSTDIR/keep"
        T_CMD_TIMEOUT=300 t_cmd python3 "$PY" "$RTN" "$1"
        grep '^#' "$T_ERR_FILE" | while read -r l; do t_note "${l#\# }"; done
        [ "$T_RC" = 0 ] || t_fail "$(grep -v '^#' "$T_ERR_FILE" | tail -c 1500)"
        host_unchanged "$HOSTSECRET" "$HOSTDIR/keep"
}

t_run roundtrip scenario roundtrip
t_run sparse scenario sparse
t_run bounded scenario bounded
t_run jobs scenario jobs
t_run default_on scenario default_on
t_run incremental scenario incremental
t_done
