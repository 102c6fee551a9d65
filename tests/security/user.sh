#!/usr/bin/env bash
# --user root|UID[:GID] (docs/security-invariants.md, 30): the agent's commands run as another
# user of the sandbox's user namespace and gain nothing over the host. Root inside holds only
# CAP_DAC_OVERRIDE and CAP_FOWNER, under no_new_privs, seccomp and Landlock; it writes the
# rootfs (apt-get update through --allow-net works) but not /proc, /sys, /dev or new entries
# in /; in a host workspace it makes files of the workspace's owner, chowns nothing and sets
# no set-id bit; with a subordinate range, where root is a subordinate id, a live workspace
# is refused and an overlay's changes are applied as the caller. A user without a
# subordinate id range maps one id: root works, any other id is refused, naming why; so are
# bad values and --isolation landlock. rtn serve --user does the same, and shell_run's user
# "root" for one command.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

mode() { # root | subid | single, as rtn chooses (runtime/sandbox/idmap.c)
        if [ "$(id -u)" = 0 ]; then echo root
        elif grep -q "^$(id -un):" /etc/subuid 2>/dev/null && command -v newuidmap >/dev/null &&
                [ -z "${RTN_NO_SUBID:-}" ]; then echo subid
        else echo single; fi
}

# uid 0, DAC_OVERRIDE and FOWNER (bits 1 and 3) and nothing else in any set, the filter and
# no_new_privs; the loop thread of rtn-init, which starts the commands, holds no more.
root_confined() {
        t_exec --user root -- sh -c 'id -u; id -g; grep -E "^(Cap|NoNewPrivs|Seccomp:)" /proc/self/status
                cat /proc/1/task/*/status | grep ^CapBnd: | sort | head -n 1'
        t_exit_is 0
        t_stdout_is "0
0
CapInh:	0000000000000000
CapPrm:	000000000000000a
CapEff:	000000000000000a
CapBnd:	000000000000000a
CapAmb:	0000000000000000
NoNewPrivs:	1
Seccomp:	2
CapBnd:	000000000000000a"
        # the default agent is not changed by it
        t_exec -- sh -c 'grep ^CapEff: /proc/self/status'
        t_stdout_is "CapEff:	0000000000000000"
}

# The base is root's to write where its files are the sandbox's (the overlay keeps the
# changes); the kernel's files, / itself, device nodes and the host's own /usr (host root's
# files, which no sandbox maps) are not.
root_writes_rootfs_only() {
        t_exec --user root -- sh -c '
                (echo x >/etc/rtn-user-test) && echo etc-ok
                (mkdir /usr/local/lib/rtn-user-test) 2>/dev/null && echo host-usr-written
                (echo 1 >/proc/sys/net/ipv4/ip_forward) 2>/dev/null && echo sysctl-written
                (echo 0 >/proc/sys/net/ipv4/ping_group_range) 2>/dev/null && echo ping-written
                (echo 500 >/proc/self/oom_score_adj) 2>/dev/null && echo oom-written
                (echo x >/proc/self/comm) 2>/dev/null && echo comm-written
                (touch /newtop) 2>/dev/null && echo top-written
                (mknod /tmp/null c 1 3) 2>/dev/null && echo mknod-made
                (: >/dev/rtn-user-test) 2>/dev/null && echo dev-written
                exit 0'
        t_exit_is 0
        t_stdout_is "etc-ok"
        # the host's own /etc is untouched
        t_no_file /etc/rtn-user-test
}

# The attacks root inside makes on a host directory: chown, set-id bits, files of an id
# that is not the directory's owner. Prints what got through.
ROOT_WS_ATTACKS='(echo new >/workspace/new) && echo made
        mkdir -p /workspace/d/e && echo x >/workspace/d/e/g
        chown 1000:1000 /workspace/f 2>/dev/null && echo chowned
        chgrp 1 /workspace/f 2>/dev/null && echo chgrped
        chmod u+s /workspace/new 2>/dev/null && echo setuid
        chmod g+s /workspace 2>/dev/null && echo setgid
        cp /bin/true /workspace/t && chmod 4755 /workspace/t 2>/dev/null && echo setuid-copy
        exit 0'

# Every file under DIR has OWNER (uid:gid) and no set-id bit.
owned_by() { # DIR OWNER
        local bad
        bad=$(find "$1" ! -user "${2%:*}" -printf '%p %U:%G\n' -o ! -group "${2#*:}" -printf '%p %U:%G\n')
        [ -z "$bad" ] || t_fail "not the workspace owner's ($2) on the host: $bad"
        bad=$(find "$1" -perm /6000)
        [ -z "$bad" ] || t_fail "a set-id file on the host: $bad"
}

# In a live host workspace root makes files of the workspace's owner, chowns nothing and
# sets no set-id bit. With a subordinate range (you are 1000 inside, root a subordinate id)
# a live workspace is refused: root's files there would be a subordinate id's on the host.
root_in_host_workspace() {
        local ws=$T_TMP/ws owner
        mkdir -p "$ws" && echo data >"$ws/f" && chmod 0644 "$ws/f"
        if [ "$(mode)" = root ]; then
                chown -R 54321:54321 "$ws" # an owner of no account: not root's files
        fi
        owner=$(stat -c %u:%g "$ws")
        t_exec --user root --workspace "$ws" -- sh -c "$ROOT_WS_ATTACKS"
        if [ "$(mode)" = subid ]; then
                t_exit_is 125
                t_stderr_has "use --workspace-mode overlay"
                t_exec --user root --bind "$ws:/mnt/w:rw" -- true
                t_exit_is 125
                t_no_file "$ws/new"
                return 0
        fi
        t_exit_is 0
        t_stdout_is "made"
        owned_by "$ws" "$owner"
        [ "$(stat -c %a "$ws/new")" = 644 ] || t_fail "new is mode $(stat -c %a "$ws/new")"
}

# An overlay workspace keeps root's files in the upper; rtn apply writes them as the
# workspace's owner, without set-id bits, whatever the mapping. A commit of root's rootfs
# changes comes back in the next sandbox as root's.
root_overlay_apply_commit() {
        export RTN_DATA_DIR=$T_TMP/data
        local ws=$T_TMP/ws owner
        mkdir -p "$ws" && echo data >"$ws/f"
        owner=$(stat -c %u:%g "$ws")
        t_exec --keep --user root --workspace "$ws" --workspace-mode overlay -- sh -c "$ROOT_WS_ATTACKS"
        t_exit_is 0
        t_stdout_is "made"
        t_no_file "$ws/new"
        t_cmd "$RTN" apply
        t_exit_is 0
        owned_by "$ws" "$owner"
        [ -f "$ws/d/e/g" ] || t_fail "apply did not write d/e/g"
        t_exec --commit --env rootenv --user root -- sh -c 'echo kept >/etc/rtn-user-commit'
        t_exit_is 0
        t_exec --env rootenv -- sh -c 'stat -c %u:%g /etc/rtn-user-commit; cat /etc/rtn-user-commit'
        t_exit_is 0
        t_stdout_is "0:0
kept"
}

# UID:GID is taken as given where the mapping holds it, with no capability; refused, with
# why, where it does not (one id without a subordinate range).
other_ids() {
        if [ "$(mode)" = single ]; then
                t_exec --user 1234:2345 -- true
                t_exit_is 125
                t_stderr_has "maps 1 id (yours, as root inside), so only --user root"
                t_exec --user 0:0 -- id -u
                t_exit_is 0
                t_stdout_is 0
                return 0
        fi
        t_exec --user 1234:2345 -- sh -c 'id -u; id -g; grep ^CapEff: /proc/self/status; echo $HOME'
        t_exit_is 0
        t_stdout_is "1234
2345
CapEff:	0000000000000000
/home/rtn"
        t_exec --user 4321 -- sh -c 'id -u; id -g'
        t_stdout_is "4321
4321"
}

# rtn serve --user: every sandbox's commands run as that user, as rtn exec's do.
serve_option() {
        printf '%s\n' 'shell_run {"command":"id -u; grep -E \"^Cap(Eff|Bnd)\" /proc/self/status"}' >calls
        t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls --check '
r = a[0]
assert not r["isError"], r
assert r["result"]["stdout"] == "0\nCapEff:\t000000000000000a\nCapBnd:\t000000000000000a\n", r
' -- "$RTN" serve --user root
        [ "$T_RC" = 3 ] && t_fail "serve --user root: $(tail -n 1 "$T_ERR_FILE"): $(cat "$T_OUT_FILE")"
        t_exit_is 0
}

# shell_run's user "root": that one command as --user root runs every command (the rootfs
# written, the kernel's files not), the next one as the server's user again with nothing of
# root's; a live workspace with a subordinate range, and --isolation landlock, refuse it.
shell_run_user_root() {
        local ws=$T_TMP/ws
        mkdir -p "$ws"
        printf '%s\n' \
                'shell_run {"user":"root","command":"id -u; grep -E \"^Cap(Eff|Bnd)\" /proc/self/status; echo $HOME; echo r >/etc/rtn-root-call && echo wrote; (echo 1 >/proc/sys/net/ipv4/ip_forward) 2>/dev/null && echo sysctl"}' \
                'shell_run {"command":"grep -E \"^Cap(Eff|Bnd)\" /proc/self/status; cat /etc/rtn-root-call; echo x >/etc/rtn-root-call2 || echo refused"}' \
                'shell_run {"user":"bob","command":"true"}' >calls
        t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls --check '
r = a
assert not r[0]["isError"], r[0]
assert r[0]["result"]["stdout"] == "0\nCapEff:\t000000000000000a\nCapBnd:\t000000000000000a\n/root\nwrote\n", r[0]
out = r[1]["result"]["stdout"]
assert out.startswith("CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nr\n"), r[1]
assert out.endswith("refused\n"), r[1]
assert r[2]["isError"] and "must be one of" in r[2]["text"], r[2]
' -- "$RTN" serve
        [ "$T_RC" = 3 ] && t_fail "shell_run user root: $(tail -n 1 "$T_ERR_FILE"): $(cat "$T_OUT_FILE")"
        t_exit_is 0
        printf '%s\n' 'shell_run {"user":"root","command":"echo x >/workspace/f"}' >calls
        if [ "$(mode)" = subid ]; then
                t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls -- "$RTN" serve --workspace "$ws"
                grep -q '"isError": true' "$T_OUT_FILE" && grep -q "use --workspace-mode overlay" "$T_OUT_FILE" ||
                        t_fail "root call in a live workspace: $(cat "$T_OUT_FILE")"
                t_no_file "$ws/f"
        fi
        t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls -- "$RTN" serve --isolation landlock --workspace "$ws"
        grep -q "needs the sandbox's user namespace" "$T_OUT_FILE" ||
                t_fail "root call in --isolation landlock: $(cat "$T_OUT_FILE")"
        t_no_file "$ws/f"
}

bad_values() {
        local v
        for v in rot -1 65536 1:x 1: :1 1:2:3 '' 0x1 ' 1'; do
                t_exec --user "$v" -- true
                [ "$T_RC" = 125 ] || t_fail "--user '$v' accepted: $(t_last)"
                t_stderr_has "--user wants root, UID or UID:GID"
        done
        t_exec --isolation landlock --user root -- true
        t_exit_is 125
        t_stderr_has "--user needs the sandbox's namespaces: not with --isolation landlock"
}

# The issue's case: apt-get update on a Debian rootfs, as root, through --allow-net to the
# mirror this machine's apt uses. The rootfs is the container suites' cached minbase
# (tools/image.sh base), or the tarball RTN_TEST_DEBIAN_TAR names, imported; the case skips
# without one or without the mirror.
apt_update_as_root() {
        local o tar mirror
        o=$(dirname "${RTN#"$T_ROOT"/}")
        [[ $RTN == "$T_ROOT"/*/rtn ]] || o=build
        tar=${RTN_TEST_DEBIAN_TAR:-$(ls "$T_ROOT/$o"/containers/bookworm-minbase-*.tar \
                "$T_ROOT"/build/containers/bookworm-minbase-*.tar 2>/dev/null | head -n 1)}
        [ -r "$tar" ] || t_skip "no cached Debian base in $T_ROOT/$o/containers (tools/image.sh base makes one)"
        mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
                sed -n 's,^\(deb\|URIs:\)[^h]*https\?://\([^/ ]*\).*,\2,p' | head -n 1)
        [ -n "$mirror" ] || t_skip "no Debian mirror in /etc/apt/sources.list*"
        export RTN_DATA_DIR=$T_TMP/data
        T_CMD_TIMEOUT=300 t_cmd "$RTN" rootfs import "$tar" deb
        t_exit_is 0
        # the rootfs's own sources name the mirror the image was made from
        t_exec --rootfs deb -- sh -c 'cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null'
        grep -q "$mirror" "$T_OUT_FILE" || t_skip "the cached base does not use $mirror"
        # the default user cannot (apt asks whether it is root)
        T_CMD_TIMEOUT=120 t_exec --rootfs deb --allow-net "$mirror" -- apt-get update
        [ "$T_RC" = 0 ] && t_fail "apt-get update worked as the default user"
        local try
        for try in 1 2; do
                T_CMD_TIMEOUT=300 t_exec --rootfs deb --user root --allow-net "$mirror" -- \
                        sh -c 'apt-get -q update && ls /var/lib/apt/lists | grep -c _Packages'
                [ "$T_RC" = 0 ] && break
                t_note "apt-get update attempt $try: $(tail -c 300 "$T_ERR_FILE")"
        done
        t_exit_is 0
        grep -q '^[1-9]' <(tail -n 1 "$T_OUT_FILE") || t_fail "no lists: $(tail -3 "$T_OUT_FILE")"
}

t_run root_confined root_confined
t_run root_writes_rootfs_only root_writes_rootfs_only
t_run root_in_host_workspace root_in_host_workspace
t_run root_overlay_apply_commit root_overlay_apply_commit
t_run other_ids other_ids
t_run serve_option serve_option
t_run shell_run_user_root shell_run_user_root
t_run bad_values bad_values
t_run apt_update_as_root apt_update_as_root
t_done
