#!/usr/bin/env bash
# http_get / http_post of `rtn serve --http-tools` against local servers only. Each case runs
# the server in a fresh network + mount namespace (unshare -rnm; no sandbox is started, so
# this works unprivileged too), which is "the machine" here, and overrides /etc/hosts in it:
# - 198.51.100.7 (a documentation address, which the range filter lets through) is a
#   "public" server on lo, pub.test. It is an address of the namespace, so it is reached
#   only by the rule that admits such an address, `--allow-net 198.51.100.7:8080`.
# - 127.0.0.1:8081 logs every request, so a refusal is also proven by its silence;
#   rebind.test -> 127.0.0.1, meta.test -> 169.254.169.254.
# - a veth device carries 203.0.113.50 and 2001:db8::50, the machine's own non-loopback
#   addresses, with a server on [::]:8090 (a host service a firewall keeps from the outside)
#   that logs every request: own.test, own6.test and ownmapped.test
#   (::ffff:203.0.113.50) resolve to it.
. "$(dirname "$0")/../lib.sh"
t_need_rtn
MCP=$T_ROOT/tests/integration/mcp_calls.py
FIX=$T_ROOT/tests/integration/http_fixture.py

# What expect has mcp_calls.py check: the file $EXPECT's lines are pairs N, EXPR.
export EXPECT_CHECK='import json
x = open(os.environ["EXPECT"]).read().split("\n")[:-1]
for n, e in zip(x[::2], x[1::2]):
    try:
        ok = str(eval(e, {"r": a[int(n) - 1]})) == "True"
    except Exception as err:
        ok, e = False, "%s (%r)" % (e, err)
    line = json.dumps(a[int(n) - 1]) if int(n) <= len(a) else ""
    assert ok, "answer %s: not %s: %s" % (n, e, line[:500])'

# Sets up the calls (one per argument) for expect, which runs them in the namespace.
http_calls() {
        printf '%s\n' "$@" >calls
        cat >hosts <<'H'
127.0.0.1 localhost
198.51.100.7 pub.test
127.0.0.1 rebind.test
169.254.169.254 meta.test
203.0.113.50 own.test
2001:db8::50 own6.test
::ffff:203.0.113.50 ownmapped.test
H
        cat >inner.sh <<EOS
set -e
ip link set lo up
ip addr add 198.51.100.7/32 dev lo
ip link add own0 type veth peer name own1
ip link set own0 up
ip link set own1 up
ip addr add 203.0.113.50/32 dev own0
ip addr add 2001:db8::50/128 dev own0 nodad
mount --bind "$T_TMP/hosts" /etc/hosts
# the three servers in one process, which says "ready" once all of them listen
exec 3< <(exec python3 "$FIX" 198.51.100.7 8080 "$T_TMP/pub.log" 127.0.0.1 8081 "$T_TMP/private.log" \
        :: 8090 "$T_TMP/own.log")
p=\$!
read -r -t 60 ready <&3 && [ "\$ready" = ready ] || { echo "the fixture did not start" >&2; exit 1; }
rc=0
RTN_DATA_DIR="$T_TMP/data" python3 "$MCP" "$T_TMP/calls" --check "\$EXPECT_CHECK" -- \
        "$RTN" serve ${SERVE_ARGS:---http-tools --allow-net 198.51.100.7:8080} || rc=\$?
kill \$p
exit \$rc
EOS
}

# expect N EXPR [N EXPR...]: runs the calls of http_calls; each EXPR over answer N (as r) must
# be True. mcp_calls.py checks them all, in order, in the interpreter that got the answers
# (answers in $T_OUT_FILE), and the first that is not fails the case.
expect() {
        printf '%s\n' "$@" >expect
        EXPECT=$T_TMP/expect t_cmd unshare -rnm bash inner.sh
        [ "$T_RC" = 3 ] && t_fail "$(sed -n 's/^the check failed: //p' "$T_ERR_FILE" | tail -n 1)"
        [ "$T_RC" = 0 ] || {
                grep -q "unshare failed" "$T_ERR_FILE" && t_skip "unshare -rnm: $(head -c 200 "$T_ERR_FILE")"
                t_fail "$(tail -c 600 "$T_ERR_FILE")"
        }
}

private_untouched() {
        [ ! -s private.log ] || t_fail "the loopback server was reached: $(cat private.log)"
}

own_untouched() {
        [ ! -s own.log ] || t_fail "the service on the machine's own address was reached: $(cat own.log)"
}

public_get_and_post() {
        http_calls 'http_get {"url":"http://pub.test:8080/hello"}' \
                'http_post {"url":"http://198.51.100.7:8080/echo","body":"ping"}' \
                'http_get {"url":"http://pub.test:8080/big","max_bytes":1000}' \
                'http_get {"url":"http://pub.test:8080/bin"}'
        expect 1 'r["result"]["status"] == 200 and r["result"]["body"] == "hello"' \
                1 'r["result"]["headers"]["X-Test"] == "a, b" and r["result"]["url"] == "http://pub.test:8080/hello"' \
                2 'r["result"]["body"] == "got:ping"' \
                3 'r["result"]["truncated"] and len(r["result"]["body"]) == 1000' \
                4 'r["result"]["body_encoding"] == "base64" and r["result"]["body"] == "/wCAQQ=="'
}

loopback_private_metadata_refused() {
        http_calls 'http_get {"url":"http://127.0.0.1:8081/x"}' \
                'http_get {"url":"http://localhost:8081/x"}' \
                'http_get {"url":"http://[::ffff:127.0.0.1]:8081/x"}' \
                'http_get {"url":"http://10.1.2.3/"}' \
                'http_get {"url":"http://meta.test/latest/meta-data/"}' \
                'http_get {"url":"http://169.254.169.254/latest/meta-data/"}' \
                'http_get {"url":"http://100.64.0.1/"}' \
                'http_get {"url":"http://user@pub.test:8080/hello"}' \
                'http_get {"url":"file:///etc/passwd"}'
        local i each=()
        for i in 1 2 3 4 5 6 7 8 9; do
                each+=("$i" 'r["isError"]')
        done
        expect "${each[@]}" 1 '"loopback" in r["text"]' \
                3 '"IPv4-mapped" in r["text"]' \
                4 '"private 10.0.0.0/8" in r["text"]' \
                5 '"metadata" in r["text"]' \
                7 '"CGNAT" in r["text"]'
        private_untouched
}

redirect_to_private_refused() {
        http_calls 'http_get {"url":"http://pub.test:8080/to?u=http://127.0.0.1:8081/secret"}' \
                'http_get {"url":"http://pub.test:8080/to?u=http://rebind.test:8081/secret"}' \
                'http_get {"url":"http://pub.test:8080/to?u=http://pub.test:8080/hello"}' \
                'http_post {"url":"http://pub.test:8080/to?u=http://pub.test:8080/hello","body":"x"}'
        expect 1 'r["isError"] and "loopback" in r["text"]' \
                2 'r["isError"] and "rebind.test" in r["text"]' \
                3 'r["result"]["body"] == "hello"' \
                4 'r["result"]["body"] == "hello"'
        grep -qx "/hello" pub.log || t_fail "the allowed redirect was not followed"
        private_untouched
}

rebinding_name_refused() {
        # rebind.test is a name the filter has never seen; it resolves to loopback here, and
        # the address checked is the address connected to (curl is pinned to it).
        http_calls 'http_get {"url":"http://rebind.test:8081/x"}'
        expect 1 'r["isError"] and "rebind.test resolves to 127.0.0.1" in r["text"]'
        private_untouched
}

# An address of the machine's own interfaces is refused as loopback is, whatever the name
# or spelling that leads there (a name, a literal, the integer form of an IPv4 address), on
# the first request and on every redirect; the refusal names the one rule that admits it.
own_addresses_refused() {
        http_calls 'http_get {"url":"http://own.test:8090/v4"}' \
                'http_get {"url":"http://own6.test:8090/v6"}' \
                'http_get {"url":"http://ownmapped.test:8090/mapped"}' \
                'http_get {"url":"http://203.0.113.50:8090/literal"}' \
                'http_get {"url":"http://[2001:db8::50]:8090/literal6"}' \
                'http_post {"url":"http://own.test:8090/echo","body":"x"}' \
                'http_get {"url":"http://pub.test:8080/to?u=http://own.test:8090/redir"}' \
                'http_get {"url":"http://pub.test:8080/to?u=http://own6.test:8090/redir6"}' \
                'http_post {"url":"http://pub.test:8080/to?u=http://[2001:db8::50]:8090/redir7","body":"x"}' \
                'http_get {"url":"http://3405803826:8090/int"}' \
                'http_get {"url":"http://pub.test:8080/hello"}'
        local i each=()
        for i in 1 2 3 4 5 6 7 8 9 10; do
                each+=("$i" 'r["isError"] and "refused" in r["text"]')
        done
        expect "${each[@]}" 1 '"own.test resolves to 203.0.113.50, an address of this machine (only --allow-net 203.0.113.50:8090 admits it)" in r["text"]' \
                2 '"own6.test resolves to [2001:db8::50], an address of this machine (only --allow-net [2001:db8::50]:8090 admits it)" in r["text"]' \
                3 '"203.0.113.50" in r["text"]' \
                5 '"an address of this machine" in r["text"]' \
                7 '"own.test resolves to 203.0.113.50, an address of this machine" in r["text"]' \
                8 '"an address of this machine" in r["text"]' \
                9 '"an address of this machine" in r["text"]' \
                10 '"3405803826 resolves to 203.0.113.50, an address of this machine" in r["text"]' \
                11 'r["result"]["body"] == "hello"'
        grep -qx "/to?u=http://own.test:8090/redir" pub.log || t_fail "the redirecting server was not asked"
        own_untouched
        private_untouched
}

# The rule ADDR:PORT admits that address on that port, by name, literal or redirect, and
# nothing more: the IPv6 address and another port stay refused.
own_address_admitted_by_rule() {
        SERVE_ARGS="--http-tools --allow-net 198.51.100.7:8080 --allow-net 203.0.113.50:8090" \
                http_calls 'http_get {"url":"http://own.test:8090/hello"}' \
                'http_get {"url":"http://pub.test:8080/to?u=http://203.0.113.50:8090/hello"}' \
                'http_get {"url":"http://own6.test:8090/v6"}' \
                'http_get {"url":"http://198.51.100.7:8090/otherport"}'
        expect 1 'r["result"]["status"] == 200 and r["result"]["body"] == "hello"' \
                2 'r["result"]["body"] == "hello" and r["result"]["url"] == "http://203.0.113.50:8090/hello"' \
                3 'r["isError"] and "an address of this machine" in r["text"]' \
                4 'r["isError"] and "only --allow-net 198.51.100.7:8090 admits it" in r["text"]'
        [ "$(grep -c . own.log)" = 2 ] || t_fail "own.log: $(cat own.log)"
}

off_without_flag() {
        SERVE_ARGS=--timeout=60 http_calls 'http_get {"url":"http://pub.test:8080/hello"}'
        expect 1 'r["isError"]'
        [ ! -s pub.log ] || t_fail "http_get ran without --http-tools"
}

exec_does_not_load_libcurl() {
        t_exit_is 0 "$RTN" exec -- /bin/true
        ! ldd "$RTN" | grep -q libcurl || t_fail "rtn links libcurl: $(ldd "$RTN" | grep curl)"
        command -v strace >/dev/null || return 0
        t_cmd strace -f -e trace=openat -o trace "$RTN" exec -- /bin/true
        ! grep -q libcurl trace || t_fail "rtn exec opened libcurl"
}

t_run public_get_and_post public_get_and_post
t_run loopback_private_metadata_refused loopback_private_metadata_refused
t_run redirect_to_private_refused redirect_to_private_refused
t_run rebinding_name_refused rebinding_name_refused
t_run own_addresses_refused own_addresses_refused
t_run own_address_admitted_by_rule own_address_admitted_by_rule
t_run off_without_flag off_without_flag
t_run exec_does_not_load_libcurl exec_does_not_load_libcurl
t_done
