#!/usr/bin/env bash
# Attacks on writing an overlay workspace's changes back to the host (rtn apply,
# workspace_apply; docs/security-invariants.md, 15 and 16). The agent controls everything in
# the upper: names, types, modes, link targets, contents. Each case makes a change the
# agent could make (from inside, or planted in the pending upper where no route from inside
# is left, as the route an attacker would find), runs rtn apply and checks that the host got
# nothing it must not, for the reason given, and that the rest of the host is unchanged.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn

mkproj() {
        P=$T_TMP/proj
        mkdir -p "$P/d" "$T_TMP/outside"
        echo hello >"$P/a"
        echo f >"$P/d/f"
        UPPER=$RTN_DATA_DIR/pending/default/ws/upper
}

# ov SCRIPT: the script in a sandbox over proj, its changes kept pending.
ov() {
        t_exec --keep --quiet --workspace "$P" --workspace-mode overlay -- sh -c "$1"
        t_exit_is 0
}

# The host around the workspace: what apply must leave as it is (the case's own files and
# the store aside).
around() {
        (cd "$T_TMP" && find outside -printf '%p %y %m %s\n' &&
                find . -mindepth 1 -maxdepth 1 ! -name '.*' -printf '%p %y\n') | LC_ALL=C sort
}

# refused_for PATH REASON: the last command's stdout has a line refusing /workspace/PATH for
# REASON (a line holding both "refused" and " /workspace/PATH: REASON"), matched by the
# shell, not two greps per path; grep reads a file the shell cannot hold (a NUL byte).
refused_for() {
        local LC_ALL=C l
        if ! t_text "$T_OUT_FILE"; then
                grep -F " /workspace/$1: $2" "$T_OUT_FILE" | grep -qF refused
                return
        fi
        while IFS= read -r l; do
                [[ $l == *" /workspace/$1: $2"* && $l == *refused* ]] && return 0
        done <<<"$T_TEXT"
        return 1
}

# apply_refuses REASON PATH...: rtn apply exits 1, refuses each PATH (relative to
# /workspace) with REASON, and none of them exists on the host afterwards.
apply_refuses() {
        local why=$1 p
        shift
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 1
        for p in "$@"; do
                refused_for "$p" "$why" ||
                        t_fail "/workspace/$p not refused for '$why': $(cat "$T_OUT_FILE")"
                t_no_file "$P/$p"
        done
}

setuid_files() {
        mkproj
        host_snapshot
        local before
        before=$(around)
        # From inside: whatever the sandbox lets through reaches the upper at most.
        ov 'cp /bin/true /workspace/su; chmod 4755 /workspace/su 2>/dev/null
                cp /bin/true /workspace/sg; chmod 2755 /workspace/sg 2>/dev/null; true'
        # Planted: the bits in the upper however they got there.
        cp /bin/true "$UPPER/su2" && chmod 4755 "$UPPER/su2"
        cp /bin/true "$UPPER/sg2" && chmod 2711 "$UPPER/sg2"
        apply_refuses "setuid/setgid bits" su2 sg2
        local f
        for f in su sg su2 sg2; do
                [ -e "$P/$f" ] && [ -n "$(find "$P/$f" -perm /6000)" ] &&
                        t_fail "$f reached the host setuid/setgid: $(stat -c %A "$P/$f")"
        done
        [ "$(around)" = "$before" ] || t_fail "the host around the workspace changed"
        host_unchanged
}
t_run setuid_files setuid_files

# Device nodes are never written, and never opened: a FIFO would hang a reader, a device
# could do anything on open.
device_nodes() {
        [ "$(id -u)" = 0 ] || t_skip "making a device node in the upper needs root (mknod)"
        mkproj
        ov 'touch /workspace/x'
        mknod "$UPPER/null" c 1 3 && mknod "$UPPER/loop" b 7 0 ||
                t_fail "mknod in the upper failed"
        apply_refuses "a device node" null loop
}
t_run device_nodes device_nodes

fifos_and_sockets() {
        mkproj
        ov 'mkfifo /workspace/fifo && python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"/workspace/sock\")"'
        mkfifo "$UPPER/fifo2"
        apply_refuses "a FIFO" fifo fifo2
        t_stdout_has "refused A /workspace/sock: a socket"
        t_no_file "$P/sock"
}
t_run fifos_and_sockets fifos_and_sockets

symlinks_out() {
        mkproj
        local before
        before=$(around)
        ov 'cd /workspace && ln -s /etc/passwd abs && ln -s ../outside up &&
                ln -s d/../../outside up2 && mkdir -p x/y && ln -s ../../../outside x/y/up3 &&
                ln -s .git/config toconf && ln -s ./d/../a fine'
        apply_refuses "a symlink to an absolute path" abs
        apply_refuses "a symlink that leaves the workspace" up up2 x/y/up3
        apply_refuses "a symlink into .git, which is protected" toconf
        [ "$(readlink "$P/fine")" = ./d/../a ] || t_fail "a link inside the workspace was not written"
        [ "$(around)" = "$before" ] || t_fail "the host around the workspace changed"
}
t_run symlinks_out symlinks_out

# Links through links: each link is inside on its own, the chain leads out. apply resolves a
# new link's target in the tree as it will be (the host's links, the agent's new ones, in
# any order, a directory the agent replaced by a link), as the host will follow it, and
# refuses what leaves; what it writes resolves inside.
# resolves_inside NAME...: each NAME, where it exists on the host, resolves below $P.
resolves_inside() {
        local n r
        for n in "$@"; do
                [ -L "$P/$n" ] || continue
                r=$(realpath -m "$P/$n" 2>/dev/null) || continue
                [[ $r == "$P/"* ]] || t_fail "/workspace/$n was applied and resolves to $r"
        done
}

symlink_chains() {
        mkproj
        echo secret >"$T_TMP/outside/t"
        mkdir -p "$P/x/y" "$P/hd"
        ln -s ../.. "$P/x/y/up"     # the user's own links: one inside, one out
        ln -s ../outside "$P/hout"
        ln -s /etc "$P/habs"
        local before
        before=$(around)
        # c1 -> c2 -> ... -> c38, made by one process, not 37 ln.
        local chain="python3 -c 'import os; [os.symlink(\"c%d\" % (i + 1), \"c%d\" % i) for i in range(1, 38)]' &&"
        ov "cd /workspace && mkdir -p p0/p1/p2/p3/p4 && ln -s ../../../../.. p0/p1/p2/p3/p4/L &&
                ln -s p0/p1/p2/p3/p4/L/../outside/t evil && ln -s x/y/up/../outside/t viahost &&
                ln -s hout/t viaout && ln -s habs/passwd viaabs && ln -s zz/../outside/t aa &&
                ln -s . zz && ln -s a0/../outside/t ab && ln -s . a0 &&
                rm -r hd && ln -s . hd && ln -s hd/../outside/t viahd &&
                ln -s /proc/self/root pr && ln -s pr/etc/passwd viapr && $chain
                ln -s q c38 && ln -s . q && ln -s c1/../outside/t long &&
                ln -s ./p0/p1/../p1/p2 fine && ln -s x/y/up/a fine2"
        apply_refuses "a symlink that leaves the workspace" evil viahost viaout viaabs aa ab \
                viahd viapr long
        resolves_inside evil viahost viaout viaabs aa ab viahd viapr long
        [ "$(readlink "$P/fine")" = ./p0/p1/../p1/p2 ] && [ "$(readlink "$P/fine2")" = x/y/up/a ] ||
                t_fail "a link that resolves inside was not written"
        [ "$(cat "$T_TMP/outside/t")" = secret ] || t_fail "the target outside changed"
        [ "$(around)" = "$before" ] || t_fail "the host around the workspace changed"
}
t_run symlink_chains symlink_chains

# A longer chain than the host would follow (40 links) is refused, and so is a loop.
symlink_loops() {
        mkproj
        # k1 -> k2 -> ... -> k46 -> ., made by one process, not 46 ln.
        ov "cd /workspace && python3 -c 'import os; [os.symlink(\"k%d\" % (i + 1), \"k%d\" % i) for i in range(1, 46)]' &&
                ln -s . k46 && ln -s k1/x toolong && ln -s me/x me"
        apply_refuses "a chain of symlinks too long to follow" toolong me
}
t_run symlink_loops symlink_loops

# A mount point in the host dir (one the agent sees as the empty directory below it): apply
# neither writes through it nor writes a link through it. Root only: the mount is made in a
# mount namespace of the apply's own.
mount_points() {
        [ "$(id -u)" = 0 ] || t_skip "mounting in the host dir needs root"
        mkproj
        mkdir -p "$P/mnt"
        ov 'cd /workspace && ln -s mnt/self/root/etc/passwd viaproc && echo x > mnt/file'
        t_cmd unshare -m sh -c "mount -t proc proc '$P/mnt' && timeout 60 '$RTN' apply"
        t_exit_is 1
        t_stdout_has "refused A /workspace/viaproc: a symlink through a mount point on the host"
        grep -q "^refused [AM] /workspace/mnt" "$T_OUT_FILE" ||
                t_fail "a file was written below a mount point: $(cat "$T_OUT_FILE")"
        t_no_file "$P/viaproc"
        t_no_file "$P/mnt/file"
}
t_run mount_points mount_points

# The files host programs run by themselves (runtime/sandbox/hostrun.h) are refused, made, changed
# or deleted, at any depth and in any case, and so is a directory deletion that would take
# one with it.
protected_files() {
        mkproj
        git -C "$P" init -q 2>/dev/null || mkdir -p "$P/.git/hooks"
        echo '[core]' >"$P/.git/config"
        mkdir -p "$P/sub/.git" "$P/other"
        echo keep >"$P/sub/.git/HEAD"
        echo 'export X=1' >"$P/other/.envrc"
        local sums
        sums=$(find "$P" -path '*/.git*' -o -name '.envrc' | LC_ALL=C sort | xargs sha256sum 2>/dev/null)
        ov 'cd /workspace && echo "[core] fsmonitor = /tmp/x" >> .git/config &&
                printf "#!/bin/sh\nid\n" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit &&
                echo "export X=2" > .envrc && echo evil >> .bashrc && mkdir -p .vscode &&
                echo "{}" > .vscode/tasks.json && echo "{}" > .mcp.json &&
                mkdir -p n && echo "gitdir: ./evil" > n/.git && mkdir -p c/.GIT &&
                echo x > c/.GIT/config && rm -r sub && rm other/.envrc && mkdir deep &&
                mkdir -p deep/er && echo y > deep/er/.envrc'
        apply_refuses "protected (.envrc)" .envrc deep/er/.envrc
        for p in .git .bashrc .vscode .mcp.json n/.git c/.GIT; do
                refused_for "$p" protected || t_fail "/workspace/$p not refused: $(cat "$T_OUT_FILE")"
        done
        t_stdout_has "refused D /workspace/other/.envrc: protected (.envrc)"
        t_stdout_has "refused D /workspace/sub: it holds a file host programs run by themselves"
        [ "$(find "$P" -path '*/.git*' -o -name '.envrc' | LC_ALL=C sort | xargs sha256sum 2>/dev/null)" = "$sums" ] ||
                t_fail "a protected file changed on the host"
        local f
        for f in .bashrc .vscode .mcp.json n/.git c/.GIT; do t_no_file "$P/$f"; done
        t_file_exists "$P/sub/.git/HEAD"
}
t_run protected_files protected_files

# A git dir in its own right, whatever its name (git's setup.c is_git_directory: HEAD, and
# commondir or objects/ and refs/): git run inside it reads its config, pager, aliases and
# hooks included. Made new (a bare repository with a commit and a pager of the agent's), made
# of a project's own objects/ and refs/ by adding HEAD, a worktree's git dir (HEAD and
# commondir), the host's own bare repository changed or deleted: each refused, and the host's
# `git log` in each runs nothing of the agent's.
git_dirs() {
        command -v git >/dev/null || t_skip "git is not installed"
        command -v script >/dev/null || t_skip "script (util-linux) is not installed"
        mkproj
        local mark=$T_TMP/PWNED st=$T_TMP/stage d
        git init -q --bare "$P/repo.git" && git init -q --bare "$P/old.git" || t_fail "git init"
        mkdir -p "$P/data/objects" "$P/data/refs"
        # The bytes the agent writes inside with printf (made with git here, planted as such).
        git init -q "$st" && git -C "$st" -c user.name=t -c user.email=t@t commit -q \
                --allow-empty -m x && git clone -q --bare "$st" "$st.git" &&
                git -C "$st.git" config core.pager "touch $mark; cat" || t_fail "git clone"
        local conf
        conf=$(cat "$P/repo.git/config")
        ov "cd /workspace && printf '[core]\n\tpager = touch $mark; cat\n' >>repo.git/config &&
                echo 'ref: refs/heads/main' >data/HEAD && mkdir wt &&
                echo 'ref: refs/heads/main' >wt/HEAD && echo ../repo.git >wt/commondir &&
                rm -r old.git && echo ok >fine"
        cp -a "$st.git" "$UPPER/evil"
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 1
        t_stdout_has "refused M /workspace/repo.git/config: in a git dir"
        t_stdout_has "refused A /workspace/data/HEAD: in a git dir"
        t_stdout_has "refused A /workspace/wt/commondir: in a git dir"
        t_stdout_has "refused A /workspace/evil/config: in a git dir"
        t_stdout_has "refused D /workspace/old.git: it is or holds a git dir"
        t_file_exists "$P/fine"
        t_file_exists "$P/old.git/HEAD"
        for d in data/HEAD wt/HEAD evil/HEAD evil/config; do t_no_file "$P/$d"; done
        [ "$(cat "$P/repo.git/config")" = "$conf" ] || t_fail "repo.git/config changed"
        for d in evil repo.git data wt; do
                [ -d "$P/$d" ] || continue
                (cd "$P/$d" && env -u GIT_PAGER -u PAGER script -qec "git log" /dev/null \
                        </dev/null >/dev/null 2>&1)
        done
        t_no_file "$mark"
}
t_run git_dirs git_dirs

# An editable install (pip install -e, setuptools' PEP 660 finder) puts a .pth in the venv that
# imports a finder module beside it at every start of the venv's Python, whatever the command
# (an editor's language server starts it on open). The module is as much start-up code as the
# .pth: live it is read-only, and apply refuses a change to it.
editable_finder() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        mkproj
        local py ver site mark=$T_TMP/PWNED fin
        { read -r py && read -r ver; } < <(python3 -c 'import sys
print(sys.executable)
print("python%d.%d" % sys.version_info[:2])')
        site=.venv/lib/$ver/site-packages
        fin=$site/__editable___proj_0_1_finder.py
        mkdir -p "$P/.venv/bin" "$P/$site"
        printf 'home = %s\n' "${py%/*}" >"$P/.venv/pyvenv.cfg"
        ln -s "$py" "$P/.venv/bin/python3"
        echo 'import __editable___proj_0_1_finder' >"$P/$site/__editable__.proj-0.1.pth"
        echo 'pass' >"$P/$fin"
        "$P/.venv/bin/python3" -c 'import sys; assert sys.prefix.endswith(".venv"), sys.prefix' ||
                t_skip "this python3 does not run a hand-made venv"
        t_exec --workspace "$P" -- sh -c "echo 'open(\"$mark\", \"w\")' >>/workspace/$fin"
        ov "echo 'open(\"$mark\", \"w\")' >>/workspace/$fin"
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 1
        t_stdout_has "refused M /workspace/$fin: protected ("
        "$P/.venv/bin/python3" -c pass
        t_no_file "$mark"
}
t_run editable_finder editable_finder

# A venv's activate scripts are sourced by the owner's shell, and by an editor in each new
# terminal of the project (VS Code's Python extension activates the workspace's venv): as much
# start-up code as an .envrc. Live they are read-only, and apply refuses a change to them.
venv_activate() {
        mkproj
        local mark=$T_TMP/PWNED f
        mkdir -p "$P/.venv/bin"
        echo 'VIRTUAL_ENV=x' >"$P/.venv/bin/activate"
        echo 'set VIRTUAL_ENV x' >"$P/.venv/bin/activate.fish"
        t_exec --workspace "$P" -- sh -c "echo 'touch $mark' >>/workspace/.venv/bin/activate"
        ov "cd /workspace/.venv/bin && echo 'touch $mark' >>activate && echo 'touch $mark' >activate.csh &&
                echo 'exec(\"import os\")' >activate_this.py"
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 1
        for f in activate activate.csh activate_this.py; do
                t_stdout_has "/workspace/.venv/bin/$f: protected ("
        done
        (. "$P/.venv/bin/activate")
        t_no_file "$mark"
        t_no_file "$P/.venv/bin/activate.csh"
}
t_run venv_activate venv_activate

# A file apply writes gets the time of the write, as a checkout gives it, not the agent's: an
# old mtime (touch -d 2000-01-01) on a changed source made the owner's make take the stale
# object for up to date, and a backup by size and mtime skip the change.
file_times() {
        command -v make >/dev/null || t_skip "make is not installed"
        mkproj
        printf 'out: src\n\tcp src out\n' >"$P/Makefile"
        echo old >"$P/src"
        make -s -C "$P" >/dev/null || t_fail "the owner's make failed"
        ov 'cd /workspace && echo new >src && touch -d 2000-01-01 src && ln -s src lnk &&
                touch -h -d 2000-01-01 lnk'
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 0
        make -s -C "$P" >/dev/null || t_fail "the owner's make failed after apply"
        [ "$(cat "$P/out")" = new ] || t_fail "make took the old out for up to date: $(stat -c '%y' "$P/src")"
        [ "$(stat -c %Y "$P/lnk")" -gt 946684800 ] || t_fail "the link kept the agent's time"
}
t_run file_times file_times

# A sparse file costs the upper nothing and its size in apparent bytes: apply writes it sparse,
# so the agent cannot fill the host's disk with a file of holes (truncate -s 1T).
sparse_files() {
        mkproj
        ov 'cd /workspace && truncate -s 256M big && printf data | dd of=big bs=1 seek=100000000 conv=notrunc 2>/dev/null && truncate -s 64M a'
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 0
        [ "$(stat -c %s "$P/big")" = 268435456 ] || t_fail "big has the wrong size"
        [ "$(dd if="$P/big" bs=1 skip=100000000 count=4 2>/dev/null)" = data ] ||
                t_fail "the data inside big was not written"
        local kb
        kb=$(du -k "$P/big" "$P/a" | awk '{s += $1} END {print s}')
        [ "$kb" -lt 4096 ] || t_fail "apply wrote the holes: ${kb} KiB on the host's disk"
}
t_run sparse_files sparse_files

# The registry of host-run files by family (runtime/sandbox/hostrun.h): a hook framework's
# config, a venv's .pth, a debugger's init file, a tool's own config one directory down, an
# editor's and a language's start-up files, an environment manager's. Each is refused with
# its tool's reason and left pending, and the host's next ordinary action (a commit with the
# hook framework installed, starting the project's Python, gdb) runs none of it. rtn diff
# PATH shows a refused file; only rtn apply --allow-protected PATH writes it.
hostrun_families() {
        command -v git >/dev/null || t_skip "git is not installed"
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        mkproj
        git -C "$P" init -q || t_fail "git init"
        # pre-commit, installed: its hook runs the entries of the work tree's config.
        printf '#!/bin/sh\nsed -n "s/^ *entry: //p" .pre-commit-config.yaml | sh\n' \
                >"$P/.git/hooks/pre-commit"
        chmod +x "$P/.git/hooks/pre-commit"
        printf 'repos: []\n' >"$P/.pre-commit-config.yaml"
        # A venv of the project's Python.
        local py ver site mark=$T_TMP/PWNED
        { read -r py && read -r ver; } < <(python3 -c 'import sys
print(sys.executable)
print("python%d.%d" % sys.version_info[:2])')
        site=.venv/lib/$ver/site-packages
        mkdir -p "$P/.venv/bin" "$P/$site"
        printf 'home = %s\n' "${py%/*}" >"$P/.venv/pyvenv.cfg"
        ln -s "$py" "$P/.venv/bin/python3"
        "$P/.venv/bin/python3" -c 'import sys; assert sys.prefix.endswith(".venv"), sys.prefix' ||
                t_skip "this python3 does not run a hand-made venv"
        ov "cd /workspace && printf '  - entry: touch $mark\n' >>.pre-commit-config.yaml &&
                echo 'import os; open(\"$mark\", \"w\")' >$site/evil.pth &&
                echo 'shell touch $mark' >.gdbinit && mkdir -p .cargo x &&
                printf '[build]\nrustc-wrapper = \"/tmp/w\"\n' >.cargo/config.toml &&
                echo 'yarnPath: ./x/y.js' >.yarnrc.yml && echo '((nil . ((eval . (x)))))' >.dir-locals.el &&
                echo 'system(\"id\")' >.irbrc && printf '[hooks]\nenter = \"id\"\n' >mise.toml &&
                echo 'pre-commit: {commands: {x: {run: id}}}' >lefthook.yml &&
                mkdir -p y && echo '[build]' >y/config.toml && ln -s y .CarGo && echo ok >fine"
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 1
        local p
        for p in .pre-commit-config.yaml "$site/evil.pth" .gdbinit .yarnrc.yml \
                .dir-locals.el .irbrc mise.toml lefthook.yml; do
                grep -q "^refused [AMD] /workspace/$p: protected (" "$T_OUT_FILE" ||
                        t_fail "/workspace/$p not refused as protected: $(cat "$T_OUT_FILE")"
        done
        t_stdout_has "refused A /workspace/.cargo/config.toml: protected (.cargo/config*): cargo runs"
        t_stdout_has "refused A /workspace/.CarGo: a symlink where .cargo/config* is looked up"
        t_stdout_has "refused M /workspace/.pre-commit-config.yaml: protected (.pre-commit-config.yaml): pre-commit runs"
        t_stderr_has "rtn apply --allow-protected PATH"
        t_file_exists "$P/fine"
        for p in "$site/evil.pth" .gdbinit .cargo/config.toml .yarnrc.yml .irbrc .CarGo; do
                t_no_file "$P/$p"
        done
        # The host's next ordinary actions.
        (cd "$P" && git add fine && git -c user.name=t -c user.email=t@t commit -qm x) ||
                t_fail "the host's git commit failed"
        "$P/.venv/bin/python3" -c pass
        if command -v gdb >/dev/null; then
                (cd "$P" && gdb -nh -batch -iex 'set auto-load safe-path /' >/dev/null 2>&1)
        fi
        t_no_file "$mark"
        # The user reviews one, and writes it by naming it; the rest stays refused.
        t_cmd "$RTN" diff /workspace/.gdbinit
        t_exit_is 0
        t_stdout_has "A /workspace/.gdbinit"
        t_stdout_has "+shell touch $mark"
        t_cmd "$RTN" diff .cargo
        t_stdout_has '+rustc-wrapper = "/tmp/w"'
        # Naming a path writes that one only, and its protection still holds.
        t_cmd "$RTN" apply .irbrc
        t_exit_is 1
        t_stdout_has "refused A /workspace/.irbrc: protected"
        t_no_file "$P/.irbrc"
        t_cmd timeout 60 "$RTN" apply --allow-protected ./.irbrc /workspace/.cargo/
        t_exit_is 1
        t_stdout_has "A /workspace/.irbrc"
        t_stdout_has "A /workspace/.cargo/config.toml"
        t_stdout_has "refused A /workspace/.gdbinit: protected"
        [ "$(cat "$P/.irbrc")" = 'system("id")' ] || t_fail ".irbrc not written"
        t_no_file "$P/.gdbinit"
}
t_run hostrun_families hostrun_families

# A host file changed since the sandbox started is a conflict, not an overwrite: modified,
# deleted, or below a directory the agent deleted.
conflicts() {
        mkproj
        echo b >"$P/b"
        echo c >"$P/c"
        mkdir -p "$P/e"
        echo e >"$P/e/old"
        ov 'echo agent >> /workspace/a; echo agent >> /workspace/b; rm /workspace/c;
                rm -r /workspace/e; echo new > /workspace/n'
        echo user >"$P/a"
        rm "$P/b"
        echo user >"$P/c"
        echo user >"$P/e/new"
        t_cmd "$RTN" apply
        t_exit_is 1
        t_stdout_has "refused M /workspace/a: conflict: changed on the host since the sandbox started"
        t_stdout_has "refused A /workspace/b: conflict: deleted on the host since the sandbox started"
        t_stdout_has "refused D /workspace/c: conflict: changed on the host since the sandbox started"
        t_stdout_has "refused D /workspace/e: conflict: a file below it changed on the host"
        t_stdout_has "A /workspace/n"
        t_stderr_has "4 refused as conflicts"
        t_stderr_has "rtn apply --force PATH"
        [ "$(cat "$P/a" "$P/c" "$P/e/new")" = "user
user
user" ] || t_fail "a user's change was overwritten"
        t_no_file "$P/b"
        # --force PATH writes a conflict the user saw, that one only: every other stays
        # refused, and a protected file stays protected however it is forced.
        t_cmd "$RTN" apply --force /workspace/a
        t_exit_is 1
        t_stdout_has "M /workspace/a"
        t_stdout_has "refused D /workspace/c: conflict"
        [ "$(cat "$P/a")" = "hello
agent" ] || t_fail "--force did not write a: $(cat "$P/a")"
        [ "$(cat "$P/c")" = user ] || t_fail "--force a wrote c"
        t_cmd "$RTN" apply --force e --force b
        t_exit_is 1
        t_no_file "$P/e"
        [ "$(cat "$P/b")" = "b
agent" ] || t_fail "--force did not write b"
        t_exit_is 125 "$RTN" apply --force ../x
        t_stderr_has "'../x' is not a path in the workspace"
        # rtn apply's own writes are no conflict later: change n again, apply again.
        ov 'echo again >> /workspace/n'
        t_cmd "$RTN" apply
        t_stdout_has "M /workspace/n"
}
t_run conflicts conflicts

# rtn apply PATH... writes those paths only (and what is below them): the rest stays
# pending, every check still holds for the named ones, an opaque directory on the way to one
# deletes nothing it did not name, and a PATH with no pending change is an error naming it
# that writes nothing.
named_paths() {
        mkproj
        ov 'cd /workspace && echo agent >> a && echo n > d/new && rm d/f && mkdir -p e/s &&
                echo g > e/s/g && echo evil >> .bashrc'
        t_exit_is 1 "$RTN" apply e/s/g zz
        t_stderr_has "/workspace/zz: no pending change"
        t_no_file "$P/e"
        t_exit_is 1 "$RTN" apply d/f/x
        t_stderr_has "/workspace/d/f/x: no pending change"
        t_cmd "$RTN" apply --dry-run /workspace/e/s/g
        t_exit_is 0
        t_stdout_has "A /workspace/e/s/g"
        grep -qF "/workspace/a" "$T_OUT_FILE" && t_fail "a dry run of e/s/g lists a"
        t_cmd "$RTN" apply ./e/s/g
        t_exit_is 0
        [ "$(cat "$P/e/s/g")" = g ] || t_fail "e/s/g not written"
        [ "$(cat "$P/a")" = hello ] || t_fail "a written by apply e/s/g"
        [ -e "$P/d/f" ] && [ ! -e "$P/d/new" ] || t_fail "d written by apply e/s/g"
        t_cmd "$RTN" apply .bashrc
        t_exit_is 1
        t_stdout_has "refused A /workspace/.bashrc: protected"
        t_no_file "$P/.bashrc"
        t_cmd "$RTN" apply d
        t_exit_is 0
        [ "$(cat "$P/d/new")" = n ] && [ ! -e "$P/d/f" ] || t_fail "apply d did not write d"
        [ "$(cat "$P/a")" = hello ] || t_fail "a written by apply d"
        t_cmd "$RTN" diff
        t_stdout_has "M /workspace/a"
        t_stdout_has "A /workspace/.bashrc"
        # An opaque directory: naming a file in it writes that file, not its deletions, and
        # the file stays what the overlay shows there until the directory is applied.
        ov 'rm -r /workspace/d && mkdir /workspace/d && echo z > /workspace/d/z'
        t_cmd "$RTN" apply d/z
        t_exit_is 0
        [ "$(cat "$P/d/z")" = z ] && [ -e "$P/d/new" ] || t_fail "apply d/z: $(ls "$P/d")"
        t_cmd "$RTN" apply
        t_exit_is 1
        t_no_file "$P/d/new"
        [ "$(cat "$P/d/z")" = z ] || t_fail "d/z lost after the opaque d was applied"
        [ "$(cat "$P/a")" = "hello
agent" ] || t_fail "the rest was not left pending"
}
t_run named_paths named_paths

# Names are the agent's: dots that look like "..", control characters that would forge a
# listing line or drive a terminal. Nothing leaves the workspace, control characters are
# refused, listings escape them.
names() {
        mkproj
        local before
        before=$(around)
        ov 'cd /workspace && python3 -c "
import os
for n in [\"...\", \". .\", \"..x\", \"x\\nD passwd\", \"..\\x01\", \"\\x1b[31mred\"]:
    open(n, \"w\").close()
for d in [\"... \", \"..\\n\"]:
    os.mkdir(d)
    open(d + \"/f\", \"w\").close()
for n in [b\"bidi\\xe2\\x80\\xaegpj.sh\", b\"csi\\xc2\\x9b31m\", b\"iso\\xe2\\x81\\xa6x\"]:
    open(n, \"w\").close()
"'
        t_cmd "$RTN" diff
        grep -q '^D passwd' "$T_OUT_FILE" && t_fail "rtn diff printed a forged line"
        t_stdout_has 'A "/workspace/x\nD passwd"'
        t_cmd "$RTN" apply
        t_exit_is 1
        grep -q '^D passwd' "$T_OUT_FILE" && t_fail "rtn apply printed a forged line"
        grep -q $'\033' "$T_OUT_FILE" && t_fail "an escape sequence reached the terminal"
        t_stdout_has 'refused A "/workspace/x\nD passwd": a control character in its name'
        t_stdout_has 'refused A "/workspace/..\n": a control character in its name'
        t_stdout_has 'refused A "/workspace/..\001": a control character in its name'
        local f
        for f in ... ". ." ..x "... /f"; do t_file_exists "$P/$f"; done
        t_stdout_has 'refused A "/workspace/\033[31mred": a control character in its name'
        [ "$(find "$P" -print0 | LC_ALL=C grep -zc $'[\x01-\x1f\x7f]')" = 0 ] ||
                t_fail "a name with a control character reached the host"
        # C1 and bidi controls: a name shown reversed (a script that lists as a picture).
        t_stdout_has 'refused A "/workspace/bidi\342\200\256gpj.sh": a control character in its name'
        t_stdout_has 'refused A "/workspace/csi\302\23331m": a control character in its name'
        t_stdout_has 'refused A "/workspace/iso\342\201\246x": a control character in its name'
        [ "$(find "$P" -print0 | LC_ALL=C grep -zc $'\xe2\x80\xae\\|\xc2\x9b\\|\xe2\x81\xa6')" = 0 ] ||
                t_fail "a name with a C1 or bidi control reached the host"
        [ "$(around)" = "$before" ] || t_fail "the host around the workspace changed"
}
t_run names names

# A symlink swapped in while apply runs, on the host (directories of the workspace turned
# into links out of it) and in the upper (directories of the changes turned into links to
# directories of secrets): apply never writes outside and never copies what a link points
# at. openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) fails such an open. The swapper is a
# tight loop (python, no fork per swap) over many directories, so the window between a
# directory's lstat and its open is hit.
swapper() {
        exec python3 - "$@" <<'PY'
import os, sys, itertools
swaps = [tuple(a.split("=", 1)) for a in sys.argv[1:]]  # DIR=TARGET: DIR <-> link to TARGET
for d, target in itertools.cycle(swaps):
    try:
        os.rename(d, d + ".real")
        os.symlink(target, d)
        os.unlink(d)
        os.rename(d + ".real", d)
    except OSError:
        pass
PY
}

swap_during_apply() {
        mkproj
        local i pid round rounds args n60=({1..60}) n20=({1..20}) u=(/workspace/u{1..60})
        mkdir -p "$T_TMP/secrets" "$P"/s{1..60}
        for i in {1..20}; do echo secret >"$T_TMP/secrets/f$i"; done
        rounds=$(t_stress 1 3)
        for ((round = 1; round <= rounds; round++)); do
                # One mkdir, and the shell's own loops (no seq, no mkdir per directory).
                ov "mkdir -p ${u[*]} && for i in ${n60[*]}; do for j in ${n20[*]}; do
                        echo mine > /workspace/s\$i/f\$j; done
                        echo mine > /workspace/u\$i/f1; done"
                args=()
                for i in {1..60}; do
                        args+=("$P/s$i=$T_TMP/outside" "$UPPER/u$i=$T_TMP/secrets")
                done
                swapper "${args[@]}" &
                pid=$!
                t_cmd timeout 60 "$RTN" apply
                kill "$pid"
                wait "$pid" 2>/dev/null
                for i in {1..60}; do
                        for d in "$P/s$i" "$UPPER/u$i"; do
                                [ -d "$d.real" ] && rm -rf "$d" && mv "$d.real" "$d"
                        done
                done
                [ "$T_RC" = 0 ] || [ "$T_RC" = 1 ] || t_fail "apply: $(t_last)"
                [ -z "$(ls -A "$T_TMP/outside")" ] || t_fail "apply wrote outside: $(ls "$T_TMP/outside" | head -3)"
                grep -rqs secret "$P" && t_fail "apply copied what a swapped link pointed at"
                "$RTN" reset
        done
        true
}
t_run swap_during_apply swap_during_apply

# workspace_apply refuses while a command runs: the overlay would change under it.
serve_busy() {
        mkproj
        cat >calls <<'EOF'
shell_job_start {"command": "echo x > /workspace/x; sleep 60"}
shell_run {"command": "sleep 0.3"}
workspace_apply {}
EOF
        t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls -- \
                "$RTN" serve --workspace "$P" --workspace-mode overlay
        t_exit_is 0
        tail -n 1 "$T_OUT_FILE" | grep -q '"isError": true' || t_fail "apply ran beside a job: $(tail -n 1 "$T_OUT_FILE")"
        t_stdout_has "still running"
        t_no_file "$P/x"
}
t_run serve_busy serve_busy

t_done
