#!/usr/bin/env bash
# `rtn ps`: the running sandboxes of this user (runtime/session/registry.c). rtn exec and
# rtn serve appear while they run, with rtn's pid, kind, environment and command, and go when
# they end; an entry a SIGKILLed rtn left, or one whose pid now is another process, is dropped
# by the next listing; only the data dir in use unless --all; what it lists, rtn enter
# reaches from the start. The registry lives in the runtime dir, which no sandbox shows, and
# rtn refuses one that is not private.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

# A runtime dir of each case's own: suites run side by side, and every rtn of this user
# registers in the same one.
own_runtime_dir() {
        export XDG_RUNTIME_DIR=$T_TMP/run
        mkdir -m 700 "$XDG_RUNTIME_DIR"
}

registry() { t_registry; }

ps_has() { "$RTN" ps "${@:2}" | grep -q -- "$1"; }

lists_exec_and_serve() {
        own_runtime_dir
        export RTN_DATA_DIR=$T_TMP/data
        "$RTN" exec -- sleep 61.5 >/dev/null 2>&1 &
        local ex=$!
        sleep 30 | "$RTN" serve --env other >/dev/null 2>&1 &
        local sv=$!
        t_wait_for ps_has "sleep 61.5" || t_fail "rtn exec not listed: $("$RTN" ps 2>&1)"
        t_wait_for ps_has "rtn serve --env other" || t_fail "rtn serve not listed: $("$RTN" ps 2>&1)"
        t_exit_is 0 "$RTN" ps
        grep -Eq "^$ex +exec +[0-9T:-]+Z +default +rtn exec -- sleep 61.5$" "$T_OUT_FILE" ||
                t_fail "exec line: $(cat "$T_OUT_FILE")"
        grep -Eq "^[0-9]+ +serve +[0-9T:-]+Z +other +rtn serve --env other$" "$T_OUT_FILE" ||
                t_fail "serve line: $(cat "$T_OUT_FILE")"
        head -n 1 "$T_OUT_FILE" | grep -q "^PID *KIND *SINCE *ENV *COMMAND" || t_fail "no header"
        # another data dir's are not shown, but with --all
        RTN_DATA_DIR=$T_TMP/other t_exit_is 0 "$RTN" ps
        t_stdout_is ""
        RTN_DATA_DIR=$T_TMP/other t_exit_is 0 "$RTN" ps --all
        t_stdout_has "$T_TMP/data"
        kill "$ex"
        wait "$ex" 2>/dev/null
        # the pipeline's sleep is a child of this case's subshell, not of the suite ($$)
        pkill -P "$BASHPID" -x sleep 2>/dev/null
        wait "$sv" 2>/dev/null
        t_wait_for sh -c "! '$RTN' ps | grep -q rtn" || t_fail "still listed: $("$RTN" ps)"
        [ -z "$(ls "$(registry)")" ] || t_fail "entries left: $(ls "$(registry)")"
}

stale_entries_dropped() {
        own_runtime_dir
        export RTN_DATA_DIR=$T_TMP/data
        "$RTN" exec -- sleep 62.5 >/dev/null 2>&1 &
        local ex=$!
        t_wait_for ps_has "sleep 62.5" || t_fail "not listed"
        kill -KILL "$ex"
        wait "$ex" 2>/dev/null
        ls "$(registry)" | grep -q "^$ex-" || t_fail "a SIGKILLed rtn left no entry to drop"
        # a reused pid: our own shell, with another start time
        printf 'kind=exec\nsince=1\nenv=fake\ndata_dir=%s\ncommand=rtn fake\n' "$RTN_DATA_DIR" \
                >"$(registry)/$$-1"
        t_exit_is 0 "$RTN" ps
        t_stdout_is ""
        [ -z "$(ls "$(registry)")" ] || t_fail "stale entries kept: $(ls "$(registry)")"
}

# An rtn in another pid namespace that shares the runtime dir (a container given the user's
# XDG_RUNTIME_DIR) keeps its sandbox listed there: its entry names a pid that is another
# process or none here, and the host's listing (and every start's sweep) removed it as stale,
# so the container's rtn ps showed nothing and its rtn enter found nothing.
other_pid_namespace_kept() {
        [ "$(id -u)" = 0 ] || t_skip "a pid namespace for rtn needs root here"
        command -v unshare >/dev/null || t_skip "unshare is not installed"
        own_runtime_dir
        export RTN_DATA_DIR=$T_TMP/data
        unshare -p -f --mount-proc bash -c '
                "$RTN" exec -- sleep 63.5 >/dev/null 2>&1 &
                for i in $(seq 200); do "$RTN" ps | grep -q "sleep 63.5" && break; sleep 0.05; done
                "$RTN" ps >"$0/inner-before"
                : >"$0/started"
                for i in $(seq 400); do [ -e "$0/host-done" ] && break; sleep 0.05; done
                "$RTN" ps >"$0/inner-after"
                kill %1; wait' "$T_TMP" &
        local ns=$!
        t_wait_for test -e "$T_TMP/started" || t_fail "the other namespace's rtn did not start"
        grep -q "sleep 63.5" "$T_TMP/inner-before" || t_fail "not listed in its own namespace"
        t_exit_is 0 "$RTN" ps
        t_exit_is 0 "$RTN" exec -- true
        : >"$T_TMP/host-done"
        wait "$ns"
        grep -q "sleep 63.5" "$T_TMP/inner-after" ||
                t_fail "the host's rtn removed its entry: $(cat "$T_TMP/inner-after")"
}

# What rtn ps lists, rtn enter reaches: rtn exec and rtn serve listen on their socket before
# their entry is renamed into place, as strace shows the order (a listing between the two found
# no socket and rtn enter failed with 125: seen in the container matrix under load); then an
# rtn exec listed is entered at once.
listed_is_enterable() {
        command -v strace >/dev/null || t_fail "strace is not installed (tools/deps.txt)"
        own_runtime_dir
        export RTN_DATA_DIR=$T_TMP/data
        local verb first
        for verb in exec serve; do
                if [ "$verb" = exec ]; then
                        strace -qq -o "$verb.trace" -e trace=bind,rename,renameat,renameat2 \
                                "$RTN" exec -- true
                else
                        strace -qq -o "$verb.trace" -e trace=bind,rename,renameat,renameat2 \
                                "$RTN" serve </dev/null >/dev/null 2>&1
                fi
                # the socket's bind, the entry's rename (to PID-START, from its temp name)
                first=$(grep -Eo 'sun_path="[^"]*[0-9]+-[0-9]+\.sock"|rename[a-z0-9]*\(.*"[0-9]+-[0-9]+"\)' \
                        "$verb.trace" | head -n 1)
                [[ $first == sun_path=* ]] ||
                        t_fail "rtn $verb's entry is listed before its socket listens: $(cat "$verb.trace")"
        done
        "$RTN" exec -- sleep 63.5 >/dev/null 2>&1 &
        local ex=$!
        t_wait_for ps_has "sleep 63.5" || t_fail "not listed"
        t_exit_is 0 "$RTN" enter "$ex" -- true
        kill "$ex"
        wait "$ex" 2>/dev/null || : # its 143
}

# The registry by another name is no bind either: $XDG_RUNTIME_DIR through a symlink or
# spelled with "//" (the check compared the name as written), its directory bind-mounted
# elsewhere (as root), and the registry rtn uses
# without $XDG_RUNTIME_DIR (/tmp/rtn-UID, where sandboxes started without it register)
# while $XDG_RUNTIME_DIR's is in use. A sandbox given either could remove another's socket,
# list what is not running, or plant a socket that `rtn enter` would hand its input to.
registry_by_any_name_out_of_reach() {
        export RTN_DATA_DIR=$T_TMP/data
        mkdir -p -m 700 "$T_TMP/rt/run"
        ln -s "$T_TMP/rt" "$T_TMP/rtlink"
        local xdg
        for xdg in "$T_TMP/rtlink/run" "${T_TMP%/*}//${T_TMP##*/}/rt/run"; do
                XDG_RUNTIME_DIR=$xdg t_exec -- true
                t_exit_is 0
                [ -d "$T_TMP/rt/run/rtn/running" ] || t_fail "no registry made under $xdg"
                XDG_RUNTIME_DIR=$xdg t_exec --workspace "$T_TMP/rt" -- ls /workspace/run/rtn
                t_exit_is 125
                t_stderr_has "it holds rtn's registry of running sandboxes"
                XDG_RUNTIME_DIR=$xdg t_exec --bind "$T_TMP/rt/run:/mnt/r" -- true
                t_exit_is 125
                t_stderr_has "it holds rtn's registry of running sandboxes"
        done
        # root: the registry's directory under another mount, which no resolving of names
        # shows (it is told by device and inode)
        if [ "$(id -u)" = 0 ]; then
                mkdir "$T_TMP/alias"
                mount --bind "$T_TMP/rt" "$T_TMP/alias" || t_fail "bind mount"
                XDG_RUNTIME_DIR=$T_TMP/rt/run t_exec --workspace "$T_TMP/alias" -- ls /workspace/run/rtn
                umount "$T_TMP/alias"
                t_exit_is 125
                t_stderr_has "it holds rtn's registry of running sandboxes"
                return 0 # root's fallback is /run/rtn: a system dir, never bound
        fi
        local fb=/tmp/rtn-$(id -u) made=''
        [ -d "$fb" ] || { mkdir -m 700 "$fb" && made=1; }
        XDG_RUNTIME_DIR=$T_TMP/rt/run t_exec --workspace "$fb" -- true
        [ -z "$made" ] || rmdir "$fb"
        t_exit_is 125
        t_stderr_has "refusing to bind $fb: it holds rtn's registry of running sandboxes $fb/rtn/running"
}

# A registry directory that is not the caller's private one (another user made /tmp/rtn-UID
# first; here the mode of ours is changed) hides the sandbox from rtn ps and rtn enter: the
# sandbox runs, and stderr says so, where it was logged at debug only.
registry_not_ours_is_said() {
        own_runtime_dir
        export RTN_DATA_DIR=$T_TMP/data
        mkdir -m 755 "$XDG_RUNTIME_DIR/rtn"
        t_exit_is 0 "$RTN" exec -- echo ran
        t_stdout_is ran
        t_stderr_has "rtn ps and rtn enter will not see this sandbox: $XDG_RUNTIME_DIR/rtn is not a private directory of uid $(id -u)"
        printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' >"$T_TMP/in"
        t_exit_is 0 "$RTN" serve <"$T_TMP/in"
        t_stderr_has "rtn ps and rtn enter will not see this sandbox: $XDG_RUNTIME_DIR/rtn is not a private directory"
}

# The sandbox sees no registry (neither the runtime dir nor the fallbacks for root and
# for a user without one), and a registry that others could write is refused.
registry_out_of_reach() {
        own_runtime_dir
        export RTN_DATA_DIR=$T_TMP/data
        t_exit_is 0 "$RTN" ps
        local dir
        dir=$(registry)
        t_exec -- sh -c "ls -d '$dir' /run/rtn /tmp/rtn-$(id -u) 2>/dev/null; true"
        t_exit_is 0
        t_stdout_is ""
        # nor may a bind or a workspace hold it (it would be the agent's to write)
        t_exec --bind "$XDG_RUNTIME_DIR:/mnt/r" -- true
        t_exit_is 125
        t_stderr_has "refusing to bind $XDG_RUNTIME_DIR: it holds rtn's registry of running sandboxes"
        t_exec --workspace "$XDG_RUNTIME_DIR/rtn" -- true
        t_exit_is 125
        t_stderr_has "it holds rtn's registry"
        chmod 755 "$dir"
        t_exit_is 1 "$RTN" ps
        t_stderr_has "$dir is not a private directory"
        chmod 700 "$dir"
        ln -s /etc/passwd "$dir/$$-1"
        t_exit_is 0 "$RTN" ps
        t_stdout_is ""
        rm -f "$dir/$$-1"
}

usage() {
        t_exit_is 0 "$RTN" ps --help
        t_stdout_has "usage: rtn ps"
        t_exit_is 125 "$RTN" ps --bogus
        t_stderr_has "Try 'rtn ps --help'."
        t_exit_is 125 "$RTN" ps extra
        t_stderr_has "rtn ps: unexpected operand 'extra'"
}

t_run lists_exec_and_serve lists_exec_and_serve
t_run stale_entries_dropped stale_entries_dropped
t_run other_pid_namespace_kept other_pid_namespace_kept
t_run listed_is_enterable listed_is_enterable
t_run registry_out_of_reach registry_out_of_reach
t_run registry_by_any_name_out_of_reach registry_by_any_name_out_of_reach
t_run registry_not_ours_is_said registry_not_ours_is_said
t_run usage usage
t_done
