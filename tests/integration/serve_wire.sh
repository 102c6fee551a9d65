#!/usr/bin/env bash
# rtn serve on the wire (tests/integration/mcp_wire.py): malformed and oversized input gets
# the right JSON-RPC errors and the server keeps going; calls interleave; cancellation kills
# the command and suppresses the answer; progress notifications; a dead rtn-init is reported
# and replaced on the same upper; a command cut off by env_reset, env_discard or
# bind_host_dir is told so (not that init died); stdin EOF ends the server and every sandbox
# promptly; calls the seccomp filter blocked come back as a report in the result.
. "$(dirname "$0")/../lib.sh"
t_need_rtn


wire() {
        t_cmd python3 "$T_ROOT/tests/integration/mcp_wire.py" "$RTN" "$1"
        t_exit_is 0
}
for s in malformed oversized interleaved cancelled progress init_death init_death_race cut_off eof batch_2025_03_26 blocked; do
        t_run "$s" wire "$s"
done
t_done
