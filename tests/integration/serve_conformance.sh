#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against
# `rtn serve --http`: 0.1.16 with its default scenarios, and the 0.2.0 pre-release with
# `server --spec-version 2026-07-28 --suite all`. Every check passes but those docs/tools.md
# ("Conformance") lists as not applicable, with the reason (the suite's own fixture tools,
# resources and prompts); tests/mcp-client/conformance-check.mjs holds a run to that list,
# and a listed scenario that passes whole is a stale row.
#
# 0.2.0 needs Node 22. The suite installs both versions and Node 22 (npm's `node` package,
# which fetches the node-linux-* binary package) with npm, under its own cache directory,
# RTN_CONFORMANCE_DIR or /var/tmp/rtn-conformance-UID (owned by the caller, mode 700,
# npm's cache inside it: never the user's home), once; npm's own configuration names the
# registry. Where the registry cannot be reached and nothing is installed yet, the cases skip
# with a message. Their client sends no token, so tests/mcp-client/conformance-auth.mjs adds
# it to each request (fetch, undici and node:http alike). Runs on loopback only.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
: "${RTN_CONFORMANCE_DIR:=/var/tmp/rtn-conformance-$(id -u)}"
V1=0.1.16
V2=0.2.0-alpha.12

# A cache directory that is ours alone: another user could plant packages in one it made.
cache_ok() {
        [ -d "$RTN_CONFORMANCE_DIR" ] || (umask 077 && mkdir -p "$RTN_CONFORMANCE_DIR") ||
                return 1
        [ -O "$RTN_CONFORMANCE_DIR" ] && [ ! -L "$RTN_CONFORMANCE_DIR" ] &&
                [ "$(stat -c %a "$RTN_CONFORMANCE_DIR")" = 700 ]
}

# install DIR PACKAGE...: npm install into DIR unless done; skips the case when npm cannot.
# One install at a time (make test's streams of one user may run this suite at once).
install() {
        local dir=$RTN_CONFORMANCE_DIR/$1
        shift
        exec 9>"$RTN_CONFORMANCE_DIR/.lock" && flock 9 || t_fail "lock $RTN_CONFORMANCE_DIR"
        [ -f "$dir/.done" ] && return 0
        command -v npm >/dev/null || t_skip "npm is not installed"
        mkdir -p "$dir" || t_fail "mkdir $dir"
        npm_config_cache=$RTN_CONFORMANCE_DIR/npm-cache T_CMD_TIMEOUT=300 t_cmd \
                npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$@"
        [ "$T_RC" = 0 ] || t_skip "npm install $* failed (npm registry unreachable?): $(tail -c 300 "$T_ERR_FILE")"
        touch "$dir/.done"
}

# run NODE CLI ARGS...: rtn serve --http with a fresh token, the CLI against it, its results
# judged against docs/tools.md.
run() {
        local node=$1 cli=$2
        shift 2
        head -c 32 /dev/urandom | base64 >"$T_TMP/tok"
        chmod 600 "$T_TMP/tok"
        "$RTN" serve --http 127.0.0.1:0 --token-file "$T_TMP/tok" --data-dir "$T_TMP/data" \
                2>"$T_TMP/srv.log" &
        SRV_PID=$!
        trap 'kill $SRV_PID 2>/dev/null; wait $SRV_PID 2>/dev/null' EXIT
        t_wait_for grep -q "listening on" "$T_TMP/srv.log" ||
                t_fail "rtn serve --http did not start: $(head -c 400 "$T_TMP/srv.log")"
        local url
        url=$(grep -o 'http://[^ ]*/mcp' "$T_TMP/srv.log" | head -1)
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
        cache_ok || t_fail "$RTN_CONFORMANCE_DIR is not a directory of ours alone (mode 700)"
        install node22 node@22
        NODE=$RTN_CONFORMANCE_DIR/node22/node_modules/.bin/node
        "$NODE" --version | grep -q '^v22\.' || t_fail "$NODE is not Node 22"
}

legacy() {
        node22
        install "c$V1" "@modelcontextprotocol/conformance@$V1"
        run "$NODE" "$RTN_CONFORMANCE_DIR/c$V1/node_modules/@modelcontextprotocol/conformance/dist/index.js"
}

modern() {
        node22
        install "c$V2" "@modelcontextprotocol/conformance@$V2"
        run "$NODE" "$RTN_CONFORMANCE_DIR/c$V2/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
                --spec-version 2026-07-28 --suite all
}

t_run conformance_0_1 legacy
t_run conformance_2026_07_28 modern
t_done
