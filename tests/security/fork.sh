#!/usr/bin/env bash
# The sandboxes of one `rtn serve` stay apart (docs/security-invariants.md, 25), driven by a
# Python MCP client (fork.py, over tests/integration/mcp_serve.py). The agent controls all
# of a sandbox; sandbox_fork copies its upper on rtn's side, in a helper user namespace
# mapped like the sandbox (runtime/session/upper.c, rt_upper_fork):
#   planted       symlinks (absolute, out of the tree, to a host file, dangling), a FIFO,
#                 names with newlines and escapes, hard links, a tree 400 deep and a whiteout,
#                 in the upper, an overlay /workspace and /tmp, are copied as what they are: nothing followed, nothing blocks, the host
#                 file a link names never enters the fork
#   modes         000 files, 000, 100 and 300 directories, set-id and sticky bits: copied
#                 exactly (for a caller without a subordinate range rtn's own process could
#                 not read them, and the fork failed: the copy ran there)
#   xattrs        xattr values and lists past 8 KiB, up to XATTR_SIZE_MAX: copied whole (the
#                 fork failed on ERANGE from a fixed 8 KiB buffer)
#   deep_refused  a tree past the copy's 512 levels fails the fork with a message naming it
#   swap          a job swaps a file with a FIFO, a dir with a symlink, a link to a host file
#                 with a file, while the sandbox is forked six times: each fork ends in
#                 time, copies or names the entry that changed, and follows nothing
#   apart         a fork and a new sandbox against sb-1: no file (root, /tmp, /dev/shm, an
#                 overlay /workspace), process (by host pid too: ESRCH), signal, loopback
#                 listener (TCP, abstract unix: ECONNREFUSED) of one reaches another
#   running       a fork of a sandbox with running jobs copies none of them, says so, and
#                 the source's go on
#   closed        a closed handle is refused by name for every tool and never reused, and
#                 its processes are gone
#   setid         device nodes cannot be made; set-id files keep exactly the source's bits in
#                 the fork, grant nothing there (no_new_privs), and none reaches the host
# Every case also checks that the host's system files and a host file named by the agent's
# links are unchanged.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

PY=$T_ROOT/tests/security/fork.py

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        # A host file outside every sandbox that the agent's links name.
        export HOSTSECRET=$T_TMP/host-secret
        echo host-secret >"$HOSTSECRET"
        chmod 644 "$HOSTSECRET"
        host_snapshot "$HOSTSECRET"
        T_CMD_TIMEOUT=500 t_cmd python3 "$PY" "$RTN" "$1"
        grep '^#' "$T_ERR_FILE" | while read -r l; do t_note "${l#\# }"; done
        [ "$T_RC" = 0 ] || t_fail "$(grep -v '^#' "$T_ERR_FILE" | tail -c 1500)"
        host_unchanged "$HOSTSECRET"
}

t_run planted scenario planted
t_run modes scenario modes
t_run xattrs scenario xattrs
t_run deep_refused scenario deep_refused
t_run swap scenario swap
t_run apart scenario apart
t_run running scenario running
t_run closed scenario closed
t_run setid scenario setid
t_done
