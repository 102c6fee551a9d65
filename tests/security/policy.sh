#!/usr/bin/env bash
# The policy is in force from the user's first instruction, and privilege cannot be regained:
# a static program with no libc reads /proc/self/status as its first act (NoNewPrivs 1,
# Seccomp 2, no capabilities) and is refused a write its file permissions allow but
# Landlock does not (EACCES); setuid binaries do not raise the effective uid (no_new_privs
# and nosuid mounts); the environment is an allowlist.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

first_instruction_confined() {
        sec_need_bin firstinsn
        sec_exec -- /mnt/sec/firstinsn
        t_exit_is 0
        t_stdout_has "NoNewPrivs:	1"
        t_stdout_has "Seccomp:	2"
        t_stdout_has "CapEff:	0000000000000000"
        t_stdout_has "CapBnd:	0000000000000000"
        t_stdout_has "landlock-write-comm: -13"
}

# What any command of the sandbox could hold at most, agent or provisioning: the bounding sets
# of rtn-init's threads, from which all of them are spawned. The privileged thread, which
# starts provisioning commands, holds the container runtimes' default set (init/policy.h,
# INIT_CAPS_PROVISION), not everything root has in the user namespace; the loop thread,
# which starts agent commands, holds none (init/privileged.c). No process inside can widen
# a bounding set.
init_bounding_set() {
        t_exec -- sh -c 'cat /proc/1/task/*/status | grep ^CapBnd: | sort'
        t_exit_is 0
        t_stdout_is "CapBnd:	0000000000000000
CapBnd:	00000000a80425fb"
}

# The same program on the host, unconfined: the checks above can tell the difference.
first_instruction_host_differs() {
        sec_need_bin firstinsn
        t_cmd "$SEC_BIN/firstinsn"
        t_stdout_has "landlock-write-comm: -00"
        grep -q "Seccomp:	2" "$T_OUT_FILE" && t_skip "the test runner itself runs under seccomp"
        true
}

# A setuid-root copy of id(1) in the workspace: as host root we can make one.
setuid_binary() {
        [ "$(id -u)" = 0 ] || t_skip "only host root can create a setuid-root file"
        mkdir "$T_TMP/ws"
        cp /usr/bin/id "$T_TMP/ws/suid-id"
        chown 0:0 "$T_TMP/ws/suid-id"
        chmod 4755 "$T_TMP/ws/suid-id"
        t_exec --workspace "$T_TMP/ws" -- sh -c 'id -u; ./suid-id -u'
        t_exit_is 0
        local a b
        a=$(sed -n 1p "$T_OUT_FILE")
        b=$(sed -n 2p "$T_OUT_FILE")
        [ "$a" = "$b" ] || t_fail "setuid raised the uid from $a to $b"
}

# The host's own setuid binaries (mount, su, passwd ...) run without their privilege: every
# mount they sit on is nosuid and no_new_privs is set.
setuid_system_binaries() {
        t_exec -- sh -c 'grep NoNewPrivs /proc/self/status;
                awk "\$5 ~ \"^/(usr|bin|sbin|workspace|tmp|opt|etc)\" && \$6 !~ /nosuid/ {print \"suid-capable mount: \" \$5}" /proc/self/mountinfo;
                mount -t tmpfs none /mnt 2>&1; umount /proc 2>&1; true'
        t_stdout_has "NoNewPrivs:	1"
        t_false grep -q "suid-capable" "$T_OUT_FILE"
        t_false grep -q "^tmpfs" "$T_OUT_FILE"
}

environment_is_allowlist() {
        export RTN_SECRET_TOKEN=hunter2 AWS_SECRET_ACCESS_KEY=x SSH_AUTH_SOCK=/tmp/agent
        t_exec -- env
        t_exit_is 0
        t_false grep -qE "hunter2|AWS_SECRET|SSH_AUTH_SOCK" "$T_OUT_FILE"
}

no_host_tty() {
        t_exec -- sh -c 'tty; cat /proc/self/stat | cut -d" " -f7'
        t_stdout_has "not a tty"
}

t_run first_instruction_confined first_instruction_confined
t_run init_bounding_set init_bounding_set
t_run first_instruction_host_differs first_instruction_host_differs
t_run setuid_binary setuid_binary
t_run setuid_system_binaries setuid_system_binaries
t_run environment_is_allowlist environment_is_allowlist
t_run no_host_tty no_host_tty
t_done
