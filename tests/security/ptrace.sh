#!/usr/bin/env bash
# --allow-ptrace (docs/security-invariants.md, 22): without it ptrace and process_vm_* stay
# EPERM (and reported); with it strace and gdb work on the sandbox's own processes, and still
# nothing outside them can be traced: rtn-init and each of its threads (non-dumpable), a host
# process (not in the pid namespace), and the Landlock-only mode, where host processes of the
# caller's uid would be in reach, refuses the option.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn
MCP=$T_ROOT/tests/integration/mcp_calls.py

need_strace() {
        command -v strace >/dev/null || t_fail "strace is not installed (tools/deps.txt)"
}

blocked_by_default() {
        need_strace
        t_exec -- strace -e trace=write echo hi
        [ "$T_RC" != 0 ] || t_fail "strace ran without --allow-ptrace: $(t_last)"
        t_stderr_has "PTRACE_TRACEME: Operation not permitted"
        t_stderr_has "rtn: blocked ptrace(2) by pid"
        sec_need_bin probe
        sec_exec -- sh -c 'sleep 5 & /mnt/sec/probe ptrace $! EPERM'
        t_exit_is 0
}

own_processes() {
        need_strace
        t_exec --allow-ptrace -- strace -f -e trace=write sh -c 'echo hi'
        t_exit_is 0
        t_stdout_is hi
        t_stderr_has 'write(1, "hi\n", 3)'
        # attaching to a process that is not a child needs Yama's scope 0
        local scope
        scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
        [ "$scope" = 0 ] || { t_note "Yama ptrace_scope $scope: attach not tried"; return 0; }
        t_exec --allow-ptrace -- sh -c 'sleep 3 & sleep 0.2; timeout 1 strace -p $! 2>&1; true'
        t_stdout_has "Process"
        t_stdout_has "attached"
}

# What rtn-init is: every thread of PID 1, by ptrace and by process_vm_readv.
outside_stays_out() {
        sec_need_bin probe
        sleep 300 &
        local victim=$!
        sec_exec --allow-ptrace -- sh -c '
                for t in /proc/1/task/*; do /mnt/sec/probe ptrace "${t##*/}" EPERM || exit 1; done
                /mnt/sec/probe ptrace '"$victim"' ESRCH || exit 1
                python3 -c "
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8)
class iov(ctypes.Structure):
    _fields_ = [(\"base\", ctypes.c_void_p), (\"len\", ctypes.c_size_t)]
l, r = iov(ctypes.addressof(buf), 8), iov(0x400000, 8)
n = libc.process_vm_readv(1, ctypes.byref(l), 1, ctypes.byref(r), 1, 0)
e = ctypes.get_errno()
print(\"blocked\" if n < 0 and e == errno.EPERM else \"ESCAPED\", \"process_vm_readv 1:\", n, errno.errorcode.get(e))
raise SystemExit(n >= 0 or e != errno.EPERM)
"'
        kill "$victim" 2>/dev/null
        wait "$victim" 2>/dev/null
        grep -q ESCAPED "$T_OUT_FILE" && t_fail "$(grep ESCAPED "$T_OUT_FILE")"
        t_exit_is 0
        t_stdout_has "blocked process_vm_readv 1"
}

landlock_mode_refused() {
        t_exec --isolation landlock --allow-ptrace -- true
        t_exit_is 125
        t_stderr_has "--allow-ptrace needs the sandbox's namespaces"
}

serve_option() {
        need_strace
        command -v python3 >/dev/null || t_skip "python3 not installed"
        export RTN_DATA_DIR=$T_TMP/data
        printf '%s\n' 'shell_run {"command":"strace -e trace=write echo hi 2>&1"}' \
                'env_status {}' >calls
        t_exit_is 0 python3 "$MCP" calls -- "$RTN" serve --allow-ptrace
        grep -q 'write(1, ' "$T_OUT_FILE" || t_fail "strace under serve --allow-ptrace: $(cat "$T_OUT_FILE")"
        grep -q '"allow_ptrace": true' "$T_OUT_FILE" || t_fail "env_status: $(tail -n 1 "$T_OUT_FILE")"
        t_exit_is 0 python3 "$MCP" calls -- "$RTN" serve
        grep -q 'Operation not permitted' "$T_OUT_FILE" || t_fail "strace under serve: $(cat "$T_OUT_FILE")"
}

t_run blocked_by_default blocked_by_default
t_run own_processes own_processes
t_run outside_stays_out outside_stays_out
t_run landlock_mode_refused landlock_mode_refused
t_run serve_option serve_option
t_done
