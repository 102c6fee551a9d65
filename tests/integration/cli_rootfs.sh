#!/usr/bin/env bash
# `rtn rootfs rm` (cli/rootfs.c, rt_rootfs_remove): removes a rootfs whole (for a user with a
# subordinate range, a tree owned by ids of that range too); refused, losing nothing, while
# environments were made on it or a running sandbox was started on it, unless --force; a
# missing or invalid name is an error. On a fresh account (an empty HOME, no RTN_DATA_DIR) the
# first verb makes the data dir, and every directory missing above it, 0700.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

# A rootfs of a few host binaries (the agent's HOME is where it may write) and the libraries
# they load, as a tar to import, made once for the suite in a directory of its own: the cases
# only read it (rtn rootfs import copies it into their own data dirs).
t_suite_tmp || exit 1
TINY_DIR=$T_SUITE_TMP
TINY_TAR=$TINY_DIR/tiny.tar
make_tar() {
        local r=$TINY_DIR/tree f
        mkdir -p "$r/usr/bin" "$r/etc/apt" "$r/var/lib/dpkg" "$r/home" "$r/tmp"
        touch "$r/var/lib/dpkg/status"
        for f in sh true sleep touch cat; do cp "$(type -P $f)" "$r/usr/bin/"; done
        for f in $(ldd "$r"/usr/bin/* | grep -o '/[^ :]*\.so[^ :]*' | sort -u); do
                mkdir -p "$r/usr$(dirname "$f")"
                cp "$f" "$r/usr$f"
        done
        ln -s usr/bin "$r/bin"
        ln -s usr/lib "$r/lib"
        [ -d "$r/usr/lib64" ] && ln -s usr/lib64 "$r/lib64"
        tar -C "$r" -cf "$TINY_TAR" .
}
make_tar

setup() {
        export RTN_DATA_DIR=$T_TMP/data XDG_RUNTIME_DIR=$T_TMP/run
        mkdir -m 700 "$XDG_RUNTIME_DIR"
        t_exit_is 0 "$RTN" rootfs import "$TINY_TAR" tiny
}

removes_a_rootfs() {
        setup
        t_exec --rootfs tiny -- true
        t_exit_is 0
        t_exit_is 0 "$RTN" rootfs rm tiny
        t_stdout_is tiny
        t_exit_is 0 "$RTN" rootfs list
        t_stdout_is ""
        [ -z "$(ls -A "$RTN_DATA_DIR/rootfs")" ] || t_fail "left: $(ls -A "$RTN_DATA_DIR/rootfs")"
        t_exec --rootfs tiny -- true
        t_exit_is 125
        t_stderr_has "no rootfs named 'tiny'"
        # the name is free again
        t_exit_is 0 "$RTN" rootfs import "$TINY_TAR" tiny
}

refused_while_used() {
        setup
        t_exec --rootfs tiny --env on-tiny --commit -m t -- sh -c 'touch $HOME/x'
        t_exit_is 0
        t_exit_is 1 "$RTN" rootfs rm tiny
        t_stderr_has "rtn rootfs rm: rootfs tiny: environment 'on-tiny' was made on it (rtn env rm it first, or use --force)"
        t_exec --rootfs tiny --env on-tiny -- sh -c 'cat $HOME/x'
        t_exit_is 0
        # without --rootfs, the environment's base: found again by its NAME
        t_exec --env on-tiny -- sh -c 'cat $HOME/x'
        t_exit_is 0
        # a running sandbox started on it
        t_exit_is 0 "$RTN" env rm on-tiny
        "$RTN" exec --rootfs tiny -- sleep 65.5 >/dev/null 2>&1 &
        local ex=$!
        t_wait_for sh -c "'$RTN' ps | grep -q 'sleep 65.5'" || t_fail "not running"
        t_exit_is 1 "$RTN" rootfs rm tiny
        t_stderr_has "rootfs tiny: a running sandbox was started on it (pid $ex, rtn ps)"
        t_exit_is 0 "$RTN" rootfs list
        t_stdout_has "tiny"
        kill "$ex"
        wait "$ex" 2>/dev/null || true
        # --force removes it all the same; an environment made on it is then refused at start
        t_exec --rootfs tiny --env on-tiny --commit -m t -- sh -c 'touch $HOME/x'
        t_exit_is 0 "$RTN" rootfs rm --force tiny
        t_stdout_is tiny
        t_exec --rootfs tiny --env on-tiny -- true
        t_exit_is 125
        t_stderr_has "no rootfs named 'tiny'"
        t_exec --env on-tiny -- true
        t_exit_is 125
        t_stderr_has "environment 'on-tiny' was made on rootfs tiny [rootfs:"
        t_stderr_has "which cannot be had now (no rootfs named 'tiny'"
}

errors() {
        setup
        t_exit_is 1 "$RTN" rootfs rm nope
        t_stderr_has "rtn rootfs rm: no rootfs nope (rtn rootfs list)"
        t_exit_is 1 "$RTN" rootfs rm ../data
        t_stderr_has "invalid rootfs name '../data'"
        t_exit_is 1 "$RTN" rootfs rm .tiny.tmp
        t_stderr_has "invalid rootfs name '.tiny.tmp'"
        t_exit_is 125 "$RTN" rootfs rm
        t_stderr_has "rtn rootfs rm: wants the NAME of a rootfs"
        t_exit_is 125 "$RTN" rootfs list --force
        t_stderr_has "--force is an option of rootfs rm"
        t_exit_is 0 "$RTN" rootfs --help
        t_stdout_has "rtn rootfs rm [--force] NAME..."
        # the one that exists goes, the exit says another did not
        t_exit_is 1 "$RTN" rootfs rm nope tiny
        t_stdout_is tiny
        t_exit_is 0 "$RTN" rootfs list
        t_stdout_is ""
}

# A fresh account: HOME holds nothing, not even ~/.local. import (as bootstrap, which shares
# rt_rootfs_make) makes ~/.local/share/rtn 0700 and the rootfs works; so does a first exec.
fresh_account() {
        local h=$T_TMP/home
        mkdir -m 700 "$h"
        (
                unset RTN_DATA_DIR XDG_DATA_HOME
                export HOME=$h XDG_RUNTIME_DIR=$T_TMP/run
                mkdir -m 700 "$XDG_RUNTIME_DIR"
                t_exit_is 0 "$RTN" rootfs import "$TINY_TAR" tiny
                t_exit_is 0 "$RTN" rootfs list
                t_stdout_has tiny
                t_exec --rootfs tiny -- true
                t_exit_is 0
        ) || exit
        local d m
        for d in .local .local/share .local/share/rtn; do
                m=$(stat -c %a "$h/$d") || t_fail "$d not made"
                [ "$m" = 700 ] || t_fail "$d is $m, not 700"
        done
        # a first commit, with no rootfs, on another fresh account
        mkdir -m 700 "$T_TMP/home2"
        (
                unset RTN_DATA_DIR XDG_DATA_HOME
                export HOME=$T_TMP/home2 XDG_RUNTIME_DIR=$T_TMP/run
                t_exec --env e --commit -m first -- true
                t_exit_is 0
        ) || exit
        [ "$(stat -c %a "$T_TMP/home2/.local/share/rtn")" = 700 ] || t_fail "a commit made no 0700 data dir"
}

t_run fresh_account fresh_account
t_run removes_a_rootfs removes_a_rootfs
t_run refused_while_used refused_while_used
t_run errors errors
t_done
