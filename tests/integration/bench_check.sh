#!/usr/bin/env bash
# tools/bench --check-against FILE --result FILE: the regression guard over the ratios
# docs/benchmarks.md records ("Recorded ratios"), fed a recorded page and a synthetic result,
# so nothing is timed and nothing runs a sandbox. A ratio that moved by more than 15 %
# either way is named and makes the exit status 1; within 15 % it is 0; a key's last line in
# the log is the one compared; only ```ratios fences count (a table or prose beside them
# never passes for a ratio); an unreadable file or one with no ratio lines is 2. The repository's own page must stay readable this way.
. "$(dirname "$0")/../lib.sh"

: "${BENCH:=$T_ROOT/build/tools/bench}"

need_bench() {
        [ -x "$BENCH" ] || t_fail "no $BENCH (make tests builds it)"
}

# A page with prose, another fence and two ratios blocks; exec_vs_bwrap is recorded twice.
recorded() {
        cat >page.md <<'EOF'
# Benchmarks

exec_vs_bwrap 9.99 notthis  (prose that looks like a line)

```
exec_vs_spawn 50.0 notthis  (a fence of another kind)
```

```ratios
# key                 value  commit   day
exec_vs_bwrap          2.00  aaaaaaa  2026-12-01  first
exec_vs_spawn          7.00  aaaaaaa  2026-12-01
density_mib            1.00  aaaaaaa  2026-12-01
```

Later:

```ratios
exec_vs_bwrap          1.00  bbbbbbb  2026-12-02  the last line of a key counts
```
EOF
}

# result KEY=VALUE...: a result as --lines prints it, after a table that must not count.
result() {
        printf 'measurement    median\nsandbox_fork 10 MB / cold  0.50  <= 1.5 met\n\n```ratios\n' >now.txt
        local kv
        for kv in "$@"; do
                printf '%-24s %s  ccccccc  2026-12-03\n' "${kv%%=*}" "${kv#*=}" >>now.txt
        done
        printf '```\n' >>now.txt
}

check() {
        t_cmd "$BENCH" --check-against page.md --result now.txt
}

within_tolerance() {
        need_bench
        recorded
        result exec_vs_bwrap=1.14 exec_vs_spawn=6.00 density_mib=0.86
        check
        t_exit_is 0
        t_stdout_has "0 of 3 recorded lines moved"
        if grep -q MOVED "$T_OUT_FILE"; then t_fail "a line within 15 % was marked: $(cat "$T_OUT_FILE")"; fi
}

worse_is_named() {
        need_bench
        recorded
        result exec_vs_bwrap=1.16 exec_vs_spawn=7.00 density_mib=1.00
        check
        t_exit_is 1
        t_true grep -q 'exec_vs_bwrap .*MOVED (worse)' "$T_OUT_FILE"
        t_stdout_has "1 of 3 recorded lines moved"
}

better_is_named() {
        need_bench
        recorded
        result exec_vs_bwrap=1.00 exec_vs_spawn=7.00 density_mib=0.80
        check
        t_exit_is 1
        t_true grep -q 'density_mib .*MOVED (better)' "$T_OUT_FILE"
}

# exec_vs_bwrap's first line (2.00) is superseded by 1.00: 2.00 now is a move.
last_line_counts() {
        need_bench
        recorded
        result exec_vs_bwrap=2.00
        check
        t_exit_is 1
        t_true grep -q 'exec_vs_bwrap .*1.00 bbbbbbb .*MOVED (worse)' "$T_OUT_FILE"
}

# 9.99 in the prose and 50.0 in the plain fence are not recorded values.
only_ratios_fences() {
        need_bench
        recorded
        result exec_vs_spawn=7.00
        check
        t_exit_is 0
        if grep -q -e notthis -e 9.99 -e 50.0 -e '^sandbox_fork ' "$T_OUT_FILE"; then
                t_fail "a line outside a ratios fence was read: $(cat "$T_OUT_FILE")"
        fi
}

# Several ratios moved at once, some not measured in this run, one new: each said.
several_and_missing() {
        need_bench
        recorded
        result exec_vs_bwrap=3.00 exec_vs_spawn=20.0 fork_10mb_vs_cold=1.20
        check
        t_exit_is 1
        t_stdout_has "2 of 3 recorded lines moved"
        t_true grep -q 'exec_vs_spawn .*MOVED (worse)' "$T_OUT_FILE"
        t_true grep -q '^density_mib .* -$' "$T_OUT_FILE"
        t_true grep -q '^fork_10mb_vs_cold .* 1.20$' "$T_OUT_FILE"
}

bad_files() {
        need_bench
        recorded
        result exec_vs_bwrap=1.00
        t_exit_is 2 "$BENCH" --check-against missing.md --result now.txt
        t_stderr_has "missing.md"
        printf '# nothing recorded\n' >empty.md
        t_exit_is 2 "$BENCH" --check-against empty.md --result now.txt
        t_stderr_has "no recorded ratio lines"
        t_exit_is 2 "$BENCH" --check-against page.md --result missing.txt
        t_exit_is 2 "$BENCH" --check-against page.md --result empty.md
        t_stderr_has "no ratio lines"
        # lines outside a fence are no record: a page or a log without one has none
        printf 'exec_vs_bwrap 1.00 aaaaaaa\n' >bare.txt
        t_exit_is 2 "$BENCH" --check-against bare.txt --result now.txt
        t_exit_is 2 "$BENCH" --result now.txt
}

# docs/benchmarks.md holds a readable block with the lines the issue set targets for.
repository_page() {
        need_bench
        local page=$T_ROOT/docs/benchmarks.md
        t_cmd "$BENCH" --check-against "$page" --result "$page"
        t_exit_is 0
        local key
        for key in exec_vs_bwrap fork_10mb_vs_cold forks_100_vs_cold net_proxy_vs_direct density_mib; do
                t_true grep -q "^$key " "$T_OUT_FILE"
        done
}

# tools/bench --targets prints each ratio that has a target, as the issue set it, and runs
# nothing: cold exec under 0.8 of bwrap, a warm shell_run under 1.2 of the floor beside it.
targets() {
        need_bench
        t_cmd "$BENCH" --targets
        t_exit_is 0
        local kv
        for kv in exec_vs_bwrap=0.8 shell_true_p50_vs_spawn=1.2 shell_echo_p50_vs_spawn=1.2 \
                fork_10mb_vs_cold=1.5 forks_100_vs_cold=0.5 net_proxy_vs_direct=1.1 density_mib=1.0; do
                t_true grep -qx "${kv%%=*} *${kv#*=}" "$T_OUT_FILE"
        done
        # a ratio without a target is not listed
        t_false grep -q '^exec_vs_spawn ' "$T_OUT_FILE"
}

t_run within_tolerance within_tolerance
t_run worse_is_named worse_is_named
t_run better_is_named better_is_named
t_run last_line_counts last_line_counts
t_run only_ratios_fences only_ratios_fences
t_run several_and_missing several_and_missing
t_run bad_files bad_files
t_run repository_page repository_page
t_run targets targets
t_done
