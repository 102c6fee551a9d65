# shellcheck shell=bash
# Shell test library for tests/integration/*.sh and tests/security/*.sh. A test file sources
# it, defines one function per case, registers each with `t_run NAME FUNC [ARGS...]` and ends
# with `t_done`. Every case runs in its own subshell, in its own temp dir ($T_TMP, also the
# cwd; the case's name is $T_NAME), removed afterwards (by one rm(1) for up to T_RM_BATCH
# ended cases, and for the rest when the suite ends); assertions end the case at the first
# failure. Output is one line per case (ok / FAIL / skip) and a last machine-readable line
# that tools/test.sh adds up:
#     # t: passed=N failed=N skipped=N
# A file runs alone too: `bash tests/integration/exec_status.sh` (RTN=path/to/rtn to choose
# the binary; default build/rtn of this tree). Exit status: 0 when nothing failed.
#
# Assertions (inside a case):
#   t_cmd CMD...                 run CMD (stdin /dev/null), keep $T_RC, stdout in $T_OUT_FILE,
#                                stderr in $T_ERR_FILE; never fails by itself; one still
#                                running after T_CMD_TIMEOUT s (`T_CMD_TIMEOUT=N t_cmd ...`
#                                for one command) is ended with its process group (exit
#                                124, the reason in its stderr)
#   t_exec ARGS...               t_cmd "$RTN" exec ARGS...
#   t_exit_is N [CMD...]         (run CMD, then) assert the exit code is N
#   t_stdout_is STR              stdout equals STR (trailing newlines ignored, like $(...))
#   t_stdout_has STR             stdout contains STR
#   t_stderr_has STR             stderr contains STR
#   t_file_exists PATH           PATH exists on the host
#   t_no_file PATH               PATH does not exist on the host
#   t_true CMD... / t_false CMD...   CMD succeeds / fails
#   t_fail MSG                   fail the case
#   t_skip REASON                skip the case (a missing host feature: name it)
#   t_note MSG                   print a diagnostic line ("# MSG")
# Helpers:
#   t_port_open HOST PORT        something accepts a TCP connection on HOST:PORT (bash's
#                                /dev/tcp, no process started for it): t_wait_for's poll
#   t_host_pids ARGV...          host pids whose command line is exactly ARGV (seen from
#                                the host, so it finds processes inside sandboxes too); other
#                                suites run at once (tools/test.sh's streams), so ARGV
#                                holds $T_UNIQ, a number no other running suite has
#   t_wait_for CMD...            retry CMD (its stderr dropped) for up to 10 s; fails when it never succeeds
#   t_has FILE STR               FILE has a line holding STR (`grep -qF`), read by bash
#                                itself when it can: a poll of a log with t_wait_for
#   t_hold_until FILE            print sh text that waits until FILE exists (at most 120 s), for
#                                a sandbox's command that must run until the case lets it go
#                                (touches FILE through a bound dir) rather than for a fixed time
#   t_suite_tmp                  (in the suite's shell, outside the cases) make $T_SUITE_TMP,
#                                a dir for what the cases only read or copy, built once;
#                                removed when the suite exits

# The suite's own pid: unique among the suites running at once, for command lines that
# t_host_pids must tell from another suite's (`sleep 30.$T_UNIQ`).
T_UNIQ=$$
T_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${RTN:=$T_ROOT/build/rtn}"
# Helper programs built from tests/{integration,security}/*.c (GNUmakefile TEST_HELPERS).
: "${T_BIN:=$(dirname "$RTN")/tests/bin}"
# An rtn for a case's setup steps that are not what it tests, many times over (filling a
# store): the build/rtn of tools/test.sh's sanitized part, whose RTN is build-san/rtn, so the
# sanitizer watches the steps under test and not the hundredth copy of a setup step.
: "${T_RTN_SETUP:=$RTN}"
# Upper bound for one command run through t_cmd, so a hung sandbox fails a case instead
# of hanging the suite.
: "${T_CMD_TIMEOUT:=120}"
# python3 on PATH may be a version manager's shim (pyenv's is a bash script that runs a few
# more before the interpreter: 0.4 s of CPU a start where the interpreter alone takes 0.04 s,
# and the suites start hundreds). The interpreter's own directory goes first, found once.
# An interpreter on PATH (an ELF file, not a script) is already first: no python3 to start,
# which costs tens of milliseconds of CPU a suite.
t_python_first() {
        local d magic='' LC_ALL=C
        hash python3 2>/dev/null &&
                { IFS= read -r -n 4 magic <"${BASH_CMDS[python3]}"; } 2>/dev/null
        [ "$magic" = $'\x7fELF' ] && return 0
        d=$(python3 -c 'import os, sys; print(os.path.dirname(sys.executable))' 2>/dev/null) || return 0
        [ -x "$d/python3" ] && [ "$(command -v python3)" != "$d/python3" ] && PATH=$d:$PATH
        return 0
}
command -v python3 >/dev/null && t_python_first
# Cases run in their own temp dir: make relative paths absolute first.
[[ $RTN == /* ]] || RTN=$PWD/$RTN
[[ $T_BIN == /* ]] || T_BIN=$PWD/$T_BIN
[[ $T_RTN_SETUP == /* ]] || T_RTN_SETUP=$PWD/$T_RTN_SETUP
export RTN T_BIN T_RTN_SETUP

# The harness's own mktemp -d, once a case (thousands of processes a make test), and t_cmd's
# setpgid, rm -f of a file of its own and its watchdog's sleep (t_watch):
# bash's loadable builtins (Debian's bash-builtins) where they load, else the commands. They
# stay disabled but while the harness uses them, so that a case's and a suite's `rm` and
# `mktemp` are the commands they always were (the loadable rm, for one, exits 0 even when
# it could not remove a file).
T_LOADED=' '
t_load() {
        local b
        for b in rm mktemp setpgid sleep; do
                [ -f "/usr/lib/bash/$b" ] && enable -f "/usr/lib/bash/$b" "$b" 2>/dev/null &&
                        enable -n "$b" && T_LOADED+="$b "
        done
}
t_load

# RTN_TEST_STRESS=1 (make stress): the cases that race a busy swapper, or repeat a start,
# to catch what happens once in hundreds of tries run their long form; make test runs each
# one short (a quarter of the rounds or so: it still races, and still fails on a break that
# shows within seconds). T_STRESS is 1 or 0, exported for the suites' Python helpers;
# t_stress SHORT LONG prints the count for this run.
export T_STRESS=0
[ "${RTN_TEST_STRESS:-}" = 1 ] && T_STRESS=1
t_stress() {
        if [ "$T_STRESS" = 1 ]; then echo "$2"; else echo "$1"; fi
}

T_PASSED=0
T_FAILED=0
T_SKIPPED=0
T_MAIN_PID=$BASHPID
T_SKIP_RC=77
T_CLK_TCK=$(getconf CLK_TCK 2>/dev/null) || T_CLK_TCK=100

# T_TICKS: the CPU ticks (user + system) of the suite's reaped descendants, read without a
# fork (a forked shell's `times` counts nothing of its parent's children, and t_run runs
# thousands of times a make test).
t_children_ticks() {
        local f
        read -r -a f <"/proc/$T_MAIN_PID/stat"
        # fields 16 and 17 (cutime, cstime); bash's comm holds no space
        T_TICKS=$((f[15] + f[16]))
}

t_note() {
        printf '# %s\n' "$*"
}

t_fail() {
        printf '%s\n' "$*" >"$T_TMP/.t_reason"
        exit 1
}

t_skip() {
        printf '%s\n' "$*" >"$T_TMP/.t_reason"
        exit "$T_SKIP_RC"
}

# t_cmd's bound without a timeout(1) per command (one a command was thousands of processes
# a make test): the suite's one watchdog, a shell started by the first t_run where bash's
# loadable setpgid and sleep load (else each command gets its timeout). Every second it
# reads the commands under way, a file each in $T_WATCH named for the shell that runs t_cmd
# and holding the command's pid, start and bound (the T_CMD_TIMEOUT of that t_cmd, which a
# caller may set for one command); one that has run that many seconds it ends
# as `timeout -k 5` would (TERM to its process group, KILL 5 s later) and marks it in
# $T_WATCH/ended.PID for t_cmd to report. When the suite's shell is gone (at its end, or
# ended by a signal: tools/test.sh's bound), it ends what was still running, where timeouts
# outlived it, and removes $T_WATCH.
T_WATCH=
t_watch() {
        [ -z "$T_WATCH" ] && [[ $T_LOADED == *" rm "* && $T_LOADED == *" setpgid "* && $T_LOADED == *" sleep "* ]] ||
                return 0
        t_mktemp_d T_WATCH "${TMPDIR:-/tmp}/w.XXXXXX" || {
                T_WATCH=
                return 0
        }
        # (an orphan, not a job of the suite's shell: no `wait` waits for it, and $! stays)
        (t_watchdog </dev/null >/dev/null 2>&1 &)
}

t_watchdog() {
        local f now pid start limit gone='' st left
        local -A sent=()
        trap '' TERM INT HUP
        enable sleep
        while [ -d "$T_WATCH" ]; do
                sleep 1
                now=${EPOCHREALTIME//[.,]/}
                # (a zombie answers kill -0: the suite's shell is gone when it is one)
                { read -r -a st <"/proc/$T_MAIN_PID/stat"; } 2>/dev/null && [ "${st[2]}" != Z ] || gone=1
                left=0
                for f in "$T_WATCH"/*; do
                        [[ ${f##*/} == *[!0-9]* ]] && continue
                        { read -r pid start limit <"$f"; } 2>/dev/null && [ -n "$limit" ] || continue
                        if [ -n "$gone" ]; then
                                # (its shell may be gone as well, and the file left)
                                kill -0 -- "-$pid" 2>/dev/null || continue
                                left=$((left + 1))
                        elif [ $((10#$now - 10#$start)) -lt $((limit * 1000000)) ]; then
                                continue
                        fi
                        if [ -z "${sent[$pid]:-}" ]; then
                                sent[$pid]=$now
                                printf '%s\n' "$limit" >"$T_WATCH/ended.$pid" 2>/dev/null
                                kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
                        elif [ $((10#$now - 10#${sent[$pid]})) -ge 5000000 ]; then
                                kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
                        fi
                done
                # the suite is gone, and so is every process group it left
                [ -z "$gone" ] || [ "$left" -gt 0 ] || break
        done
        t_rmtree "$T_WATCH"
}

t_cmd() {
        local w pid=''
        T_OUT_FILE=$T_TMP/.t_out
        T_ERR_FILE=$T_TMP/.t_err
        T_RC=0
        T_LAST_CMD="$*"
        if [ -z "$T_WATCH" ] || [ ! -d "$T_WATCH" ]; then
                timeout -k 5 "$T_CMD_TIMEOUT" "$@" </dev/null >"$T_OUT_FILE" 2>"$T_ERR_FILE" || T_RC=$?
                return 0
        fi
        w=$T_WATCH/$BASHPID
        # The subshell's pid is the command's: in a process group of its own, as timeout(1)
        # puts it (so that its end reaches what it started), and named for the watchdog.
        (
                enable setpgid && setpgid "$BASHPID" "$BASHPID"
                printf '%s %s %s\n' "$BASHPID" "${EPOCHREALTIME//[.,]/}" "$T_CMD_TIMEOUT" >"$w"
                exec "$@"
        ) </dev/null >"$T_OUT_FILE" 2>"$T_ERR_FILE" || T_RC=$?
        { read -r pid _ <"$w"; } 2>/dev/null
        enable rm
        rm -f -- "$w"
        if [ -n "$pid" ] && [ -e "$T_WATCH/ended.$pid" ]; then
                rm -f -- "$T_WATCH/ended.$pid"
                T_RC=124 # timeout(1)'s
                printf 't_cmd: still running after %s s (T_CMD_TIMEOUT), ended\n' "$T_CMD_TIMEOUT" >>"$T_ERR_FILE"
        fi
        enable -n rm
        return 0
}

t_exec() {
        t_cmd "$RTN" exec "$@"
}

# The registry of running sandboxes this shell's rtn uses, under $XDG_RUNTIME_DIR: one per
# pid namespace, named by its inode (runtime/sandbox/rundir.h).
t_registry() {
        local ns
        ns=$(stat -L -c %i /proc/self/ns/pid)
        echo "$XDG_RUNTIME_DIR/rtn/running/$ns"
}

t_port_open() { # host port
        (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

t_host_pids() {
        # One pgrep, not a fork per process: a loaded machine with thousands of processes
        # made a shell loop over /proc take seconds per call, minutes in a t_wait_for.
        local want
        want=$(printf '%s ' "$@")
        pgrep -x -f -- "$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"${want% }")"
        return 0
}

# The tenth of a second between tries is a read that times out on a pipe that nothing
# writes to, where a `sleep` was a process per try (100 for a 10 s wait): the pipe of a here
# string (bash 5.1 makes one for a short text), opened again for writing as well so that no
# end of file comes, at the first try that fails, and closed for CMD. Where the here string
# is a file instead, the tries sleep. No process is started, so $! stays the caller's.
t_wait_for() {
        local i fd='' h
        for ((i = 0; i < 100; i++)); do
                if [[ $fd == [0-9]* ]]; then
                        "$@" {fd}<&- 2>/dev/null && break
                else
                        "$@" 2>/dev/null && break
                fi
                if [ -z "$fd" ]; then
                        exec {h}<<<'' {fd}<>"/dev/fd/$h" {h}<&-
                        read -r -u "$fd" # the here string's newline
                        [ -p "/dev/fd/$fd" ] || { exec {fd}<&- && fd=-; }
                fi
                if [ "$fd" = - ]; then sleep 0.1; else read -r -t 0.1 -u "$fd"; fi
        done
        [[ $fd != [0-9]* ]] || exec {fd}<&-
        [ "$i" -lt 100 ]
}

t_hold_until() {
        # Bounded, so a case that fails before letting the command go leaves nothing running.
        printf 'i=0; until [ -e %s ] || [ $i = 1200 ]; do sleep 0.1; i=$((i + 1)); done' "$1"
}

# Describes the last command for failure messages: what ran, its code, the start of stderr.
t_last() {
        local err=
        [ -s "${T_ERR_FILE:-/dev/null}" ] && err=$(head -c 600 "$T_ERR_FILE")
        printf '`%s` exited %s%s' "${T_LAST_CMD:-?}" "${T_RC:-?}" "${err:+; stderr: $err}"
}

t_exit_is() {
        local want=$1
        shift
        [ $# -gt 0 ] && t_cmd "$@"
        [ "$T_RC" = "$want" ] || t_fail "expected exit $want: $(t_last)"
}

# T_TEXT: FILE's bytes, read by the shell itself: a grep or cat per assertion is a fork and
# an exec, several milliseconds of CPU each, thousands of times a make test. False when the
# file holds a NUL byte, which a shell variable cannot: the caller then asks grep or cat.
t_text() { # file
        local LC_ALL=C
        T_TEXT=
        [ -f "$1" ] && [ -r "$1" ] && ! IFS= read -r -d '' T_TEXT <"$1"
}

# Whether FILE has a line holding STR, as `grep -qF -- STR FILE` says, without its fork when
# it can: a STR with a newline is several patterns to grep, and an empty one matches only a
# file with a line, so those two go to grep, as a file with a NUL byte does.
t_has() { # file str
        local LC_ALL=C
        if [[ -n $2 && $2 != *$'\n'* ]] && t_text "$1"; then
                [[ $T_TEXT == *"$2"* ]]
        else
                grep -qF -- "$2" "$1"
        fi
}

# T_TEXT: FILE's text as $(cat FILE) reads it, every trailing newline gone (by the shell
# when it can).
t_text_trimmed() { # file
        if t_text "$1"; then
                while [[ $T_TEXT == *$'\n' ]]; do T_TEXT=${T_TEXT%$'\n'}; done
        else
                T_TEXT=$(cat "$1")
        fi
}

t_stdout_is() {
        local got
        t_text_trimmed "$T_OUT_FILE"
        got=$T_TEXT
        [ "$got" = "$1" ] || t_fail "stdout: expected '$1', got '$(head -c 300 <<<"$got")': $(t_last)"
}

t_stdout_has() {
        t_has "$T_OUT_FILE" "$1" ||
                t_fail "stdout lacks '$1' (got '$(head -c 300 "$T_OUT_FILE")'): $(t_last)"
}

t_stderr_has() {
        t_has "$T_ERR_FILE" "$1" ||
                t_fail "stderr lacks '$1' (got '$(head -c 300 "$T_ERR_FILE")'): $(t_last)"
}

t_file_exists() {
        [ -e "$1" ] || [ -L "$1" ] || t_fail "expected $1 to exist on the host"
}

t_no_file() {
        if [ -e "$1" ] || [ -L "$1" ]; then
                t_fail "expected no $1 on the host"
        fi
}

t_true() {
        "$@" || t_fail "expected success: \`$*\` exited $?"
}

t_false() {
        if "$@"; then
                t_fail "expected failure: \`$*\` succeeded"
        fi
}

# t_mktemp_d VAR TEMPLATE: a new dir made as `mktemp -d TEMPLATE` does, its name in VAR.
t_mktemp_d() {
        local _t_dir _t_rc=0
        if [[ $T_LOADED == *" mktemp "* ]]; then
                enable mktemp
                # (the loadable prints the name as well as setting VAR)
                mktemp -d -v "$1" "$2" >/dev/null || _t_rc=$?
                enable -n mktemp
                return "$_t_rc"
        fi
        _t_dir=$(mktemp -d "$2") || return
        printf -v "$1" %s "$_t_dir"
}

# Removes a case's temp dir. Files a sandbox created under a subordinate uid are not ours
# to delete from the host; an unprivileged caller removes them from inside a user namespace
# that maps its subuid range (unshare --map-auto uses newuidmap, like rtn does).
# (Not with the loadable rm: it recurses by path after an lstat, so a directory that a
# process left running swaps for a symlink would be followed out of the tree, where rm(1)
# descends by descriptor; and it exits 0 whatever it could not remove.)
t_rmtree() {
        rm -rf -- "$1" 2>/dev/null && return 0
        chmod -R u+rwX -- "$1" 2>/dev/null
        rm -rf -- "$1" 2>/dev/null && return 0
        unshare --map-root-user --map-auto rm -rf -- "$1" 2>/dev/null
        [ ! -e "$1" ]
}

# T_TOOK: "(WALL s, cpu CPU s)" of a case that started at EPOCHREALTIME START with TICKS.
t_took() {
        local now=$EPOCHREALTIME ticks us
        t_children_ticks
        ticks=$((T_TICKS - $2))
        # microseconds, locale-proof: EPOCHREALTIME's separator may be a comma
        us=$((10#${now//[.,]/} - 10#${1//[.,]/}))
        printf -v T_TOOK '(%d.%02d s, cpu %d.%02d s)' $((us / 1000000)) $((us % 1000000 / 10000)) \
                $((ticks / T_CLK_TCK)) $((ticks % T_CLK_TCK * 100 / T_CLK_TCK))
}

t_run() {
        local name=$1 rc=0 reason=''
        shift
        local tmp start=$EPOCHREALTIME ticks
        t_children_ticks
        ticks=$T_TICKS
        t_watch
        t_mktemp_d tmp "${TMPDIR:-/tmp}/t.XXXXXX" || {
                echo "FAIL $name: mktemp failed"
                T_FAILED=$((T_FAILED + 1))
                return
        }
        (
                T_TMP=$tmp
                export T_NAME=$name
                # Every case gets a store of its own: commits made by one case (or by the
                # user running the suite) never leak into another.
                export RTN_DATA_DIR=$T_TMP/.rtn-data
                cd "$T_TMP" || exit 1
                "$@"
        ) || rc=$?
        [ -f "$tmp/.t_reason" ] && t_text_trimmed "$tmp/.t_reason" && reason=$T_TEXT
        t_took "$start" "$ticks"
        case $rc in
        0)
                echo "ok $name $T_TOOK"
                T_PASSED=$((T_PASSED + 1))
                ;;
        "$T_SKIP_RC")
                echo "skip $name: $reason $T_TOOK"
                T_SKIPPED=$((T_SKIPPED + 1))
                ;;
        *)
                echo "FAIL $name: ${reason:-exit $rc} $T_TOOK"
                T_FAILED=$((T_FAILED + 1))
                ;;
        esac
        T_ENDED+=("$tmp")
        [ ${#T_ENDED[@]} -lt "$T_RM_BATCH" ] || t_rm_ended
}

# The temp dirs of ended cases not yet removed. A rm(1) for each case was ~3,700 of a make
# test's processes, each ~5 ms of CPU here: one takes up to T_RM_BATCH of them, and
# t_rmtree's fallbacks the dirs it left; what is left when the suite ends goes then.
T_ENDED=()
T_RM_BATCH=16
t_rm_ended() {
        local d
        [ ${#T_ENDED[@]} -gt 0 ] || return 0
        if ! rm -rf -- "${T_ENDED[@]}" 2>/dev/null; then
                for d in "${T_ENDED[@]}"; do
                        [ -e "$d" ] || continue
                        t_rmtree "$d" || t_note "could not remove $d"
                done
        fi
        T_ENDED=()
}

t_done() {
        t_rm_ended
        printf '# t: passed=%d failed=%d skipped=%d\n' "$T_PASSED" "$T_FAILED" "$T_SKIPPED"
        T_DONE=1
        [ "$T_FAILED" = 0 ]
}

# T_SUITE_TMP: a temp dir for what a suite builds once and its cases only read or copy (a
# tar, certificates, a copy of the sources), made by t_suite_tmp in the suite's own shell
# (not in a case or a $(...)), removed when the suite exits.
T_SUITE_TMP=
t_suite_tmp() {
        [ -n "$T_SUITE_TMP" ] && return 0
        t_mktemp_d T_SUITE_TMP "${TMPDIR:-/tmp}/suite.XXXXXX"
}

# A file that dies before t_done (set -e, a typo) still reports, and counts as failed.
t_on_exit() {
        local rc=$?
        [ "$BASHPID" = "$T_MAIN_PID" ] || return
        t_rm_ended
        [ -n "$T_SUITE_TMP" ] && { t_rmtree "$T_SUITE_TMP" || t_note "could not remove $T_SUITE_TMP"; }
        [ -n "${T_DONE:-}" ] && return
        echo "FAIL $(basename "$0"): stopped before t_done (exit $rc)"
        T_FAILED=$((T_FAILED + 1))
        t_done
        exit 1
}
trap t_on_exit EXIT

# Refuses to run a suite without the binary under test: a missing rtn is a failure, not a
# skip, so a broken build can never look green.
t_need_rtn() {
        if [ ! -x "$RTN" ]; then
                echo "FAIL $(basename "$0"): rtn binary not found at $RTN"
                T_FAILED=$((T_FAILED + 1))
                t_done
                exit 1
        fi
}
