#!/usr/bin/env bash
# The agent's network (docs/network.md): with --allow-net, commands reach the allowed hosts
# through rtn's proxy and nothing else. Real curl and npm against the hosts this machine
# reaches (its Debian mirror, read from apt's sources, and the npm registry, read from npm's
# config), one allowed and one refused; then each known way around an allowlist proxy, tried
# from inside (netprobe.py): CONNECT to a refused host through an allowed one, a Host header
# that differs from the URL, an absolute-form request for a refused host, an address, an SNI
# that differs from the CONNECT host, a tunnel that carries no TLS, NO_PROXY/--noproxy,
# direct and raw sockets to the resolved address, and DNS to any address.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

PROBE=$(cd "$(dirname "$0")" && pwd)/netprobe.py

# The first http(s) host of apt's sources (one-line and deb822 formats).
mirror_host() {
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
                2>/dev/null | grep -v '^[[:space:]]*#' | grep -oE 'https?://[^/ ]+' |
                head -1 | sed -E 's#https?://##; s#:.*##'
}

npm_host() {
        command -v npm >/dev/null || return 0
        (cd / && npm config get registry 2>/dev/null) | sed -E 's#https?://##; s#[:/].*##'
}

MIRROR=$(mirror_host)
NPMREG=$(npm_host)

need_hosts() {
        [ -n "$MIRROR" ] || t_skip "no http(s) mirror in /etc/apt/sources.list*"
        [ -n "$NPMREG" ] || t_skip "no npm registry (npm config get registry)"
        [ "$MIRROR" != "$NPMREG" ] || t_skip "the mirror and the npm registry are one host"
        command -v curl >/dev/null || t_skip "no curl on this host"
        curl -sS -o /dev/null -m 20 "http://$MIRROR/" 2>/dev/null ||
                t_skip "this machine does not reach http://$MIRROR/"
}

curl_allowed_and_refused() {
        need_hosts
        t_exec --allow-net "$MIRROR" -- sh -c "
                curl -sS -o /dev/null -w 'http %{http_code}\n' http://$MIRROR/
                curl -sS -o /dev/null -w 'https %{http_code}\n' https://$MIRROR/
                curl -sS -o /dev/null https://$NPMREG/ || echo refused \$?"
        t_exit_is 0
        t_stdout_has "http 200"
        t_stdout_has "https 200"
        t_stdout_has "refused 56" # curl: CONNECT tunnel failed, response 403
        t_stderr_has "rtn: network denied $NPMREG:443: $NPMREG is not on the allowlist (1 time)"
        t_false grep -q "network denied $MIRROR" "$T_ERR_FILE"
}

quiet_drops_the_report() {
        need_hosts
        t_exec --quiet --allow-net "$MIRROR" -- sh -c "curl -sS https://$NPMREG/ || true"
        t_exit_is 0
        t_false grep -q "network denied" "$T_ERR_FILE"
}

npm_allowed_and_refused() {
        need_hosts
        t_exec --allow-net "$NPMREG" -- sh -c 'cd /tmp && npm view left-pad name 2>&1'
        t_exit_is 0
        t_stdout_has "left-pad"
        t_exec --allow-net "$MIRROR" -- sh -c 'cd /tmp && npm view left-pad name 2>&1'
        [ "$T_RC" != 0 ] || t_fail "npm reached a refused registry: $(t_last)"
        t_stdout_has "403 Forbidden"
        t_stderr_has "rtn: network denied $NPMREG:443: $NPMREG is not on the allowlist"
}

# Runs the probes named in $@ and asserts each was blocked and none escaped.
probe() {
        need_hosts
        local addr
        addr=$(getent ahostsv4 "$MIRROR" | awk '{print $1; exit}')
        [ -n "$addr" ] || t_skip "$MIRROR does not resolve on the host"
        t_exec --bind "$(dirname "$PROBE"):/mnt/netprobe:ro" --allow-net "$MIRROR" -- \
                python3 /mnt/netprobe/netprobe.py "$MIRROR" "$NPMREG" "$addr" "$@"
        if grep -q '^ESCAPED' "$T_OUT_FILE" || [ "$T_RC" != 0 ]; then
                t_fail "$(grep -v '^blocked' "$T_OUT_FILE" | head -3 | tr '\n' ' ') $(t_last)"
        fi
}

connect_through_an_allowed_host() {
        probe connect_through_allowed
        t_stdout_has "blocked connect_in_tunnel"
        t_stdout_has "blocked connect_refused_host_header_allowed"
        t_stderr_has "network denied $MIRROR:443: a CONNECT tunnel to $MIRROR carries TLS only"
        t_stderr_has "network denied $NPMREG:443: the Host header names $MIRROR:443, not $NPMREG"
}

host_header_differs() {
        probe host_header
        t_stdout_has "blocked host_header"
        t_stdout_has "blocked pipelined_second_host: answers "
        t_stderr_has "network denied $NPMREG:80: $NPMREG is not on the allowlist"
        t_stderr_has "network denied $MIRROR:80: the Host header names $NPMREG, not $MIRROR"
}

absolute_form_for_refused_host() {
        probe absolute_form
        t_stdout_has "blocked absolute_form_refused"
        t_stdout_has "blocked ip_literal"
        t_stderr_has "network denied $NPMREG:80: $NPMREG is not on the allowlist"
        t_stderr_has "is not on the allowlist (an address is admitted only by a rule that names it)"
}

sni_differs_from_connect_host() {
        probe sni
        t_stdout_has "blocked sni_differs"
        t_stdout_has "blocked plain_in_tunnel"
        t_stderr_has "TLS server name $NPMREG differs from the CONNECT host $MIRROR"
}

direct_and_raw_sockets() {
        probe direct
        t_stdout_has "blocked direct_80: Network is unreachable"
        t_stdout_has "blocked direct_443: Network is unreachable"
        t_stdout_has "blocked raw_socket"
        t_stdout_has "blocked only_lo"
}

dns_to_any_address() {
        probe dns
        t_stdout_has "blocked dns_udp_8.8.8.8"
        t_stdout_has "blocked dns_lookup"
        # getent, as a user types it: fails, and at once
        local t0 t1
        t0=$(date +%s%N)
        t_exec --allow-net "$MIRROR" -- getent hosts example.org
        t1=$(date +%s%N)
        [ "$T_RC" = 2 ] || t_fail "getent found example.org inside: $(t_last)"
        [ $(((t1 - t0) / 1000000)) -lt 3000 ] || t_fail "getent took $(((t1 - t0) / 1000000)) ms"
}

noproxy_goes_nowhere() {
        need_hosts
        local addr
        addr=$(getent ahostsv4 "$MIRROR" | awk '{print $1; exit}')
        t_exec --allow-net "$MIRROR" -- sh -c "
                curl -sS -m 10 --noproxy '*' http://$MIRROR/ >/dev/null 2>&1; echo noproxy \$?
                NO_PROXY='*' no_proxy='*' curl -sS -m 10 http://$MIRROR/ >/dev/null 2>&1; echo env \$?
                curl -sS -m 10 --noproxy '*' --resolve $MIRROR:80:$addr http://$MIRROR/ \
                        >/dev/null 2>&1; echo resolved \$?"
        t_exit_is 0
        t_stdout_has "noproxy 6" # could not resolve: no DNS inside
        t_stdout_has "env 6"
        t_stdout_has "resolved 7" # could not connect: no route but lo
}

# Without --allow-net nothing changes: loopback only, no proxy variables.
loopback_only_by_default() {
        t_exec -- sh -c 'env | grep -ci _proxy; exit 0'
        t_exit_is 0
        t_stdout_is 0
}

policy_file_and_bad_rules() {
        need_hosts
        printf '# the mirror\n%s   # apt\n' "$MIRROR" >policy
        t_exec --net-policy policy -- curl -sS -o /dev/null -w '%{http_code}\n' "https://$MIRROR/"
        t_exit_is 0
        t_stdout_is 200
        printf '%s\nnot a host\n' "$MIRROR" >bad
        t_exit_is 125 "$RTN" exec --net-policy bad -- true
        t_stderr_has "bad:2: one HOST[:PORT] per line"
        t_exit_is 125 "$RTN" exec --allow-net '*.example.org' -- true
        t_stderr_has "--allow-net: '*.example.org': write a domain as .example.org"
        t_exit_is 125 "$RTN" exec --allow-net example.org:99999 -- true
        t_stderr_has "the port must be 1-65535"
        t_exit_is 125 "$RTN" exec --net none --allow-net example.org -- true
        t_stderr_has "--net none leaves no way out for --allow-net"
        # no namespace of its own, no listener of its own: the host's ports are not the proxy's
        t_exit_is 125 "$RTN" exec --isolation landlock --allow-net example.org -- true
        t_stderr_has "--allow-net needs the sandbox's namespaces: not with --isolation landlock (its commands use the host's network directly)"
        t_exit_is 1 "$RTN" serve --net none --allow-net example.org
        t_stderr_has "--net none leaves no way out for --allow-net"
}

# The machine's own addresses (docs/security-invariants.md, invariant 23): an allowed name
# that resolves to an address of one of this machine's interfaces must not reach a service
# the host listens with on 0.0.0.0 or [::], IPv4 and IPv6, CONNECT and plain HTTP, and an
# address added after rtn started counts; only a rule ADDR:PORT that names it admits it.
# The machine is a network namespace of the test's own (root: unshare -nm; a user:
# unshare -rnm, rtn then run as the user again in a nested user namespace) with a veth
# device carrying 203.0.113.50 and 2001:db8::50, a server on [::]:8080, and an /etc/hosts
# that gives the names own.test, own6.test and later.test (203.0.113.51, added while rtn
# runs) to them.
own_addresses_refused() {
        command -v ip >/dev/null || t_skip "no ip(8) to make the test network"
        command -v curl >/dev/null || t_skip "no curl"
        printf '%s\n' '127.0.0.1 localhost' '203.0.113.50 own.test' '2001:db8::50 own6.test' \
                '203.0.113.51 later.test' >hosts
        local -a wrap=(unshare -nm) run=("$RTN")
        if [ "$(id -u)" != 0 ]; then
                wrap=(unshare -rnm)
                run=(unshare -U --map-user="$(id -u)" --map-group="$(id -g)" env RTN_NO_SUBID=1
                        "$RTN")
        fi
        cat >inner.sh <<'EOS'
set -e
ip link set lo up
ip link add own0 type veth peer name own1
ip link set own0 up
ip link set own1 up
ip addr add 203.0.113.50/32 dev own0
ip addr add 2001:db8::50/128 dev own0 nodad
mount --bind hosts /etc/hosts
python3 -m http.server --bind :: 8080 >/dev/null 2>&1 &
for _ in $(seq 100); do (exec 3<>/dev/tcp/203.0.113.50/8080) 2>/dev/null && break; sleep 0.1; done
"$@" exec --allow-net own.test:8080 --allow-net own6.test:8080 --allow-net later.test:8080 \
        -- sh -c '
        code() { curl -sS -o /dev/null -w "%{http_code}" "$@" 2>/dev/null; }
        echo "v4 $(code http://own.test:8080/)"
        echo "v6 $(code http://own6.test:8080/)"
        echo "tls $(curl -sS -o /dev/null -w "%{http_connect}" https://own.test:8080/ 2>/dev/null)"
        echo "first $(code http://later.test:8080/)"
        for _ in $(seq 100); do
                c=$(code http://later.test:8080/); [ "$c" = 502 ] || break; sleep 0.1
        done
        echo "later $c"' >out 2>err &
for _ in $(seq 300); do grep -q "^first" out && break; sleep 0.1; done
ip addr add 203.0.113.51/32 dev own0
wait $!
cat out; cat err >&2
"$@" exec --quiet --allow-net own.test:8080 --allow-net 203.0.113.50:8080 -- sh -c '
        curl -sS -o /dev/null -w "named %{http_code}\n" http://own.test:8080/
        curl -sS -o /dev/null -w "literal %{http_code}\n" http://203.0.113.50:8080/'
kill %1
EOS
        t_cmd "${wrap[@]}" bash inner.sh "${run[@]}"
        t_stdout_has "v4 403"
        t_stdout_has "v6 403"
        t_stdout_has "tls 403" # the answer to CONNECT
        t_stdout_has "first 502"
        t_stdout_has "later 403"
        t_stdout_has "named 200"
        t_stdout_has "literal 200"
        t_stderr_has "network denied own.test:8080: own.test resolves to 203.0.113.50, an address of this machine (only --allow-net 203.0.113.50:8080 admits it)"
        t_stderr_has "network denied own6.test:8080: own6.test resolves to [2001:db8::50], an address of this machine"
        t_stderr_has "network denied later.test:8080: later.test resolves to 203.0.113.51, an address of this machine"
}

t_run curl_allowed_and_refused curl_allowed_and_refused
t_run quiet_drops_the_report quiet_drops_the_report
t_run npm_allowed_and_refused npm_allowed_and_refused
t_run connect_through_an_allowed_host connect_through_an_allowed_host
t_run host_header_differs host_header_differs
t_run absolute_form_for_refused_host absolute_form_for_refused_host
t_run sni_differs_from_connect_host sni_differs_from_connect_host
t_run direct_and_raw_sockets direct_and_raw_sockets
t_run dns_to_any_address dns_to_any_address
t_run noproxy_goes_nowhere noproxy_goes_nowhere
t_run loopback_only_by_default loopback_only_by_default
t_run policy_file_and_bad_rules policy_file_and_bad_rules
t_run own_addresses_refused own_addresses_refused
t_done
