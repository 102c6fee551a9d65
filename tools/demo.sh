#!/usr/bin/env bash
# What `make demo` runs: install the Debian packages rtn needs, build, then run a few
# commands with `rtn exec` that show the sandbox from inside: who the command runs as, the
# sandbox's own hostname, the root it sees, a network with only `lo` (read from /proc, no
# `ip` binary needed), host directories that are not there, and a write that never reaches
# the host.
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}

tools/install-deps.sh
make -j"${RTN_JOBS:-2}" O="$O" all
rtn=$O/rtn

run() {
        local a shown=
        for a in "$@"; do
                case $a in
                *[[:space:]\;\&\>\<\|\"]*) shown+=" '$a'" ;;
                *) shown+=" $a" ;;
                esac
        done
        printf '\n$ rtn exec%s\n' "$shown"
        "$rtn" exec "$@" || printf '(exit status %d)\n' "$?"
}

echo
echo "rtn $("$rtn" version | cut -d' ' -f2): every command below runs in a fresh sandbox."
run -- id
run --hostname demo-sandbox -- hostname
run -- ls /
run -- cat /proc/net/dev
run -- sh -c 'ls -A /home /root 2>&1; echo "(the sandbox has its own /home and /root: no host files)"'

marker=/tmp/rtn-demo-$$
run -- sh -c "echo written inside >$marker && cat $marker"
printf '\n$ cat %s    # on the host\n' "$marker"
cat "$marker" 2>&1 || true
run -- cat "$marker"

echo
echo "== rtn serve: the MCP server an agent talks to (persistent sandboxes, one to start) =="
demo_data=$(mktemp -d)
RTN_DATA_DIR=$demo_data python3 tools/mcp-demo.py "$rtn"
rm -rf "$demo_data"
