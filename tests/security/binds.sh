#!/usr/bin/env bash
# --bind and bind_host_dir as docs/architecture.md ("Host directory binds") writes them:
# the user's mount points anywhere but on the sandbox's own paths (homebind.sh has more), the
# agent's only strictly below /workspace or at /mnt and below; SRC and DST spelled as --workspace takes a path (relative source, trailing
# '/', '\:' for a ':' of a path, '\\' for a backslash; '..' refused); a regular file may be
# bound, read-only only, and nothing inside can write, chmod, chown, set-id, touch, xattr,
# rename over, remove or replace the host file (docs/security-invariants.md, 4).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn
MCP=$T_ROOT/tests/integration/mcp_calls.py

mount_points_refused() {
        mkdir src
        local d
        for d in /etc/hosts /run /proc/sys /dev/pts /sys /etc /workspace /; do
                t_exec --bind "src:$d" -- true
                t_exit_is 125
                t_stderr_has "mount point $d: "
                t_cmd "$RTN" serve --bind "$T_TMP/src:$d" </dev/null
                t_exit_is 1
                t_stderr_has "mount point $d: "
        done
        t_exec --bind "src:/mnt/../etc" -- true
        t_exit_is 125
        t_stderr_has "'..' is not taken"
}

spelling() {
        mkdir -p 'a:b/sub' src ws
        echo in >'a:b/sub/f'
        echo s >src/g
        # relative source, trailing slashes, an escaped ':' on both sides
        t_exit_is 0 "$RTN" exec --bind 'a\:b/:/mnt/c\:d/' --bind ./src/:/mnt/s// -- \
                sh -c 'cat "/mnt/c:d/sub/f" /mnt/s/g'
        t_stdout_is "$(printf 'in\ns')"
        t_exec --bind '../x:/mnt/x' -- true
        t_exit_is 125
        t_stderr_has "--bind source ../x: not canonical, '..' is not taken"
        t_exec --bind 'a\b:/mnt/x' -- true
        t_exit_is 125
        t_stderr_has "a backslash escapes only ':'"
        t_exec --bind 'src' -- true
        t_exit_is 125
        t_stderr_has "--bind wants SRC:DST[:ro|rw]"
        t_exec --bind 'src:/mnt/x:rx' -- true
        t_exit_is 125
        t_stderr_has "--bind mode must be ro or rw, got rx"
}

# Every way to change the bound file, from where Landlock lets the agent write (/workspace)
# and from where it does not (/mnt); each must fail, and the host file must stay as it was.
FILE_ATTACK='
import errno, os, sys
f = sys.argv[1]
d = os.path.dirname(f)
open("/tmp/other", "w").write("evil\n")
attacks = [
    ("write", lambda: open(f, "w").write("evil")),
    ("append", lambda: open(f, "a").write("evil")),
    ("truncate", lambda: os.truncate(f, 0)),
    ("chmod", lambda: os.chmod(f, 0o777)),
    ("setuid", lambda: os.chmod(f, 0o4755)),
    ("chown", lambda: os.chown(f, os.getuid(), os.getgid())),
    ("utime", lambda: os.utime(f, (1, 1))),
    ("xattr", lambda: os.setxattr(f, "user.rtn", b"x")),
    ("rename_over", lambda: os.rename("/tmp/other", f)),
    ("rename_away", lambda: os.rename(f, d + "/moved")),
    ("unlink", lambda: os.unlink(f)),
    ("link", lambda: os.link(f, d + "/hard")),
    ("reopen", lambda: open("/proc/self/fd/%d" % os.open(f, os.O_PATH), "w")),
]
bad = 0
for name, act in attacks:
    try:
        act()
        print("ESCAPED", name); bad = 1
    except OSError as e:
        ok = (errno.EROFS, errno.EACCES, errno.EPERM, errno.EBUSY, errno.EXDEV)
        print("blocked" if e.errno in ok else "ESCAPED", name, errno.errorcode[e.errno])
        bad |= e.errno not in ok
print(open(f).read(), end="")
sys.exit(bad)
'

file_bind_read_only() {
        command -v python3 >/dev/null || t_skip "python3 not installed"
        mkdir ws
        echo host >f
        chmod 644 f
        host_snapshot "$T_TMP/f"
        local dst
        for dst in /mnt/f /workspace/sub/f; do
                t_exec --workspace ws --bind "f:$dst" -- python3 -c "$FILE_ATTACK" "$dst"
                grep -q ESCAPED "$T_OUT_FILE" && t_fail "$dst: $(grep ESCAPED "$T_OUT_FILE" | tr '\n' ' ')"
                t_exit_is 0
                t_stdout_has "blocked rename_over"
                [ "$(tail -n 1 "$T_OUT_FILE")" = host ] || t_fail "$dst: read $(tail -n 1 "$T_OUT_FILE")"
        done
        host_unchanged "$T_TMP/f"
        [ "$(cat f)" = host ] || t_fail "the host file changed: $(cat f)"
}

file_bind_rw_refused() {
        echo host >f
        mkfifo fifo
        t_exec --bind f:/mnt/f:rw -- true
        t_exit_is 125
        t_stderr_has "refusing to bind the file $T_TMP/f read-write"
        t_cmd "$RTN" serve --bind "$T_TMP/f:/mnt/f:rw" </dev/null
        t_exit_is 1
        t_stderr_has "refusing to bind the file $T_TMP/f read-write"
        t_exec --bind fifo:/mnt/p -- true
        t_exit_is 125
        t_stderr_has "neither a directory nor a regular file"
        mkdir -p d/sub
        t_exec --bind f:/mnt/d --bind d:/mnt/d2 -- true
        t_exit_is 0
        # a file onto a directory that is there already
        t_exec --bind d:/mnt/d --bind f:/mnt/d/sub -- true
        t_exit_is 125
        t_stderr_has "bind destination /mnt/d/sub: the source is a file, the mount point is not"
}

# The agent's bind_host_dir: the same mount points, spelling and file rule.
agent_binds() {
        command -v python3 >/dev/null || t_skip "python3 not installed"
        mkdir -p proj/sub
        echo host >proj/f
        printf '%s\n' \
                'bind_host_dir {"host_path":"'"$T_TMP"'/proj/f","mount_point":"/mnt/f","mode":"rw"}' \
                'bind_host_dir {"host_path":"'"$T_TMP"'/proj/sub","mount_point":"/etc/x","mode":"ro"}' \
                'bind_host_dir {"host_path":"'"$T_TMP"'/proj/f","mount_point":"/mnt/a:b/","mode":"ro"}' \
                'shell_run {"command":"cat /mnt/a:b; chmod 777 /mnt/a:b || echo refused"}' \
                'bind_host_dir {"host_path":"'"$T_TMP"'/proj/sub/","mount_point":"/mnt/s/","mode":"ro"}' >calls
        t_cmd python3 "$MCP" calls --check '
r = a
assert r[0]["isError"] and "read-write" in r[0]["text"], r[0]
assert r[1]["isError"] and "only below /workspace or under /mnt" in r[1]["text"], r[1]
assert not r[2]["isError"] and r[2]["result"]["mount_point"] == "/mnt/a:b", r[2]
assert r[3]["result"]["stdout"] == "host\nrefused\n", r[3]
assert not r[4]["isError"] and r[4]["result"]["host_path"].endswith("/proj/sub"), r[4]
' -- "$RTN" serve --bind "$T_TMP/proj:/mnt/proj:ro"
        [ "$T_RC" = 3 ] && t_fail "$(tail -n 1 "$T_ERR_FILE"): $(cat "$T_OUT_FILE")"
        t_exit_is 0
        [ "$(stat -c %a proj/f)" = 644 ] || t_fail "mode of the host file: $(stat -c %a proj/f)"
}

t_run mount_points_refused mount_points_refused
t_run spelling spelling
t_run file_bind_read_only file_bind_read_only
t_run file_bind_rw_refused file_bind_rw_refused
t_run agent_binds agent_binds
t_done
