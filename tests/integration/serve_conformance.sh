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
# RTN_CONFORMANCE_DIR or /var/tmp/rtn-conformance-UID (the caller's, writable by no one
# else, npm's cache inside it: never the user's home), once; npm's own configuration names the
# registry. An unprivileged user without an install of its own uses root's complete one
# (/var/tmp/rtn-conformance-0: make test runs root's streams first, and the unprivileged
# users may have no registry). Where nothing is installed and the registry cannot be
# reached, the cases skip with a message. The suite's client sends no token, so
# tests/mcp-client/conformance-auth.mjs adds it to each request (fetch, undici and
# node:http alike). Runs on loopback only.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

client_dir=$T_ROOT/tests/mcp-client
: "${RTN_CONFORMANCE_DIR:=/var/tmp/rtn-conformance-$(id -u)}"
V1=0.1.16
V2=0.2.0-alpha.12

ROOT_DIR=/var/tmp/rtn-conformance-0

# dir_safe DIR [UID]: DIR is a directory (not a link) of UID (default: ours) that no one
# else may write: another user could plant packages in one they can write.
dir_safe() {
        [ -d "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %u "$1")" = "${2:-$(id -u)}" ] &&
                [ -z "$(find "$1" -maxdepth 0 -perm /022)" ]
}

cache_ok() {
        [ -d "$RTN_CONFORMANCE_DIR" ] || (umask 022 && mkdir -p "$RTN_CONFORMANCE_DIR") ||
                return 1
        dir_safe "$RTN_CONFORMANCE_DIR"
}

# install NAME PACKAGE...: sets DIR to an install of PACKAGE: ours (npm install into
# $RTN_CONFORMANCE_DIR/NAME, once), or root's complete one (only root can write it, and
# make test's unprivileged users may have no registry); skips the case when npm cannot.
# One install at a time (make test's streams of one user may run this suite at once).
install() {
        local name=$1
        shift
        DIR=$RTN_CONFORMANCE_DIR/$name
        exec 9>"$RTN_CONFORMANCE_DIR/.lock" || t_fail "open $RTN_CONFORMANCE_DIR/.lock"
        flock 9 || t_fail "lock $RTN_CONFORMANCE_DIR"
        [ -f "$DIR/.done" ] && return 0
        if [ "$(id -u)" != 0 ] && [ -f "$ROOT_DIR/$name/.done" ] && dir_safe "$ROOT_DIR" 0 &&
                dir_safe "$ROOT_DIR/$name" 0; then
                DIR=$ROOT_DIR/$name
                return 0
        fi
        command -v npm >/dev/null || t_skip "npm is not installed"
        mkdir -p "$DIR" || t_fail "mkdir $DIR"
        # npm's cache and logs are the caller's alone; the installs may be read by others.
        (umask 077 && mkdir -p "$RTN_CONFORMANCE_DIR/npm-cache") || t_fail "mkdir npm-cache"
        npm_config_cache=$RTN_CONFORMANCE_DIR/npm-cache npm_config_fetch_retries=0 \
                T_CMD_TIMEOUT=300 t_cmd npm install --prefix "$DIR" --no-audit --no-fund \
                --no-save --loglevel=error "$@"
        [ "$T_RC" = 0 ] || t_skip "npm install $* failed (npm registry unreachable?): $(grep -m1 'npm error' "$T_ERR_FILE")"
        touch "$DIR/.done"
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
        cache_ok || t_fail "$RTN_CONFORMANCE_DIR is not a directory of ours that only we can write"
        install node22 node@22
        NODE=$DIR/node_modules/.bin/node
        "$NODE" --version | grep -q '^v22\.' || t_fail "$NODE is not Node 22"
}

legacy() {
        node22
        install "c$V1" "@modelcontextprotocol/conformance@$V1"
        run "$NODE" "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
}

modern() {
        node22
        install "c$V2" "@modelcontextprotocol/conformance@$V2"
        run "$NODE" "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
                --spec-version 2026-07-28 --suite all
}

t_run conformance_0_1 legacy
t_run conformance_2026_07_28 modern
t_done
