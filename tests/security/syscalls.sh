#!/usr/bin/env bash
# Attacks through system calls, one case each (tests/security/escape.c): mount and the new
# mount API, namespaces (unshare, setns, clone and clone3 with CLONE_NEWUSER), bpf, io_uring,
# userfaultfd, keyrings, perf_event_open, file handles, ptrace and process_vm_*, kexec and
# modules, reboot, swap, acct, the clock, syslog, personality, rare socket families, TIOCSTI
# and TIOCLINUX (with junk in the high 32 bits), ia32 `int 0x80` and x32 (SIGSYS), device
# nodes, rtn-init's /proc/1/{exe,mem,environ}, /proc/sys, /sys, and fds inherited from rtn.
# Each must fail with the errno of docs/policy.md and leave the host as it was.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

attack() {
        if [[ $1 == int80* ]] && ! sec_host_has_ia32; then
                t_skip "the kernel has no ia32 emulation: int 0x80 faults outside the sandbox too"
        fi
        sec_attack escape "$1"
}

# Run with extra fds open in the caller (a host file for reading, one for writing): none may
# reach the command.
inherited_fds() {
        sec_need_bin escape
        echo secret >"$T_TMP/host-file"
        exec 7<"$T_TMP/host-file" 8>>"$T_TMP/host-file" 9<"$T_TMP"
        sec_exec -- /mnt/sec/escape inherited_fds
        exec 7<&- 8>&- 9<&-
        t_exit_is 0
        t_stdout_has "blocked inherited_fds"
        [ "$(cat "$T_TMP/host-file")" = secret ] || t_fail "host file changed"
}

# A process killed by the seccomp filter gets a line from rtn naming the rule: x32 on every
# x86_64 kernel, ia32 where the kernel has it.
sigsys_reported() {
        sec_need_bin "$1"
        [ "$1" = int80 ] && ! sec_host_has_ia32 &&
                t_skip "the kernel has no ia32 emulation: int 0x80 faults outside the sandbox too"
        sec_exec -- "/mnt/sec/$1"
        t_exit_is $((128 + 31))
        t_stderr_has "killed by seccomp (SIGSYS)"
}

for a in mount umount remount_ro pivot_root chroot fsopen open_tree unshare_user unshare_mount \
        unshare_net unshare_time setns clone_newuser clone_newuser_highbits clone3_newuser bpf \
        io_uring userfaultfd keyctl add_key perf_event_open open_by_handle_at name_to_handle_at \
        ptrace_init ptrace_traceme process_vm_readv kexec_load init_module reboot swapon acct \
        settimeofday clock_settime syslog personality af_packet af_vsock unknown_syscall \
        sethostname tiocsti tiocsti_highbits tioclinux int80 int80_unshare x32 x32_unshare \
        mknod_char mknod_block proc1_exe_write proc1_exe_readlink proc1_mem proc1_environ \
        proc1_threads signal_init prlimit_init proc_sys_write proc_drop_caches proc_self_oom sys_write sys_mount; do
        t_run "$a" attack "$a"
done
# rtn-init's loop thread takes the agent's uid, and a credential change resets the
# process's dumpable flag to fs.suid_dumpable: where a host sets that to 1, only rtn-init
# setting it back keeps its memory and /proc files closed to the agent. Root sets it for
# the attack and puts it back (an EXIT trap), whatever happens.
init_undumpable_under_suid_dumpable() {
        [ "$(id -u)" = 0 ] || t_skip "only root can set fs.suid_dumpable"
        [ -w /proc/sys/fs/suid_dumpable ] || t_skip "fs.suid_dumpable is not writable here"
        local old
        old=$(cat /proc/sys/fs/suid_dumpable)
        # t_run runs each case in a subshell, which t_fail leaves with exit
        trap "echo $old >/proc/sys/fs/suid_dumpable" EXIT
        echo 1 >/proc/sys/fs/suid_dumpable || t_skip "cannot set fs.suid_dumpable"
        sec_attack escape proc1_exe_readlink proc1_mem proc1_environ proc1_threads prlimit_init
}

t_run inherited_fds inherited_fds
t_run init_undumpable_under_suid_dumpable init_undumpable_under_suid_dumpable
t_run sigsys_reported_x32 sigsys_reported x32
t_run sigsys_reported_int80 sigsys_reported int80
t_done
