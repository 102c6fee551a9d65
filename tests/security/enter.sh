#!/usr/bin/env bash
# `rtn enter ID -- CMD` (docs/security-invariants.md, 33): a command entered into a running
# sandbox is one of the sandbox's own, started by its rtn-init: the same user, namespaces,
# cgroup, filesystem, environment, no_new_privs, seccomp filter, Landlock domain and network,
# and it dies with the sandbox (or with its rtn enter). Only the owner's uid, not confined
# more than the owner, may ask: another user, a caller under no_new_privs, a sandbox's own
# command (the socket is not in a full sandbox at all, and a Landlock-only one is refused, as
# it is by an owner under filters of its own: it cannot pass the registry's directory, which
# every request must) are refused; so are stale and planted sockets, a terminal passed in, and every malformed
# request, while floods of connections never stop the owner from serving or its command from
# ending as it would. Exit codes and stdio are rtn exec's.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
. "$(dirname "$0")/../httplib.bash"
t_need_rtn

CLIENT=$T_ROOT/tests/security/enter_client.py

own_runtime_dir() {
        export XDG_RUNTIME_DIR=$T_TMP/run
        mkdir -p -m 700 "$XDG_RUNTIME_DIR"
}

registry() { t_registry; }

# rtn exec ARGS in the background: SB is its pid, SOCK the socket rtn enter reaches it by.
# OWNER_PREFIX: words that exec rtn exec (confine.py: the owner under filters of its own).
start_sandbox() {
        own_runtime_dir
        # shellcheck disable=SC2086
        ${OWNER_PREFIX:-} "$RTN" exec "$@" </dev/null >"$T_TMP/sb.out" 2>"$T_TMP/sb.err" &
        SB=$!
        t_wait_for compgen -G "$(registry)/$SB-*.sock" >/dev/null ||
                t_fail "sandbox $SB never listened: $(cat "$T_TMP/sb.err")"
        SOCK=$(compgen -G "$(registry)/$SB-*.sock")
}

end_sandbox() {
        kill "$SB" 2>/dev/null
        wait "$SB" 2>/dev/null || true
}

serve_listed() { "$RTN" ps | grep -Eq "^$1 +serve "; }

host_pid() { [ -n "$(t_host_pids "$@")" ]; }

no_host_pid() { [ -z "$(t_host_pids "$@")" ]; }

client() { t_cmd python3 "$CLIENT" "$@"; }

entered() { "$RTN" enter "$SB" -- "$@" </dev/null >/dev/null 2>&1; }

enters_the_running_sandbox() {
        start_sandbox -- sh -c "echo from-main >/tmp/shared; exec sleep 60.$T_UNIQ"
        t_wait_for entered test -e /tmp/shared || t_fail "never entered"
        t_exit_is 0 "$RTN" enter "$SB" -- cat /tmp/shared
        t_stdout_is from-main
        t_exit_is 0 "$RTN" enter "$SB" -- pwd
        t_stdout_is /workspace
        t_exit_is 0 "$RTN" enter --cwd /tmp "$SB" pwd
        t_stdout_is /tmp
        t_exit_is 7 "$RTN" enter "$SB" -- sh -c 'echo out; echo err >&2; exit 7'
        t_stdout_is out
        t_stderr_has err
        t_exit_is 127 "$RTN" enter "$SB" -- no-such-command
        t_stderr_has "rtn enter: execute no-such-command"
        t_exit_is 126 "$RTN" enter "$SB" -- /etc
        t_exit_is 125 "$RTN" enter --cwd /nope "$SB" -- true
        t_stderr_has "chdir /nope"
        t_exit_is 143 "$RTN" enter "$SB" -- sh -c 'kill -TERM $$'
        [ "$(echo piped | "$RTN" enter "$SB" -- cat)" = piped ] || t_fail "stdin not passed"
        # signals are forwarded: SIGTERM to rtn enter reaches the command (a background job
        # of this shell ignores SIGINT)
        "$RTN" enter "$SB" -- sleep 70.$T_UNIQ &
        local e=$! rc=0
        t_wait_for host_pid sleep 70.$T_UNIQ || t_fail "entered sleep not seen"
        kill -TERM "$e"
        wait "$e" || rc=$?
        [ "$rc" = 143 ] || t_fail "SIGTERM: rtn enter exited $rc, not 143"
        no_host_pid sleep 70.$T_UNIQ || t_fail "the command outlived its SIGTERM"
        # blocked calls are reported as rtn exec reports them
        t_exit_is 1 "$RTN" enter "$SB" -- unshare -U true
        t_stderr_has "rtn: blocked unshare(2)"
        # an rtn exec has no sb-N but its one
        t_exit_is 0 "$RTN" enter "$SB/sb-1" -- true
        t_exit_is 125 "$RTN" enter "$SB/sb-2" -- true
        t_stderr_has "an rtn exec has one sandbox: no sb-2"
        # usage errors are the convention's
        t_exit_is 125 "$RTN" enter "$SB"
        t_stderr_has "no command given"
        local bad
        for bad in nope "$SB/" "$SB/sb-" "$SB/sb-0" "$SB/sb-01" "$SB/2" "$SB/sb-1x" "$SB//sb-1"; do
                t_exit_is 125 "$RTN" enter "$bad" -- true
                t_stderr_has "is not a sandbox's ID"
        done
        end_sandbox
}

# What the sandbox's own command sees and may do, and what an entered one does: the same, to
# the byte. The probe's own lines show it is no empty comparison.
PROBE='id -u; id -g
grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp|Seccomp_filters):" /proc/self/status
for n in user mnt pid net uts ipc cgroup; do readlink /proc/self/ns/$n; done
cat /proc/self/cgroup; ulimit -n; ulimit -Hn; ulimit -f
touch /enter-probe 2>/dev/null || echo landlock-denied
ls /proc/1/root 2>/dev/null || echo init-root-denied
unshare -U true 2>/dev/null || echo userns-denied
timeout 5 bash -c "exec 3<>/dev/tcp/1.1.1.1/80" 2>/dev/null || echo net-denied
env | grep -Ev "^(PWD|OLDPWD|SHLVL|_)=" | sort
/mnt/sec/escape mount setns unshare_user ptrace_init tiocsti sethostname && echo seccomp-held'

# After `rtn enter ... cat /tmp/own` put the sandbox's own probe output in T_OUT_FILE: the
# probe entered into the same sandbox (WHO: how its own command is named) prints the same,
# to the byte, and shows each property held.
probe_entered_same() { # WHO
        cp "$T_OUT_FILE" "$T_TMP/own"
        t_exit_is 0 "$RTN" enter "$SB" -- sh -c "{ $PROBE
} 2>&1"
        diff "$T_TMP/own" "$T_OUT_FILE" >"$T_TMP/diff" ||
                t_fail "the entered command differs from $1: $(head -c 600 "$T_TMP/diff")"
        for want in "NoNewPrivs:	1" "Seccomp:	2" landlock-denied init-root-denied \
                userns-denied net-denied seccomp-held HOME=; do
                t_stdout_has "$want"
        done
}

same_policy_as_its_own_commands() {
        sec_need_bin escape
        start_sandbox --bind "$SEC_BIN:/mnt/sec:ro" -- sh -c "{ $PROBE
} >/tmp/own 2>&1; exec sleep 61.$T_UNIQ"
        t_wait_for entered grep -q seccomp-held /tmp/own ||
                t_fail "the sandbox's own probe did not finish"
        t_exit_is 0 "$RTN" enter "$SB" -- cat /tmp/own
        probe_entered_same "the sandbox's own"
        # and the caller's environment stays outside
        RTN_ENTER_LEAK=1 t_exit_is 0 "$RTN" enter "$SB" -- env
        grep -q RTN_ENTER_LEAK "$T_OUT_FILE" && t_fail "the caller's environment went in"
        end_sandbox
}

# rtn serve's sandboxes, by the handles its agent uses: PID for sb-1, PID/sb-N for another.
# MCP calls go in through a fifo; each answer is awaited by its id.
start_serve() {
        own_runtime_dir
        mkfifo "$T_TMP/in"
        "$RTN" serve "$@" <"$T_TMP/in" >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
        SB=$!
        exec 9>"$T_TMP/in"
        NEXT_ID=1
        srv_send 'initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}'
        echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&9
        t_wait_for serve_listed "$SB" || t_fail "rtn serve not listed: $("$RTN" ps) $(cat "$T_TMP/serve.err")"
}

# Polled every 0.1 s: the shell matches the output itself (grep only for a NUL byte in it).
answered() {
        local re="\"id\":$1[,}]"
        if t_text "$T_TMP/serve.out"; then
                [[ $T_TEXT =~ $re ]]
        else
                grep -q "$re" "$T_TMP/serve.out"
        fi
}

# srv_send 'METHOD","params":{...}': sends request NEXT_ID and waits for its answer
srv_send() {
        local id=$NEXT_ID
        NEXT_ID=$((NEXT_ID + 1))
        echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"$1}" >&9
        t_wait_for answered "$id" || t_fail "request $id never answered: $(tail -c 300 "$T_TMP/serve.out") $(tail -c 600 "$T_TMP/serve.err")"
        grep "\"id\":$id[,}]" "$T_TMP/serve.out" >"$T_TMP/answer"
}

# srv_call TOOL ARGUMENTS-JSON
srv_call() { srv_send "tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}"; }

end_serve() {
        exec 9>&-
        wait "$SB" 2>/dev/null || true
}

serve_sandboxes_entered() {
        sec_need_bin escape
        start_serve --bind "$SEC_BIN:/mnt/sec:ro" --undo-depth 4
        # the probe as the agent's command, then entered: the same, to the byte
        printf '{ %s\n} >/tmp/own 2>&1' "$PROBE" >"$T_TMP/probe"
        local probe cmd
        IFS= read -r -d '' probe <"$T_TMP/probe"
        cmd=$(json_string "$probe") || t_fail "the probe cannot go in as a JSON string"
        srv_call shell_run "{\"command\":$cmd}"
        t_exit_is 0 "$RTN" enter "$SB" -- cat /tmp/own
        grep -q seccomp-held "$T_OUT_FILE" || t_fail "the agent's probe did not finish: $(cat "$T_OUT_FILE" "$T_TMP/answer")"
        probe_entered_same "the agent's"
        t_exit_is 0 "$RTN" enter "$SB/sb-1" -- pwd
        t_stdout_is /workspace
        # an entered change is the sandbox's like any other: the next checkpoint holds it,
        # and env_undo goes back past it without a step of its own
        t_exit_is 0 "$RTN" enter "$SB" -- sh -c 'echo entered >/tmp/e1'
        srv_call shell_run '{"command":"echo agent >/tmp/a1"}'
        t_exit_is 0 "$RTN" enter "$SB" -- sh -c 'echo entered >/tmp/e2'
        srv_call env_undo '{}'
        grep -q '"isError":true' "$T_TMP/answer" && t_fail "env_undo: $(cat "$T_TMP/answer")"
        t_exit_is 125 "$RTN" enter "$SB" -- true # env_undo stopped the sandbox
        t_stderr_has "no sandbox running in sb-1"
        srv_call shell_run '{"command":"ls /tmp/e1 /tmp/a1 /tmp/e2 2>&1"}'
        grep -q '/tmp/e1' "$T_TMP/answer" && ! grep -q '/tmp/e1.: No such' "$T_TMP/answer" &&
                grep -q '/tmp/a1.: No such' "$T_TMP/answer" &&
                grep -q '/tmp/e2.: No such' "$T_TMP/answer" ||
                t_fail "env_undo did not go back to the checkpoint: $(cat "$T_TMP/answer")"
        # another sandbox by its handle: refused until the agent has started it
        srv_call sandbox_new '{}'
        grep -q 'sb-2' "$T_TMP/answer" || t_fail "sandbox_new: $(cat "$T_TMP/answer")"
        t_exit_is 125 "$RTN" enter "$SB/sb-2" -- true
        t_stderr_has "no sandbox running in sb-2: the agent has not run a command in it yet"
        # rtn ps lists each open sandbox by the ID rtn enter takes
        t_exit_is 0 "$RTN" ps
        grep -Eq "^$SB +serve " "$T_OUT_FILE" || t_fail "serve line: $(cat "$T_OUT_FILE")"
        grep -Eq "^$SB/sb-1 +sb +[0-9T:-]+Z +default +sandbox sb-1 of rtn serve $SB$" "$T_OUT_FILE" &&
                grep -Eq "^$SB/sb-2 +sb +[0-9T:-]+Z +default +sandbox sb-2 of rtn serve $SB$" "$T_OUT_FILE" ||
                t_fail "sandbox lines: $(cat "$T_OUT_FILE")"
        srv_call shell_run '{"sandbox":"sb-2","command":"echo two >/tmp/which"}'
        t_exit_is 0 "$RTN" enter "$SB/sb-2" -- cat /tmp/which
        t_stdout_is two
        t_exit_is 1 "$RTN" enter "$SB" -- test -e /tmp/which
        t_exit_is 125 "$RTN" enter "$SB/sb-9" -- true
        t_stderr_has "no open sandbox sb-9 in this rtn serve"
        # an entered command is none of the agent's jobs, and never holds up its calls
        "$RTN" enter "$SB/sb-2" -- sleep 75.$T_UNIQ >"$T_TMP/e.out" 2>"$T_TMP/e.err" 9>&- &
        local e=$! rc=0
        t_wait_for host_pid sleep 75.$T_UNIQ || t_fail "entered sleep not seen"
        srv_call shell_run '{"sandbox":"sb-2","command":"echo agent-answered"}'
        grep -q agent-answered "$T_TMP/answer" || t_fail "shell_run: $(cat "$T_TMP/answer")"
        srv_call shell_job_list '{"sandbox":"sb-2"}'
        grep -q "sleep 75" "$T_TMP/answer" && t_fail "an entered command is listed as a job"
        # its sandbox closed, it ends, and rtn enter says so
        srv_call sandbox_close '{"sandbox":"sb-2"}'
        wait "$e" || rc=$?
        [ "$rc" = 125 ] || t_fail "rtn enter exited $rc when sb-2 closed: $(cat "$T_TMP/e.err")"
        grep -q "ended before the command did" "$T_TMP/e.err" || t_fail "stderr: $(cat "$T_TMP/e.err")"
        no_host_pid sleep 75.$T_UNIQ || t_fail "the entered command outlived its sandbox"
        t_exit_is 125 "$RTN" enter "$SB/sb-2" -- true
        t_stderr_has "no open sandbox sb-2"
        t_exit_is 0 "$RTN" ps
        grep -q "^$SB/sb-2 " "$T_OUT_FILE" && t_fail "a closed sandbox still listed: $(cat "$T_OUT_FILE")"
        t_exit_is 0 "$RTN" enter "$(awk -v s="$SB/sb-1" '$1 == s { print $1 }' "$T_OUT_FILE")" -- true
        # the server's end ends what was entered into sb-1
        "$RTN" enter "$SB" -- sleep 76.$T_UNIQ 2>"$T_TMP/e.err" 9>&- &
        e=$!
        t_wait_for host_pid sleep 76.$T_UNIQ || t_fail "entered sleep not seen"
        end_serve
        rc=0
        wait "$e" || rc=$?
        [ "$rc" = 125 ] || t_fail "rtn enter exited $rc when rtn serve ended: $(cat "$T_TMP/e.err")"
        no_host_pid sleep 76.$T_UNIQ || t_fail "the entered command outlived rtn serve"
}

# rtn serve --http: each session is an rtn serve of its own, listed with its own pid, its
# sandboxes entered as that PID/sb-N.
http_sessions_entered() {
        own_runtime_dir
        http_start
        local sid tok
        tok=$(cat "$T_TMP/tok")
        for who in one two; do
                curl -s -o "$T_TMP/body" -D "$T_TMP/hdrs" -X POST -H "Authorization: Bearer $tok" \
                        -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" \
                        --data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' "$URL"
                sid=$(tr -d '\r' <"$T_TMP/hdrs" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
                [ -n "$sid" ] || t_fail "no session: $(cat "$T_TMP/hdrs" "$T_TMP/body")"
                curl -s -o "$T_TMP/body" -X POST -H "Authorization: Bearer $tok" -H "Mcp-Session-Id: $sid" \
                        -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" \
                        --data-binary "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"shell_run\",\"arguments\":{\"command\":\"echo $who >/tmp/who\"}}}" "$URL"
                grep -q exit_code "$T_TMP/body" || t_fail "shell_run: $(cat "$T_TMP/body")"
        done
        t_exit_is 0 "$RTN" ps --all
        local ids
        ids=$(awk '$1 ~ /^[0-9]+\/sb-1$/ { print $1 }' "$T_OUT_FILE")
        [ "$(echo "$ids" | wc -w)" = 2 ] || t_fail "not one sb-1 per session: $(cat "$T_OUT_FILE")"
        local got=
        for id in $ids; do
                t_exit_is 0 "$RTN" enter "$id" -- cat /tmp/who
                got="$got $(cat "$T_OUT_FILE")"
        done
        [ "$(echo $got | tr ' ' '\n' | sort | tr '\n' ' ')" = "one two " ] ||
                t_fail "each session's sandbox not entered by its own ID: $got"
}

dies_with_the_sandbox() {
        start_sandbox -- sleep 62.$T_UNIQ
        "$RTN" enter "$SB" -- sleep 71.$T_UNIQ >"$T_TMP/e.out" 2>"$T_TMP/e.err" &
        local e=$! rc=0
        "$RTN" enter "$SB" -- sleep 72.$T_UNIQ 2>/dev/null &
        local k=$!
        t_wait_for host_pid sleep 71.$T_UNIQ || t_fail "entered sleep not seen"
        t_wait_for host_pid sleep 72.$T_UNIQ || t_fail "entered sleep not seen"
        # a killed rtn enter takes its command along
        kill -KILL "$k"
        { wait "$k"; } 2>/dev/null || true
        t_wait_for no_host_pid sleep 72.$T_UNIQ || t_fail "the command outlived its rtn enter"
        # the sandbox's end ends what was entered into it
        end_sandbox
        wait "$e" || rc=$?
        [ "$rc" = 125 ] || t_fail "rtn enter exited $rc when the sandbox ended: $(cat "$T_TMP/e.err")"
        grep -q "ended before the command did" "$T_TMP/e.err" || t_fail "stderr: $(cat "$T_TMP/e.err")"
        no_host_pid sleep 71.$T_UNIQ || t_fail "the entered command outlived the sandbox"
}

no_terminal_reaches_it() {
        sec_need_bin escape
        start_sandbox --bind "$SEC_BIN:/mnt/sec:ro" -- sleep 63.$T_UNIQ
        # a terminal passed by hand is refused
        client "$SOCK" tty true
        t_stdout_is "refused: a terminal is never passed into a sandbox (use -t)"
        # rtn enter from a terminal passes pipes, as rtn exec does; -t a pty of the sandbox's
        t_cmd script -qec "$RTN enter $SB -- sh -c 'test -t 0 || echo no-tty-in; /mnt/sec/escape tiocsti && echo tiocsti-blocked'" /dev/null
        t_stdout_has no-tty-in
        t_stdout_has tiocsti-blocked
        t_cmd script -qec "$RTN enter -t $SB -- sh -c 'test -t 0 && tty; /mnt/sec/escape tiocsti && echo tiocsti-blocked'" /dev/null
        t_stdout_has /dev/pts/0
        t_stdout_has tiocsti-blocked
        t_exit_is 125 "$RTN" enter -t "$SB" -- true
        t_stderr_has "the input device is not a TTY"
        end_sandbox
}

bad_requests_never_stop_it() {
        start_sandbox -- sh -c "until [ -e /tmp/stop ]; do sleep 0.1; done; exit 3"
        client "$SOCK" each policy:1 policy:2 env final fds:0 fds:2 fds:5 garbage short big \
                idle:40 flood:300
        [ "$(wc -l <"$T_OUT_FILE")" = 12 ] || t_fail "$(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        grep -Ev "^[a-z]+(:[0-9]+)?: (refused: |after (idle|flood): exited 0$)" "$T_OUT_FILE" &&
                t_fail "not refused: $(cat "$T_OUT_FILE")"
        t_exit_is 0 "$RTN" enter "$SB" -- echo still-serving
        t_stdout_is still-serving
        # and the sandbox's command ends as it would have (the entered touch may still be
        # exiting when the command, seeing its file, ends the sandbox: then rtn enter says
        # the sandbox ended first, which is true)
        t_cmd "$RTN" enter "$SB" -- touch /tmp/stop
        [ "$T_RC" = 0 ] || { [ "$T_RC" = 125 ] && t_has "$T_ERR_FILE" "ended before the command did"; } ||
                t_fail "$(t_last)"
        local rc=0
        wait "$SB" || rc=$?
        [ "$rc" = 3 ] || t_fail "rtn exec exited $rc, not its command's 3: $(cat "$T_TMP/sb.err")"
}

# A command entered that ends just before the sandbox's own command (both waiting to be
# reaped at once: rtn-init is stopped from the host meanwhile, as a loaded machine may leave
# it unscheduled) has its exit reported; it did not end with the sandbox.
# At least N children of PID have exited and wait to be reaped (state Z).
exited_unreaped() { # N PID
        local c n=0
        for c in $(cat /proc/"$2"/task/*/children); do
                [ "$(sed -n 's/.*) \(.\).*/\1/p' /proc/"$c"/stat 2>/dev/null)" = Z ] && n=$((n + 1))
        done
        [ "$n" -ge "$1" ]
}

exit_just_before_the_end_reported() {
        start_sandbox -- sh -c "until [ -e /tmp/stop ]; do sleep 0.05; done; exit 3"
        local init= c
        for c in $(cat /proc/"$SB"/task/*/children); do
                [ "$(cat /proc/"$c"/comm 2>/dev/null)" = rtn-init ] && init=$c
        done
        [ -n "$init" ] || t_fail "no rtn-init below rtn exec $SB"
        "$RTN" enter "$SB" -- sh -c 'touch /tmp/started; sleep 1; touch /tmp/stop' </dev/null \
                >"$T_TMP/e.out" 2>"$T_TMP/e.err" &
        local e=$! rc=0
        t_wait_for entered test -e /tmp/started || t_fail "the entered command never ran"
        kill -STOP "$init"
        # the entered command ends, then the sandbox's own: both wait for rtn-init to reap them
        t_wait_for exited_unreaped 2 "$init" ||
                t_fail "the two commands did not both end while rtn-init was stopped"
        kill -CONT "$init"
        wait "$e" || rc=$?
        [ "$rc" = 0 ] || t_fail "rtn enter exited $rc: $(cat "$T_TMP/e.err")"
        rc=0
        wait "$SB" || rc=$?
        [ "$rc" = 3 ] || t_fail "rtn exec exited $rc, not its command's 3: $(cat "$T_TMP/sb.err")"
}

confined_callers_refused() {
        start_sandbox --bind "$T_ROOT/tests/security:/mnt/t:ro" -- sleep 65.$T_UNIQ
        t_exit_is 125 setpriv --no-new-privs "$RTN" enter "$SB" -- true
        t_stderr_has "the caller is more confined than the sandbox's owner"
        # a full sandbox shows neither the path nor an abstract name
        t_exit_is 0 "$RTN" enter "$SB" -- python3 /mnt/t/enter_client.py "$SOCK" run true
        t_stdout_has "connect: [Errno 2]"
        t_exit_is 0 "$RTN" enter "$SB" -- python3 /mnt/t/enter_client.py "@$(basename "$SOCK")" run true
        t_stdout_has "connect: [Errno 111]"
        end_sandbox
}

landlock_mode_command_refused() {
        [ "$(id -u)" != 0 ] || t_skip "root's Landlock-mode commands run as another uid (other_users_refused)"
        start_sandbox -- sleep 66.$T_UNIQ
        mkdir "$T_TMP/ws"
        cp "$CLIENT" "$T_TMP/ws/"
        t_exec --isolation landlock --workspace "$T_TMP/ws" -- python3 enter_client.py "$SOCK" run true
        grep -q "needs Landlock" "$T_ERR_FILE" && t_skip "kernel has no Landlock"
        t_exit_is 0
        # Landlock refuses the connect where it rules path sockets, else the owner does
        grep -Eq "^(connect: \[Errno 13\]|refused: pid [0-9]+: the caller is more confined)" "$T_OUT_FILE" ||
                t_fail "a Landlock-mode command reached the sandbox: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        end_sandbox
}

# The owner (rtn exec) under no_new_privs and N seccomp filters that allow everything, as a
# hardened service (systemd's NoNewPrivileges= and SystemCallFilter=) runs it: a Landlock-only
# command has no more of either, so counting them cannot refuse it.
confined_owner() { # N
        cat >"$T_TMP/confine.py" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
if libc.prctl(38, 1, None, 0, 0):  # PR_SET_NO_NEW_PRIVS
    sys.exit("no_new_privs: errno %d" % ctypes.get_errno())
insn = ctypes.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0x7FFF0000))  # RET ALLOW
prog = struct.pack("HxxxxxxQ", 1, ctypes.addressof(insn))
progbuf = ctypes.create_string_buffer(prog)
for _ in range(int(sys.argv[1])):
    if libc.prctl(22, 2, ctypes.addressof(progbuf), 0, 0):  # PR_SET_SECCOMP, MODE_FILTER
        sys.exit("seccomp: errno %d" % ctypes.get_errno())
os.execv(sys.argv[2], sys.argv[2:])
PY
        OWNER_PREFIX="python3 $T_TMP/confine.py $1"
}

# A request is taken only with the registry's directory, opened to be read, as its last fd
# (what a command of a sandbox cannot open): without it, or with an O_PATH fd of it, the
# owner refuses; with it the command runs.
registry_proof_required() {
        start_sandbox -- sleep 75.$T_UNIQ
        # (stdout and stderr pipes: a file is no stdio the owner passes in)
        t_cmd sh -c 'python3 "$0" "$1" each noproof:true opath:true run:true 2>&1 | cat' "$CLIENT" "$SOCK"
        t_stdout_is "noproof:true: refused: a request passes stdin, stdout and stderr (none with a pty), then the registry's directory
opath:true: refused: the caller did not open the registry's directory (a sandbox's command cannot enter a sandbox)
run:true: exited 0"
        end_sandbox
}

# An owner under no_new_privs and filters of its own (as many as a Landlock-only command's,
# and more): that command passes the count and is refused all the same, since it cannot open
# the registry's directory; the owner's own user still enters.
landlock_command_refused_by_a_confined_owner() {
        [ "$(id -u)" != 0 ] || t_skip "root's Landlock-mode commands run as another uid (other_users_refused)"
        confined_owner 3
        start_sandbox -- sleep 76.$T_UNIQ
        local n
        n=$(awk '/^Seccomp_filters:/ {print $2}' "/proc/$SB/status")
        [ "$n" = 3 ] || t_fail "the owner runs under $n filters, not 3: $(cat "$T_TMP/sb.err")"
        t_exit_is 0 "$RTN" enter "$SB" -- echo entered
        t_stdout_is entered
        mkdir "$T_TMP/ws"
        cp "$CLIENT" "$T_TMP/ws/"
        # each request as it would be sent before the directory was asked for (three fds), with
        # the directory as an O_PATH fd, and as well as it can (the same); stdio pipes, which
        # the owner passes on
        t_exec --isolation landlock --workspace "$T_TMP/ws" -- sh -c \
                'python3 enter_client.py "$1" each noproof:true opath:true run:true 2>&1 | cat' sh "$SOCK"
        grep -q "needs Landlock" "$T_ERR_FILE" && t_skip "kernel has no Landlock"
        t_exit_is 0
        [ "$(grep -Ec ": (connect: \[Errno 13\]|refused: )" "$T_OUT_FILE")" = 3 ] ||
                t_fail "a Landlock-mode command entered a confined owner's sandbox: $(cat "$T_OUT_FILE" "$T_ERR_FILE")"
        end_sandbox
}

stale_and_planted_sockets() {
        start_sandbox -- sleep 67.$T_UNIQ
        local old=$SB oldsock=$SOCK
        kill -KILL "$old"
        wait "$old" 2>/dev/null || true
        t_file_exists "$oldsock"
        t_exit_is 125 "$RTN" enter "$old" -- true
        t_stderr_has "no sandbox of uid $(id -u) has pid $old"
        # the next start sweeps the dead run's socket
        start_sandbox -- sleep 68.$T_UNIQ
        t_no_file "$oldsock"
        # an entry planted for a live process of ours, its socket a link to the real one
        sleep 73.$T_UNIQ &
        local p=$! start
        start=$(awk '{print $22}' "/proc/$p/stat")
        printf 'kind=exec\nsince=1\nenv=default\ndata_dir=x\ncommand=planted\n' >"$(registry)/$p-$start"
        ln -s "$SOCK" "$(registry)/$p-$start.sock"
        t_exit_is 125 "$RTN" enter "$p" -- touch /tmp/planted
        t_stderr_has "is not a socket of uid $(id -u): refused"
        # a real socket, held by another process than the entry names
        rm "$(registry)/$p-$start.sock"
        python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1]); s.listen(4)
time.sleep(30)' "$(registry)/$p-$start.sock" &
        local q=$!
        t_wait_for test -S "$(registry)/$p-$start.sock" || t_fail "no planted socket"
        t_exit_is 125 "$RTN" enter "$p" -- touch /tmp/planted
        t_stderr_has "is held by pid $q"
        kill "$q" "$p"
        t_exit_is 1 "$RTN" enter "$SB" -- test -e /tmp/planted
        # a socket of another owner (only root can make one)
        if [ "$(id -u)" = 0 ]; then
                chown 4242 "$SOCK"
                t_exit_is 125 "$RTN" enter "$SB" -- true
                t_stderr_has "is not a socket of uid 0: refused"
        fi
        end_sandbox
}

# Another uid can neither find root's sandbox nor talk to its socket, and root is refused
# by the sandbox of another uid (a uid of this case's own: no stream runs as it).
other_users_refused() {
        [ "$(id -u)" = 0 ] || t_skip "needs root to act as another user"
        local u=4242
        chmod 755 "$T_TMP"
        start_sandbox -- sleep 69.$T_UNIQ
        mkdir -m 700 "$T_TMP/u"
        chown "$u:$u" "$T_TMP/u"
        local as_u=(setpriv --reuid "$u" --regid "$u" --clear-groups env HOME="$T_TMP/u"
                XDG_RUNTIME_DIR="$T_TMP/u" RTN_DATA_DIR="$T_TMP/u/data")
        t_exit_is 125 "${as_u[@]}" "$RTN" enter "$SB" -- true
        t_stderr_has "no sandbox of uid $u has pid $SB"
        t_exit_is 0 "${as_u[@]}" /usr/bin/python3 "$CLIENT" "$SOCK" run true
        t_stdout_has "connect: [Errno 13]"
        end_sandbox
        # uid 4242's own sandbox: root connects to its socket and is refused by its owner
        "${as_u[@]}" "$RTN" exec -- sleep 74.$T_UNIQ </dev/null >/dev/null 2>"$T_TMP/u.err" &
        local theirs=$!
        local ureg
        ureg=$(XDG_RUNTIME_DIR=$T_TMP/u t_registry)
        t_wait_for compgen -G "$ureg/*.sock" >/dev/null ||
                t_fail "uid $u's sandbox never listened: $(cat "$T_TMP/u.err")"
        client "$(compgen -G "$ureg/*.sock")" run true
        t_stdout_has "refused: uid 0 may not enter a sandbox of uid $u"
        kill "$theirs"
        wait "$theirs" 2>/dev/null || true
}


# Where the registry cannot be made (a runtime dir that does not exist and cannot be made),
# there is no socket, and nothing else is lost: rtn exec's stdin still reaches its command
# (a failed listen closed fd 0 once, and rtn serve --http's sessions never answered).
no_registry_no_harm() {
        : >"$T_TMP/file" # a runtime dir below a file: not even root can make it
        t_cmd sh -c "echo hi | XDG_RUNTIME_DIR='$T_TMP/file/x' '$RTN' exec -- cat"
        t_exit_is 0
        t_stdout_is hi
}

t_run no_registry_no_harm no_registry_no_harm
t_run enters_the_running_sandbox enters_the_running_sandbox
t_run same_policy_as_its_own_commands same_policy_as_its_own_commands
t_run serve_sandboxes_entered serve_sandboxes_entered
t_run http_sessions_entered http_sessions_entered
t_run dies_with_the_sandbox dies_with_the_sandbox
t_run no_terminal_reaches_it no_terminal_reaches_it
t_run bad_requests_never_stop_it bad_requests_never_stop_it
t_run exit_just_before_the_end_reported exit_just_before_the_end_reported
t_run confined_callers_refused confined_callers_refused
t_run landlock_mode_command_refused landlock_mode_command_refused
t_run registry_proof_required registry_proof_required
t_run landlock_command_refused_by_a_confined_owner landlock_command_refused_by_a_confined_owner
t_run stale_and_planted_sockets stale_and_planted_sockets
t_run other_users_refused other_users_refused
t_done
