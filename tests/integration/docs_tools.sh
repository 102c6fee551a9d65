#!/usr/bin/env bash
# docs/tools.md kept true by machine (tests/integration/docs_tools.py): its sections, Result
# lines and example results against tools/list's output schemas and against the results of
# its examples run on a real `rtn serve` over stdio. A drifted example, key or section fails
# here, naming it.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

tools_md_matches_the_server() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        local doc=$T_ROOT/docs/tools.md
        [ -f "$doc" ] || t_skip "no docs/tools.md beside this suite"
        T_CMD_TIMEOUT=300 t_cmd python3 "$T_ROOT/tests/integration/docs_tools.py" "$RTN" "$doc"
        [ "$T_RC" = 0 ] || t_fail "docs/tools.md differs from the server: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        grep '^#' "$T_ERR_FILE" | while read -r l; do t_note "${l#\# }"; done
}

# The check itself must see a drift: a renamed key in an example, a Result line missing a
# key, an example whose request fails.
the_check_sees_drift() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        local doc=$T_ROOT/docs/tools.md
        [ -f "$doc" ] || t_skip "no docs/tools.md beside this suite"
        sed 's/"bytes_written": 6/"bytes": 6/' "$doc" >renamed.md
        T_CMD_TIMEOUT=300 t_cmd python3 "$T_ROOT/tests/integration/docs_tools.py" "$RTN" renamed.md
        t_exit_is 1
        t_stdout_has "file_write: the example has \`bytes\`, not in the outputSchema"
        t_stdout_has "file_write example 1: the real result has \`bytes_written\`, the example does not"
        sed 's/^Result: `removed_layers`, /Result: /' "$doc" >short.md
        T_CMD_TIMEOUT=300 t_cmd python3 "$T_ROOT/tests/integration/docs_tools.py" "$RTN" short.md
        t_exit_is 1
        t_stdout_has "env_gc: Result lists"
        sed 's/"job_id": "1"/"job_id": "j1"/g' "$doc" >ids.md
        T_CMD_TIMEOUT=300 t_cmd python3 "$T_ROOT/tests/integration/docs_tools.py" "$RTN" ids.md
        t_exit_is 1
        t_stdout_has "shell_job_status: the example fails here"
}

t_run tools_md_matches_the_server tools_md_matches_the_server
t_run the_check_sees_drift the_check_sees_drift
t_done
