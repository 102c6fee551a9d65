# shellcheck shell=bash
# Shared by the tests/security suites, sourced after tests/lib.sh (named .bash so that
# tools/test.sh, which runs tests/security/*.sh, does not run it as a suite). SEC_BIN is the directory of the attack programs built from tests/security/*.c; sec_exec runs
# rtn exec with it bound read-only at /mnt/sec. host_snapshot/host_unchanged record and
# compare what the attacks must never change on the host.
SEC_BIN=$T_BIN/security

sec_need_bin() {
        [ -x "$SEC_BIN/$1" ] || t_fail "attack program $SEC_BIN/$1 not built (make tests)"
}

# Whether the host kernel runs ia32 system calls at all (int80.c outside any sandbox): without
# IA32 emulation (built out, or ia32_emulation=0 since Linux 6.7) `int 0x80` faults with SIGSEGV
# before seccomp sees it, so there is no foreign-ABI entry for the filter to close.
sec_host_has_ia32() {
        sec_need_bin int80
        { "$SEC_BIN/int80"; } 2>/dev/null
}

sec_exec() {
        t_exec --bind "$SEC_BIN:/mnt/sec:ro" "$@"
}

# Files and facts of the host that no attack may change: ownership, mode, size, times and
# content hash of system files, the hostname, and (when T_WATCH is set) a listing of a dir.
SEC_WATCH=(/etc/passwd /etc/hostname /etc /usr/bin/env /usr/bin /usr/lib/os-release /usr/lib)

# The hostname as hostname(1) prints it (gethostname: the UTS name), read without a process.
host_state() {
        local h
        stat -c '%n %u %g %a %s %Y %Z' "${SEC_WATCH[@]}" "$@" 2>&1
        sha256sum /etc/passwd /etc/hostname /usr/bin/env 2>&1
        read -r h </proc/sys/kernel/hostname
        printf '%s\n' "$h"
        getfattr -d -m - /etc/passwd /usr/bin/env 2>/dev/null
}

host_snapshot() {
        host_state "$@" >"$T_TMP/.host_before"
}

host_unchanged() {
        host_state "$@" >"$T_TMP/.host_after"
        local before after
        IFS= read -r -d '' before <"$T_TMP/.host_before"
        IFS= read -r -d '' after <"$T_TMP/.host_after"
        [ "$before" = "$after" ] ||
                t_fail "the host changed: $(diff "$T_TMP/.host_before" "$T_TMP/.host_after" | head -5 | tr '\n' ' ')"
}

# Runs attack program PROG with ARGS inside a sandbox (EXTRA rtn options before --) and
# asserts every attack printed "blocked" and none "ESCAPED", and that the host is unchanged.
sec_attack() {
        local prog=$1
        shift
        sec_need_bin "$prog"
        host_snapshot
        sec_exec -- "/mnt/sec/$prog" "$@"
        # Lines starting ESCAPED and blocked, looked for by the shell (grep on a NUL byte).
        local out
        if t_text "$T_OUT_FILE"; then out=$'\n'$T_TEXT; else out=$'\n'$(tr '\0' '?' <"$T_OUT_FILE"); fi
        if [[ $out == *$'\n'ESCAPED* ]] || [ "$T_RC" != 0 ]; then
                t_fail "$(grep -v '^blocked' "$T_OUT_FILE" | head -3 | tr '\n' ' ') $(t_last)"
        fi
        [[ $out == *$'\n'blocked* ]] || t_fail "no attack ran: $(t_last)"
        host_unchanged
}
