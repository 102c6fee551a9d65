#!/usr/bin/env bash
# The README's and docs/'s shell examples kept true by machine: every ```console doctest
# block is run (tests/integration/doctest.py: a fresh home and data dir per block, on a pty)
# and its output compared with what the page shows. A drifted example fails here, naming
# the page, the line, what it shows and what came.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

pages() {
        local f
        for f in "$T_ROOT/README.md" "$T_ROOT"/docs/*.md; do
                [ -f "$f" ] && grep -q '^```console doctest$' "$f" && echo "$f"
        done
}

examples_print_what_the_pages_show() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        local files
        mapfile -t files < <(pages)
        [ "${#files[@]}" -gt 0 ] || t_skip "no page with a doctest block beside this suite"
        T_CMD_TIMEOUT=600 t_cmd python3 "$T_ROOT/tests/integration/doctest.py" "$RTN" "${files[@]}"
        [ "$T_RC" = 0 ] || t_fail "examples differ from their pages: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        grep '^#' "$T_ERR_FILE" | while read -r l; do t_note "${l#\# }"; done
}

# The check must see a drift: an output line changed, a line too many, a command that
# prints something else.
the_check_sees_drift() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        [ -f "$T_ROOT/README.md" ] || t_skip "no README.md beside this suite"
        printf '```console doctest\n$ rtn exec -- echo hi\nho\n```\n' >a.md
        printf '```console doctest\n$ rtn exec -- echo hi\nhi\nhi\n```\n' >b.md
        printf '```console doctest\n$ rtn exec -- cat /nope\n```\n' >c.md
        local f
        for f in a b c; do
                T_CMD_TIMEOUT=120 t_cmd python3 "$T_ROOT/tests/integration/doctest.py" "$RTN" $f.md
                t_exit_is 1
                t_stdout_has "$f.md:2: \$ rtn exec -- "
        done
        t_stdout_has "cat: /nope: No such file or directory"
        printf '```console doctest\n$ rtn exec -- echo hi\nhi\n$ echo a-b…z\na-…\n```\n' >ok.md
        T_CMD_TIMEOUT=120 t_exit_is 0 python3 "$T_ROOT/tests/integration/doctest.py" "$RTN" ok.md
}

t_run examples_print_what_the_pages_show examples_print_what_the_pages_show
t_run the_check_sees_drift the_check_sees_drift
t_done
