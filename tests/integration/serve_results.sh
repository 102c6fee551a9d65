#!/usr/bin/env bash
# What rtn serve's results say matches what happened (docs/tools.md): file_read adds no
# newline the file lacks; output that is not UTF-8 is replaced and flagged; file_write into a
# missing directory says it makes none; pkg_query on the host base refuses instead of
# answering "not installed"; env_commit with nothing new says so and names no new commit; a
# killed job is 137/9 with ids "1", "2".
. "$(dirname "$0")/../lib.sh"
t_need_rtn
MCP=$T_ROOT/tests/integration/mcp_calls.py

# One session: the calls (TOOL {json}) on stdin-like lines, then a Python check of the
# answers (a list `a` of {"isError", "result", "text"}) in the same interpreter.
session() { # CHECK CALLS...
        local check=$1
        shift
        printf '%s\n' "$@" >calls
        t_cmd python3 "$MCP" calls --check "$check" -- "$RTN" serve
        [ "$T_RC" = 3 ] && t_fail "$(tail -n 1 "$T_ERR_FILE"): $(cat "$T_OUT_FILE")"
        [ "$T_RC" = 0 ] || t_fail "serve: $(tail -c 600 "$T_ERR_FILE")"
}

file_read_shows_what_is_there() {
        export RTN_DATA_DIR=$T_TMP/data
        session '
assert a[1]["result"]["content"] == "     1\ta\n     2\tb", a[1]
assert a[2]["result"]["content"] == "     1\ta\n", a[2]
assert a[3]["isError"] and "does not create directories" in a[3]["text"], a[3]
assert "No such file or directory" in a[3]["text"], a[3]
' 'shell_run {"command":"printf \"a\\nb\" > /tmp/x; printf \"a\\n\" > /tmp/y"}' \
                'file_read {"path":"/tmp/x"}' 'file_read {"path":"/tmp/y"}' \
                'file_write {"path":"/tmp/no/such/f","content":"x"}'
}

invalid_utf8_is_flagged() {
        export RTN_DATA_DIR=$T_TMP/data
        session '
r = a[0]["result"]
assert r["stdout"] == "ok\ufffdz\n" and r["stdout_utf8_replaced"] is True, r
assert r["stderr"] == "e\ufffdr" and r["stderr_utf8_replaced"] is True, r
r = a[1]["result"]
assert "stdout_utf8_replaced" not in r and "stderr_utf8_replaced" not in r, r
r = a[4]["result"]
assert r["output"] == "j\ufffd" and r["output_utf8_replaced"] is True, r
' 'shell_run {"command":"printf \"ok\\377z\\n\"; printf \"e\\300r\" >&2"}' \
                'shell_run {"command":"echo fine; echo ok >&2"}' \
                'shell_job_start {"command":"printf \"j\\377\""}' \
                'shell_job_wait {"job_id":"1","timeout":10}' 'shell_job_output {"job_id":"1"}'
}

pkg_query_on_the_host_base_refuses() {
        export RTN_DATA_DIR=$T_TMP/data
        session '
assert a[0]["isError"] and "needs a rootfs base" in a[0]["text"], a[0]
assert "/var/lib/dpkg" in a[0]["text"], a[0]
' 'pkg_query {"args":["dpkg","-l","bash"]}'
}

commit_of_nothing_says_so() {
        export RTN_DATA_DIR=$T_TMP/data
        session '
first = a[1]["result"]
assert not first["unchanged"] and first["message"] == "one", first
r = a[2]["result"]
assert r["unchanged"] is True, r
assert r["commit_id"] == first["commit_id"] and r["layer_id"] == "" and r["parent"] is None, r
assert "nothing to commit" in r["message"], r
' 'shell_run {"command":"echo 1 > \"$HOME/one\""}' 'env_commit {"message":"one"}' \
                'env_commit {"message":"two"}'
}

killed_jobs_are_137() {
        export RTN_DATA_DIR=$T_TMP/data
        session '
assert a[0]["result"]["job_id"] == "1" and a[1]["result"]["job_id"] == "2", a[:2]
k = a[2]["result"]
assert (k["state"], k["exit_code"], k["signal"], k["timed_out_waiting"]) == \
        ("killed", 137, 9, False), k
' 'shell_job_start {"command":"sleep 100"}' 'shell_job_start {"command":"sleep 100"}' \
                'shell_job_kill {"job_id":"1"}'
}

t_run file_read_shows_what_is_there file_read_shows_what_is_there
t_run invalid_utf8_is_flagged invalid_utf8_is_flagged
t_run pkg_query_on_the_host_base_refuses pkg_query_on_the_host_base_refuses
t_run commit_of_nothing_says_so commit_of_nothing_says_so
t_run killed_jobs_are_137 killed_jobs_are_137
t_done
