#!/usr/bin/env bash
# Installs what tests/integration/serve_conformance.sh runs: Node 22 (npm's `node` package,
# which fetches the node-linux-* binary package) and the two versions of
# @modelcontextprotocol/conformance, each into DIR/NAME with npm (its cache and logs in
# DIR/npm-cache, the caller's alone; npm's own configuration names the registry), once: a
# finished install is marked DIR/NAME/.done. One install at a time (DIR/.lock). DIR must be a
# directory of the caller's that no one else may write (another user could plant packages).
# tools/test.sh runs it as root before the streams start, so that an unprivileged user, who
# may have no registry, finds root's install complete.
#
#   tests/mcp-client/conformance-install.sh DIR      prints the versions: "V1 V2"
#   tests/mcp-client/conformance-install.sh --versions
set -uo pipefail

V1=0.1.16
V2=0.2.0-alpha.12
if [ "${1:-}" = --versions ]; then
        echo "$V1 $V2"
        exit 0
fi
DIR=${1:?usage: conformance-install.sh DIR}

[ -d "$DIR" ] || (umask 022 && mkdir -p "$DIR") || exit 1
if [ -L "$DIR" ] || [ "$(stat -c %u "$DIR")" != "$(id -u)" ] || [ -n "$(find "$DIR" -maxdepth 0 -perm /022)" ]; then
        echo "conformance-install.sh: $DIR is not a directory of ours that only we can write" >&2
        exit 1
fi
command -v npm >/dev/null || {
        echo "conformance-install.sh: npm is not installed" >&2
        exit 1
}
exec 9>"$DIR/.lock" || exit 1
flock 9 || exit 1
(umask 077 && mkdir -p "$DIR/npm-cache") || exit 1

# one NAME PACKAGE: npm install PACKAGE into DIR/NAME unless done.
one() {
        [ -f "$DIR/$1/.done" ] && return 0
        mkdir -p "$DIR/$1" || return 1
        npm_config_cache=$DIR/npm-cache npm_config_fetch_retries=0 timeout 300 \
                npm install --prefix "$DIR/$1" --no-audit --no-fund --no-save --loglevel=error "$2" \
                </dev/null || return 1
        touch "$DIR/$1/.done"
}
one node22 node@22 && one "c$V1" "@modelcontextprotocol/conformance@$V1" &&
        one "c$V2" "@modelcontextprotocol/conformance@$V2"
