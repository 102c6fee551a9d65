#!/usr/bin/env bash
# What `make test` runs. In order: the layer check (tools/check-layers.sh), the terminal
# check (tools/check-term.sh); install missing
# dependencies (tools/install-deps.sh, then the MCP client's npm packages); build normally
# (build/: rtn and what the shell suites use, `make all tests-shell`), start the streams of
# shell suites, and build with SANITIZE=address,undefined (build-san/: rtn, the unit binaries
# and fuzz replays, `make all tests-unit`) while they run; then the other test parts:
#   units  every unit binary build-san/tests/unit-*
#   fuzz   every fuzz corpus replay build-san/fuzz/*-replay over fuzz/corpus/<target>/
#   shell  the shell suites tests/integration/*.sh and tests/security/*.sh against build/rtn
#   san    the rtn serve and store suites again against build-san/rtn
# As root they run again as two unprivileged users, rtntest (no subordinate id range) and
# rtnsub (with one), made by tools/test-users.sh. The tree may sit where those users cannot
# enter, so what they execute is first copied to a world-readable temp dir, and each run gets
# its own HOME, TMPDIR, XDG_RUNTIME_DIR and RTN_DATA_DIR (each case of a suite has its own
# data dir as well, tests/lib.sh). Five streams (root's unit and fuzz, root's shell suites,
# root's sanitized suites, rtntest's and rtnsub's) run at once; a user's stream runs its
# shell suites first and its unit and sanitized parts once build-san/ is made;
# RTN_TEST_STREAMS=serial builds both trees first and runs the streams one after another. Within a stream the shell suites run RTN_TEST_LANES (2) at a
# time, longest first (SLOW_FIRST), each with a TMPDIR and XDG_RUNTIME_DIR of its own; a
# suite marked "# test.sh: alone" (it fills a per-user count on purpose) runs by itself
# after the others. A user's suites stay in that user's one stream: they share its per-user
# kernel counts. Each suite's and stream's output is printed whole when it ends, then the
# wall time of every stream, the ten slowest suites by wall time and by CPU time (what each
# suite and its reaped descendants used), and each stream's CPU. Counts come
# from each runner (criterion's TAP report, the `# t:` line of tests/lib.sh); the last line
# is the total: `N passed, N failed, N skipped`. Exit 0 only when nothing failed.
# RTN_TEST_STRESS=1 (make stress) runs the race and repeat cases in their long forms
# (t_stress, tests/lib.sh) in every stream.
#
#   tools/test.sh [--no-deps] [--no-build] [--no-unpriv]
#   tools/test.sh --suites PART...   (internal: run these parts from this tree as is)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

PASSED=0
FAILED=0
SKIPPED=0
FAILURES=()
JOBS=${RTN_TEST_JOBS:-2}
SUITE_TIMEOUT=${RTN_SUITE_TIMEOUT:-900}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# A section of the run's own steps carries the seconds since the run began (where the time
# before the streams went); a stream's sections (--suites) do not.
SECTION_AT=
section() {
        printf '\n==== %s%s\n' "$*" "${SECTION_AT:+ (at $SECONDS s)}"
}

add() { # passed failed skipped [what-failed]
        PASSED=$((PASSED + $1))
        FAILED=$((FAILED + $2))
        SKIPPED=$((SKIPPED + $3))
        [ "$2" -gt 0 ] && FAILURES+=("${4:-?}")
        return 0
}

summary() {
        echo
        if [ ${#FAILURES[@]} -gt 0 ]; then
                echo "failed in: ${FAILURES[*]}"
        fi
        printf '%d passed, %d failed, %d skipped\n' "$PASSED" "$FAILED" "$SKIPPED"
}

# A step everything after depends on failed: report and stop.
abort() {
        echo "FAIL $*"
        add 0 1 0 "$*"
        summary
        exit 1
}

# Runs CMD... in a subshell and writes to FILE the CPU seconds (user + system) of everything
# it waited for: CMD and its descendants that were reaped in turn (a sandbox's processes by
# rtn), not a daemon that outlived its parent. Returns CMD's exit code.
with_cpu() { # file cmd...
        local f=$1
        shift
        (
                rc=0
                "$@" || rc=$?
                # not in a pipe: a forked shell's `times` counts nothing. Its second line is
                # the children's "XmY.YYYs XmY.YYYs" (user, system), added up to the nearest
                # second by the shell, where an awk and a mv were two processes a suite.
                local t ms=0 LC_ALL=C
                times >"$f"
                { read -r t && read -r -a t; } <"$f"
                for t in "${t[@]}"; do
                        [[ $t =~ ^([0-9]+)m([0-9]+)[.,]?([0-9]*)s$ ]] || continue
                        t=${BASH_REMATCH[3]}000
                        ms=$((ms + 10#${BASH_REMATCH[1]} * 60000 + 10#${BASH_REMATCH[2]} * 1000 + 10#${t:0:3}))
                done
                echo $(((ms + 500) / 1000)) >"$f"
                exit $rc
        )
}

# One criterion binary. Its TAP report (criterion --tap) gives per-test results; skipped
# tests are "ok ... # SKIP". A non-zero exit with no failing test (a crash of the runner
# itself) still counts as one failure.
run_unit() {
        local bin=$1 name tap out rc=0 t0=$SECONDS
        name=$(basename "$bin")
        tap=$(mktemp)
        echo "-- $name"
        out=$(mktemp)
        with_cpu "$out.cpu" timeout -k 10 "$SUITE_TIMEOUT" "$bin" --tap="$tap" >"$out" 2>&1 || rc=$?
        cat "$out"
        local p f s
        s=$(grep -c '^ok .*# SKIP' "$tap")
        p=$(($(grep -c '^ok ' "$tap") - s))
        f=$(grep -c '^not ok' "$tap")
        grep '^ok .*# SKIP' "$tap" | sed 's/^/   /'
        rm -f "$tap"
        # A leak or undefined behaviour reported from a test's process fails the binary even
        # when every assertion held, and so does a leak check that could not run (a test's
        # own seccomp filter refusing LeakSanitizer's thread). (An expected fault, as the ia32
        # probe's SIGSEGV in its own child, is not a leak report.)
        if grep -q -e 'ERROR: LeakSanitizer' -e 'LeakSanitizer has encountered a fatal error' \
                -e 'runtime error:' "$out"; then
                echo "FAIL $name: sanitizer reports in its output"
                f=$((f + 1))
        fi
        echo "# cpu: $(cat "$out.cpu") $name"
        rm -f "$out" "$out.cpu"
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
                echo "FAIL $name exited $rc without a failing test"
                f=1
        fi
        if [ $((p + f + s)) = 0 ]; then
                echo "FAIL $name ran no test"
                f=1
        fi
        echo "# time: $((SECONDS - t0)) $name"
        add "$p" "$f" "$s" "$name"
}

# One fuzz target's corpus replayed through its replay binary (fuzz/replay.c's main takes
# the input files as arguments). Counts one test per target.
run_fuzz_replay() {
        local bin=$1 target dir=
        target=$(basename "$bin" -replay)
        for d in "fuzz/corpus/$target" "fuzz/corpus/${target#fuzz_}"; do
                [ -d "$d" ] && dir=$d && break
        done
        if [ -z "$dir" ] || [ -z "$(find "$dir" -type f -print -quit)" ]; then
                echo "skip $target: no corpus in fuzz/corpus/$target"
                add 0 0 1
                return
        fi
        local n rc=0 err
        n=$(find "$dir" -type f | wc -l)
        err=$(mktemp)
        find "$dir" -type f -print0 | sort -z |
                timeout -k 10 "$SUITE_TIMEOUT" xargs -0 "$bin" >/dev/null 2>"$err" || rc=$?
        if [ "$rc" = 0 ]; then
                echo "ok $target: $n corpus files"
                add 1 0 0
        else
                echo "FAIL $target: replay exited $rc"
                tail -n 30 "$err"
                add 0 1 0 "fuzz:$target"
        fi
        rm -f "$err"
}

# One shell suite using tests/lib.sh, run into LOG: "-- FILE", its output, then its wall
# time; its exit code goes to LOG.rc.
# A suite whose head has the line "# test.sh: timeout N" (it does minutes of work on purpose,
# e.g. containers) gets N seconds instead of RTN_SUITE_TIMEOUT's, when that is less.
# SUITE_LIMIT: that suite's timeout; SUITE_ALONE: set when its head has "# test.sh: alone".
# Read by the shell: a head, a sed and a grep were processes a suite.
suite_head() { # file
        local line i=0 re='^# test.sh: timeout ([0-9]+)' n=''
        SUITE_ALONE=
        while [ $i -lt 30 ] && IFS= read -r line; do
                i=$((i + 1))
                [[ -z $n && $line =~ $re ]] && n=$((10#${BASH_REMATCH[1]}))
                [[ $line == "# test.sh: alone"* ]] && SUITE_ALONE=1
        done <"$1"
        SUITE_LIMIT=$SUITE_TIMEOUT
        [ -n "$n" ] && [ "$n" -gt "$SUITE_TIMEOUT" ] && SUITE_LIMIT=$n
        return 0
}

suite_run() { # file log
        local t0=$SECONDS rc=0 cpu='?'
        suite_head "$1"
        echo "-- $1" >"$2"
        with_cpu "$2.cpu" timeout -k 10 "$SUITE_LIMIT" bash "$1" </dev/null >>"$2" 2>&1 || rc=$?
        echo "# time: $((SECONDS - t0)) $1" >>"$2"
        read -r cpu <"$2.cpu"
        echo "# cpu: $cpu $1" >>"$2"
        echo "$rc" >"$2.rc"
}

# Prints a suite's LOG and adds up its counts: its last "# t: passed=N failed=N skipped=N"
# line. No such line, or a non-zero exit with no failure counted, is one failure.
suite_result() { # file log
        local file=$1 rc='?' line l p f s
        local re='passed=([0-9]+) failed=([0-9]+) skipped=([0-9]+)'
        { read -r rc <"$2.rc"; } 2>/dev/null
        cat "$2"
        # its last result line, read by the shell (a grep and a tail were two processes)
        while IFS= read -r l || [ -n "$l" ]; do
                [[ $l == "# t: passed="* ]] && line=$l
        done <"$2"
        rm -f "$2" "$2.rc" "$2.cpu"
        # timeout(1)'s code: the suite's own lines say only where it stopped
        if [ "$rc" = 124 ]; then
                suite_head "$file"
                echo "FAIL $file: still running after $SUITE_LIMIT s (RTN_SUITE_TIMEOUT, or its \"# test.sh: timeout\" line), ended"
        fi
        if [ -z "${line:-}" ] || ! [[ $line =~ $re ]]; then
                echo "FAIL $file: exited $rc without a result line"
                add 0 1 0 "$file"
                return
        fi
        p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
                echo "FAIL $file: exited $rc"
                f=1
        fi
        add "$p" "$f" "$s" "$file"
}

run_suite() {
        local log
        log=$(mktemp)
        suite_run "$1" "$log"
        suite_result "$1" "$log"
}

# The suites that take longest (about a minute or more, then half a minute), started first
# so that no lane is left with one of them at the end. Ordering only: a name not here runs
# after them, in the order given, and a name here that is gone is passed over.
SLOW_FIRST=(containers provision http_tools serve_modern serve_http store_cli cli_ps
        http_lockout user gitconf undo docs_tools secrets trusted apply store_live serve_wire
        enter cli_completion)

slow_first() { # file...
        local n f b
        for n in "${SLOW_FIRST[@]}"; do
                for f in "$@"; do
                        b=${f##*/}
                        [ "${b%.sh}" = "$n" ] && echo "$f"
                done
        done
        for f in "$@"; do
                b=${f##*/}
                [[ " ${SLOW_FIRST[*]} " == *" ${b%.sh} "* ]] || echo "$f"
        done
}

# Runs shell suites $LANES at a time, each with a TMPDIR and an XDG_RUNTIME_DIR of its own
# (a sandbox of one suite is not another's to list), longest first, printing each one's
# output whole when it ends. A suite whose head has the line "# test.sh: alone" fills a
# per-user count on purpose (a fork bomb, a kernel budget): it runs after the others, by
# itself, as every suite does with RTN_TEST_LANES=1.
LANES=${RTN_TEST_LANES:-2}
# Waits for one suite of run_suites' lanes to end and adds it up.
reap_suite() {
        local pid
        wait -n -p pid
        suite_result "${file_of[$pid]}" "$dir/$pid.log"
        rm -rf "${lane_of[$pid]}" 2>/dev/null
        unset "file_of[$pid]" "lane_of[$pid]"
}

run_suites() { # file...
        local f alone=() pool=() dir
        for f in "$@"; do
                [ -f "$f" ] || continue
                suite_head "$f"
                if [ "$LANES" -gt 1 ] && [ -z "$SUITE_ALONE" ]; then
                        pool+=("$f")
                else
                        alone+=("$f")
                fi
        done
        dir=$(mktemp -d) || abort "mktemp"
        local -A file_of=() lane_of=()
        local pid lane
        for f in $(slow_first "${pool[@]}"); do
                [ ${#file_of[@]} -ge "$LANES" ] && reap_suite
                lane=$(mktemp -d "${TMPDIR:-/tmp}/l.XXXXXX") || abort "mktemp"
                mkdir "$lane/tmp" "$lane/run"
                chmod --reference="${TMPDIR:-/tmp}" "$lane/tmp"
                chmod 755 "$lane"
                chmod 700 "$lane/run"
                (
                        export TMPDIR=$lane/tmp XDG_RUNTIME_DIR=$lane/run
                        suite_run "$f" "$dir/$BASHPID.log"
                ) &
                file_of[$!]=$f
                lane_of[$!]=$lane
        done
        while [ ${#file_of[@]} -gt 0 ]; do
                reap_suite
        done
        rm -rf "$dir"
        for f in "${alone[@]}"; do
                run_suite "$f"
        done
}

run_units() {
        local b found=
        for b in build-san/tests/unit-*; do
                [ -x "$b" ] || continue
                found=1
                run_unit "$b"
        done
        [ -n "$found" ] || abort "no unit test binaries in build-san/tests"
}

run_shell_suites() {
        export RTN=$ROOT/build/rtn T_BIN=$ROOT/build/tests/bin
        run_suites tests/integration/*.sh tests/security/*.sh
}

# The rtn serve and store suites again against the sanitized rtn (build-san/rtn): an ASan or
# UBSan report from any rtn process fails the section, even when the suite's own checks pass
# (a leak at exit does not change what a client sees). Every case runs here too; a setup
# step repeated many times that is not under test uses build/rtn (T_RTN_SETUP, tests/lib.sh).
run_sanitized_suites() {
        local f logs saved_rtn=${RTN-} saved_bin=${T_BIN-} saved_asan=${ASAN_OPTIONS-} saved_ubsan=${UBSAN_OPTIONS-}
        logs=$(mktemp -d)
        export RTN=$ROOT/build-san/rtn T_BIN=$ROOT/build/tests/bin T_RTN_SETUP=$ROOT/build/rtn
        export ASAN_OPTIONS="log_path=$logs/asan" UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1"
        run_suites tests/integration/serve_wire.sh tests/integration/serve_e2e.sh \
                tests/integration/serve_files.sh tests/integration/store_cli.sh \
                tests/integration/serve_workspace.sh tests/integration/workspace_overlay.sh \
                tests/integration/exec_undo.sh
        export RTN=$saved_rtn T_BIN=$saved_bin ASAN_OPTIONS=$saved_asan UBSAN_OPTIONS=$saved_ubsan
        unset T_RTN_SETUP
        if compgen -G "$logs/*san*" >/dev/null; then
                echo "FAIL sanitizer reports from build-san/rtn:"
                cat "$logs"/*san* | head -n 80
                add 0 1 0 "sanitizers"
        fi
        rm -rf "$logs"
}

run_fuzz_replays() {
        local b
        for b in build-san/fuzz/*-replay; do
                [ -x "$b" ] && run_fuzz_replay "$b"
        done
}

# A stream started before the sanitized build ended (RTN_TEST_SAN_READY names the mark
# stage_san writes) waits for it; false when it failed.
await_san() {
        [ -n "${RTN_TEST_SAN_READY:-}" ] || return 0
        while [ ! -e "$RTN_TEST_SAN_READY" ]; do
                sleep 2
        done
        [ "$(cat "$RTN_TEST_SAN_READY")" = ok ]
}

# --suites PART...: one stream, run from this tree as whoever runs it. Its last lines carry
# what the stream's starter adds up: the totals and the names of what failed.
if [ "${1:-}" = --suites ]; then
        shift
        echo "as $(id -un) (uid $(id -u)) in $ROOT"
        for part in "$@"; do
                case $part in
                units | fuzz | san)
                        if ! await_san; then
                                echo "FAIL $part: $(cat "$RTN_TEST_SAN_READY")"
                                add 0 1 0 "$part"
                                continue
                        fi
                        ;;
                esac
                case $part in
                units) section "unit (build-san)" && run_units ;;
                fuzz) section "fuzz corpus replay (build-san)" && run_fuzz_replays ;;
                shell) section "integration and security (build/rtn)" && run_shell_suites ;;
                san) section "rtn serve and store suites (build-san/rtn)" && run_sanitized_suites ;;
                *) abort "unknown part $part" ;;
                esac
        done
        printf '# failed in: %s\n' "${FAILURES[*]}"
        printf '# totals: passed=%d failed=%d skipped=%d\n' "$PASSED" "$FAILED" "$SKIPPED"
        [ "$FAILED" = 0 ]
        exit
fi

SECTION_AT=1
DO_DEPS=1 DO_BUILD=1 DO_UNPRIV=1
for a in "$@"; do
        case $a in
        --no-deps) DO_DEPS= ;;
        --no-build) DO_BUILD= ;;
        --no-unpriv) DO_UNPRIV= ;;
        *)
                echo "usage: tools/test.sh [--no-deps] [--no-build] [--no-unpriv]" >&2
                exit 2
                ;;
        esac
done

install_node_deps() {
        local d=tests/mcp-client
        [ -f "$d/package-lock.json" ] || return 0
        # npm ci wipes node_modules and reinstalls; skip it when the tree already matches.
        if [ -f "$d/node_modules/.package-lock.json" ] &&
                [ "$d/node_modules/.package-lock.json" -nt "$d/package-lock.json" ]; then
                return 0
        fi
        (cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
}

if [ -n "$DO_DEPS" ]; then
        section "dependencies"
        tools/install-deps.sh || abort "tools/install-deps.sh"
        install_node_deps || abort "npm ci in tests/mcp-client"
        # The conformance suite and Node 22, as root, fetched while build/ compiles (on a
        # fresh machine half a minute, mostly the registry's) and complete before any stream
        # starts (conformance_installed): the unprivileged users use root's install
        # (serve_conformance.sh); where npm cannot, that suite skips.
        if [ "$(id -u)" = 0 ]; then
                CONFORMANCE_LOG=$(mktemp) || abort "mktemp"
                tests/mcp-client/conformance-install.sh /var/tmp/rtn-conformance-0 \
                        </dev/null >"$CONFORMANCE_LOG" 2>&1 &
                CONFORMANCE_PID=$!
        fi
fi

conformance_installed() {
        [ -n "${CONFORMANCE_PID:-}" ] || return 0
        local rc=0
        wait "$CONFORMANCE_PID" || rc=$?
        CONFORMANCE_PID=
        cat "$CONFORMANCE_LOG"
        rm -f "$CONFORMANCE_LOG"
        [ "$rc" = 0 ] ||
                echo "note: the conformance suite could not be installed; serve_conformance.sh will skip"
}

section "layers (tools/check-layers.sh)"
if tools/check-layers.sh; then add 1 0 0; else add 0 1 0 "check-layers"; fi
section "terminal text (tools/check-term.sh)"
if tools/check-term.sh; then add 1 0 0; else add 0 1 0 "check-term"; fi

case ${RTN_TEST_STREAMS:-all} in
all) STREAM_MODE=all ;;
serial) STREAM_MODE=serial ;;
*) abort "RTN_TEST_STREAMS=${RTN_TEST_STREAMS} is not all or serial" ;;
esac

# The sanitized build, into LOG; its exit code into LOG.rc.
build_san() { # log
        local rc=0
        make -j"$JOBS" SANITIZE=address,undefined O=build-san all tests-unit >"$1" 2>&1 || rc=$?
        echo "$rc" >"$1.rc"
}

if [ -n "$DO_BUILD" ]; then
        section "build (build/)"
        make -j"$JOBS" O=build all tests-shell || abort "build"
        # With the streams one after another, nothing runs beside the sanitized build.
        if [ "$STREAM_MODE" = serial ]; then
                section "build (build-san/, SANITIZE=address,undefined)"
                make -j"$JOBS" SANITIZE=address,undefined O=build-san all tests-unit || abort "sanitized build"
        fi
fi
[ -x build/rtn ] || abort "build/rtn missing"
conformance_installed

STAGE=
LOGS=
USER_DIRS=()
cleanup() {
        [ -n "$STAGE" ] && rm -rf "$STAGE"
        [ -n "$LOGS" ] && rm -rf "$LOGS"
        local d
        for d in "${USER_DIRS[@]}"; do rm -rf "$d"; done
}
trap cleanup EXIT

# Copies what the unprivileged runs execute to a world-readable temp dir: the built binaries
# and helpers, the shell suites with their library and the MCP client, and the man page,
# completions, docs and manifests the CLI and doc suites check against rtn. The sanitized
# rtn and unit binaries follow when they are built (stage_san).
stage_tree() {
        STAGE=$(mktemp -d /tmp/rtn-test-stage.XXXXXX) || return 1
        mkdir -p "$STAGE/tools" "$STAGE/docs" "$STAGE/build/tests" "$STAGE/build-san/tests" ||
                return 1
        cp tools/test.sh "$STAGE/tools/" &&
                cp -a tools/completion "$STAGE/tools/" &&
                cp docs/rtn.1 docs/*.md "$STAGE/docs/" && cp README.md "$STAGE/" &&
                cp -a deploy "$STAGE/" &&
                cp -a tests "$STAGE/" &&
                cp build/rtn "$STAGE/build/" || return 1
        [ -f build/rtn-init ] && cp build/rtn-init "$STAGE/build/"
        [ -d build/tests/bin ] && cp -a build/tests/bin "$STAGE/build/tests/"
        [ -f build/tools/bench ] && mkdir -p "$STAGE/build/tools" && cp build/tools/bench "$STAGE/build/tools/"
        chmod -R a+rX,go-w "$STAGE"
}

# The sanitized build's part of the staged copy, then its ready mark (ok, or why not), which
# the users' streams wait for before their unit and sanitized parts (await_san).
stage_san() { # ok|why-not
        local why=$1
        if [ "$why" = ok ]; then
                { cp build-san/rtn "$STAGE/build-san/" &&
                        cp build-san/tests/unit-* "$STAGE/build-san/tests/" &&
                        chmod -R a+rX,go-w "$STAGE/build-san"; } || why="staging build-san failed"
        fi
        echo "$why" >"$STAGE/build-san/ready.tmp" && chmod a+r "$STAGE/build-san/ready.tmp" &&
                mv "$STAGE/build-san/ready.tmp" "$STAGE/build-san/ready"
}

# Every stream's PATH: the system's directories, as a user's login has them. Not the caller's:
# a version manager's shims there (pyenv's python3 is a bash script that costs ten times
# the interpreter's start) would make root's streams test other tools than the users' do.
STREAM_PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin

# One stream as an unprivileged user, from the staged copy, with a HOME of its own.
as_user() { # user part...
        local user=$1 home
        shift
        home=$(mktemp -d /tmp/rtn-test-home.XXXXXX) || return 1
        mkdir -p "$home/tmp" "$home/data" "$home/run"
        chown -R "$user:$user" "$home"
        chmod 700 "$home" "$home/run"
        echo "$home" >>"$LOGS/homes"
        cd "$STAGE" && setpriv --reuid="$user" --regid="$user" --init-groups -- \
                env -i PATH="$STREAM_PATH" LANG=C.UTF-8 \
                USER="$user" LOGNAME="$user" HOME="$home" TMPDIR="$home/tmp" \
                XDG_RUNTIME_DIR="$home/run" RTN_DATA_DIR="$home/data" \
                UBSAN_OPTIONS="$UBSAN_OPTIONS" RTN_SUITE_TIMEOUT="$SUITE_TIMEOUT" \
                RTN_TEST_LANES="$LANES" RTN_TEST_STRESS="${RTN_TEST_STRESS:-}" \
                RTN_TEST_SAN_READY="$STAGE/build-san/ready" \
                bash "$STAGE/tools/test.sh" --suites "$@"
}

# One stream as root, from the tree, with a TMPDIR and XDG_RUNTIME_DIR of its own (rtn ps
# lists the sandboxes of one runtime dir: another stream's are not this one's to see).
as_root() { # part...
        local home
        home=$(mktemp -d /tmp/rtn-test-home.XXXXXX) || return 1
        mkdir -p "$home/tmp" "$home/run"
        # TMPDIR as /tmp is: root's Landlock-mode commands run as an unowned uid
        # (RT_LANDLOCK_ROOT_UID) and must reach the temp dirs rtn makes there.
        chmod 755 "$home"
        chmod 1777 "$home/tmp"
        chmod 700 "$home/run"
        echo "$home" >>"$LOGS/homes"
        TMPDIR="$home/tmp" XDG_RUNTIME_DIR="$home/run" PATH=$STREAM_PATH \
                bash tools/test.sh --suites "$@"
}

STREAMS=()
declare -A STREAM_PID STREAM_START STREAM_TIME STREAM_RC
# start_stream NAME CMD...: runs CMD in the background, its output to $LOGS/NAME.
start_stream() {
        local name=$1
        shift
        STREAMS+=("$name")
        STREAM_START[$name]=$(date +%s)
        # its own end time: the streams are waited for in turn, not in the order they end
        {
                "$@"
                local rc=$?
                date +%s >"$LOGS/$name.end"
                exit $rc
        } >"$LOGS/$name" 2>&1 </dev/null &
        STREAM_PID[$name]=$!
        [ "$STREAM_MODE" = serial ] || return 0
        local rc=0
        wait "${STREAM_PID[$name]}" || rc=$?
        STREAM_RC[$name]=$rc
}

# The ten largest "# time: N what" or "# cpu: N what" lines of every stream, with a heading.
slowest() { # time|cpu heading
        local name
        echo "$2"
        for name in "${STREAMS[@]}"; do
                sed -n "s|^# $1: \([0-9]*\) \(.*\)|\1 $name:\2|p" "$LOGS/$name"
        done | sort -rn | head -n 10 | while read -r t what; do printf '%6d s  %s\n' "$t" "$what"; done
}

# Waits for every stream, prints each one's output whole, then adds up its counts.
finish_streams() {
        local name rc line p f s
        for name in "${STREAMS[@]}"; do
                rc=${STREAM_RC[$name]:-}
                if [ -z "$rc" ]; then
                        rc=0
                        wait "${STREAM_PID[$name]}" || rc=$?
                fi
                STREAM_TIME[$name]=$(($(cat "$LOGS/$name.end" 2>/dev/null || date +%s) - ${STREAM_START[$name]}))
                section "$name (${STREAM_TIME[$name]} s)"
                cat "$LOGS/$name"
                line=$(grep '^# totals: passed=' "$LOGS/$name" | tail -n 1)
                if [ -z "$line" ]; then
                        echo "FAIL stream $name: exited $rc without totals"
                        add 0 1 0 "$name"
                        continue
                fi
                read -r p f s < <(sed -E 's/.*passed=([0-9]+) failed=([0-9]+) skipped=([0-9]+).*/\1 \2 \3/' <<<"$line")
                [ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
                add "$p" "$f" "$s" "$(grep '^# failed in: ' "$LOGS/$name" | tail -n 1 | cut -c14- | sed "s|[^ ][^ ]*|$name:&|g")"
        done
        section "wall time"
        for name in "${STREAMS[@]}"; do
                printf '%6d s  %s\n' "${STREAM_TIME[$name]}" "$name"
        done
        slowest time "the ten slowest by wall time:"
        slowest cpu "the ten slowest by CPU time (user + system, seconds of one core):"
        echo "CPU of each stream's suites:"
        for name in "${STREAMS[@]}"; do
                printf '%6d s  %s\n' "$(sed -n 's|^# cpu: \([0-9]*\) .*|\1|p' "$LOGS/$name" |
                        awk '{ t += $1 } END { print t + 0 }')" "$name"
        done
        echo "cpu (user, system) of this script, then of everything it waited for:"
        times
}

LOGS=$(mktemp -d /tmp/rtn-test-logs.XXXXXX) || abort "mktemp"
chmod 755 "$LOGS"
# The shell suites against build/rtn start while the sanitized build compiles: root's, and
# each user's, whose unit and sanitized parts come after and wait for it.
start_stream "root: integration and security" as_root shell
if [ -n "$DO_UNPRIV" ]; then
        if [ "$(id -u)" != 0 ]; then
                section "unprivileged runs: skipped (need root to switch users)"
                add 0 0 1
        else
                tools/test-users.sh || abort "tools/test-users.sh"
                stage_tree || abort "staging the tests in a world-readable temp dir"
                [ "$STREAM_MODE" = serial ] && stage_san ok
                # One stream per user: its suites share the user's per-user kernel counts
                # (processes, user namespaces), which a suite's fork bomb or budget test
                # fills on purpose.
                for u in rtntest rtnsub; do
                        start_stream "$u" as_user "$u" shell units san
                done
        fi
fi
SAN_OK=ok
if [ -n "$DO_BUILD" ] && [ "$STREAM_MODE" != serial ]; then
        section "build (build-san/, SANITIZE=address,undefined)"
        build_san "$LOGS/build-san"
        cat "$LOGS/build-san"
        [ "$(cat "$LOGS/build-san.rc")" = 0 ] || SAN_OK="the sanitized build failed"
fi
[ -n "$STAGE" ] && [ ! -e "$STAGE/build-san/ready" ] && stage_san "$SAN_OK"
if [ "$SAN_OK" = ok ]; then
        start_stream "root: unit and fuzz" as_root units fuzz
        start_stream "root: sanitized rtn" as_root san
else
        echo "FAIL $SAN_OK: no unit, fuzz or sanitized suites"
        add 0 1 0 "sanitized build"
fi
finish_streams
if [ -f "$LOGS/homes" ]; then
        while read -r d; do USER_DIRS+=("$d"); done <"$LOGS/homes"
fi

summary
[ "$FAILED" = 0 ]
