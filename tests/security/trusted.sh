#!/usr/bin/env bash
# The sandbox against the trusted side of `rtn serve` (docs/security-invariants.md, 17-19),
# driven by a threaded MCP client (trusted.py) that pings the server every 20 ms while a job
# attacks: every ping must be answered, pings must go on being answered while a long walk
# runs (told by order, not by a time limit load could break), and stdin EOF must still end
# the server.
#   swap_fifo   a job swaps a file and a FIFO (renameat2 RENAME_EXCHANGE) while env_status
#               and env_diff run 500 times, 2000 under make stress (the walk opened the FIFO
#               and blocked for good)
#   big_tree    env_status and env_diff over 150000 names (the walk ran on the loop: seconds;
#               no ping made a round trip while it ran)
#   big_results the largest results a job can make stay under 8 MiB a message, cut and flagged
#               (1 MiB of control characters on each stream was a 12 MiB result)
#   proc_reads  file_read of /proc files that check permission at read time equals cat
#               inside (rtn read them with its own credentials: rtn-init's addresses, and
#               kernel pointers in /proc/net/unix with kernel.kptr_restrict=1, set here
#               when root and restored after)
#   deep_reset  rtn reset of pending changes 500 directories deep with 256 descriptors (one
#               open directory per level ran out of them: the tree stayed, un-resettable;
#               500, since --keep lays its tmpfs over the pending changes at most 512 deep)
#   prune_link  a commit's clean-up of the upper never follows the agent's symlink out of it
#               (upper/var -> a host dir: rtn rmdir'ed the host's empty "tmp" there)
#   rootfs_fifo a FIFO in a rootfs's apt sources (its packages wrote the tree) hung
#               `rtn rootfs list` and `rtn serve --rootfs` at start
#   term_*      what the agent controls reaches the user's terminal as text: rtn log's commit
#               messages (an OSC 52 clipboard write behind an erase-line), rtn diff's file
#               names (ESC, newline), blocked-call reports (process names), error messages
#               quoting agent paths (rtn commit's, rtn exec --keep's)
. "$(dirname "$0")/../lib.sh"
t_need_rtn

PY=$T_ROOT/tests/security/trusted.py

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        # A bound for a run that hangs, not a time limit: trusted.py gives up on an answer
        # after WAIT_S and says so; a loaded machine only makes its calls slower.
        T_CMD_TIMEOUT=900 t_cmd python3 "$PY" "$RTN" "$1"
        grep '^#' "$T_ERR_FILE" | while read -r l; do t_note "${l#\# }"; done
        [ "$T_RC" = 0 ] || t_fail "$(grep -v '^#' "$T_ERR_FILE" | tail -c 1500)"
}

# kernel.kptr_restrict=1 (Ubuntu's default) makes %pK depend on the reader's CAP_SYSLOG;
# only root can set it, and it is put back whatever happens.
proc_reads() {
        local kptr=/proc/sys/kernel/kptr_restrict old=
        if [ "$(id -u)" = 0 ] && [ -w "$kptr" ]; then
                old=$(cat "$kptr")
                # Expanded now: the trap runs after this function's locals are gone.
                # shellcheck disable=SC2064
                trap "echo $old >$kptr" EXIT
                echo 1 >"$kptr"
        fi
        scenario proc_reads
}

# No raw control byte but the newlines that end lines, in stdout and stderr of the last command.
no_controls() {
        if LC_ALL=C grep -q "[$(printf '\001-\011\013-\037\177')]" "$T_OUT_FILE" "$T_ERR_FILE"; then
                t_fail "control bytes reached the terminal: $(cat -v "$T_OUT_FILE" "$T_ERR_FILE" | head -c 400)"
        fi
}

OSC52=$(printf 'fix\033[2K\r\033]52;c;ZWNobyBwd25lZA==\007')

term_log() {
        t_exec --commit -m "$OSC52" -- touch /workspace/f
        t_exit_is 0
        t_cmd "$RTN" log
        t_exit_is 0
        no_controls
        t_stdout_has 'fix\033[2K\r\033]52;c;ZWNobyBwd25lZA==\a'
}

term_diff() {
        t_exec --keep -- sh -c 'cd /workspace && touch "$(printf "evil\033]0;pwned\007\nname")" plain'
        t_exit_is 0
        t_cmd "$RTN" diff
        t_exit_is 0
        no_controls
        t_stdout_has 'A "/workspace/evil\033]0;pwned\a\nname"'
        t_stdout_has 'A /workspace/plain'
        [ "$(wc -l <"$T_OUT_FILE")" = 2 ] || t_fail "one line per change: $(cat -v "$T_OUT_FILE")"
}

term_blocked() {
        t_exec -- python3 -c 'import ctypes
libc = ctypes.CDLL(None)
libc.prctl(15, b"ev\x1b]0;x\x07il")
libc.mount(b"x", b"/mnt", b"tmpfs", 0, None)'
        no_controls
        t_stderr_has 'blocked mount(2) by pid'
        t_stderr_has '(ev?]0;x?il)' # runtime/sandbox/blocked.c keeps printable ASCII of a comm
}

# The deep trees below are made by one mkdir -p each (a fork and exec per level cost seconds).
term_error() {
        local p
        printf -v p '$d/%.0s' {1..260}
        t_exec --keep -- sh -c "cd /workspace; d=\$(printf '\\033'); mkdir -p \"$p\""
        t_exit_is 0
        t_cmd "$RTN" commit -m deep
        [ "$T_RC" != 0 ] || t_fail "a tree deeper than a layer may be was committed"
        no_controls
        t_stderr_has 'workspace/\033/\033/'
        t_stderr_has 'deeper than'
}

# rtn exec --keep of a tree deeper than the pending changes may be: the error quotes the
# agent's path, here with ESC, BEL, CR and a byte that is not UTF-8.
term_exec() {
        local p
        printf -v p '$d/%.0s' {1..520}
        t_exec --keep -- sh -c "cd /workspace; d=\$(printf '\\033\\a\\r\\377'); mkdir -p \"$p\""
        t_exit_is 125
        no_controls
        t_stderr_has 'the changes were not kept'
        t_stderr_has 'workspace/\033\a\r\377/\033\a\r\377/'
}

deep_reset() {
        local p
        printf -v p 'd/%.0s' {1..500}
        t_exec --keep -- mkdir -p "/workspace/$p"
        t_exit_is 0
        ulimit -n 256
        t_cmd "$RTN" reset
        t_exit_is 0
        t_cmd "$RTN" diff
        t_exit_is 0
        t_stdout_is ""
}

# Only where the agent may replace /var (inside root without Landlock: a single-id mapping
# with --isolation namespaces); elsewhere provisioning commands can, which needs a rootfs.
prune_link() {
        mkdir -p "$T_TMP/victim/tmp"
        chmod -R 777 "$T_TMP/victim"
        chmod 755 "$T_TMP"
        t_exec --isolation namespaces --commit -- sh -c \
                "mv /var /var.old 2>/dev/null || exit 99; ln -s $T_TMP/victim /var"
        [ "$T_RC" = 99 ] && t_skip "the agent cannot replace /var here (it can under a single-id mapping)"
        t_exit_is 0
        [ -d "$T_TMP/victim/tmp" ] || t_fail "the commit removed a host directory through the agent's symlink"
}

rootfs_fifo() {
        mkdir -p rfs/etc/apt/sources.list.d rfs/usr/bin rfs/var/lib/dpkg
        echo "deb http://deb.debian.org/debian bookworm main" >rfs/etc/apt/sources.list
        mkfifo rfs/etc/apt/sources.list.d/evil.list
        : >rfs/var/lib/dpkg/status
        tar -C rfs -cf rfs.tar .
        t_cmd "$RTN" rootfs import rfs.tar evil
        t_exit_is 0
        t_cmd timeout 20 "$RTN" rootfs list
        t_exit_is 0
        t_stdout_has deb.debian.org
}

t_run rootfs_fifo rootfs_fifo
t_run deep_reset deep_reset
t_run prune_link prune_link
t_run term_log term_log
t_run term_diff term_diff
t_run term_blocked term_blocked
t_run term_error term_error
t_run term_exec term_exec
t_run swap_fifo scenario swap_fifo
t_run big_tree scenario big_tree
t_run big_results scenario big_results
t_run proc_reads proc_reads
t_done
