#!/usr/bin/env bash
# Resource exhaustion from inside: a fork bomb meets the pid namespace's pid_max (EAGAIN),
# the host stays responsive and the sandbox ends with nothing left behind; a memory bomb
# meets --memory-max (the sandbox cgroup's memory.max where cgroup v2 has the memory
# controller for us, else RLIMIT_DATA per process); filling the disk meets the tmpfs upper's size (ENOSPC) and the host's
# disk is untouched.
# test.sh: alone (its bombs fill the per-user process count and memory on purpose: no other suite of its stream runs meanwhile)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn
# The bomb's argument is its fork count, made this suite's own so that the check for bombs
# left on the host finds only this run's (other suites run at once).
BOMB_N=$((100000 + T_UNIQ))

fork_bomb() {
        sec_need_bin bomb
        local start end
        start=$(date +%s%N)
        sec_exec --pids-max 1024 -- /mnt/sec/bomb fork "$BOMB_N"
        end=$(date +%s%N)
        t_exit_is 0
        t_stdout_has "Resource temporarily unavailable"
        # the bomb's children (sleeping in pause) are all gone with the sandbox
        [ -z "$(t_host_pids /mnt/sec/bomb fork "$BOMB_N")" ] || t_fail "bomb processes left on the host"
        [ $(((end - start) / 1000000)) -lt 20000 ] || t_fail "the bomb took $(((end - start) / 1000000)) ms"
}

# With the default limit too, and the host answers while the bomb runs.
fork_bomb_default_host_responsive() {
        sec_need_bin bomb
        "$RTN" exec --bind "$SEC_BIN:/mnt/sec:ro" -- /mnt/sec/bomb fork "$BOMB_N" \
                >"$T_TMP/out" 2>&1 </dev/null &
        local bg=$! t0 t1 rc=0
        sleep 0.3
        t0=$(date +%s%N)
        /bin/true && ls / >/dev/null
        t1=$(date +%s%N)
        wait "$bg" || rc=$?
        [ "$rc" = 0 ] || t_fail "bomb exited $rc: $(head -c 300 "$T_TMP/out")"
        grep -q "Resource temporarily unavailable" "$T_TMP/out" || t_fail "$(cat "$T_TMP/out")"
        [ $(((t1 - t0) / 1000000)) -lt 2000 ] || t_fail "host took $(((t1 - t0) / 1000000)) ms to run true"
}

pid_max_is_set() {
        t_exec --pids-max 777 -- cat /proc/sys/kernel/pid_max
        t_exit_is 0
        t_stdout_is 777
        t_exec -- cat /proc/sys/kernel/pid_max
        t_stdout_is 4096
}

# The cgroup v2 facts rtn acts on (runtime/sandbox/cgroup.c): the cgroup2 mount, our 0:: cgroup,
# whether it is ours to write and its cgroup.controllers.
CG_MOUNT=$(awk '{for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } ; break }}' /proc/self/mountinfo)
CG_SELF=$(sed -n 's/^0:://p' /proc/self/cgroup)
CG_DIR=$CG_MOUNT${CG_SELF%/}

# Why memory.max cannot be had here, or nothing when it can.
cg_no_memory() {
        if [ -z "$CG_MOUNT" ] || [ -z "$CG_SELF" ]; then
                echo "no cgroup v2 hierarchy (mountinfo has no cgroup2 mount, or no 0:: line in /proc/self/cgroup)"
        elif ! [ -w "$CG_DIR" ] || ! [ -w "$CG_DIR/cgroup.procs" ]; then
                echo "cgroup $CG_SELF ($CG_DIR) is not writable by uid $(id -u)"
        elif ! grep -qw memory "$CG_DIR/cgroup.controllers"; then
                echo "the memory controller is not in $CG_DIR/cgroup.controllers ($(cat "$CG_DIR/cgroup.controllers"))"
        fi
}

# Without the memory controller --memory-max is RLIMIT_DATA per process: malloc fails.
memory_bomb() {
        sec_need_bin bomb
        local why
        why=$(cg_no_memory)
        [ -n "$why" ] || t_skip "the memory controller is available: memory.max applies (memory_bomb_cgroup)"
        sec_exec --memory-max 256M -- /mnt/sec/bomb mem 4096
        t_exit_is 0
        t_stdout_has "malloc failed"
        t_stderr_has "memory limit is RLIMIT_DATA per process"
}

# The fallback is one real runtimes survive: node (a worker thread, npm) and python start
# and finish under --memory-max 512M. RLIMIT_AS, the fallback before, killed node at start ("Fatal process OOM
# ... CodeRange", 133) below a few GiB, as V8 reserves address space it never uses; a
# runtime that hangs instead fails here by the timeout.
runtimes_survive_memory_max() {
        local why
        why=$(cg_no_memory)
        [ -n "$why" ] || t_skip "the memory controller is available: memory.max applies"
        command -v node >/dev/null || t_skip "node is not installed"
        t_cmd timeout 60 "$RTN" exec --memory-max 512M -- node -e '
                const { Worker } = require("worker_threads");
                new Worker("require(\"worker_threads\").parentPort.postMessage(6 * 7)", { eval: true })
                        .on("message", (m) => console.log("worker", m));'
        t_exit_is 0
        t_stdout_is "worker 42"
        if command -v npm >/dev/null; then
                t_cmd timeout 60 "$RTN" exec --memory-max 512M -- npm --version
                t_exit_is 0
        fi
        if [ -x /usr/bin/python3 ]; then
                t_cmd timeout 60 "$RTN" exec --memory-max 512M -- /usr/bin/python3 -c 'import json, ssl; print(len(bytearray(64 << 20)))'
                t_exit_is 0
                t_stdout_is $((64 << 20))
        fi
}

# With it, the sandbox's memory.max (swap.max 0) stops the bomb: the OOM killer ends it
# inside its cgroup (SIGKILL, 137) long before the 4 GiB it wants, and no RLIMIT_DATA warning.
memory_bomb_cgroup() {
        sec_need_bin bomb
        local why
        why=$(cg_no_memory)
        [ -z "$why" ] || t_skip "memory.max cannot be set here: $why"
        sec_exec --memory-max 256M -- /mnt/sec/bomb mem 4096
        if grep -q "not a cgroup memory.max" "$T_ERR_FILE"; then
                # listed and writable: only the no-internal-process rule may refuse it
                grep -q "holds processes other than rtn" "$T_ERR_FILE" ||
                        t_fail "memory is listed, yet: $(cat "$T_ERR_FILE")"
                t_skip "cgroup v2's no-internal-process rule: $(cat "$T_ERR_FILE")"
        fi
        t_exit_is 137
        ! grep -q "malloc failed" "$T_OUT_FILE" || t_fail "malloc failed before memory.max: $(cat "$T_OUT_FILE")"
}

# Filling /tmp and the overlay upper (a system dir's copy-up space) ends in ENOSPC at the
# configured size, and the host's / and $TMPDIR do not hold the data: their free space is
# read while the sandbox still holds its full file (a leak that rtn cleans up at exit counts
# too). Other suites write to the same filesystems meanwhile, so the signal is made large:
# a leak costs the host the whole 256 MiB, and less than half of it is noise.
disk_fill() {
        local where=$1 size=256 out=$T_TMP/fill.out pid i b a lost=()
        b=$(df -k --output=avail / "${TMPDIR:-/tmp}" | tail -n +2 | tr '\n' ' ')
        "$RTN" exec --upper-size "${size}M" -- sh -c \
                "dd if=/dev/zero of=$where bs=1M count=$((size * 3 / 2)) 2>&1; ls -l $where; echo filled; exec sleep 120" \
                </dev/null >"$out" 2>"$T_TMP/fill.err" &
        pid=$!
        for ((i = 0; i < 600; i++)); do
                grep -qx filled "$out" && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        a=$(df -k --output=avail / "${TMPDIR:-/tmp}" | tail -n +2 | tr '\n' ' ')
        kill -TERM "$pid" 2>/dev/null
        wait "$pid"
        grep -qx filled "$out" || t_fail "the sandbox never filled $where: $(cat "$out" "$T_TMP/fill.err")"
        grep -q "No space left on device" "$out" || t_fail "no ENOSPC: $(cat "$out")"
        grep -qE ' 2[56][0-9]{7} ' "$out" || t_fail "file size not near ${size}M: $(cat "$out")"
        read -ra b <<<"$b"
        read -ra a <<<"$a"
        for i in 0 1; do
                [ $((b[i] - a[i])) -lt $((size * 1024 / 2)) ] || lost+=("$((b[i] - a[i])) KiB")
        done
        [ ${#lost[@]} = 0 ] || t_fail "the host's / and \$TMPDIR lost ${lost[*]} while the sandbox held ${size} MiB"
}

upper_size_is_default() {
        t_exec -- sh -c 'df -k /tmp | tail -1'
        t_stdout_has " 2097152 "
}

# The tmpfs a command may hold (an upper and a /tmp of --upper-size per sandbox), against
# the machine's memory: a size one sandbox alone cannot have is refused with the numbers,
# and a server whose --max-sandboxes of them pass memory says so with the numbers.
tmpfs_memory() {
        local q
        q=$(awk '/^(MemTotal|SwapTotal):/ {k += $2} END {print int(k / 1024 / 40)}' /proc/meminfo)
        t_exec --upper-size 1024G -- true
        t_exit_is 125
        t_stderr_has "gives a sandbox 2097152 MiB of tmpfs (its upper and /tmp), more than this machine's memory"
        # rtn serve's /tmp is on its upper's tmpfs: one --upper-size per sandbox, not two.
        t_cmd "$RTN" serve --upper-size 1024G --max-sandboxes 1024
        [ "$T_RC" != 0 ] || t_fail "rtn serve accepted --upper-size 1024G --max-sandboxes 1024"
        t_stderr_has "gives a sandbox 1048576 MiB of tmpfs (its upper, /tmp included)"
        t_cmd "$RTN" serve --upper-size "${q}M" --max-sandboxes 1024
        t_exit_is 0
        t_stderr_has "warning: 1024 sandboxes (--max-sandboxes) of $q MiB of tmpfs each"
        t_stderr_has "may hold $((1024 * q)) MiB, more than this machine's memory"
        t_exec --upper-size "${q}M" -- true
        t_exit_is 0
        grep -q tmpfs "$T_ERR_FILE" && t_fail "one sandbox that fits was warned about: $(cat "$T_ERR_FILE")"
        true
}

t_run fork_bomb fork_bomb
t_run fork_bomb_default_host_responsive fork_bomb_default_host_responsive
t_run pid_max_is_set pid_max_is_set
t_run memory_bomb memory_bomb
t_run memory_bomb_cgroup memory_bomb_cgroup
t_run runtimes_survive_memory_max runtimes_survive_memory_max
t_run disk_fill_tmp disk_fill /tmp/fill
t_run disk_fill_upper disk_fill /var/tmp/fill
t_run disk_fill_home disk_fill '$HOME/fill'
t_run upper_size_is_default upper_size_is_default
t_run tmpfs_memory tmpfs_memory
t_done
