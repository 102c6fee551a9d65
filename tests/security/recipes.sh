#!/usr/bin/env bash
# docs/recipes.md, run as written: each case takes a recipe's block from the page (its
# `# recipe: NAME` line), sets the variables at its top to the case's own paths and hosts, and
# runs it. The agent's CLI (recipe_cli.js, a node script) and the private Python index
# (recipe_index.py) talk to servers of the test's own, on addresses of the documentation
# range in a test network namespace with names from a private /etc/hosts, as secrets.sh does;
# the Node project reaches the public npm registry. What a recipe promises is checked: the
# key is a placeholder inside and arrives at the API host only, no other host is reached, the
# packages land in the project.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

PAGE=$T_ROOT/docs/recipes.md
SERVERS=$T_ROOT/tests/security/secret_servers.py
VALUE=k3y-$RANDOM-value
export SERVERS VALUE T_TMP RTN T_ROOT

# The test CAs and server certificates, made once for the suite (a python3 and six openssl
# each time) and copied into each case's directory, as secrets.sh does.
CERTS=
if command -v python3 >/dev/null && command -v openssl >/dev/null && command -v node >/dev/null &&
        t_suite_tmp; then
        CERTS=$T_SUITE_TMP/certs
        mkdir "$CERTS" && python3 "$SERVERS" certs "$CERTS" || CERTS=
fi

need_netns() {
        command -v ip >/dev/null || t_skip "no ip(8) to set up the test network"
        command -v openssl >/dev/null || t_skip "no openssl(1) to make the test certificates"
        command -v node >/dev/null || t_skip "no node"
}

# recipe NAME VAR=VALUE...: the block of the page whose first line is `# recipe: NAME`, each
# VAR's line at its top set to VALUE, into ./NAME.sh.
recipe() {
        local name=$1 kv
        shift
        awk -v want="# recipe: $name" '
                /^```/ { if (inb) { inb = 0; if (keep) exit } else inb = 1; next }
                inb && $0 == want { keep = 1 }
                inb && keep { print }' "$PAGE" >"$name.sh"
        [ -s "$name.sh" ] || t_fail "no recipe $name in $PAGE"
        for kv in "$@"; do
                grep -q "^${kv%%=*}=" "$name.sh" || t_fail "recipe $name sets no ${kv%%=*}"
                sed -i "s|^${kv%%=*}=.*|${kv%%=*}='${kv#*=}'|" "$name.sh"
        done
}

# in_test_netns SCRIPT SERVER...: SCRIPT with bash in fresh network and mount namespaces where
# 203.0.113.1 is secret.test and 203.0.113.2 unknown.test (TLS from the test CA's
# certificates), after SERVER (a shell command) started in the background; `rtn` there is
# rtn with the test CA trusted and the servers' addresses (this machine's) admitted.
in_test_netns() {
        [ -n "$CERTS" ] && cp "$CERTS"/* "$T_TMP" || t_fail "could not make the test certificates"
        printf '203.0.113.1 secret.test\n203.0.113.2 unknown.test\n' >hosts
        local -a wrap=(unshare -n -m)
        AS_USER=
        if [ "$(id -u)" != 0 ]; then
                wrap=(unshare -rnm)
                AS_USER="unshare -U --map-user=$(id -u) --map-group=$(id -g) env RTN_NO_SUBID=1"
        fi
        export AS_USER SERVER=$2
        t_cmd "${wrap[@]}" bash -c '
                ip link set lo up && ip addr add 203.0.113.1/32 dev lo &&
                        ip addr add 203.0.113.2/32 dev lo || exit 1
                mount --bind "$T_TMP/hosts" /etc/hosts || exit 1
                eval "exec $SERVER" &
                python3 "$SERVERS" 203.0.113.2 443 "$T_TMP/unknown.test.crt" \
                        "$T_TMP/unknown.test.key" &
                for hp in 203.0.113.1/443 203.0.113.2/443; do
                        for _ in $(seq 100); do
                                (exec 3<>"/dev/tcp/$hp") 2>/dev/null && break
                                sleep 0.1
                        done
                done
                rtn() {
                        local verb=$1
                        shift
                        $AS_USER env SSL_CERT_FILE="$T_TMP/testca.crt" "$RTN" "$verb" \
                                --allow-net 203.0.113.1:443 --allow-net 203.0.113.2:443 "$@"
                }
                . "$0"
                kill %1 %2' "$1"
}

home() {
        export HOME=$T_TMP/home
        mkdir -p "$HOME/src/project"
}

agent_cli() {
        need_netns
        home
        mkdir -p "$HOME/.local/share/mycli" "$HOME/.config/mycli"
        cp "$T_ROOT/tests/security/recipe_cli.js" "$HOME/.local/share/mycli/cli.js"
        echo '{"api_url": "https://secret.test/v1/messages"}' >"$HOME/.config/mycli/config.json"
        recipe agent-cli API_HOST=secret.test
        export MYCLI_API_KEY=$VALUE
        in_test_netns agent-cli.sh \
                'env SECRET_LOG=$T_TMP/log python3 "$SERVERS" 203.0.113.1 443 "$T_TMP/secret.test.crt" "$T_TMP/secret.test.key"'
        t_stdout_has "key inside: rtn-placeholder-MYCLI_API_KEY"
        t_stdout_has "api answered"
        t_stdout_has "other host refused"
        grep -qx "x-api-key: $VALUE" "$T_TMP/log" ||
                t_fail "the key did not reach the API: $(cat "$T_TMP/log" "$T_OUT_FILE" "$T_ERR_FILE")"
        t_false grep -q "$VALUE" "$T_OUT_FILE"
}

python_private_index() {
        need_netns
        home
        echo hello-rtn==1.0 >"$HOME/src/project/requirements.txt"
        recipe python-private-index INDEX=secret.test "PROJECT=$HOME/src/project"
        export PIP_TOKEN=$VALUE INDEX_TOKEN=$VALUE INDEX_LOG=$T_TMP/index.log
        in_test_netns python-private-index.sh \
                'python3 "$T_ROOT/tests/security/recipe_index.py" 203.0.113.1 443 "$T_TMP/secret.test.crt" "$T_TMP/secret.test.key"'
        t_exit_is 0
        [ -f "$HOME/src/project/.deps/hello_rtn.py" ] ||
                t_fail "the package is not in the project: $(cat "$T_OUT_FILE" "$T_ERR_FILE" "$INDEX_LOG" 2>&1)"
        grep -q "^/files/hello_rtn-1.0-py3-none-any.whl let-in" "$INDEX_LOG" ||
                t_fail "the index did not let the wheel out: $(cat "$INDEX_LOG")"
        t_false grep -q refused "$INDEX_LOG"
}

node_project() {
        command -v npm >/dev/null || t_skip "no npm"
        home
        echo '{"name": "webapp", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}}' \
                >"$HOME/src/project/package.json"
        recipe node-project "PROJECT=$HOME/src/project"
        rtn() { "$RTN" "$@"; }
        export -f rtn
        T_CMD_TIMEOUT=120 t_cmd bash node-project.sh
        if [ "$T_RC" != 0 ] && grep -qiE "ENOTFOUND|EAI_AGAIN|network denied|ETIMEDOUT" "$T_ERR_FILE"; then
                t_skip "the npm registry is not reachable from here: $(tail -3 "$T_ERR_FILE")"
        fi
        t_exit_is 0
        t_file_exists "$HOME/src/project/node_modules/is-number/package.json"
}

t_run agent_cli agent_cli
t_run python_private_index python_private_index
t_run node_project node_project
t_done
