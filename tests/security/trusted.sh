#!/usr/bin/env bash
# The sandbox against the trusted side of `rtn serve` (docs/security-invariants.md, 17-19),
# driven by a threaded MCP client (trusted.py) that pings the server every 20 ms while a job
# attacks: every ping must be answered within 100 ms and stdin EOF must still end the server.
#   swap_fifo   a job swaps a file and a FIFO (renameat2 RENAME_EXCHANGE) while env_status
#               and env_diff run 1000 times (the walk opened the FIFO and blocked for good)
#   big_tree    env_status and env_diff over 150000 names (the walk ran on the loop: seconds)
#   big_results the largest results a job can make stay under 8 MiB a message, cut and flagged
#               (1 MiB of control characters on each stream was a 12 MiB result)
#   proc_reads  file_read of /proc files that check permission at read time equals cat
#               inside (rtn read them with its own credentials: rtn-init's addresses, and
#               kernel pointers in /proc/net/unix with kernel.kptr_restrict=1, set here
#               when root and restored after)
. "$(dirname "$0")/../lib.sh"
t_need_rtn

PY=$T_ROOT/tests/security/trusted.py

scenario() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        t_cmd python3 "$PY" "$RTN" "$1"
        grep '^#' "$T_ERR_FILE" | while read -r l; do t_note "${l#\# }"; done
        [ "$T_RC" = 0 ] || t_fail "$(grep -v '^#' "$T_ERR_FILE" | tail -c 1500)"
}

# kernel.kptr_restrict=1 (Ubuntu's default) makes %pK depend on the reader's CAP_SYSLOG;
# only root can set it, and it is put back whatever happens.
proc_reads() {
        local kptr=/proc/sys/kernel/kptr_restrict old=
        if [ "$(id -u)" = 0 ] && [ -w "$kptr" ]; then
                old=$(cat "$kptr")
                trap 'echo "$old" >'"$kptr" EXIT
                echo 1 >"$kptr"
        fi
        scenario proc_reads
}

t_run swap_fifo scenario swap_fifo
t_run big_tree scenario big_tree
t_run big_results scenario big_results
t_run proc_reads proc_reads
t_done
