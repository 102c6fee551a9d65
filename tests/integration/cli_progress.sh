#!/usr/bin/env bash
# Long work says what it does: RTN_LOG accepts only its levels and a typo is an error naming
# them; `rtn rootfs import` names each step on a terminal (or with RTN_LOG=info) and is quiet
# in a pipe; RTN_LOG=debug logs the steps. (The streaming of `rtn pkg install`'s apt output
# needs a mirror: tests/integration/provision.sh.)
. "$(dirname "$0")/../lib.sh"
t_need_rtn

bogus_rtn_log_is_an_error() {
        local v
        for v in verbose DEBUG 3 'warn '; do
                RTN_LOG=$v t_cmd "$RTN" version
                t_exit_is 125
                t_stderr_has "RTN_LOG=$v is not a log level; use one of debug, info, warn, error"
                [ ! -s "$T_OUT_FILE" ] || t_fail "RTN_LOG=$v ran the verb: $(cat "$T_OUT_FILE")"
        done
        for v in debug info warn error ''; do
                RTN_LOG=$v t_exit_is 0 "$RTN" version
        done
}

make_tar() {
        mkdir -p tree/etc/apt tree/usr/bin tree/var/lib/dpkg tree/bin
        echo "deb http://deb.example.org/debian bookworm main" >tree/etc/apt/sources.list
        echo "root:x:0:0:root:/root:/bin/sh" >tree/etc/passwd
        : >tree/var/lib/dpkg/status
        tar -C tree -cf t.tar .
}

import_names_its_steps_on_a_terminal() {
        export RTN_DATA_DIR=$T_TMP/data
        make_tar
        # script(1) gives the command a terminal; its output is the terminal's.
        T_CMD_TIMEOUT=120 t_cmd script -qec "$RTN rootfs import t.tar onatty" /dev/null
        t_exit_is 0
        t_stdout_has "rtn rootfs: unpack t.tar ("
        t_stdout_has "rtn rootfs: record its stamp and move it into place ("
        t_stdout_has "rtn rootfs: rootfs onatty is ready ("
        # in a pipe: the name on stdout, nothing on stderr
        t_exit_is 0 "$RTN" rootfs import t.tar inapipe
        t_stdout_is "inapipe"
        [ ! -s "$T_ERR_FILE" ] || t_fail "not a terminal, yet: $(cat "$T_ERR_FILE")"
        # asked for: the same steps
        RTN_LOG=info t_exit_is 0 "$RTN" rootfs import t.tar asked
        t_stderr_has "rtn rootfs: unpack t.tar ("
        RTN_LOG=debug t_exit_is 0 "$RTN" rootfs import t.tar debugged
        t_stderr_has "rtn: debug: rootfs debugged: unpack t.tar"
}

debug_says_what_each_step_does() {
        RTN_LOG=debug t_exit_is 0 "$RTN" exec -- true
        t_stderr_has "rtn: debug: sandbox: base host"
        t_stderr_has "clone3 into new namespaces"
        t_stderr_has "writing its id maps"
        t_stderr_has "rtn-init configured (Landlock ABI"
        t_stderr_has "(agent policy) in /workspace: true"
        t_exit_is 0 "$RTN" exec -- true
        [ ! -s "$T_ERR_FILE" ] || t_fail "debug lines without RTN_LOG: $(cat "$T_ERR_FILE")"
}

t_run debug_says_what_each_step_does debug_says_what_each_step_does
t_run bogus_rtn_log_is_an_error bogus_rtn_log_is_an_error
t_run import_names_its_steps_on_a_terminal import_names_its_steps_on_a_terminal
t_done
