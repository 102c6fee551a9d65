#!/usr/bin/env bash
# Checks tests/lib.sh itself, so a broken assertion can never turn the suites green: a
# failing, a skipping and a passing case are counted as such and timed, a file that dies before t_done
# reports a failure, and per-case and per-suite temp dirs are removed. Runs no sandbox.
. "$(dirname "$0")/../lib.sh"

LIB=$T_ROOT/tests/lib.sh

# Runs a generated test file and leaves its output in $T_OUT_FILE.
run_file() {
        printf '. %q\n%s\n' "$LIB" "$1" >"$T_TMP/f.sh"
        t_cmd env TMPDIR="$T_TMP" bash "$T_TMP/f.sh"
}

counts_pass_fail_skip() {
        run_file 'a() { t_exit_is 3 sh -c "exit 3"; t_stdout_is ""; }
b() { t_exit_is 0 false; }
c() { t_skip "no such feature"; }
d() { t_cmd echo hi; t_stdout_has nope; }
t_run a a; t_run b b; t_run c c; t_run d d; t_done'
        t_exit_is 1
        t_stdout_has "# t: passed=1 failed=2 skipped=1"
        t_stdout_has "skip c: no such feature"
        t_stdout_has "FAIL b: expected exit 0"
        # each case's line ends in its wall and CPU time
        t_true grep -Eq '^ok a \([0-9]+\.[0-9]{2} s, cpu [0-9]+\.[0-9]{2} s\)$' "$T_OUT_FILE"
        t_true grep -Eq '^skip c: no such feature \([0-9]+\.[0-9]{2} s, cpu [0-9.]+ s\)$' "$T_OUT_FILE"
}

death_before_done_fails() {
        run_file 't_run a true; exit 0'
        t_exit_is 1
        t_stdout_has "# t: passed=1 failed=1 skipped=0"
}

# The case of run_file's suite ran (it wrote its dir to $T_TMP/dirs) and its dir is gone.
case_dir_gone() {
        local d
        d=$(<"$T_TMP/dirs")
        [ -n "$d" ] || t_fail "the case did not run"
        t_no_file "$d"
}

temp_dirs_removed() {
        run_file 't_run a sh -c "touch \"\$PWD/x\"; echo \$PWD >>'"$T_TMP"'/dirs"; t_done'
        t_exit_is 0
        case_dir_gone
}

# A case's temp dir goes even when it holds what a plain `rm -rf` cannot remove (a dir
# without write permission, for a caller other than root).
temp_dir_removed_when_rm_cannot() {
        run_file 'a() { mkdir -p ro/sub && touch ro/f ro/sub/g && chmod 555 ro ro/sub && echo $PWD >'"$T_TMP"'/dirs; }
t_run a a; t_done'
        t_exit_is 0
        case_dir_gone
}

# The harness makes a case's temp dir with bash's loadable mktemp, not a process, and
# removes it with rm(1); the case itself still runs the commands on PATH (whose options and
# exit codes it relies on), as the suite's own code does.
harness_runs_no_mktemp() {
        local c
        if [ ! -f /usr/lib/bash/rm ] || [ ! -f /usr/lib/bash/mktemp ]; then
                t_skip "bash's loadable builtins (bash-builtins) are not installed"
        fi
        mkdir "$T_TMP/shims"
        for c in rm mktemp; do
                printf '#!/bin/sh\necho "%s $*" >>%q\nexec %q "$@"\n' "$c" "$T_TMP/ran" "$(type -P "$c")" \
                        >"$T_TMP/shims/$c"
                chmod +x "$T_TMP/shims/$c"
        done
        PATH=$T_TMP/shims:$PATH run_file 'a() { type -t rm mktemp >>'"$T_TMP"'/types; rm -f -- "$PWD/none"; echo $PWD >'"$T_TMP"'/dirs; }
t_suite_tmp; type -t rm mktemp >>'"$T_TMP"'/types
t_run a a; t_done'
        t_exit_is 0
        t_stdout_has "ok a"
        [ "$(<"$T_TMP/types")" = $'file\nfile\nfile\nfile' ] ||
                t_fail "rm and mktemp are not the commands on PATH: $(<"$T_TMP/types")"
        t_no_file "$(<"$T_TMP/dirs")"
        t_true grep -qxF "rm -f -- $(<"$T_TMP/dirs")/none" "$T_TMP/ran"
        t_false grep -q '^mktemp' "$T_TMP/ran"
}

# Ended cases' dirs are removed by one rm(1) for up to T_RM_BATCH of them, not one each: 20
# cases, two rm runs, and every dir gone when the suite ends.
case_dirs_removed_in_batches() {
        mkdir "$T_TMP/shims"
        printf '#!/bin/sh\necho "rm $*" >>%q\nexec %q "$@"\n' "$T_TMP/ran" "$(type -P rm)" \
                >"$T_TMP/shims/rm"
        chmod +x "$T_TMP/shims/rm"
        PATH=$T_TMP/shims:$PATH run_file 'a() { echo $PWD >>'"$T_TMP"'/dirs; }
for i in {1..20}; do t_run a$i a; done; t_done'
        t_exit_is 0
        t_stdout_has "# t: passed=20 failed=0 skipped=0"
        local d n=0
        while read -r d; do
                t_no_file "$d"
                n=$((n + 1))
        done <"$T_TMP/dirs"
        [ "$n" = 20 ] || t_fail "$n cases wrote their dir"
        # (the suite's watchdog removes its own dir, w.*, with a rm too, once it sees the
        # suite gone: before or after this line, as the machine's load has it)
        n=$(grep -c "^rm -rf -- $T_TMP/t\." "$T_TMP/ran")
        [ "$n" = 2 ] || t_fail "rm ran $n times for 20 cases: $(cat "$T_TMP/ran")"
}

# t_cmd ends a command still running after T_CMD_TIMEOUT seconds, with what it started,
# exits as timeout(1) does (124) and says why in its stderr; the caller's $! stays.
cmd_ended_at_timeout() {
        run_file 'a() { sleep 30 & local bg=$!; t_cmd sh -c "sleep 40.'"$T_UNIQ"' & exec sleep 41.'"$T_UNIQ"'"
echo "$T_RC $!" >'"$T_TMP"'/rc; [ "$!" = "$bg" ] || echo "\$! changed from $bg" >>'"$T_TMP"'/rc
cp "$T_ERR_FILE" '"$T_TMP"'/err; kill $bg; }
T_CMD_TIMEOUT=2; t_run a a; t_done'
        t_exit_is 0
        [[ $(<"$T_TMP/rc") == "124 "+([0-9]) ]] || t_fail "t_cmd: $(<"$T_TMP/rc")"
        t_true grep -q 'still running after 2 s (T_CMD_TIMEOUT), ended' "$T_TMP/err"
        gone() { [ -z "$(t_host_pids sleep "40.$T_UNIQ")$(t_host_pids sleep "41.$T_UNIQ")" ]; }
        t_wait_for gone || t_fail "the command's processes outlived it: $(t_host_pids sleep "40.$T_UNIQ")"
}

# T_CMD_TIMEOUT set for one command (`T_CMD_TIMEOUT=480 t_cmd ...`, as a bootstrap is) is
# that command's bound, longer or shorter than the suite's, as it is timeout(1)'s argument.
cmd_timeout_of_one_command() {
        run_file 'a() { T_CMD_TIMEOUT=6 t_cmd sleep 3; echo "long $T_RC" >>'"$T_TMP"'/rc
T_CMD_TIMEOUT=1 t_cmd sleep 6; echo "short $T_RC" >>'"$T_TMP"'/rc; }
T_CMD_TIMEOUT=2; t_run a a; t_done'
        t_exit_is 0
        [ "$(<"$T_TMP/rc")" = $'long 0\nshort 124' ] || t_fail "t_cmd's bounds: $(<"$T_TMP/rc")"
}

# Where bash's loadable builtins are, t_cmd starts no timeout(1) for a command (its bound
# is the suite's one watchdog), and the command leads a process group of its own, as under
# timeout(1).
cmd_without_timeout_process() {
        if [ ! -f /usr/lib/bash/setpgid ] || [ ! -f /usr/lib/bash/sleep ]; then
                t_skip "bash's loadable builtins (bash-builtins) are not installed"
        fi
        mkdir "$T_TMP/shims"
        printf '#!/bin/sh\necho "timeout $*" >>%q\nexec %q "$@"\n' "$T_TMP/ran" "$(type -P timeout)" \
                >"$T_TMP/shims/timeout"
        chmod +x "$T_TMP/shims/timeout"
        PATH=$T_TMP/shims:$PATH run_file 'a() { t_cmd sh -c "read -r p x x x g x </proc/\$\$/stat; echo \$p \$g"
t_stdout_is "$(<"$T_OUT_FILE")"; read -r p g <"$T_OUT_FILE"; [ "$p" = "$g" ] || t_fail "pid $p in group $g"; }
t_run a a; t_run b a; t_done'
        t_exit_is 0
        t_stdout_has "# t: passed=2 failed=0"
        t_no_file "$T_TMP/ran"
}

# A suite ended by a signal (tools/test.sh's bound) leaves no command of t_cmd's running:
# its watchdog ends them.
suite_killed_ends_its_commands() {
        local suite
        if [ ! -f /usr/lib/bash/setpgid ] || [ ! -f /usr/lib/bash/sleep ]; then
                t_skip "bash's loadable builtins (bash-builtins) are not installed"
        fi
        printf '. %q\na() { t_cmd sleep 50.%s; }\nt_run a a; t_done\n' "$LIB" "$T_UNIQ" >"$T_TMP/f.sh"
        TMPDIR=$T_TMP bash "$T_TMP/f.sh" </dev/null >/dev/null 2>&1 &
        suite=$!
        running() { [ -n "$(t_host_pids sleep "50.$T_UNIQ")" ]; }
        stopped() { ! running; }
        t_wait_for running || t_fail "the suite's command did not start"
        kill -TERM "$suite"
        wait "$suite"
        t_wait_for stopped || t_fail "the command outlived its suite: $(t_host_pids sleep "50.$T_UNIQ")"
}

# A suite's own temp dir (t_suite_tmp) is removed when the suite ends, after t_done or
# before it, and the cases see the same one.
suite_tmp_removed() {
        local end d
        for end in 't_done' 'exit 3'; do
                run_file 't_suite_tmp; touch "$T_SUITE_TMP/x"; echo "$T_SUITE_TMP" >'"$T_TMP"'/dirs
a() { [ -f "$T_SUITE_TMP/x" ] && echo "$T_SUITE_TMP" >>'"$T_TMP"'/dirs; }
t_run a a; '"$end"
                d=$(<"$T_TMP/dirs")
                [[ $d == /*$'\n'/* ]] || t_fail "the case did not see the suite's dir: $d"
                [ "${d%%$'\n'*}" = "${d#*$'\n'}" ] || t_fail "the case saw another dir: $d"
                t_no_file "${d%%$'\n'*}"
        done
        t_stdout_has "FAIL f.sh: stopped before t_done (exit 3)"
}

# A python3 on PATH that is a shim (a script that starts the interpreter, as pyenv's does)
# is not what the cases start: the interpreter's directory comes first.
python_not_through_a_shim() {
        mkdir "$T_TMP/shims"
        printf '#!/bin/sh\necho "shim $*" >>%q\nexec %q "$@"\n' "$T_TMP/shim.log" "$(command -v python3)" \
                >"$T_TMP/shims/python3"
        chmod +x "$T_TMP/shims/python3"
        PATH=$T_TMP/shims:$PATH run_file 'a() { python3 -c "print(6 * 7)" >'"$T_TMP"'/a; }
t_run a a; t_done'
        t_exit_is 0
        t_true grep -qx 42 "$T_TMP/a"
        # the shim may run once, to find the interpreter, but not for the case
        t_false grep -q 'print(6' "$T_TMP/shim.log"
}

# t_stdout_has, t_stderr_has and t_stdout_is read the file in the shell (no grep or cat per
# assertion): each answers as `grep -qF` and `$(cat)` do, on text, a NUL byte, bytes that
# are not UTF-8, no trailing newline, an empty file, and a string with a newline or none.
assertions_answer_as_grep() {
        local f want got s
        printf 'hello world\nfoo\n' >"$T_TMP/a"
        printf '' >"$T_TMP/e"
        printf 'x\0needle\n' >"$T_TMP/n"
        printf '\377\376bin needle\n' >"$T_TMP/b"
        printf 'no newline at end\n\n' >"$T_TMP/c"
        for f in a e n b c; do
                for s in hello 'world
foo' '' needle 'e*' 'd
zzz'; do
                        want=0 got=0
                        grep -qF -- "$s" "$T_TMP/$f" || want=1
                        T_OUT_FILE=$T_TMP/$f T_ERR_FILE=$T_TMP/$f
                        # a failing assertion ends the subshell; its message is not wanted
                        (t_stdout_has "$s") 2>/dev/null || got=1
                        [ "$got" = "$want" ] || t_fail "t_stdout_has '$s' on $f: $got, grep: $want"
                done
                want=0 got=0
                grep -qF needle "$T_TMP/$f" || want=1
                (t_stderr_has needle) 2>/dev/null || got=1
                [ "$got" = "$want" ] || t_fail "t_stderr_has on $f: $got, grep: $want"
                { s=$(cat "$T_TMP/$f"); } 2>/dev/null
                (t_stdout_is "$s") 2>/dev/null || t_fail "t_stdout_is on $f: not what \$(cat) reads"
                (t_stdout_is "$s.") 2>/dev/null && t_fail "t_stdout_is on $f: takes more than it holds"
        done
        return 0
}

# t_wait_for tries CMD until it succeeds, a tenth of a second apart, and gives up after 100
# tries, without a process between them (a `sleep` on PATH is never run and the caller's $!
# stays), leaving no descriptor open and none to CMD.
wait_for_retries() {
        local n=0 bg t0 us
        mkdir "$T_TMP/shims"
        printf '#!/bin/sh\necho "$*" >>%q\nexec /bin/sleep "$@"\n' "$T_TMP/sleeps" >"$T_TMP/shims/sleep"
        chmod +x "$T_TMP/shims/sleep"
        sleep 30 &
        bg=$!
        ls "/proc/$BASHPID/fd" >"$T_TMP/fds.before"
        tries() {
                n=$((n + 1))
                ls /proc/self/fd >"$T_TMP/fds.$n"
                [ "$n" = 5 ]
        }
        PATH=$T_TMP/shims:$PATH t_wait_for tries || t_fail "t_wait_for gave up before the 5th try"
        [ "$n" = 5 ] || t_fail "CMD ran $n times"
        [ "$!" = "$bg" ] || t_fail "t_wait_for changed \$! from $bg to $!"
        [ "$(<"$T_TMP/fds.1")" = "$(<"$T_TMP/fds.5")" ] ||
                t_fail "CMD got a descriptor: $(<"$T_TMP/fds.1") / $(<"$T_TMP/fds.5")"
        ls "/proc/$BASHPID/fd" >"$T_TMP/fds.after"
        [ "$(<"$T_TMP/fds.before")" = "$(<"$T_TMP/fds.after")" ] ||
                t_fail "a descriptor left open: $(<"$T_TMP/fds.before") / $(<"$T_TMP/fds.after")"
        t0=$EPOCHREALTIME
        PATH=$T_TMP/shims:$PATH t_wait_for false && t_fail "t_wait_for false succeeded"
        us=$((10#${EPOCHREALTIME//[.,]/} - 10#${t0//[.,]/}))
        # (a lower bound only: a loaded machine makes it longer, never shorter)
        [ "$us" -ge 9900000 ] || t_fail "t_wait_for gave up after $us us, not 100 tenths of a second"
        [ ! -e "$T_TMP/sleeps" ] || t_fail "t_wait_for ran sleep $(wc -l <"$T_TMP/sleeps") times"
        kill "$bg"
}

# A stress case's count: the short form unless make stress (RTN_TEST_STRESS=1), and the
# Python helpers are told which (T_STRESS); nothing else turns the long form on.
stress_forms() {
        local mode f='a() { echo "$(t_stress 5 20) $(sh -c "echo \$T_STRESS")" >&2; }
t_run a a; t_done'
        for mode in "" 1 0 yes; do
                printf '. %q\n%s\n' "$LIB" "$f" >"$T_TMP/f.sh"
                t_cmd env RTN_TEST_STRESS="$mode" TMPDIR="$T_TMP" bash "$T_TMP/f.sh"
                t_exit_is 0
                if [ "$mode" = 1 ]; then t_stderr_has "20 1"; else t_stderr_has "5 0"; fi
        done
}

t_run counts_pass_fail_skip counts_pass_fail_skip
t_run death_before_done_fails death_before_done_fails
t_run temp_dirs_removed temp_dirs_removed
t_run temp_dir_removed_when_rm_cannot temp_dir_removed_when_rm_cannot
t_run case_dirs_removed_in_batches case_dirs_removed_in_batches
t_run harness_runs_no_mktemp harness_runs_no_mktemp
t_run cmd_ended_at_timeout cmd_ended_at_timeout
t_run cmd_timeout_of_one_command cmd_timeout_of_one_command
t_run cmd_without_timeout_process cmd_without_timeout_process
t_run suite_killed_ends_its_commands suite_killed_ends_its_commands
t_run suite_tmp_removed suite_tmp_removed
t_run stress_forms stress_forms
t_run python_not_through_a_shim python_not_through_a_shim
t_run assertions_answer_as_grep assertions_answer_as_grep
t_run wait_for_retries wait_for_retries
t_done
