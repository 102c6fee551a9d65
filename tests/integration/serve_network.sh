#!/usr/bin/env bash
# `rtn serve --allow-net`: refusals reported in each command's result and in env_status,
# against the hosts this machine reaches (its Debian mirror allowed, the npm registry not).
# Driven over stdio by a small Python MCP client (the scenarios are in serve_network.py).
. "$(dirname "$0")/../lib.sh"
t_need_rtn

PY=$T_ROOT/tests/integration/serve_network.py

MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v '^[[:space:]]*#' |
        grep -oE 'https?://[^/ ]+' | head -1 | sed -E 's#https?://##; s#:.*##')
REFUSED=registry.npmjs.org

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        if [ "$1" = reports ]; then
                [ -n "$MIRROR" ] || t_skip "no http(s) mirror in /etc/apt/sources.list*"
                curl -sS -o /dev/null -m 20 "https://$MIRROR/" 2>/dev/null ||
                        t_skip "this machine does not reach https://$MIRROR/"
        fi
        t_cmd python3 "$PY" "$RTN" "$1" "$MIRROR" "$REFUSED"
        [ "$T_RC" = 0 ] || t_fail "$(tail -c 1500 "$T_ERR_FILE")"
}

for s in reports loopback; do
        t_run "serve_network_$s" scenario "$s"
done
t_done
