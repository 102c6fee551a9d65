#!/bin/sh
# `make fuzz`: builds every fuzz/fuzz_*.c with clang's libFuzzer, ASan and UBSan into
# build-fuzz/ and runs each for FUZZ_SECONDS (first argument, default 60) on a copy of its
# seed corpus; new inputs libFuzzer keeps are merged back into fuzz/corpus/<target>/ and
# crashes are left in build-fuzz/<target>-crashes/. The targets only need common/ and mcp/,
# so those are compiled directly (no sandbox runtime in the fuzz binaries).
set -eu
seconds=${1:-${FUZZ_SECONDS:-60}}
cc=${FUZZ_CC:-clang}
out=build-fuzz
mkdir -p "$out"
cflags="-std=gnu17 -g -O1 -I. -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
srcs="$(ls common/*.c mcp/*.c)"
status=0
for f in fuzz/fuzz_*.c; do
        t=$(basename "$f" .c)
        echo "== $t: building" >&2
        # shellcheck disable=SC2086
        $cc $cflags -o "$out/$t" "$f" $srcs
        mkdir -p "fuzz/corpus/$t" "$out/$t-work" "$out/$t-crashes"
        echo "== $t: fuzzing for ${seconds}s" >&2
        if ! "$out/$t" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
                -artifact_prefix="$out/$t-crashes/" -print_final_stats=1 \
                "$out/$t-work" "fuzz/corpus/$t" 2>"$out/$t.log"; then
                echo "== $t: FAILED, see $out/$t.log and $out/$t-crashes/" >&2
                status=1
        fi
        tail -n 12 "$out/$t.log" >&2
        # keep only inputs that add coverage to the committed corpus
        "$out/$t" -merge=1 "fuzz/corpus/$t" "$out/$t-work" 2>>"$out/$t.log" >/dev/null || true
done
exit $status
