#!/usr/bin/env bash
# `rtn exec`: what a command sees of the host's files and where its writes go. Host paths
# outside the allowlist (/root, /home, /srv, rtn's data dir, this test's temp dir) are not
# visible inside; writes outside /workspace never reach the host and are gone by the next
# run; with --workspace DIR, writes to /workspace land in DIR and DIR's files are visible.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

# Every entry the host has in DIR must be absent inside.
host_entries_hidden() {
        local dir=$1 entries e
        [ -r "$dir" ] && [ -x "$dir" ] || t_skip "host $dir is not listable by $(id -un)"
        entries=$(ls -A "$dir")
        [ -n "$entries" ] || t_skip "host $dir is empty: nothing to hide"
        local script='for e in "$@"; do [ -e "$e" ] || [ -L "$e" ] && echo "$e"; done; exit 0'
        local args=()
        while IFS= read -r e; do args+=("$dir/$e"); done <<<"$entries"
        t_exit_is 0 "$RTN" exec -- sh -c "$script" sh "${args[@]}"
        [ ! -s "$T_OUT_FILE" ] || t_fail "visible inside: $(tr '\n' ' ' <"$T_OUT_FILE")"
}

root_hidden() { host_entries_hidden /root; }
home_hidden() { host_entries_hidden /home; }
srv_hidden() { host_entries_hidden /srv; }

test_tmpdir_hidden() {
        echo secret >"$T_TMP/marker"
        t_exec -- cat "$T_TMP/marker"
        [ "$T_RC" != 0 ] || t_fail "the test's temp file $T_TMP/marker is readable inside"
        t_exit_is 1 "$RTN" exec -- test -e "$T_TMP"
}

data_dir_hidden() {
        export RTN_DATA_DIR=$T_TMP/data
        mkdir -p "$RTN_DATA_DIR"
        echo secret >"$RTN_DATA_DIR/marker"
        t_exit_is 0 "$RTN" exec -- true
        t_exit_is 1 "$RTN" exec -- test -e "$RTN_DATA_DIR/marker"
        t_exit_is 1 "$RTN" exec -- test -e "$RTN_DATA_DIR"
}

system_dirs_visible() {
        # The allowlist itself must be there, or the invisibility tests prove nothing.
        t_exit_is 0 "$RTN" exec -- test -x /usr/bin/env -a -r /etc/passwd -a -d /workspace
}

tmp_writes_vanish() {
        local name=rtn-test-$RANDOM-$$
        t_exit_is 0 "$RTN" exec -- sh -c "echo x >/tmp/$name && cat /tmp/$name"
        t_stdout_is x
        t_no_file "/tmp/$name"
        t_exit_is 1 "$RTN" exec -- test -e "/tmp/$name"
}

home_writes_vanish() {
        local name=rtn-test-$RANDOM-$$
        t_exit_is 0 "$RTN" exec -- sh -c "cd && echo x >$name && pwd"
        local home
        home=$(cat "$T_OUT_FILE")
        t_no_file "$home/$name"
        t_no_file "$HOME/$name"
        t_exit_is 1 "$RTN" exec -- sh -c "cd && test -e $name"
}

# Writes under a host path that does not exist inside (the test's temp dir) stay inside.
tmpdir_path_writes_stay_inside() {
        t_exec -- sh -c "mkdir -p '$T_TMP/leak' && echo x >'$T_TMP/leak/f'"
        t_no_file "$T_TMP/leak"
}

system_writes_never_reach_host() {
        local name=rtn-test-$RANDOM-$$ d
        for d in /etc /usr /usr/bin /opt /var; do
                t_exec -- sh -c "echo x >$d/$name"
                t_no_file "$d/$name"
        done
        # Whatever the command managed, none of it is there on the next run.
        t_exit_is 0 "$RTN" exec -- sh -c "ls -d /etc/$name /usr/$name /usr/bin/$name 2>/dev/null; true"
        [ ! -s "$T_OUT_FILE" ] || t_fail "survived to the next run: $(cat "$T_OUT_FILE")"
}

workspace_writes_reach_dir() {
        mkdir "$T_TMP/ws"
        echo from-host >"$T_TMP/ws/in"
        t_exit_is 0 "$RTN" exec --workspace "$T_TMP/ws" -- \
                sh -c 'cat /workspace/in && echo from-sandbox >/workspace/out && mkdir /workspace/d'
        t_stdout_is from-host
        t_file_exists "$T_TMP/ws/out"
        t_file_exists "$T_TMP/ws/d"
        [ "$(cat "$T_TMP/ws/out")" = from-sandbox ] || t_fail "out: $(cat "$T_TMP/ws/out")"
}

workspace_default_is_empty_and_private() {
        t_exit_is 0 "$RTN" exec -- sh -c 'ls -A /workspace && echo x >/workspace/f && cat /workspace/f'
        t_stdout_is x
        t_exit_is 1 "$RTN" exec -- test -e /workspace/f
}

t_run root_hidden root_hidden
t_run home_hidden home_hidden
t_run srv_hidden srv_hidden
t_run test_tmpdir_hidden test_tmpdir_hidden
t_run data_dir_hidden data_dir_hidden
t_run system_dirs_visible system_dirs_visible
t_run tmp_writes_vanish tmp_writes_vanish
t_run home_writes_vanish home_writes_vanish
t_run tmpdir_path_writes_stay_inside tmpdir_path_writes_stay_inside
t_run system_writes_never_reach_host system_writes_never_reach_host
t_run workspace_writes_reach_dir workspace_writes_reach_dir
t_run workspace_default_is_empty_and_private workspace_default_is_empty_and_private
t_done
