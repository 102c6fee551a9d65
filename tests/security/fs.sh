#!/usr/bin/env bash
# Filesystem attacks. Reading: /root, other users' homes, the caller's HOME and rtn's data
# dir are not in the sandbox at all, by any path (directly, through /proc/1/root,
# /proc/self/root, "/.."). Writing /usr and /etc through every path (tests/security/fswrite.c:
# open, O_TRUNC, create, rename, link, symlink, mkdir, mkfifo, unlink, rmdir, truncate,
# chmod, chown, utimes, xattrs, /proc/self/fd reopen) fails with the expected errno and the
# host files keep their content, mode, owner and times. Binds: a read-only bind stays
# read-only; a symlink planted in the workspace cannot redirect a later --bind.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

# Every path given must be absent inside, however it is spelled.
invisible() {
        local script='for p in "$@"; do
                for q in "$p" "/proc/1/root$p" "/proc/self/root$p" "/../..$p"; do
                        if [ -e "$q" ] || [ -L "$q" ]; then echo "VISIBLE $q"; fi
                        cat "$q" 2>/dev/null && echo "READ $q"
                done
        done; exit 0'
        t_exec -- sh -c "$script" sh "$@"
        t_exit_is 0
        [ ! -s "$T_OUT_FILE" ] || t_fail "$(head -c 300 "$T_OUT_FILE")"
}

read_root() {
        [ -r /root ] && [ -x /root ] || t_skip "host /root is not listable by $(id -un)"
        local args=() e
        while IFS= read -r e; do args+=("/root/$e"); done < <(ls -A /root)
        [ ${#args[@]} -gt 0 ] || t_skip "host /root is empty"
        invisible "${args[@]}"
}

read_other_homes() {
        local args=() d
        for d in /home/* /srv/*; do [ -e "$d" ] && args+=("$d"); done
        # tools/test.sh gives each test user its own HOME; the others' are someone else's.
        for d in /tmp/rtn-test-home.*; do [ -e "$d" ] && args+=("$d"); done
        [ ${#args[@]} -gt 0 ] || t_skip "no other homes on this host"
        invisible "${args[@]}"
}

# The caller's HOME: its entries (the directory itself may share a name inside, like /root).
read_own_home() {
        [ -n "${HOME:-}" ] && [ -d "$HOME" ] || t_skip "no HOME"
        [ "$HOME" = / ] && t_skip "HOME is /"
        echo secret >"$HOME/.rtn-sec-$T_NAME-$$" 2>/dev/null || t_skip "HOME not writable"
        local args=() e
        while IFS= read -r e; do args+=("$HOME/$e"); done < <(ls -A "$HOME")
        local rc=0
        (invisible "${args[@]}") || rc=$?
        rm -f "$HOME/.rtn-sec-$T_NAME-$$"
        [ "$rc" = 0 ] || exit "$rc"
}

read_data_dir() {
        export RTN_DATA_DIR=$T_TMP/data
        mkdir -p "$RTN_DATA_DIR/layers"
        echo secret >"$RTN_DATA_DIR/layers/marker"
        invisible "$RTN_DATA_DIR" "$RTN_DATA_DIR/layers/marker" "$T_TMP"
}

# fswrite FILE DIR inside; every write path blocked; the host's copies untouched.
write_system() {
        sec_attack fswrite "$@"
}

# The sandbox's own files in the system dirs are gone at the next run, too.
writes_vanish() {
        t_exec -- sh -c 'echo x >/etc/rtn-sec; echo x >/usr/rtn-sec; true'
        t_no_file /etc/rtn-sec
        t_no_file /usr/rtn-sec
        t_exit_is 1 "$RTN" exec -- sh -c 'test -e /etc/rtn-sec || test -e /usr/rtn-sec'
}

bind_ro_stays_ro() {
        mkdir "$T_TMP/src"
        echo keep >"$T_TMP/src/f"
        host_snapshot "$T_TMP/src/f" "$T_TMP/src"
        t_exec --bind "$T_TMP/src:/mnt/data:ro" -- sh -c 'echo x >/mnt/data/f; echo x >/mnt/data/g;
                rm -f /mnt/data/f; mount -o remount,rw /mnt/data; echo x >/mnt/data/h; true'
        t_stderr_has "Read-only file system"
        host_unchanged "$T_TMP/src/f" "$T_TMP/src"
        [ "$(ls -A "$T_TMP/src")" = f ] || t_fail "ro bind source changed: $(ls -A "$T_TMP/src")"
}

# A previous run planted a symlink where the next run binds: absolute, relative, and as a
# parent of the destination. rtn must refuse, and nothing may land at the link's target.
bind_symlink_planted() {
        mkdir -p "$T_TMP/ws" "$T_TMP/src" "$T_TMP/target"
        echo src >"$T_TMP/src/f"
        t_exit_is 0 "$RTN" exec --workspace "$T_TMP/ws" -- sh -c \
                "ln -s '$T_TMP/target' /workspace/abs && ln -s ../../etc /workspace/rel &&
                 ln -s /tmp /workspace/parent"
        local dst
        for dst in /workspace/abs /workspace/rel /workspace/parent/sub; do
                t_exec --workspace "$T_TMP/ws" --bind "$T_TMP/src:$dst" -- cat "$dst/f"
                t_exit_is 125
                t_stderr_has "a symlink is on the path"
        done
        [ -z "$(ls -A "$T_TMP/target")" ] || t_fail "a mountpoint was created at the link target"
        # a real directory at the same place works
        t_exec --bind "$T_TMP/src:/mnt/data/sub" -- cat /mnt/data/sub/f
        t_exit_is 0
        t_stdout_is src
}

# While a command runs, it swaps a directory under a rw bind for a symlink to the host's
# view of a system dir: the bind is a mount, so writes keep going to the source.
bind_swap_race() {
        mkdir -p "$T_TMP/src/d"
        host_snapshot
        t_exec --bind "$T_TMP/src:/mnt/data" -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do
                mv /mnt/data/d /mnt/data/d.old 2>/dev/null; ln -sfn /etc /mnt/data/d;
                echo x >/mnt/data/d/rtn-race 2>/dev/null; rm -f /mnt/data/d; mv /mnt/data/d.old /mnt/data/d;
        done; umount /mnt/data 2>&1; mount --bind /etc /mnt/data 2>&1; true'
        host_unchanged
        t_no_file /etc/rtn-race
        t_file_exists "$T_TMP/src/d"
}

t_run read_root read_root
t_run read_other_homes read_other_homes
t_run read_own_home read_own_home
t_run read_data_dir read_data_dir
t_run write_etc_passwd write_system /etc/passwd /etc/default
t_run write_etc_hostname write_system -r /etc/hostname /etc/default
t_run write_etc_hosts write_system -r /etc/hosts /etc/default
t_run write_usr_bin write_system /usr/bin/env /usr/bin
t_run write_usr_lib write_system /usr/lib/os-release /usr/lib
t_run writes_vanish writes_vanish
t_run bind_ro_stays_ro bind_ro_stays_ro
t_run bind_symlink_planted bind_symlink_planted
t_run bind_swap_race bind_swap_race
t_done
