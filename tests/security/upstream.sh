#!/usr/bin/env bash
# --upstream-proxy URL|env (docs/network.md, "Behind a proxy"): the gate's connections go
# out through a CONNECT proxy the test stands up on 127.0.0.1 (upstream.py), with its
# credentials; the sandbox's policy still holds for the name it asked for (a host off the
# allowlist and a name resolving here to 127.0.0.1 never reach the proxy); no_proxy is
# honoured with `env`; and the proxy's password is never printed (errors, denials,
# env_status), over stdio and over `rtn serve --http`.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

LIB=$T_ROOT/tests/security/upstream.py
PW='pa%3Ass%40word' # pa:ss@word

start_proxy() {
        python3 "$LIB" serve "$T_TMP" &
        PROXY_PID=$!
        t_wait_for test -s "$T_TMP/proxy" || t_fail "the test's proxy did not start"
        PP=$(cat "$T_TMP/proxy") BP=$(cat "$T_TMP/backend")
}

stop_proxy() {
        kill "$PROXY_PID" 2>/dev/null
        wait "$PROXY_PID" 2>/dev/null
}

loopback_name() {
        local n
        n=$(hostname)
        getent ahostsv4 "$n" 2>/dev/null | grep -q '^127\.' && printf '%s' "$n"
}

no_password() { # FILE...
        ! grep -l -e 'pa:ss@word' -e "$PW" -e 'YWxpY2U6cGE6c3NAd29yZA' "$@" ||
                t_fail "the proxy's password was printed"
}

upstream_through_proxy() {
        start_proxy
        local name args=()
        name=$(loopback_name)
        [ -n "$name" ] && args=(--allow-net "$name:$BP")
        t_exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --allow-net "backend.test:$BP" \
                --allow-net "nope.test:$BP" "${args[@]}" \
                --upstream-proxy "http://alice:$PW@127.0.0.1:$PP" \
                -- python3 /mnt/t/upstream.py probe "$BP" "$name"
        stop_proxy
        t_exit_is 0
        t_stdout_has "plain: reached"
        t_stdout_has "tunnel: opened"
        t_stdout_has "other.test: refused HTTP/1.1 403"
        t_stdout_has "127.0.0.1: refused HTTP/1.1 403"
        ! grep -E "ESCAPED|FAILED" "$T_OUT_FILE" || t_fail "$(grep -E "ESCAPED|FAILED" "$T_OUT_FILE")"
        grep -q "^backend.test:$BP auth=ok" "$T_TMP/proxy.log" || t_fail "$(cat "$T_TMP/proxy.log")"
        [ "$(grep -c "^backend.test:$BP auth=ok" "$T_TMP/proxy.log")" = 2 ] ||
                t_fail "plain and tunnel should both CONNECT: $(cat "$T_TMP/proxy.log")"
        ! grep -v "^backend.test:\|^nope.test:" "$T_TMP/proxy.log" ||
                t_fail "a refused host reached the proxy"
        [ -n "$name" ] || t_note "no hostname resolving to 127.0.0.1: that case was skipped"
        no_password "$T_OUT_FILE" "$T_ERR_FILE"
}

# The same over `rtn serve --http`: a session's sandbox goes out through the proxy with its
# credentials, the policy still holds, and the password is in no answer or log.
upstream_over_http() {
        start_proxy
        http_start --allow-net "backend.test:$BP" --allow-net "nope.test:$BP" \
                --upstream-proxy "http://alice:$PW@127.0.0.1:$PP"
        # (no --bind with --http: the probe goes in as the command's stdin)
        local probe cmd
        IFS= read -r -d '' probe <"$LIB"
        cmd=$(json_string "python3 - probe $BP <<\"EOF\"
$probe
EOF
") || t_fail "the probe cannot go in as a JSON string"
        http_call shell_run "{\"command\": $cmd}"
        cp "$T_TMP/body" "$T_TMP/probe"
        body_has "plain: reached"
        body_has "tunnel: opened"
        body_has "other.test: refused HTTP/1.1 403"
        body_has "127.0.0.1: refused HTTP/1.1 403"
        ! grep -E "ESCAPED|FAILED" "$T_TMP/body" || t_fail "$(grep -E "ESCAPED|FAILED" "$T_TMP/body")"
        http_call env_status '{}'
        cp "$T_TMP/body" "$T_TMP/status"
        stop_proxy
        body_has 'http://***@127.0.0.1:'"$PP"
        [ "$(grep -c "^backend.test:$BP auth=ok" "$T_TMP/proxy.log")" = 2 ] ||
                t_fail "plain and tunnel should both CONNECT: $(cat "$T_TMP/proxy.log")"
        ! grep -v "^backend.test:\|^nope.test:" "$T_TMP/proxy.log" || t_fail "a refused host reached the proxy"
        no_password "$T_TMP/probe" "$T_TMP/status" "$T_TMP/srv.log"
}

# `env`: the caller's HTTPS_PROXY, and no_proxy's hosts go direct (here: they do not
# resolve, so they are refused without the proxy ever seeing them).
upstream_env_no_proxy() {
        start_proxy
        HTTPS_PROXY="http://alice:$PW@127.0.0.1:$PP" https_proxy= http_proxy= HTTP_PROXY= \
                no_proxy="localhost,.nope.test,nope.test" \
                t_exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --allow-net "backend.test:$BP" \
                --allow-net "nope.test:$BP" --upstream-proxy env \
                -- python3 /mnt/t/upstream.py probe "$BP"
        stop_proxy
        t_exit_is 0
        t_stdout_has "plain: reached"
        t_stdout_has "nope.test: refused HTTP/1.1 403"
        ! grep -q "^nope.test" "$T_TMP/proxy.log" || t_fail "no_proxy was not honoured"
        no_password "$T_OUT_FILE" "$T_ERR_FILE"
}

# A wrong password: the request fails with a message naming the proxy, masked.
upstream_refused_masked() {
        start_proxy
        t_exec --bind "$T_ROOT/tests/security:/mnt/t:ro" --allow-net "backend.test:$BP" \
                --upstream-proxy "http://alice:wrong-$PW@127.0.0.1:$PP" \
                -- python3 /mnt/t/upstream.py probe "$BP"
        stop_proxy
        t_stdout_has "plain: FAILED HTTP/1.1 502"
        t_stdout_has "upstream proxy http://***@127.0.0.1:$PP answered 407"
        no_password "$T_OUT_FILE" "$T_ERR_FILE"
}

upstream_bad_values() {
        local bad
        for bad in "socks5://alice:$PW@127.0.0.1:1080" "https://alice:$PW@proxy.example:3128" \
                "http://alice:$PW@" "http://alice:$PW@proxy.example:0" \
                "http://alice:$PW@bad_host:3128"; do
                t_exec --allow-net example.org --upstream-proxy "$bad" -- true
                t_exit_is 125
                t_stderr_has "--upstream-proxy"
                no_password "$T_ERR_FILE"
        done
        https_proxy= HTTPS_PROXY= http_proxy= HTTP_PROXY= \
                t_exec --allow-net example.org --upstream-proxy env -- true
        t_exit_is 125
        t_stderr_has "none of https_proxy"
}

upstream_env_status() {
        t_cmd python3 "$LIB" status "$RTN" "http://alice:$PW@127.0.0.1:3128"
        t_exit_is 0
        t_stdout_is "http://***@127.0.0.1:3128"
}

t_run upstream_through_proxy upstream_through_proxy
t_run upstream_over_http upstream_over_http
t_run upstream_env_no_proxy upstream_env_no_proxy
t_run upstream_refused_masked upstream_refused_masked
t_run upstream_bad_values upstream_bad_values
t_run upstream_env_status upstream_env_status
t_done
