#!/usr/bin/env bash
# The overlay workspace from the command line (docs/architecture.md, "The overlay
# workspace"): `rtn exec --workspace-mode overlay` leaves the host dir alone; with --keep its
# changes are pending (rtn diff), dropped by rtn reset and written by rtn apply, which lists
# what it refused and why. Deletions and opaque directories apply; git works inside; the
# files land as a live workspace's would. The attacks on rtn apply are in
# tests/security/apply.sh.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

# A project on the host: a, d/f, d/g.
mkproj() {
        mkdir -p "$T_TMP/proj/d"
        echo hello >"$T_TMP/proj/a"
        echo f >"$T_TMP/proj/d/f"
        echo g >"$T_TMP/proj/d/g"
        P=$T_TMP/proj
}

# ov [--keep] SCRIPT: the script in a sandbox over proj in overlay mode.
ov() {
        local keep=
        [ "$1" = --keep ] && keep=--keep && shift
        t_exec $keep --workspace "$P" --workspace-mode overlay -- sh -c "$1"
        t_exit_is 0
}

tree_of() {
        (cd "$1" && find . -mindepth 1 -printf '%p %y %m\n' | LC_ALL=C sort &&
                find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

round_trip() {
        mkproj
        local before
        before=$(tree_of "$P")
        # write: nothing reaches the host, rtn diff lists it
        ov --keep 'echo more >> /workspace/a; rm /workspace/d/f; echo n > /workspace/new;
                mkdir /workspace/nd; echo y > /workspace/nd/y; cat /workspace/a'
        t_stdout_is "hello
more"
        t_stderr_has "5 pending changes to $P"
        [ "$(tree_of "$P")" = "$before" ] || t_fail "the host dir changed before rtn apply"
        t_cmd "$RTN" diff
        t_exit_is 0
        t_stdout_is "M /workspace/a
D /workspace/d/f
A /workspace/nd
A /workspace/nd/y
A /workspace/new"
        # reset: dropped, the next sandbox sees the host dir again
        t_exit_is 0 "$RTN" reset
        t_cmd "$RTN" diff
        t_stdout_is ""
        ov --keep 'cat /workspace/a; ls /workspace/d'
        t_stdout_is "hello
f
g"
        # write again, with what apply must refuse
        ov --keep 'echo again >> /workspace/a; rm /workspace/d/f; echo n > /workspace/new;
                mkfifo /workspace/fifo; ln -s /etc/passwd /workspace/abs;
                ln -s ../../outside /workspace/up; echo "export X=1" > /workspace/.envrc;
                mkdir -p /workspace/.git; echo "[core]" > /workspace/.git/config'
        t_cmd "$RTN" apply --dry-run
        t_exit_is 1
        t_stdout_has "M /workspace/a"
        [ "$(tree_of "$P")" = "$before" ] || t_fail "rtn apply --dry-run wrote"
        t_cmd "$RTN" apply
        t_exit_is 1
        t_stdout_has "M /workspace/a"
        t_stdout_has "D /workspace/d/f"
        t_stdout_has "A /workspace/new"
        t_stdout_has "refused A /workspace/fifo: a FIFO"
        t_stdout_has "refused A /workspace/abs: a symlink to an absolute path"
        t_stdout_has "refused A /workspace/up: a symlink that leaves the workspace"
        t_stdout_has "refused A /workspace/.envrc: protected (.envrc)"
        t_stdout_has "refused A /workspace/.git: protected (.git)"
        t_stderr_has "3 changes written to $P; 5 refused"
        [ "$(cat "$P/a")" = "hello
again" ] || t_fail "a: $(cat "$P/a")"
        t_no_file "$P/d/f"
        t_file_exists "$P/d/g"
        [ "$(cat "$P/new")" = n ] || t_fail "new not written"
        local f
        for f in fifo abs up .envrc .git; do t_no_file "$P/$f"; done
        # what was refused is still pending; what was written is not
        t_cmd "$RTN" diff
        t_stdout_is "A /workspace/.envrc
A /workspace/.git
A /workspace/.git/config
A /workspace/abs
A /workspace/fifo
A /workspace/up"
        t_exit_is 0 "$RTN" reset
        t_cmd "$RTN" diff
        t_stdout_is ""
}
t_run round_trip round_trip

# rtn diff -p: every pending change with its content, as diff -u shows it (a directory's
# files once, under it), binary files named as such; changes outside /workspace listed.
diff_patch() {
        mkproj
        ov --keep 'echo more >> /workspace/a; rm /workspace/d/f; mkdir /workspace/nd;
                echo y > /workspace/nd/y; printf "\0\1" > /workspace/bin; echo h > $HOME/h'
        t_cmd "$RTN" diff -p
        t_exit_is 0
        grep -Eq '^A /.+/h$' "$T_OUT_FILE" || t_fail "\$HOME/h not listed: $(cat "$T_OUT_FILE")"
        t_stdout_has "+++ b/workspace/a"
        t_stdout_has "+more"
        t_stdout_has "-f"
        t_stdout_has "+++ b/workspace/nd/y"
        t_stdout_has "Binary files a/workspace/bin and b/workspace/bin differ"
        [ "$(grep -c '^+++ b/workspace/nd/y' "$T_OUT_FILE")" = 1 ] || t_fail "nd/y twice: $(cat "$T_OUT_FILE")"
        t_cmd "$RTN" diff --patch
        t_exit_is 0
        t_stdout_has "+more"
}
t_run diff_patch diff_patch

discarded_without_keep() {
        mkproj
        local before
        before=$(tree_of "$P")
        ov 'echo x >> /workspace/a; rm -r /workspace/d; touch /workspace/n'
        t_stderr_has "discarded when the command ends"
        [ "$(tree_of "$P")" = "$before" ] || t_fail "the host dir changed"
        t_cmd "$RTN" diff
        t_stdout_is ""
        # --quiet drops the note, not the behaviour
        t_exec --quiet --workspace "$P" --workspace-mode overlay -- rm /workspace/a
        t_exit_is 0
        [ -s "$T_ERR_FILE" ] && t_fail "stderr with --quiet: $(cat "$T_ERR_FILE")"
        t_file_exists "$P/a"
}
t_run discarded_without_keep discarded_without_keep

# A directory deleted and made again is opaque in the upper: what the host had in it and the
# sandbox does not goes; a directory deleted whole goes whole.
opaque_and_whiteouts() {
        mkproj
        mkdir -p "$P/gone/deep"
        echo x >"$P/gone/deep/x"
        ov --keep 'rm -r /workspace/d && mkdir /workspace/d && echo new > /workspace/d/new &&
                rm -r /workspace/gone'
        t_cmd "$RTN" diff
        t_stdout_is "D /workspace/d/f
D /workspace/d/g
A /workspace/d/new
D /workspace/gone"
        t_exit_is 0 "$RTN" apply
        [ "$(ls -A "$P/d")" = new ] || t_fail "d holds: $(ls -A "$P/d")"
        t_no_file "$P/gone"
        t_cmd "$RTN" diff
        t_stdout_is ""
}
t_run opaque_and_whiteouts opaque_and_whiteouts

# A file replaced by a directory and a directory by a file.
type_changes() {
        mkproj
        ov --keep 'rm /workspace/a && mkdir /workspace/a && echo in > /workspace/a/in &&
                rm -r /workspace/d && echo file > /workspace/d'
        t_exit_is 0 "$RTN" apply
        [ "$(cat "$P/a/in")" = in ] || t_fail "a/ not made"
        [ -f "$P/d" ] && [ "$(cat "$P/d")" = file ] || t_fail "d not a file"
}
t_run type_changes type_changes

# git works inside on the host's repository; its working tree changes apply, its git dir
# does not (runtime/sandbox/hostrun.h), so the host's history is the user's to extend.
git_inside() {
        command -v git >/dev/null || t_skip "git is not installed"
        mkproj
        git -C "$P" init -q && git -C "$P" add -A &&
                git -C "$P" -c user.name=u -c user.email=u@e commit -qm one ||
                t_fail "git init on the host failed"
        local head
        head=$(git -C "$P" rev-parse HEAD)
        ov --keep 'cd /workspace && git config --global --add safe.directory /workspace &&
                echo changed > a && git -c user.name=a -c user.email=a@e commit -qam two &&
                git log --oneline | wc -l'
        t_stdout_is 2
        t_cmd "$RTN" apply
        t_exit_is 1
        t_stdout_has "M /workspace/a"
        t_stdout_has "refused M /workspace/.git: protected (.git)"
        [ "$(git -C "$P" rev-parse HEAD)" = "$head" ] || t_fail "the host's HEAD moved"
        [ "$(git -C "$P" status --porcelain)" = " M a" ] ||
                t_fail "host git status: $(git -C "$P" status --porcelain)"
}
t_run git_inside git_inside

# Pending changes belong to one host dir: another workspace is refused until they are
# applied or dropped.
one_workspace() {
        mkproj
        mkdir "$T_TMP/other"
        ov --keep 'touch /workspace/n'
        t_exec --keep --workspace "$T_TMP/other" --workspace-mode overlay -- true
        t_exit_is 125
        t_stderr_has "the pending workspace changes belong to $P"
        t_exit_is 0 "$RTN" apply
        t_exec --keep --workspace "$T_TMP/other" --workspace-mode overlay -- touch /workspace/o
        t_exit_is 0
}
t_run one_workspace one_workspace

# Modes: an unchanged mode is kept as it is on the host; one the agent set gets the
# caller's umask, as a checkout does.
modes() {
        mkproj
        chmod 664 "$P/a"
        ov --keep 'echo x >> /workspace/a; echo y > /workspace/b; chmod 666 /workspace/b;
                echo z > /workspace/c; chmod 700 /workspace/c'
        (umask 022 && t_cmd "$RTN" apply && t_exit_is 0) || exit 1
        [ "$(stat -c %a "$P/a" "$P/b" "$P/c" | tr '\n' ' ')" = "664 644 700 " ] ||
                t_fail "modes: $(stat -c '%n %a' "$P/a" "$P/b" "$P/c" | tr '\n' ' ')"
}
t_run modes modes

# Root-run rtn: the files land owned by the workspace's owner, as the idmapped live
# workspace makes them.
root_owners() {
        [ "$(id -u)" = 0 ] || t_skip "needs root (rtn run as root)"
        mkproj
        chown -R 4321:4322 "$P"
        ov --keep 'echo x >> /workspace/a; mkdir /workspace/n; echo y > /workspace/n/f;
                ln -s a /workspace/l'
        t_exit_is 0 "$RTN" apply
        local got
        got=$(stat -c '%n %u:%g' "$P/a" "$P/n" "$P/n/f" | sed "s|$P/||" | tr '\n' ' ')
        [ "$got" = "a 4321:4322 n 4321:4322 n/f 4321:4322 " ] || t_fail "owners: $got"
        [ "$(stat -c %u:%g "$P/l")" = 4321:4322 ] || t_fail "symlink owner $(stat -c %u:%g "$P/l")"
}
t_run root_owners root_owners

# rtn serve: changes not applied at exit become the environment's pending changes.
serve_exit_keeps() {
        mkproj
        printf '%s\n' 'shell_run {"command": "echo s > /workspace/s"}' >calls
        t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls -- \
                "$RTN" serve --workspace "$P" --workspace-mode overlay
        t_exit_is 0
        t_stderr_has "kept as the pending changes of environment default"
        t_no_file "$P/s"
        t_cmd "$RTN" diff
        t_stdout_is "A /workspace/s"
        t_exit_is 0 "$RTN" apply
        [ "$(cat "$P/s")" = s ] || t_fail "s not applied"
}
t_run serve_exit_keeps serve_exit_keeps

bad_mode() {
        t_exec --workspace-mode sideways -- true
        t_exit_is 125
        t_stderr_has "--workspace-mode must be live or overlay"
        t_exec --workspace-mode overlay -- true
        t_exit_is 125
        t_stderr_has "needs --workspace"
        t_cmd "$RTN" serve --workspace-mode overlay
        t_exit_is 1
        t_stderr_has "needs --workspace"
}
t_run bad_mode bad_mode

t_done
