#!/usr/bin/env bash
# --isolation landlock, the named weaker mode without namespaces: it says so on stderr, and
# Landlock, seccomp and rlimits alone still hold: host files outside the system dirs are
# unreadable, only the workspace and a private temp dir are writable, TCP to a host listener,
# UDP, raw and other non-TCP sockets, the host's abstract sockets (and its pathname ones where
# the kernel can rule them, else the warning names the gap), the user's other terminals and
# the host's /dev/shm are refused, host processes cannot be signalled or traced, the seccomp
# attacks fail as in a full sandbox, and the command's background processes die with it. With
# no mounts, the command starts in the workspace's host path with its temp dir as TMPDIR.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

ll_exec() {
        t_exec --isolation landlock "$@"
}

need_landlock() {
        [ "$(id -u)" != 0 ] || t_skip "root runs commands as another uid here (see root_runs_as_unowned_uid)"
        ll_exec -- true
        grep -q "needs Landlock" "$T_ERR_FILE" && t_skip "kernel has no Landlock"
        t_exit_is 0
}

reported_degraded() {
        need_landlock
        t_stderr_has "DEGRADED isolation (--isolation landlock)"
}

reads_system_only() {
        need_landlock
        mkdir "$T_TMP/secret"
        echo secret >"$T_TMP/secret/f"
        chmod -R a+rX "$T_TMP"
        ll_exec -- sh -c "cat /etc/hostname >/dev/null && echo sys-ok; cat '$T_TMP/secret/f'; ls /root; ls /home; true"
        t_stdout_has sys-ok
        t_false grep -q secret "$T_OUT_FILE"
        t_stderr_has "Permission denied"
}

writes_workspace_only() {
        need_landlock
        mkdir "$T_TMP/ws" "$T_TMP/other"
        chmod 777 "$T_TMP/other"
        ll_exec --workspace "$T_TMP/ws" -- sh -c "echo a >in-ws; echo b >\$TMPDIR/t; echo c >'$T_TMP/other/x'; echo d >/tmp/rtn-ll-\$\$; true"
        t_file_exists "$T_TMP/ws/in-ws"
        t_no_file "$T_TMP/other/x"
        [ -z "$(ls /tmp | grep rtn-ll-)" ] || t_fail "wrote to the host's /tmp"
        t_stderr_has "Permission denied"
}

fswrite_system() {
        need_landlock
        sec_need_bin fswrite
        mkdir "$T_TMP/ws"
        cp "$SEC_BIN/fswrite" "$T_TMP/ws/"
        host_snapshot
        ll_exec --workspace "$T_TMP/ws" -- ./fswrite /etc/passwd /etc/default
        grep '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3)"
        host_unchanged
}

syscalls_blocked() {
        need_landlock
        sec_need_bin escape
        mkdir "$T_TMP/ws"
        cp "$SEC_BIN/escape" "$T_TMP/ws/"
        local ia32=
        sec_host_has_ia32 && ia32=int80
        ll_exec --workspace "$T_TMP/ws" -- ./escape mount unshare_user clone_newuser \
                clone3_newuser bpf io_uring userfaultfd keyctl perf_event_open \
                open_by_handle_at ptrace_init tiocsti_highbits $ia32 x32 mknod_char
        t_exit_is 0
}

host_network_and_processes() {
        need_landlock
        sec_need_bin hostlisten
        mkdir "$T_TMP/ws"
        cp "$SEC_BIN/probe" "$T_TMP/ws/"
        chmod -R a+rX "$T_TMP"
        "$SEC_BIN/hostlisten" "$T_TMP" &
        local l=$!
        sleep 300 &
        local victim=$!
        t_wait_for test -s "$T_TMP/port" || t_fail "listener did not start"
        ll_exec --workspace "$T_TMP/ws" -- sh -c "./probe tcp $(cat "$T_TMP/port") EACCES &&
                ./probe abstract $(cat "$T_TMP/abstract") EPERM &&
                ./probe kill $victim EPERM && ./probe ptrace $victim EPERM"
        local alive=0
        kill -0 "$victim" 2>/dev/null && alive=1
        kill "$l" "$victim"
        wait "$l" "$victim" 2>/dev/null
        t_exit_is 0
        [ "$alive" = 1 ] || t_fail "the host process died"
        [ ! -s "$T_TMP/accepted" ] || t_fail "the host listener accepted: $(cat "$T_TMP/accepted")"
}

background_dies_with_command() {
        need_landlock
        ll_exec -- sh -c "sleep 313.$T_UNIQ & (setsid sleep 314.$T_UNIQ &) ; true"
        t_exit_is 0
        sleep 0.2
        [ -z "$(t_host_pids sleep "313.$T_UNIQ")$(t_host_pids sleep "314.$T_UNIQ")" ] || t_fail "background processes survived"
}

# The uid the commands run as: the caller, or for host root the one that owns nothing
# (RT_LANDLOCK_ROOT_UID). The cases below make their host objects that uid's, so that file
# modes let it in and only the sandbox can keep it out.
LL_ROOT_UID=1879113728
ll_uid() {
        if [ "$(id -u)" = 0 ]; then echo "$LL_ROOT_UID"; else id -u; fi
}

# Landlock here or skip, as any caller; then a workspace with the probe in it.
need_ll_ws() {
        sec_need_bin probe
        ll_exec -- true
        grep -q "needs Landlock" "$T_ERR_FILE" && t_skip "kernel has no Landlock"
        t_exit_is 0
        mkdir "$T_TMP/ws"
        cp "$SEC_BIN/probe" "$T_TMP/ws/"
        chmod 755 "$T_TMP"
        chmod -R a+rX "$T_TMP/ws"
        [ "$(id -u)" != 0 ] || chown -R "$LL_ROOT_UID:$LL_ROOT_UID" "$T_TMP/ws"
}

# No UDP, raw, ICMP, MPTCP or sock_diag socket on the host's network, where Landlock rules
# TCP only: seccomp refuses them at socket(2) (EACCES), whatever flags the type carries. A
# UDP listener on the host's loopback receives nothing.
udp_raw_refused() {
        need_ll_ws
        sec_need_bin hostlisten
        "$SEC_BIN/hostlisten" "$T_TMP" &
        local l=$!
        t_wait_for test -s "$T_TMP/port" || t_fail "listener did not start"
        local tcp udp
        tcp=$(cat "$T_TMP/port") udp=$(cat "$T_TMP/udpport")
        ll_exec --workspace "$T_TMP/ws" -- sh -c "./probe udp $udp EACCES; ./probe udp6 $udp EACCES;
                ./probe raw - EACCES; ./probe ping - EACCES; ./probe mptcp $tcp EACCES;
                ./probe diag - EACCES; ./probe tcp $tcp EACCES; true"
        sleep 0.2
        kill "$l"
        wait "$l" 2>/dev/null
        grep '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3)"
        [ "$(grep -c '^blocked' "$T_OUT_FILE")" = 7 ] || t_fail "not every probe ran: $(t_last)"
        [ ! -s "$T_TMP/accepted" ] || t_fail "the host listener got: $(cat "$T_TMP/accepted")"
}

# The host's /dev/pts holds every terminal of the user: the command keeps only the one rtn
# gives it (stdio, /dev/tty) and can open neither another pty by name nor a new one.
other_terminals_refused() {
        need_ll_ws
        python3 -c 'import os, pty, sys, time
m, s = pty.openpty()
os.fchmod(s, 0o666)
print(os.ttyname(s), flush=True)
time.sleep(60)' >"$T_TMP/pty" &
        local p=$!
        t_wait_for test -s "$T_TMP/pty" || t_fail "no host pty"
        local pts
        pts=$(cat "$T_TMP/pty")
        ll_exec --workspace "$T_TMP/ws" -- sh -c "./probe open $pts EACCES; ./probe open /dev/ptmx EACCES;
                echo INJECTED >$pts; true"
        kill "$p"
        wait "$p" 2>/dev/null
        grep '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3)"
        [ "$(grep -c '^blocked' "$T_OUT_FILE")" = 2 ] || t_fail "not every probe ran: $(t_last)"
        t_stderr_has "Permission denied"
        # its own terminal still works: stdio, /dev/tty and its ioctls
        command -v script >/dev/null || return 0
        t_cmd script -qec "$RTN exec --isolation landlock -t --workspace $T_TMP/ws -- sh -c 'stty size >/dev/null && echo tty-ok >/dev/tty'" /dev/null
        t_stdout_has tty-ok
}

# The host's /dev/shm holds other programs' POSIX shared memory: neither readable nor
# writable, so nothing is read there and nothing left behind.
host_shm_refused() {
        need_ll_ws
        local name=rtn-ll-test-$$
        printf 'shm-secret' >"/dev/shm/$name"
        chmod 600 "/dev/shm/$name"
        chown "$(ll_uid)" "/dev/shm/$name"
        ll_exec --workspace "$T_TMP/ws" -- sh -c "./probe open /dev/shm/$name EACCES;
                ./probe create /dev/shm/$name.new EACCES; cat /dev/shm/$name; ls /dev/shm; true"
        local left=0
        [ -e "/dev/shm/$name.new" ] && left=1
        rm -f "/dev/shm/$name" "/dev/shm/$name.new"
        grep '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3)"
        [ "$(grep -c '^blocked' "$T_OUT_FILE")" = 2 ] || t_fail "not every probe ran: $(t_last)"
        t_false grep -q shm-secret "$T_OUT_FILE"
        [ "$left" = 0 ] || t_fail "the command left a file in the host's /dev/shm"
}

# Unix sockets of host services: an abstract one is scoped away (ABI >= 6); a pathname one
# outside the writable dirs is refused where Landlock can rule it (ABI >= 9, Linux 7.1), and
# below that the warning names the gap. The command's own sockets keep working.
host_unix_sockets() {
        need_ll_ws
        sec_need_bin hostlisten
        "$SEC_BIN/hostlisten" "$T_TMP" &
        local l=$!
        t_wait_for test -s "$T_TMP/port" || t_fail "listener did not start"
        chmod 666 "$T_TMP/sock" 2>/dev/null
        ll_exec --workspace "$T_TMP/ws" -- sh -c "./probe abstract $(cat "$T_TMP/abstract") EPERM;
                ./probe unix $T_TMP/sock EACCES; python3 -c 'import os, socket
p = os.environ[\"TMPDIR\"] + \"/s\"
a = socket.socket(socket.AF_UNIX); a.bind(p); a.listen()
b = socket.socket(socket.AF_UNIX); b.connect(p); print(\"own-unix-ok\")'"
        sleep 0.2
        kill "$l"
        wait "$l" 2>/dev/null
        [ -S "$T_TMP/sock" ] || t_fail "no pathname socket (is $T_TMP too long?)"
        t_stdout_has own-unix-ok
        t_stdout_has "blocked abstract"
        grep -q unix "$T_TMP/accepted" && t_fail "the abstract listener accepted"
        if grep -q "pathname unix sockets.*can still be connected to: Landlock rules them from ABI 9" \
                "$T_ERR_FILE"; then
                return 0 # the kernel cannot rule them, and the warning says so
        fi
        grep '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3)"
        [ ! -s "$T_TMP/accepted" ] || t_fail "the host listener accepted: $(cat "$T_TMP/accepted")"
}

# There are no mounts, so no /workspace and no private /tmp: the command starts in the
# workspace's host path (a cwd of /workspace or below means it), gets a private temp dir
# (0700, its own, removed at the end) as TMPDIR, and rtn exec names both on stderr.
workspace_and_tmp_shape() {
        need_ll_ws
        mkdir "$T_TMP/ws/sub"
        [ "$(id -u)" != 0 ] || chown "$LL_ROOT_UID:$LL_ROOT_UID" "$T_TMP/ws/sub"
        local ws
        ws=$(cd "$T_TMP/ws" && pwd -P)
        ll_exec --workspace "$T_TMP/ws" -- sh -c 'echo "cwd=$PWD"; echo "tmp=$TMPDIR";
                echo x >"$TMPDIR/f" && echo tmp-writable; stat -c "mode=%a uid=%u" "$TMPDIR";
                test -e /workspace || echo no-workspace'
        t_exit_is 0
        t_stdout_has "cwd=$ws"
        t_stdout_has tmp-writable
        t_stdout_has "mode=700 uid=$(ll_uid)"
        t_stdout_has no-workspace
        local tmp
        tmp=$(sed -n 's/^tmp=//p' "$T_OUT_FILE")
        [ -n "$tmp" ] && [ ! -e "$tmp" ] || t_fail "the temp dir $tmp outlived the command"
        t_stderr_has "there is no /workspace"
        t_stderr_has "the command starts in the workspace $ws, with its private temp dir $tmp as TMPDIR"
        ll_exec --workspace "$T_TMP/ws" --cwd /workspace/sub -- pwd
        t_exit_is 0
        t_stdout_has "$ws/sub"
}

# The automatic mode, where a seccomp profile denies user namespaces (nouserns.c, as Docker's
# does) and no --isolation was named, has the same walls and the same shape.
automatic_mode_same_walls() {
        need_ll_ws
        sec_need_bin nouserns
        local ws
        ws=$(cd "$T_TMP/ws" && pwd -P)
        t_cmd "$SEC_BIN/nouserns" "$RTN" exec --workspace "$T_TMP/ws" --cwd /workspace -- sh -c \
                'pwd; ./probe udp 9 EACCES; ./probe open /dev/ptmx EACCES; ./probe diag - EACCES'
        t_exit_is 0
        t_stderr_has "rtn chose --isolation landlock by itself"
        t_stderr_has "the command starts in the workspace $ws"
        t_stdout_has "$ws"
        grep '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3)"
        [ "$(grep -c '^blocked' "$T_OUT_FILE")" = 3 ] || t_fail "not every probe ran: $(t_last)"
}

first_instruction_confined() {
        need_landlock
        sec_need_bin firstinsn
        mkdir "$T_TMP/ws"
        cp "$SEC_BIN/firstinsn" "$T_TMP/ws/"
        ll_exec --workspace "$T_TMP/ws" -- ./firstinsn
        t_stdout_has "NoNewPrivs:	1"
        t_stdout_has "Seccomp:	2"
        t_stdout_has "landlock-write-comm: -13"
}

# As host root the command would own the system files, and Landlock does not cover chmod,
# chown, utimes or xattrs: root's commands run as a uid that owns nothing instead
# (RT_LANDLOCK_ROOT_UID, runtime/runtime.h), still confined by Landlock.
root_runs_as_unowned_uid() {
        [ "$(id -u)" = 0 ] || t_skip "only for host root"
        sec_need_bin fswrite
        ll_exec -- true
        grep -q "needs Landlock" "$T_ERR_FILE" && t_skip "kernel has no Landlock"
        mkdir "$T_TMP/ws"
        cp "$SEC_BIN/fswrite" "$T_TMP/ws/"
        chmod 755 "$T_TMP"
        chown -R 1879113728:1879113728 "$T_TMP/ws"
        host_snapshot
        ll_exec --workspace "$T_TMP/ws" -- sh -c 'id -u; chmod 777 /etc/passwd; touch /etc/passwd; ls /root; ./fswrite /etc/passwd /etc/default'
        t_stdout_has 1879113728
        grep '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3)"
        t_stderr_has "Operation not permitted"
        t_stderr_has "Permission denied"
        host_unchanged
        # the uid owns nothing rtn does not hand it: the private temp dir is gone after
        [ -z "$(find /tmp -maxdepth 1 -user 1879113728 2>/dev/null)" ] || t_fail "left files of the agent's uid"
}

# There is no overlay to commit in this mode: env_commit says so as an error, commits nothing,
# and leaves the sandbox as it was (its private temp dir, $HOME, with the file in it), as root
# too. It answered ok with nothing kept before, and stopped the sandbox, losing that file.
serve_commit_keeps_nothing() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        ll_exec -- true
        grep -q "needs Landlock" "$T_ERR_FILE" && t_skip "kernel has no Landlock"
        cat >"$T_TMP/commit.py" <<'EOF'
import sys
from mcp_serve import Serve
s = Serve(sys.argv[1], "--isolation", "landlock")
s.sh('echo kept > "$HOME/f"')
c = s.call_raw("env_commit", message="m")
print("commit", "error" if c.get("isError") else "ok", c["content"][0]["text"])
print("after", s.sh('cat "$HOME/f"')["stdout"].strip())
print("commits", len(s.call("env_snapshot_list")["commits"]))
s.close()
EOF
        T_CMD_TIMEOUT=60 t_cmd env PYTHONPATH="$T_ROOT/tests/integration" python3 "$T_TMP/commit.py" "$RTN"
        t_exit_is 0
        t_stdout_has "commit error commit failed: --isolation landlock has no overlay"
        t_stdout_has "nothing was committed"
        t_stdout_has "after kept"
        t_stdout_has "commits 0"
}

# Each option only the namespaces give is refused by name, with what the mode lacks
# (rt_spec_ns_option: one list, also what keeps rtn from picking the mode by itself).
refuses_namespace_options() {
        local a want
        mkdir "$T_TMP/w"
        while IFS='|' read -r a want; do
                # shellcheck disable=SC2086
                t_exit_is 125 "$RTN" exec --isolation landlock $a -- true
                t_stderr_has "$want needs the sandbox's namespaces: not with --isolation landlock ("
        done <<EOF
--bind /tmp:/data|--bind
--user root|--user
--hostname h|--hostname
--net none|--net none
--allow-ptrace|--allow-ptrace
--allow-net example.com|--allow-net
--workspace $T_TMP/w --workspace-git rw|--workspace-git rw
--workspace $T_TMP/w --workspace-mode overlay|--workspace-mode overlay
EOF
}

t_run reported_degraded reported_degraded
t_run reads_system_only reads_system_only
t_run writes_workspace_only writes_workspace_only
t_run fswrite_system fswrite_system
t_run syscalls_blocked syscalls_blocked
t_run host_network_and_processes host_network_and_processes
t_run background_dies_with_command background_dies_with_command
t_run udp_raw_refused udp_raw_refused
t_run other_terminals_refused other_terminals_refused
t_run host_shm_refused host_shm_refused
t_run host_unix_sockets host_unix_sockets
t_run workspace_and_tmp_shape workspace_and_tmp_shape
t_run automatic_mode_same_walls automatic_mode_same_walls
t_run first_instruction_confined first_instruction_confined
t_run root_runs_as_unowned_uid root_runs_as_unowned_uid
t_run refuses_namespace_options refuses_namespace_options
t_run serve_commit_keeps_nothing serve_commit_keeps_nothing
t_done
