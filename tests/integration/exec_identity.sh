#!/usr/bin/env bash
# `rtn exec`: who and where a command finds itself. PID 1 is rtn-init; the network namespace
# holds only `lo`, and it is up (a TCP round trip on 127.0.0.1 works) unless --net none; the
# hostname is the sandbox's; uids/gids are mapped as docs/architecture.md documents: an
# unprivileged caller with no subordinate range runs as uid 0 inside mapped to itself, with a
# range (or as root) commands run as uid 1000 inside; no inside id ever maps to host 0.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

pid1_is_rtn_init() {
        # One sandbox answers both: its pid 1's comm, then its argv[0].
        t_exit_is 0 "$RTN" exec -- sh -c 'cat /proc/1/comm; tr "\0" "\n" </proc/1/cmdline | head -n 1'
        local comm='' argv0=''
        { read -r comm; read -r argv0; } <"$T_OUT_FILE"
        [ "$comm" = rtn-init ] || [ "${argv0##*/}" = rtn-init ] ||
                t_fail "pid 1 is not rtn-init: comm '$comm', argv[0] '$argv0'"
}

cmd_is_not_pid1() {
        t_exit_is 0 "$RTN" exec -- sh -c 'echo $$'
        local pid
        pid=$(cat "$T_OUT_FILE")
        [ "$pid" -gt 1 ] || t_fail "the command runs as pid $pid; expected a child of rtn-init"
}

only_lo() {
        t_exit_is 0 "$RTN" exec -- cat /proc/net/dev
        local ifs
        ifs=$(tail -n +3 "$T_OUT_FILE" | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')
        [ "$ifs" = "lo " ] || t_fail "interfaces inside: '$ifs', expected only lo"
}

# The network namespace is made beside the child (runtime/sandbox/sandbox.c, make_netns), not by
# clone3: it must still be a new one, and belong to the sandbox's user namespace, as one
# made by clone3 would (NS_GET_USERNS on it names our own user namespace).
NS_PROBE='
import fcntl, os
fd = os.open("/proc/self/ns/net", os.O_RDONLY)
owner = fcntl.ioctl(fd, 0xb701)
print(os.readlink("/proc/self/ns/net"))
print(os.fstat(owner).st_ino == os.stat("/proc/self/ns/user").st_ino)
'

netns_is_the_sandboxes() {
        command -v python3 >/dev/null || t_skip "python3 not installed"
        t_exit_is 0 "$RTN" exec -- python3 -c "$NS_PROBE"
        local inside owned
        inside=$(head -n 1 "$T_OUT_FILE")
        owned=$(sed -n 2p "$T_OUT_FILE")
        [ -n "$inside" ] && [ "$inside" != "$(readlink /proc/self/ns/net)" ] ||
                t_fail "the sandbox is in the caller's network namespace ($inside)"
        [ "$owned" = True ] || t_fail "its network namespace is not owned by its user namespace"
}

# A listener and a client on 127.0.0.1 inside the sandbox: lo is really up.
TCP_PROBE='
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.socket()
try:
    c.connect(s.getsockname())
except OSError as e:
    print(e.strerror); sys.exit(3)
a, _ = s.accept(); c.sendall(b"ping"); print(a.recv(4).decode())
'

loopback_works() {
        command -v python3 >/dev/null || t_skip "python3 not installed"
        t_exit_is 0 "$RTN" exec -- python3 -c "$TCP_PROBE"
        t_stdout_is ping
}

net_none_leaves_lo_down() {
        command -v python3 >/dev/null || t_skip "python3 not installed"
        t_exit_is 3 "$RTN" exec --net none -- python3 -c "$TCP_PROBE"
        t_stdout_has "unreachable"
}

hostname_is_sandboxes() {
        local name=rtn-test-$RANDOM
        t_exit_is 0 "$RTN" exec --hostname "$name" -- sh -c 'uname -n; cat /proc/sys/kernel/hostname'
        t_stdout_is "$name
$name"
        # Setting it inside must not touch the host's.
        local before
        before=$(uname -n)
        t_cmd "$RTN" exec -- hostname changed-inside
        [ "$(uname -n)" = "$before" ] || t_fail "host hostname changed to $(uname -n)"
}

has_subid_range() {
        local me uid
        me=$(id -un)
        uid=$(id -u)
        grep -qE "^($me|$uid):" /etc/subuid 2>/dev/null &&
                grep -qE "^($me|$(id -g)|$(id -gn)):" /etc/subgid 2>/dev/null &&
                command -v newuidmap >/dev/null && command -v newgidmap >/dev/null
}

expected_inside_uid() {
        if [ "$(id -u)" = 0 ] || has_subid_range; then
                echo 1000
        else
                echo 0
        fi
}

uid_as_documented() {
        local want
        want=$(expected_inside_uid)
        t_exit_is 0 "$RTN" exec -- sh -c 'id -u; id -g'
        t_stdout_is "$want
$want"
}

# Under no_new_privs (a hardened service, or another sandbox's command), where the setuid
# newuidmap gains nothing: root maps as always, a caller with a subordinate range gets the
# single mapping instead of a failed start, and rtn probe says why.
under_no_new_privs() {
        local want
        want=$(expected_inside_uid)
        [ "$(id -u)" = 0 ] || want=0
        t_exit_is 0 setpriv --no-new-privs "$RTN" exec -- id -u
        t_stdout_is "$want"
        t_exit_is 0 setpriv --no-new-privs "$RTN" probe
        if [ "$(id -u)" != 0 ] && has_subid_range && [ -z "${RTN_NO_SUBID:-}" ]; then
                t_stdout_has "single id: rtn runs under no_new_privs"
        else
                ! grep -q "no_new_privs, under which" "$T_OUT_FILE" || t_fail "$(cat "$T_OUT_FILE")"
        fi
}

# Reads the maps of a process inside from the host: a reader outside the namespace sees the
# outside ids relative to its own namespace (user_namespaces(7)), so these are host ids.
# Each line is "inside outside count"; host id 0 is mapped when some line's outside is 0.
no_id_maps_to_host_root() {
        local n=$((600000 + RANDOM)) pid f
        "$RTN" exec -- sleep "$n" </dev/null >/dev/null 2>"$T_TMP/err" &
        local rtn_pid=$!
        t_wait_for sleep_running "$n" || t_fail "sleep $n never started: $(cat "$T_TMP/err")"
        pid=$(t_host_pids sleep "$n" | head -n 1)
        for f in uid_map gid_map; do
                cp "/proc/$pid/$f" "$T_TMP/$f" || t_fail "cannot read /proc/$pid/$f"
        done
        kill -KILL "$rtn_pid"
        wait "$rtn_pid" 2>/dev/null
        for f in uid_map gid_map; do
                [ -s "$T_TMP/$f" ] || t_fail "$f is empty"
                awk '$2 == 0 { bad = 1 } END { exit bad }' "$T_TMP/$f" ||
                        t_fail "$f maps host id 0: $(cat "$T_TMP/$f")"
        done
}

sleep_running() { [ -n "$(t_host_pids sleep "$1")" ]; }

single_mapping_is_the_caller() {
        [ "$(id -u)" != 0 ] && ! has_subid_range ||
                t_skip "only for an unprivileged caller without a subordinate id range"
        t_exit_is 0 "$RTN" exec -- cat /proc/self/uid_map
        read -r inside outside count <"$T_OUT_FILE"
        [ "$inside $outside $count" = "0 $(id -u) 1" ] ||
                t_fail "uid_map '$(cat "$T_OUT_FILE")', expected '0 $(id -u) 1'"
        [ "$(wc -l <"$T_OUT_FILE")" = 1 ] || t_fail "more than one uid_map line"
}

range_mapping_excludes_caller_root() {
        [ "$(id -u)" = 0 ] || has_subid_range ||
                t_skip "needs root or a subordinate id range in /etc/subuid"
        t_exit_is 0 "$RTN" exec -- cat /proc/self/uid_map
        # Inside uid 1000 must map into a range, not to host root; and the total mapped must
        # cover it.
        awk '$1 <= 1000 && 1000 < $1 + $3 { found = 1 } END { exit !found }' "$T_OUT_FILE" ||
                t_fail "inside uid 1000 is not mapped: $(cat "$T_OUT_FILE")"
}

# The sandbox's own passwd, group, hostname and hosts (runtime/sandbox/identity.c): the agent
# has a name (`rtn`, home /home/rtn; uid 0 is root), /etc/hostname is the hostname and
# /etc/hosts resolves it and localhost, on the host base and on a rootfs whose passwd knows
# only root.
expected_inside_name() {
        [ "$(expected_inside_uid)" = 1000 ] && echo rtn || echo root
}

IDENT_PROBE='whoami; id -un; id -gn; getent passwd "$(id -u)" | cut -d: -f6; cat /etc/hostname;
getent hosts "$(hostname)" | { read -r a b; echo "$a"; }; getent hosts localhost >/dev/null && echo lo'

identity_on_host_base() {
        local name home
        name=$(expected_inside_name)
        [ "$name" = rtn ] && home=/home/rtn || home=/root
        t_exit_is 0 "$RTN" exec --hostname box -- sh -c "$IDENT_PROBE"
        t_stdout_is "$(printf '%s\n%s\n%s\n%s\nbox\n127.0.1.1\nlo' "$name" "$name" "$name" "$home")"
        command -v python3 >/dev/null || t_skip "python3 not installed"
        t_exit_is 0 "$RTN" exec -- python3 -c \
                'import socket; print(socket.gethostbyname(socket.gethostname()))'
        t_stdout_is 127.0.1.1
}

# A tree with sh, whoami, id, getent, hostname, cat and their libraries; its passwd knows
# only root, as a bootstrapped rootfs's does.
make_id_tree() {
        local a c rest
        local -a bins=(/bin/dash /usr/bin/whoami /usr/bin/id /usr/bin/getent /bin/hostname /bin/cat
                /usr/bin/cut)
        local -A libs=()
        mkdir -p tree/bin tree/etc tree/lib64 tree/lib/x86_64-linux-gnu
        cp "${bins[@]}" tree/bin/
        # The libraries the loader names by path ("x => /lib/x (0x...)" and "/lib64/ld-...
        # (0x...)"), each once: asked of the loader itself, as ldd would (ldd is a shell
        # script that runs it twice a file), where it is the one the tree is laid out for.
        while read -r a _ c rest; do
                [[ $c == /* ]] && libs[$c]=1
                [[ $a == /lib* ]] && libs[$a]=1
        done < <(if [ -x /lib64/ld-linux-x86-64.so.2 ]; then
                for a in "${bins[@]}"; do /lib64/ld-linux-x86-64.so.2 --list "$a"; done
        else
                ldd "${bins[@]}"
        fi)
        [ ${#libs[@]} -gt 0 ] || t_fail "ldd named no library of ${bins[*]}"
        cp -n --parents "${!libs[@]}" tree/
        mv tree/bin/dash tree/bin/sh
        echo "root:x:0:0:root:/root:/bin/sh" >tree/etc/passwd
        echo "root:x:0:" >tree/etc/group
        echo "host-name" >tree/etc/hostname
}

identity_on_rootfs() {
        export RTN_DATA_DIR=$T_TMP/data
        make_id_tree
        local name home
        name=$(expected_inside_name)
        [ "$name" = rtn ] && home=/home/rtn || home=/root
        t_exit_is 0 "$RTN" exec --rootfs ./tree -- sh -c "$IDENT_PROBE"
        t_stdout_is "$(printf '%s\n%s\n%s\n%s\nrtn\n127.0.1.1\nlo' "$name" "$name" "$name" "$home")"
        [ "$(cat tree/etc/hostname)" = host-name ] || t_fail "the rootfs's /etc/hostname changed"
}

# The files are rtn's: a command cannot change them (not even the agent that is uid 0 inside,
# who owns the sandbox's own directories), they are no change of the sandbox's, and the host's
# are untouched.
identity_files_are_read_only() {
        export RTN_DATA_DIR=$T_TMP/data
        local before
        before=$(stat -c '%i %s %Y' /etc/hosts /etc/hostname /etc/passwd)
        # One sandbox tries each change of each file and names the ones that worked.
        t_exec -- sh -c 'for f in hosts hostname; do
                (echo evil >/etc/$f) 2>/dev/null && echo "/etc/$f was written"
                chmod 666 /etc/$f 2>/dev/null && echo "/etc/$f was made writable"
                mv /etc/$f /tmp/x 2>/dev/null && echo "/etc/$f was moved"
        done; echo tried'
        t_exit_is 0
        t_stdout_is tried
        t_exit_is 0 "$RTN" exec --keep -- true
        t_exit_is 0 "$RTN" diff
        t_stdout_is ""
        [ "$(stat -c '%i %s %Y' /etc/hosts /etc/hostname /etc/passwd)" = "$before" ] ||
                t_fail "the host's identity files changed"
}

# rtn serve's sandbox has them too, and env_diff lists none of them as a change.
identity_in_serve() {
        command -v python3 >/dev/null || t_skip "python3 not installed"
        export RTN_DATA_DIR=$T_TMP/data
        printf '%s\n' 'shell_run {"command":"id -un; cat /etc/hostname; getent hosts rtn"}' \
                'env_diff {}' >calls
        WANT_NAME=$(expected_inside_name) t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls --check '
run, diff = a
out = run["result"]["stdout"].split()
assert out[:3] == [os.environ["WANT_NAME"], "rtn", "127.0.1.1"], out
assert diff["result"]["added"] == diff["result"]["modified"] == diff["result"]["deleted"] == [], diff
' -- "$RTN" serve
        [ "$T_RC" = 3 ] && t_fail "$(tail -n 1 "$T_ERR_FILE"): $(cat "$T_OUT_FILE")"
        t_exit_is 0
}

t_run pid1_is_rtn_init pid1_is_rtn_init
t_run cmd_is_not_pid1 cmd_is_not_pid1
t_run only_lo only_lo
t_run netns_is_the_sandboxes netns_is_the_sandboxes
t_run loopback_works loopback_works
t_run net_none_leaves_lo_down net_none_leaves_lo_down
t_run hostname_is_sandboxes hostname_is_sandboxes
t_run uid_as_documented uid_as_documented
t_run under_no_new_privs under_no_new_privs
t_run no_id_maps_to_host_root no_id_maps_to_host_root
t_run single_mapping_is_the_caller single_mapping_is_the_caller
t_run range_mapping_excludes_caller_root range_mapping_excludes_caller_root
t_run identity_on_host_base identity_on_host_base
t_run identity_on_rootfs identity_on_rootfs
t_run identity_files_are_read_only identity_files_are_read_only
t_run identity_in_serve identity_in_serve
t_done
