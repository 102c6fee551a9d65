#!/usr/bin/env bash
# What a cold `rtn exec -- true` does, counted with strace (docs/benchmarks.md, "Where the
# time goes"): work that only some runs need is done only by them, and what every run needs
# is done once. Each case names a cost that crept onto every start once: a child that tried
# a user namespace before the sandbox's own (the Landlock fallback's probe, which only a
# start that fails needs), /proc/self/cgroup and /proc/meminfo read twice, the identity
# files written a line at a time, every entry of `rtn ps`'s registry read by each start,
# rtn-init's opens of a path in two calls each, its bounding set read bit by bit, a mkdir
# per component of each directory's path, Landlock rulesets no command of the run can use,
# a stat and an fstat per Landlock rule, the store opened twice, the cgroup dir listed by a
# start that makes no cgroup, and 32 KiB of thread-local storage zeroed by every rtn. Counting
# syscalls (and bytes), not timing them, keeps the suite quick and immune to a busy machine.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

# Traces `rtn exec -- true` into $T_TMP/trace (every process, -f). newuidmap loses its
# setuid bit under a tracer, so where rtn needs it (a caller with a subordinate range) the
# traced start cannot map its ids: that caller is skipped.
trace_exec() {
        command -v strace >/dev/null || t_skip "strace is not installed (tools/deps.txt)"
        t_cmd strace -f -qq -s 64 -o "$T_TMP/trace" "$RTN" exec -- true
        if [ "$T_RC" != 0 ] && grep -q newuidmap "$T_TMP/trace"; then
                t_skip "newuidmap runs without its setuid bit under strace"
        fi
        t_exit_is 0
}

# Lines of the trace that match the extended regex $1.
count() {
        grep -cE "$1" "$T_TMP/trace"
}

# The sandbox's child writes its namespaces' sysctls (pid_max, /proc/sys/user/max_*) through
# the sandbox's own procfs, never the host's: a lookup in the host's /proc/sys from a new
# user or pid namespace leaves a dentry and an inode there for that namespace's table, which
# outlive the sandbox, so every later listing of /proc/sys/user (each start's budgets) and
# every child's lookup walked one more per sandbox made since boot (500 starts: 12 inodes
# each, the listing 234 -> 771 us; docs/benchmarks.md, "A fifth time").
sysctls_through_own_proc() {
        trace_exec
        local host
        host=$(grep -E 'open(at)?\(AT_FDCWD, "/proc/sys/(user/max_|kernel/pid_max).*O_WRONLY' "$T_TMP/trace")
        [ -z "$host" ] || t_fail "written through the host's /proc: $host"
        local f
        for f in user/max_user_namespaces kernel/pid_max; do
                grep -qE "open(at)?\(.*/proc/sys/$f\".*O_WRONLY" "$T_TMP/trace" ||
                        t_fail "$f not written: $(grep -E 'proc/sys' "$T_TMP/trace")"
        done
}

one_user_namespace() {
        trace_exec
        local n
        n=$(count 'clone3?\(.*CLONE_NEWUSER|unshare\(.*CLONE_NEWUSER')
        [ "$n" = 1 ] || t_fail "$n user namespaces made for one start: $(grep -E 'CLONE_NEWUSER' "$T_TMP/trace")"
}

proc_files_once() {
        trace_exec
        local f n
        for f in /proc/self/cgroup /proc/meminfo; do
                n=$(count "open(at)?\(.*\"$f\"")
                [ "$n" -le 1 ] || t_fail "$f opened $n times for one start"
        done
}

# The sandbox's /etc/passwd and /etc/group: made in one write each after the line of root
# and the agent, however many lines the base's have.
identity_files_whole() {
        trace_exec
        local f n
        for f in passwd group; do
                grep -q "id/etc/$f\"" "$T_TMP/trace" || continue # an agent that is root keeps the base's
                n=$(awk -v f="id/etc/$f\"" '
                        index($0, f) && /open(at)?\(/ {
                                pid = $1; fd = $NF; on = 1; if (/<unfinished/) fd = ""; next
                        }
                        on && fd == "" && $1 == pid && /resumed>/ { fd = $NF; next }
                        on && $1 == pid && $2 ~ "^write\\(" fd "," { n++ }
                        on && $1 == pid && $2 ~ "^close\\(" fd "(\\)|$)" { on = 0 }
                        END { print n + 0 }' "$T_TMP/trace")
                [ "$n" -le 2 ] || t_fail "/etc/$f written in $n writes"
        done
}

# A start reads none of the other runs' entries in the registry (runtime/session/registry.c):
# it used to check each for staleness, N opens and reads per start with N sandboxes running.
# A listing drops a stale entry instead.
registry_entries_unread() {
        export XDG_RUNTIME_DIR=$T_TMP/run
        local reg stale=$$-1 # our shell's pid with another start time: a reused pid
        reg=$(t_registry)
        mkdir -m 700 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/rtn" "$XDG_RUNTIME_DIR/rtn/running" "$reg"
        printf 'kind=exec\nsince=1\nenv=x\ndata_dir=x\ncommand=rtn x\n' >"$reg/$stale"
        trace_exec
        local n
        n=$(count "open(at)?\(.*\"$stale\"")
        [ "$n" = 0 ] || t_fail "a start opened another run's entry $n times"
        t_exit_is 0 "$RTN" ps
        t_no_file "$reg/$stale"
}

# rtn-init opens every path in one system call: musl's open(2) wrapper follows an O_CLOEXEC
# open with fcntl(F_SETFD) (for kernels older than 2.6.23), one more call per path of the
# Landlock rulesets (~50 per start), and a call costs microseconds in a virtual machine.
init_opens_alone() {
        trace_exec
        local n
        n=$(awk '/execveat\(/ { init = $1 }
                init && $1 == init && /fcntl\([0-9]+, F_SETFD, FD_CLOEXEC\)/ { n++ }
                END { print n + 0 }' "$T_TMP/trace")
        [ "$n" -le 2 ] || t_fail "rtn-init set FD_CLOEXEC by fcntl $n times after opening"
}

# The child makes each directory of the sandbox's root in one mkdir: not one per component of
# its path, each an EEXIST but the last.
mkdirs_once() {
        trace_exec
        local n
        n=$(count '^[0-9]+ +mkdir\(.*EEXIST')
        [ "$n" -le 2 ] || t_fail "$n mkdirs of directories that were there: $(grep -E 'mkdir\(.*EEXIST' "$T_TMP/trace" | head -5)"
}

# rtn-init learns its bounding set from one read of /proc/thread-self/status, not one
# PR_CAPBSET_READ per capability (41 on Linux 6.x) each time it cuts the set.
bounding_read_at_once() {
        trace_exec
        local n
        n=$(count 'prctl\(PR_CAPBSET_READ')
        [ "$n" -le 2 ] || t_fail "the bounding set read bit by bit: $n PR_CAPBSET_READ"
}

# An rtn exec runs agent commands only (its own, rtn enter's): rtn-init builds the agent's
# Landlock ruleset, not a root command's by call nor provisioning's (each a walk of /).
one_ruleset() {
        trace_exec
        local n
        n=$(count 'landlock_create_ruleset\(\{')
        [ "$n" = 1 ] || t_fail "$n Landlock rulesets built for one command"
}

# Each rule of the agent's ruleset is an open, landlock_add_rule and a close: the type of a
# path comes from the open (O_DIRECTORY) where its rights depend on it, not from a stat
# before it and an fstat after.
three_calls_per_rule() {
        trace_exec
        local calls rules
        read -r calls rules < <(awk '/execveat\(/ { init = $1 }
                init && $1 == init && /landlock_create_ruleset\(\{/ { on = 1; next }
                on && $1 == init && $2 != "<..." { # a call another process interrupted resumes
                        if ($2 !~ /^(openat|open|stat|newfstatat|fstat|lstat|statx|close|landlock_add_rule)\(/) exit
                        calls++
                        if ($2 ~ /^landlock_add_rule\(/) rules++
                }
                END { print calls + 0, rules + 0 }' "$T_TMP/trace")
        [ "$rules" -gt 0 ] || t_fail "no rule of the agent's ruleset in the trace"
        [ "$calls" -le $((3 * rules + 2)) ] || t_fail "$calls system calls for $rules Landlock rules"
}

# The store is opened once: the environment's base is looked up in the store the run opens
# for its layers, not in one opened before it (each open ~20 system calls).
store_opened_once() {
        mkdir -p "$RTN_DATA_DIR" # a data dir, and the store a first start makes in it
        t_exit_is 0 "$RTN" exec -- true
        trace_exec
        local n
        n=$(count '^[0-9]+ +openat\([0-9]+, "layers".* = [0-9]+$')
        [ "$n" = 1 ] || t_fail "the store's layers/ opened $n times for one start"
}

# The stale cgroups of killed rtn processes are swept by a start that makes a cgroup of its
# own (RTN_CGROUP, a controller to enforce with): one that makes none lists no cgroup dir.
cgroup_swept_when_made() {
        trace_exec
        local n
        n=$(awk '$2 == "openat(AT_FDCWD," && $3 ~ /^"\/sys\/fs\/cgroup/ && /O_PATH\|O_DIRECTORY/ {
                        dir[$1] = $NF
                }
                $1 in dir && $2 == "mkdirat(" dir[$1] "," && $3 ~ /^"rtn-/ { made = 1 }
                $1 in dir && $2 == "openat(" dir[$1] "," && $3 == "\".\"," { listed++ }
                END { print made ? 0 : listed + 0 }' "$T_TMP/trace")
        [ "$n" = 0 ] || t_fail "the cgroup dir listed $n times by a start that made no cgroup"
}

# The message types of each send call on a control socket, one call a line: "PID TYPES", rtn's
# CONFIG and spawn request in one sendmmsg being "PID 2 4" (common/initproto.h's numbers),
# rtn-init's calls "init TYPES"; a call strace shows unfinished is completed by its resumed
# line. Then, as "look N", what rtn-init's first look at its socket without waiting (epoll,
# timeout 0) found.
send_types() {
        awk -v init="$(awk '/execveat\(/ { print $1; exit }' "$T_TMP/trace")" '
                function types(s,   out) {
                        out = ""
                        while (match(s, /iov_base="\\[0-9]+\\0\\0\\0/)) {
                                out = out " " substr(s, RSTART + 11, RLENGTH - 17)
                                s = substr(s, RSTART + RLENGTH)
                        }
                        return out
                }
                $2 ~ /^send(m)?msg\(/ { n++; pid[n] = $1; call[$1] = n; t[n] = types($0); next }
                $2 == "<..." && $3 ~ /^send(m)?msg$/ && ($1 in call) { t[call[$1]] = t[call[$1]] types($0) }
                $1 == init && !looked && /epoll_p?wait/ && match($0, /, 0(, NULL, [0-9]+)?\) = [0-9]+/) {
                        looked = 1
                        print "look", substr($0, RSTART + RLENGTH - 1)
                }
                END {
                        for (i = 1; i <= n; i++)
                                if (t[i] != "") print (pid[i] == init ? "init" : pid[i]) t[i]
                }' "$T_TMP/trace"
}

# rtn-init answers a start in one hand-off: READY and CONFIGURED held until the spawn
# request queued behind CONFIG is served, then sent with SPAWNED in one sendmmsg, so rtn is
# woken once for the three, not three times (docs/benchmarks.md, "The hand-offs of a cold
# start"). With the command's EXITED: two sends for a start and an end, where there were
# four. rtn sends CONFIG and the request in one sendmmsg, so rtn-init, which reads CONFIG and
# then looks, finds the request queued however long rtn took between the two: registering
# the run on a loaded machine once made that a race this case lost (three sends).
init_answers_at_once() {
        trace_exec
        local sends
        sends=$(send_types)
        grep -qE '^[0-9]+ 2 4$' <<<"$sends" ||
                t_fail "rtn did not send CONFIG and the spawn request in one call: $(grep -E '^[0-9]+ .*\b[24]\b' <<<"$sends")"
        grep -qx "look 1" <<<"$sends" ||
                t_fail "rtn-init's look behind CONFIG did not find the spawn request queued: $(grep ^look <<<"$sends")"
        local mine
        mine=$(grep "^init " <<<"$sends" | cut -d' ' -f2- | paste -sd';')
        [ "$mine" = "1 3 5;7" ] ||
                t_fail "rtn-init's sends for one command (types, a call each): $mine, not 1 3 5;7"
}

# The sandbox child opens the host objects of its root (the base's directories, layers, the
# workspace) while rtn writes its id maps, not after: they need no mapped id, and its wait for
# GO then finds GO sent (docs/benchmarks.md, "The hand-offs of a cold start").
child_opens_before_go() {
        trace_exec
        local order
        order=$(awk '/execveat\(/ && !child { child = $1 }
                { line[NR] = $0; pid[NR] = $1 }
                END {
                        for (i = 1; i <= NR; i++) {
                                if (pid[i] != child) continue
                                if (!go && line[i] ~ /recvmsg\(/) go = i
                                if (!op && line[i] ~ /openat\(.*O_PATH/) op = i
                        }
                        print (op && go && op < go) ? "before" : "after"
                }' "$T_TMP/trace")
        [ "$order" = before ] || t_fail "the child opened its host objects only after GO"
}

# ...and what only the maps let it open is opened again after GO: a bind source below a
# directory that only the sandbox's ids may search (root's subordinate range, mode 0700),
# which root's child can reach only once that range is mapped. Left to itself, whether the
# child's first try comes before the maps is a race (a start that gave up on it failed about
# one run in ten); here rtn's clone3 returns half a second late (strace's delay injection),
# so the child's first try comes before rtn has even begun the maps, every run, and the
# trace shows it: refused, GO, opened.
child_opens_again_after_go() {
        [ "$(id -u)" = 0 ] || t_skip "root's subordinate range owns the directory"
        command -v strace >/dev/null || t_skip "strace is not installed (tools/deps.txt)"
        local sub
        sub=$("$RTN" exec -- cat /proc/self/uid_map | awk '{ print $2 }')
        [ -n "$sub" ] && [ "$sub" != 0 ] || t_skip "no subordinate range mapped"
        mkdir -p "$T_TMP/sub/src"
        echo hi >"$T_TMP/sub/src/f"
        chown "$sub:$sub" "$T_TMP/sub"
        chmod 700 "$T_TMP/sub"
        t_cmd strace -f -qq -o "$T_TMP/trace" -e inject=clone3:delay_exit=500000 \
                "$RTN" exec --bind "$T_TMP/sub/src:/mnt:ro" -- cat /mnt/f
        local order
        order=$(awk -v src="\"$T_TMP/sub/src\"," '
                $2 ~ /^clone3\(/ && !parent { parent = $1 }
                parent && $1 != parent && !child && $2 ~ /^openat2\(/ && $3 == src { child = $1 }
                child && $1 == child && $2 ~ /^openat2\(/ && $3 == src {
                        out = out (/= -1 EACCES/ ? " refused" : " opened"); next
                }
                child && $1 == child && /recvmsg\(/ && !go { go = 1; out = out " go" }
                END { print out }' "$T_TMP/trace")
        case $order in
        " opened"*) t_skip "the child's first try came after its maps all the same (a loaded machine)" ;;
        esac
        t_exit_is 0
        t_stdout_is hi
        [ "$order" = " refused go opened" ] ||
                t_fail "the child's opens of the bind source and its GO: $order, not refused go opened"
}

# rtn's thread-local storage is zeroed by every thread of every rtn when it starts: a 32 KiB
# buffer there (netns/tls.c's ClientHello) was 8 page faults on each start, used only by a
# gate's CONNECT.
tls_small() {
        command -v readelf >/dev/null || t_skip "readelf is not installed (binutils)"
        local type size memsz=0x0 # readelf -lW: Type Offset VirtAddr PhysAddr FileSiz MemSiz ...
        while read -r type _ _ _ _ size _; do
                [ "$type" = TLS ] && memsz=$size
        done < <(readelf -lW "$RTN")
        [ $((memsz)) -le 4096 ] || t_fail "rtn's TLS segment is $((memsz)) bytes (more than 4 KiB)"
}

t_run one_user_namespace_per_start one_user_namespace
t_run sysctls_through_own_proc sysctls_through_own_proc
t_run thread_local_storage_small tls_small
t_run proc_files_read_once proc_files_once
t_run identity_files_written_whole identity_files_whole
t_run registry_entries_unread registry_entries_unread
t_run init_opens_alone init_opens_alone
t_run mkdirs_once mkdirs_once
t_run bounding_read_at_once bounding_read_at_once
t_run one_ruleset_per_exec one_ruleset
t_run three_calls_per_landlock_rule three_calls_per_rule
t_run store_opened_once store_opened_once
t_run cgroup_swept_when_made cgroup_swept_when_made
t_run init_answers_at_once init_answers_at_once
t_run child_opens_before_go child_opens_before_go
t_run child_opens_again_after_go child_opens_again_after_go
t_done
