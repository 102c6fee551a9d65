#!/usr/bin/env bash
# make install and make uninstall into a DESTDIR: install puts exactly rtn, rtn(1) and the
# two completions (no rtn-init: rtn embeds it), the installed rtn runs a sandbox from there
# alone, and uninstall removes those files and nothing else. Needs the source tree: a
# staged copy of the tests (the unprivileged runs) has no makefile and skips.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

# make in the source tree, building into the directory the rtn under test is in.
tree_make() {
        [ -f "$T_ROOT/GNUmakefile" ] || t_skip "no GNUmakefile: needs the source tree"
        command -v make >/dev/null || t_skip "make is not installed"
        local o=build
        [[ $RTN == "$T_ROOT"/*/rtn ]] && o=$(dirname "${RTN#"$T_ROOT"/}")
        t_cmd make -s --no-print-directory -C "$T_ROOT" O="$o" "$@"
}

# Files and links under DIR, relative, with their modes, sorted.
listing() {
        (cd "$1" && find . \( -type f -o -type l \) -printf '%m %P\n' | sort -k2)
}

install_then_uninstall() {
        tree_make install DESTDIR="$T_TMP/dest" PREFIX=/usr/local
        t_exit_is 0
        local got
        got=$(listing "$T_TMP/dest")
        [ "$got" = "755 usr/local/bin/rtn
644 usr/local/share/bash-completion/completions/rtn
644 usr/local/share/man/man1/rtn.1
644 usr/local/share/zsh/vendor-completions/_rtn" ] || t_fail "installed: $got"
        t_cmd "$T_TMP/dest/usr/local/bin/rtn" --version
        t_exit_is 0
        t_stdout_has "rtn "
        if command -v man >/dev/null; then
                t_cmd man -l "$T_TMP/dest/usr/local/share/man/man1/rtn.1"
                t_exit_is 0
                t_stdout_has "EXIT STATUS"
        fi
        tree_make uninstall DESTDIR="$T_TMP/dest" PREFIX=/usr/local
        t_exit_is 0
        got=$(listing "$T_TMP/dest")
        [ -z "$got" ] || t_fail "left after uninstall: $got"
}
t_run install_then_uninstall install_then_uninstall

# bash loads the installed completion by itself through the bash-completion package's loader
# (which looks in share/bash-completion/completions of XDG_DATA_DIRS), and that package is
# among the ones the set-up installs (tools/deps.txt).
installed_completion_loads() {
        [ -f "$T_ROOT/tools/deps.txt" ] || t_skip "no tools/deps.txt: needs the source tree"
        grep -qx bash-completion "$T_ROOT/tools/deps.txt" ||
                t_fail "tools/deps.txt lacks bash-completion, which loads the installed completion"
        local loader=/usr/share/bash-completion/bash_completion
        [ -f "$loader" ] || t_skip "the bash-completion package is not installed ($loader)"
        tree_make install DESTDIR="$T_TMP/dest" PREFIX=/usr/local
        t_exit_is 0
        # shellcheck disable=SC2016
        t_cmd env XDG_DATA_DIRS="$T_TMP/dest/usr/local/share" bash --norc -c \
                '. "$1" && __load_completion rtn && complete -p rtn' loads "$loader"
        t_exit_is 0
        t_stdout_has "_rtn"
}
t_run installed_completion_loads installed_completion_loads

installed_rtn_runs_alone() {
        tree_make install DESTDIR="$T_TMP/dest" PREFIX=/opt/rtn
        t_exit_is 0
        [ ! -e "$T_TMP/dest/opt/rtn/libexec" ] || t_fail "install made a libexec dir"
        # No rtn-init on disk beside it: the one it runs is the copy embedded in the binary.
        t_cmd "$T_TMP/dest/opt/rtn/bin/rtn" exec -- echo alone
        t_exit_is 0
        t_stdout_is alone
}
t_run installed_rtn_runs_alone installed_rtn_runs_alone

uninstall_keeps_other_files() {
        mkdir -p "$T_TMP/dest/usr/share/man/man1" "$T_TMP/dest/usr/bin"
        echo other >"$T_TMP/dest/usr/share/man/man1/other.1"
        echo other >"$T_TMP/dest/usr/bin/rtn-other"
        chmod 644 "$T_TMP/dest/usr/share/man/man1/other.1" "$T_TMP/dest/usr/bin/rtn-other"
        tree_make install DESTDIR="$T_TMP/dest" PREFIX=/usr
        t_exit_is 0
        tree_make uninstall DESTDIR="$T_TMP/dest" PREFIX=/usr
        t_exit_is 0
        local got
        got=$(listing "$T_TMP/dest")
        [ "$got" = "644 usr/bin/rtn-other
644 usr/share/man/man1/other.1" ] || t_fail "after uninstall: $got"
        # Uninstalling what is not there is no error.
        tree_make uninstall DESTDIR="$T_TMP/dest" PREFIX=/usr
        t_exit_is 0
}
t_run uninstall_keeps_other_files uninstall_keeps_other_files

# Where the target has AppArmor's directory, install adds the profile that lets the installed
# rtn make user namespaces (Ubuntu 24.04), naming that binary; uninstall removes it. The
# parser checks it: whole with AppArmor >= 4.0 (abi 4.0, the userns rule), else everything
# but the 4.0-only lines.
apparmor_profile() {
        mkdir -p "$T_TMP/dest/etc/apparmor.d"
        tree_make install DESTDIR="$T_TMP/dest" PREFIX=/opt/rtn
        t_exit_is 0
        local p=$T_TMP/dest/etc/apparmor.d/rtn
        t_file_exists "$p"
        t_true grep -q '^profile rtn /opt/rtn/bin/rtn flags=(unconfined) {$' "$p"
        t_true grep -q '^  userns,$' "$p"
        if command -v apparmor_parser >/dev/null && [ -d /etc/apparmor.d/tunables ]; then
                if [ -e /etc/apparmor.d/abi/4.0 ]; then
                        t_exit_is 0 apparmor_parser -Q -K "$p"
                else
                        t_note "apparmor_parser predates abi 4.0: checking all but the userns rule"
                        sed -e 's|abi/4.0|abi/3.0|' -e '/^  userns,$/d' "$p" >"$T_TMP/rtn-3"
                        t_exit_is 0 apparmor_parser -Q -K "$T_TMP/rtn-3"
                fi
        fi
        tree_make uninstall DESTDIR="$T_TMP/dest" PREFIX=/opt/rtn
        t_exit_is 0
        t_no_file "$p"
}
t_run apparmor_profile apparmor_profile

t_done
