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
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -q >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >&2
