#!/bin/sh
# `make fuzz`: builds every fuzz/fuzz_*.c with clang's libFuzzer, ASan and UBSan into
# build-fuzz/ and runs each for FUZZ_SECONDS on a copy of its seed corpus; new inputs
# libFuzzer keeps are merged back into fuzz/corpus/<target>/ and crashes are left in
# build-fuzz/<target>-crashes/.
#
#   tools/fuzz.sh [SECONDS [TARGET...]]     (make fuzz FUZZ_SECONDS=60 FUZZ_RUN='TARGET...')
#
# The library is the GNUmakefile's librtn.a, built into build-fuzz/lib/ with coverage
# instrumentation (-fsanitize=fuzzer-no-link) and clang's warnings left as warnings (-Werror
# is the gcc build's); each target links what it uses from it. FUZZ_ARGS passes more
# libFuzzer options. The machine is often shared: run it under `nice -n 19`.
set -eu
seconds=${1:-${FUZZ_SECONDS:-60}}
[ $# -gt 0 ] && shift
cc=${FUZZ_CC:-clang}
out=build-fuzz
lib=$out/lib
targets=${*:-$(for f in fuzz/fuzz_*.c; do basename "$f" .c; done)}
mkdir -p "$out"
make -s O="$lib" CC="$cc" CFLAGS="-O1 -g" WARN="-Wall -Wextra -Wno-unused-parameter" \
        SANITIZE=fuzzer-no-link,address,undefined "$lib/librtn.a" "$lib/obj/runtime/sandbox/init_blob.o" >&2
cflags="-std=gnu17 -g -O1 -I. -I$lib/gen -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
libs="$lib/librtn.a $lib/obj/runtime/sandbox/init_blob.o $(pkg-config --libs libmnl)"
status=0
for t in $targets; do
        echo "== $t: building" >&2
        # shellcheck disable=SC2086
        $cc $cflags -o "$out/$t" "fuzz/$t.c" $libs
        mkdir -p "fuzz/corpus/$t" "$out/$t-work" "$out/$t-crashes"
        echo "== $t: fuzzing for ${seconds}s" >&2
        # shellcheck disable=SC2086
        if ! "$out/$t" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
                -artifact_prefix="$out/$t-crashes/" -print_final_stats=1 ${FUZZ_ARGS:-} \
                "$out/$t-work" "fuzz/corpus/$t" 2>"$out/$t.log"; then
                echo "== $t: FAILED, see $out/$t.log and $out/$t-crashes/" >&2
                status=1
        fi
        tail -n 12 "$out/$t.log" >&2
        # keep only inputs that add coverage to the committed corpus
        "$out/$t" -merge=1 "fuzz/corpus/$t" "$out/$t-work" 2>>"$out/$t.log" >/dev/null || true
done
exit $status
