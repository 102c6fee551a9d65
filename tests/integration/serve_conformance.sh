#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against
# `rtn serve --http`: 0.1.16 with its default scenarios, and the 0.2.0 pre-release with
# `server --spec-version 2026-07-28 --suite all`. Every check passes but those docs/tools.md
# ("Conformance") lists as not applicable, with the reason (the suite's own fixture tools,
# resources and prompts); tests/mcp-client/conformance-check.mjs holds a run to that list,
# and a listed scenario that passes whole is a stale row.
#
# 0.2.0 needs Node 22. tests/mcp-client/conformance-install.sh installs both versions and
# Node 22 with npm into RTN_CONFORMANCE_DIR or /var/tmp/rtn-conformance-UID, once (never the
# user's home). An unprivileged user uses root's complete install (/var/tmp/rtn-conformance-0:
# tools/test.sh makes it before the streams start; the unprivileged users may have no
# registry) and else one of its own. Where nothing is installed and the registry cannot be
# reached, the cases skip with a message. The suite's client sends no token, so
# tests/mcp-client/conformance-auth.mjs adds it to each request (fetch, undici and
# node:http alike). Runs on loopback only.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
: "${RTN_CONFORMANCE_DIR:=/var/tmp/rtn-conformance-$(id -u)}"
read -r V1 V2 < <("$client_dir/conformance-install.sh" --versions)

ROOT_DIR=/var/tmp/rtn-conformance-0

# dir_safe DIR UID: DIR is a directory (not a link) of UID that no one else may write: another
# user could plant packages in one they can write.
dir_safe() {
        [ -d "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %u "$1")" = "$2" ] &&
                [ -z "$(find "$1" -maxdepth 0 -perm /022)" ]
}

# install NAME: sets DIR to the install of NAME: root's complete one for an unprivileged
# user, else ours (made by conformance-install.sh, once); skips the case when npm cannot.
install() {
        local name=$1
        if [ "$(id -u)" != 0 ] && [ -f "$ROOT_DIR/$name/.done" ] && dir_safe "$ROOT_DIR" 0 &&
                dir_safe "$ROOT_DIR/$name" 0; then
                DIR=$ROOT_DIR/$name
                return 0
        fi
        DIR=$RTN_CONFORMANCE_DIR/$name
        [ -f "$DIR/.done" ] && return 0
        T_CMD_TIMEOUT=1000 t_cmd "$client_dir/conformance-install.sh" "$RTN_CONFORMANCE_DIR"
        [ -f "$DIR/.done" ] || t_skip "npm could not install the conformance suite (npm registry unreachable?): $(grep -m1 -E 'npm error|conformance-install' "$T_ERR_FILE")"
}

# run NODE CLI ARGS...: rtn serve --http with a fresh token, the CLI against it, its results
# judged against docs/tools.md.
run() {
        local node=$1 cli=$2
        shift 2
        http_start
        local url=$URL
        # Each scenario writes its checks under the output dir; it also writes results/ in
        # the working directory: the case's temp dir.
        RTN_TOKEN=$(cat "$T_TMP/tok") T_CMD_TIMEOUT=300 t_cmd "$node" \
                --import "$client_dir/conformance-auth.mjs" "$cli" server --url "$url" \
                -o "$T_TMP/out" "$@"
        [ -d "$T_TMP/out" ] || t_fail "the suite wrote no results: $(tail -c 400 "$T_ERR_FILE")"
        t_cmd "$node" "$client_dir/conformance-check.mjs" "$T_ROOT/docs/tools.md" "$T_TMP/out"
        [ "$T_RC" = 0 ] || t_fail "$(cat "$T_OUT_FILE")"
        t_note "$(tail -1 "$T_OUT_FILE")"
        kill -0 "$SRV_PID" || t_fail "rtn serve --http died"
}

node22() {
        install node22
        NODE=$DIR/node_modules/.bin/node
        "$NODE" --version | grep -q '^v22\.' || t_fail "$NODE is not Node 22"
}

legacy() {
        node22
        install "c$V1"
        run "$NODE" "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
}

modern() {
        node22
        install "c$V2"
        run "$NODE" "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
                --spec-version 2026-07-28 --suite all
}

t_run conformance_0_1 legacy
t_run conformance_2026_07_28 modern
t_done
