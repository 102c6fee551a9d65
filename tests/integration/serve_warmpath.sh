#!/usr/bin/env bash
# What a warm `shell_run true` costs `rtn serve`, counted with strace over five calls of a
# session already past --undo-depth (docs/benchmarks.md, "The warm call, counted"). Each
# case names a cost every call once paid and need not: a helper process in a user namespace
# to drop a checkpoint that was never made, a timerfd per command's timeout, a /dev/null
# opened per command, F_GETFL on each output pipe and on each directory the checkpoint's walk
# lists, the walk's inode maps read 16 bytes at a time; and in rtn-init, three dups of the
# command's stdio per spawn and a second read of the signalfd per exit. Counting syscalls, not timing
# them, keeps the suite quick and immune to a busy machine.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
MCP=$T_ROOT/tests/integration/mcp_calls.py
t_suite_tmp

# Traces `rtn serve --undo-depth 2` (every process, -f) over 12 calls of shell_run true
# into $T_SUITE_TMP/trace once, and the part from the 6th call's request to the 11th's into
# $T_SUITE_TMP/warm: five warm calls, each after the oldest step is due to be dropped.
# newuidmap loses its setuid bit under a tracer, so a caller with a subordinate range
# cannot start the sandbox traced: that caller is skipped.
trace_warm() {
        command -v strace >/dev/null || t_skip "strace is not installed (tools/deps.txt)"
        local tr=$T_SUITE_TMP/trace
        [ -e "$T_SUITE_TMP/no-newuidmap" ] && t_skip "newuidmap runs without its setuid bit under strace"
        if [ ! -s "$T_SUITE_TMP/warm" ]; then
                local i
                for i in $(seq 12); do echo 'shell_run {"command":"true"}'; done >calls
                t_cmd python3 "$MCP" calls -- strace -f -qq -s 64 -o "$tr" "$RTN" serve --undo-depth 2
                if { [ "$T_RC" != 0 ] || grep -q '"isError": *true' "$T_OUT_FILE"; } &&
                        grep -q newuidmap "$T_OUT_FILE" "$tr"; then
                        : >"$T_SUITE_TMP/no-newuidmap"
                        t_skip "newuidmap runs without its setuid bit under strace"
                fi
                [ "$T_RC" = 0 ] || t_fail "serve: $(tail -c 600 "$T_ERR_FILE")"
                grep -q '"isError": *true' "$T_OUT_FILE" && t_fail "a call failed: $(head -c 600 "$T_OUT_FILE")"
                # mcp_calls.py: initialize is id 1, the calls 2..13
                awk '/read\(0, .*\\"id\\": 7,/ { on = 1 } /read\(0, .*\\"id\\": 12,/ { on = 0 } on' \
                        "$tr" >"$T_SUITE_TMP/warm.new"
                [ -s "$T_SUITE_TMP/warm.new" ] || t_fail "no calls 7-11 in the trace: $(grep -m3 'read(0' "$tr")"
                mv "$T_SUITE_TMP/warm.new" "$T_SUITE_TMP/warm"
        fi
}

# Fails the case when more than MAX lines of the five warm calls match the extended regex
# PATTERN, naming WHAT they are and showing the first three.
at_most() { # max pattern what
        trace_warm
        local n
        n=$(grep -cE "$2" "$T_SUITE_TMP/warm")
        [ "$n" -le "$1" ] || t_fail "$n $3 in 5 warm calls: $(grep -m3 -E "$2" "$T_SUITE_TMP/warm")"
}

# A step whose seal found nothing changed has no directory: dropping it needs no helper.
no_helper_per_call() {
        at_most 0 'unshare\(CLONE_NEWUSER|clone3?\(.*CLONE_NEWUSER' "user namespaces made"
}

# A command's timeout is a timer of the event loop, which has no fd per timer.
no_timerfd_per_call() {
        at_most 0 'timerfd_create' "timerfds made"
}

no_devnull_per_call() {
        at_most 0 'open(at)?\(.*"/dev/null"' "opens of /dev/null"
}

# rtn's end of an output pipe gets one F_SETFL; the walk lists a directory by its own fd,
# without a dup for a DIR (fdopendir's F_GETFL and F_SETFD).
no_fgetfl_per_call() {
        at_most 4 'fcntl\([0-9]+, F_GETFL' "F_GETFL"
        at_most 4 'fcntl\([0-9]+, F_DUPFD_CLOEXEC, 3\)' "dups"
}

# The checkpoint's inode maps (undo/dirs, undo/recent) are read a page at a time.
inode_maps_read_whole() {
        at_most 0 '(read\([0-9]+, |read resumed>).*, 16\) = 16' "reads of 16 bytes"
}

# rtn-init dup2s the received stdio (above 2 already) straight into 0..2.
init_stdio_undupped() {
        at_most 0 'fcntl\([0-9]+, F_DUPFD_CLOEXEC, 10\)' "dups of a command's stdio"
}

# SIGCHLD is not queued: rtn-init reads its signalfd once per wake-up, not until EAGAIN.
init_signalfd_read_once() {
        at_most 0 '(read\(|<\.\.\. read resumed>).*= -1 EAGAIN' "reads that found nothing"
}

t_run no_helper_per_call no_helper_per_call
t_run no_timerfd_per_call no_timerfd_per_call
t_run no_devnull_per_call no_devnull_per_call
t_run no_fgetfl_per_call no_fgetfl_per_call
t_run inode_maps_read_whole inode_maps_read_whole
t_run init_stdio_undupped init_stdio_undupped
t_run init_signalfd_read_once init_signalfd_read_once
t_done
