#!/bin/sh
# Installs the Debian packages in tools/deps.txt that are missing. Runs apt-get only when
# something is missing, so it is cheap to call before every build and test run.
set -eu
here=$(dirname "$0")
pkgs=$(grep -v '^#' "$here/deps.txt")
# One dpkg-query for the list (one a package was two processes each, every build and test
# run); a package it does not know is not printed, so missing.
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $pkgs 2>/dev/null |
        awk '$2 " " $3 " " $4 == "install ok installed" { printf "%s ", $1 }')"
missing=
for p in $pkgs; do
        case $installed in
        *" $p "*) ;;
        *) missing="$missing $p" ;;
        esac
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
