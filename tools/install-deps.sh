#!/bin/sh
# Installs the Debian packages in tools/deps.txt that are missing. Runs apt-get only when
# something is missing, so it is cheap to call before every build and test run.
set -eu
here=$(dirname "$0")
missing=
for p in $(grep -v '^#' "$here/deps.txt"); do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
                missing="$missing $p"
done
# Node and npm run the MCP SDK client in tests/mcp-client. Only when there is no npm at all:
# a node from another source (e.g. a nodesource nodejs, which bundles npm) is fine as is,
# and Debian's npm package would conflict with it.
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -q >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >&2
