#!/usr/bin/env bash
# Host paths (docs/security-invariants.md, 12-14). One policy for every way a host directory
# enters a sandbox (--workspace of exec and serve, --bind, bind_host_dir): the same refusals
# with the same messages, for root too. Nothing written through a host-visible mount ends up
# setuid or setgid on the host. The repositories and the other files host programs run by
# themselves, present in a bound dir when the sandbox starts, cannot be changed, replaced or
# moved away from inside.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

# ---- 12. one policy -------------------------------------------------------------------

# refused WHY DIR: exec --workspace, exec --bind and serve --workspace all refuse DIR with
# the same message, and nothing starts.
refused() {
        local why=$1 dir=$2 msg
        t_exec --workspace "$dir" -- true
        t_exit_is 125
        t_stderr_has "$why"
        msg=$(grep -o 'refusing to bind.*' "$T_ERR_FILE")
        t_exec --bind "$dir:/mnt/x" -- true
        t_exit_is 125
        t_stderr_has "$msg"
        t_cmd "$RTN" serve --workspace "$dir"
        t_exit_is 1
        t_stderr_has "$msg"
}

workspace_system_dirs() {
        refused "a system directory" /etc
        refused "a system directory" /usr/lib
        refused "the whole system" /
}

workspace_data_dir() {
        export RTN_DATA_DIR=$T_TMP/data # not hidden: that would be refused first for users
        mkdir -p "$RTN_DATA_DIR"
        refused "rtn's data dir" "$RTN_DATA_DIR"
        refused "rtn's data dir" "$T_TMP" # holds it
        # --data-dir, not only the default, is rtn's data dir
        mkdir -p "$T_TMP/p/store"
        t_exec --data-dir "$T_TMP/p/store" --workspace "$T_TMP/p" -- true
        t_exit_is 125
        t_stderr_has "rtn's data dir"
}

# `rtn serve --workspace .` from $HOME (a client started in the home directory): refused,
# and told what to pass instead. Also through a symlinked $HOME and from a directory above.
workspace_home() {
        mkdir -p "$T_TMP/top/home/proj" "$T_TMP/top/home/.config"
        ln -s top/home "$T_TMP/homelink"
        local h
        for h in "$T_TMP/top/home" "$T_TMP/homelink"; do
                (cd "$T_TMP/top/home" && HOME=$h t_cmd "$RTN" serve --workspace . &&
                        t_exit_is 1 && t_stderr_has "your home directory" &&
                        t_stderr_has "pass the project's directory") || exit 1
                (cd "$T_TMP/top/home" && HOME=$h t_exec --workspace . -- true &&
                        t_exit_is 125 && t_stderr_has "your home directory") || exit 1
        done
        HOME=$T_TMP/top/home t_exec --workspace "$T_TMP/top" -- true
        t_exit_is 125
        t_stderr_has "holds your home directory"
        HOME=$T_TMP/top/home t_exec --workspace "$T_TMP/top/home/.config" -- true
        t_exit_is 125
        t_stderr_has "hidden directories of your home"
        HOME=$T_TMP/top/home t_exec --workspace "$T_TMP/top/home/proj" -- true
        t_exit_is 0
}

workspace_other_home() {
        local other=
        if [ "$(id -u)" = 0 ]; then
                for other in /home/*; do [ -d "$other" ] && break; other=; done
        else
                other=/root
        fi
        [ -n "$other" ] || t_skip "no other user's home on this host"
        refused "another user's home" "$other"
}

# ---- run ----------------------------------------------------------------------------------

t_run workspace_system_dirs workspace_system_dirs
t_run workspace_data_dir workspace_data_dir
t_run workspace_home workspace_home
t_run workspace_other_home workspace_other_home
t_done
