#!/usr/bin/env bash
# Protection that follows git's configuration (docs/security-invariants.md, 13 and 16). A
# repository's own configuration can point git at files of the work tree: hooks
# (core.hooksPath), more configuration (include.path, includeIf, config.worktree), programs
# (core.fsmonitor, filter drivers, textconv, aliases, the pager). The agent plants a program
# there; the owner's next git command must not run it, whether the workspace is live (the
# write fails) or an overlay whose changes `rtn apply` writes back (refused, with the reason).
# Each case is checked by running the real git as the owner afterwards. --protect PATH adds the
# user's own paths the same way.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/seclib.bash"
t_need_rtn
command -v git >/dev/null || {
        echo "skip gitconf.sh: git is not installed"
        exit 0
}

OV_OPTS=()
LIVE_OPTS=()
RW=

# A repository at $WS with one commit, a HOME of the case's own (its .gitconfig is the global
# configuration rtn reads too), and the program the agent plants: it leaves $MARK.
setup() {
        export HOME=$T_TMP/home GIT_CONFIG_NOSYSTEM=1
        mkdir -p "$HOME"
        printf '[user]\n\tname = t\n\temail = t@t\n[safe]\n\tdirectory = *\n' >"$HOME/.gitconfig"
        WS=$T_TMP/ws
        MARK=$T_TMP/PWNED
        git init -q "$WS" && echo a >"$WS/a.txt" && git -C "$WS" add a.txt &&
                git -C "$WS" commit -q -m init || t_fail "git init"
}

# plant PATH...: the agent's script that writes the marking program at each PATH (relative
# to /workspace), making its directories (named here: no dirname, no mkdir of "." inside).
plant() {
        local p s=
        for p in "$@"; do
                [[ $p == */* ]] && s="$s mkdir -p ${p%/*} 2>/dev/null;"
                s="$s printf '#!/bin/sh\ntouch $MARK\n' >$p && chmod +x $p;"
        done
        echo "$s true"
}

# owner_git CMD: the owner's git in $WS afterwards (under a terminal, for the pager); the
# planted program must not have run.
owner_git() {
        (cd "$WS" && script -qec "$1" /dev/null >/dev/null 2>&1 </dev/null) || true
        t_no_file "$MARK"
}

# live SCRIPT CMD: SCRIPT in a live workspace (to its end), then the owner's CMD.
live() {
        t_exec --workspace "$WS" "${LIVE_OPTS[@]}" -- sh -c "$1; echo SCRIPT-ENDED"
        t_stdout_has SCRIPT-ENDED
        owner_git "$2"
}

# refused_protected PATH: rtn apply's output has a line for /workspace/PATH that says it is
# protected by git's configuration or by --protect (read by the shell: no grep per path).
refused_protected() {
        local l re="protected: (git's|--protect)"
        while IFS= read -r l; do
                [[ $l == *" /workspace/$1: "* && $l =~ $re ]] && return 0
        done <"$T_OUT_FILE"
        return 1
}

# overlay SCRIPT CMD PATH...: SCRIPT in an overlay workspace, its changes kept; rtn apply
# refuses each PATH as protected by what names it; then the owner's CMD.
overlay() {
        local script=$1 cmd=$2 p
        shift 2
        [ -z "$RW" ] || return 0 # --workspace-git rw is for a live workspace
        t_exec --keep --quiet --workspace "$WS" --workspace-mode overlay "${OV_OPTS[@]}" -- sh -c "$script"
        t_exit_is 0
        t_cmd timeout 60 "$RTN" apply
        t_exit_is 1
        for p in "$@"; do
                refused_protected "$p" || t_fail "/workspace/$p not refused as protected: $(cat "$T_OUT_FILE")"
        done
        owner_git "$cmd"
}

# both SCRIPT CMD PATH...: the same attack through a live and an overlay workspace.
both() {
        local snap=$T_TMP/snap
        cp -a "$WS" "$snap"
        live "$1" "$2"
        rm -rf "$WS" && mv "$snap" "$WS"
        overlay "$@"
}

# The husky layout: core.hooksPath=.githooks, which does not exist yet.
hooks_path() {
        setup
        git -C "$WS" config core.hooksPath .githooks
        both "$(plant .githooks/pre-commit)" "git commit -q --allow-empty -m x" .githooks
}

# core.hooksPath as an absolute path inside the workspace, the directory there already.
hooks_path_absolute() {
        setup
        mkdir -p "$WS/hooks"
        git -C "$WS" config core.hooksPath "$WS/hooks"
        both "$(plant hooks/pre-commit)" "git commit -q --allow-empty -m x" hooks
}

# include.path=../tools/git.conf: the agent writes core.fsmonitor into the included file.
include_fsmonitor() {
        setup
        mkdir -p "$WS/tools"
        : >"$WS/tools/git.conf"
        git -C "$WS" config include.path ../tools/git.conf
        both "$(plant mon.sh); printf '[core]\n\tfsmonitor = ./mon.sh\n' >tools/git.conf" \
                "git status" tools/git.conf
}

# core.hooksPath set by an included file (upper case, a comment after the value), to a
# directory that is on no registry (husky's own .husky is: that would be refused by name).
hooks_path_included() {
        setup
        mkdir -p "$WS/conf"
        printf '[CORE]\n  HooksPath = "./.hooks-ci" ; ci\n' >"$WS/conf/git.conf"
        printf '[include]\n\tpath = ../conf/git.conf\n' >>"$WS/.git/config"
        both "$(plant .hooks-ci/pre-commit)" "git commit -q --allow-empty -m x" .hooks-ci
}

# core.hooksPath naming husky's .husky, which the registry lists but which does not exist at
# the start: a read-only bind needs something to cover, so git's list still makes it.
hooks_path_registry_absent() {
        setup
        git -C "$WS" config core.hooksPath .husky
        live "$(plant .husky/pre-commit)" "git commit -q --allow-empty -m x"
}

# includeIf "gitdir:..." from the global configuration names a file in the workspace.
include_if_gitdir() {
        setup
        mkdir -p "$WS/cfg"
        printf '[includeIf "gitdir:%s/"]\n\tpath = %s/cfg/extra.conf\n' "$WS" "$WS" >>"$HOME/.gitconfig"
        both "$(plant run.sh); printf '[alias]\n\tst = !./run.sh\n' >cfg/extra.conf" "git st" \
                cfg/extra.conf
}

# A worktree's config.worktree (extensions.worktreeConfig) names its hooks.
worktree_config() {
        setup
        git -C "$WS" config extensions.worktreeConfig true
        git -C "$WS" worktree add -q "$WS/wt" 2>/dev/null || t_fail "git worktree add"
        git -C "$WS/wt" config --worktree core.hooksPath hooks-wt
        local snap=$T_TMP/snap
        live "$(plant wt/hooks-wt/pre-commit)" "cd wt && git commit -q --allow-empty -m x"
        overlay "$(plant wt/hooks-wt/pre-commit)" "cd wt && git commit -q --allow-empty -m x" \
                wt/hooks-wt
}

# core.fsmonitor as a path of the work tree.
fsmonitor_path() {
        setup
        mkdir -p "$WS/tools"
        git -C "$WS" config core.fsmonitor tools/mon.sh
        both "$(plant tools/mon.sh)" "git status" tools/mon.sh
}

# A clean filter that .gitattributes selects, in a directory that does not exist yet.
filter_clean() {
        setup
        git -C "$WS" config filter.x.clean ./scripts/clean
        echo '*.txt filter=x' >"$WS/.gitattributes"
        echo b >"$WS/a.txt"
        both "$(plant scripts/clean)" "git add -A" scripts/clean
}

# An alias that runs a program of the work tree.
alias_bang() {
        setup
        mkdir -p "$WS/tools"
        git -C "$WS" config alias.st '!./tools/st'
        both "$(plant tools/st)" "git st" tools/st
}

# The pager, and a textconv driver.
pager_textconv() {
        setup
        git -C "$WS" config core.pager ./p
        git -C "$WS" config diff.x.textconv "sh ./conv"
        echo '*.txt diff=x' >"$WS/.gitattributes"
        echo b >"$WS/a.txt"
        both "$(plant p conv)" "git -p log; git diff" p
        [ -n "$RW" ] || grep -qF " /workspace/conv: " "$T_OUT_FILE" || t_fail "conv not refused"
}

# --isolation landlock (no mounts: Landlock keeps the paths read-only), as the caller.
landlock_mode() {
        [ "$(id -u)" != 0 ] || t_skip "as root the agent is another uid than the workspace's owner (see landlock_mode.sh)"
        setup
        mkdir -p "$WS/tools"
        git -C "$WS" config core.hooksPath .githooks
        git -C "$WS" config core.fsmonitor tools/mon.sh
        t_exec --isolation landlock --workspace "$WS" -- sh -c "$(plant .githooks/pre-commit tools/mon.sh); echo SCRIPT-ENDED"
        t_stdout_has SCRIPT-ENDED
        owner_git "git status; git commit -q --allow-empty -m x"
}

# --protect PATH: the user's own, live and (refused with that reason) overlay, where a later
# rtn apply still knows it.
user_protect() {
        setup
        OV_OPTS=(--protect "$WS/deploy")
        mkdir -p "$WS/deploy"
        echo ok >"$WS/deploy/run.sh"
        t_exec --workspace "$WS" "${LIVE_OPTS[@]}" --protect deploy -- sh -c 'echo evil >deploy/run.sh; echo x >deploy/new; echo ok >other; echo SCRIPT-ENDED'
        t_stdout_has SCRIPT-ENDED
        [ "$(cat "$WS/deploy/run.sh")" = ok ] || t_fail "deploy/run.sh changed"
        t_no_file "$WS/deploy/new"
        t_file_exists "$WS/other"
        t_exec --workspace "$WS" --protect /etc -- true
        t_exit_is 125
        t_stderr_has "not below the workspace"
        [ -n "$RW" ] && return
        overlay 'echo evil >deploy/run.sh; echo ok >other2' "true" deploy
        [ "$(cat "$WS/deploy/run.sh")" = ok ] || t_fail "deploy/run.sh changed by apply"
        t_file_exists "$WS/other2"
}

# rtn reads the configuration of every repository in a live bind at each start, the agent's
# new ones too (a live workspace cannot stop a new .git). A config file or an include that is
# not a regular file (a FIFO, a symlink to a device, include.path = /dev/...) is never
# opened: an open can act (a watchdog armed, a tape rewound, a FIFO's writer let through).
# The FIFOs show it: a writer waits in open() until someone opens them for reading.
config_not_opened() {
        setup
        t_exec --workspace "$WS" -- sh -c 'cd /workspace && mkdir -p sub/.git sub2/.git &&
                mkfifo sub/.git/config fifo2 && printf "[include]\n\tpath = ../../fifo2\n" >sub2/.git/config'
        t_exit_is 0
        local w1 w2 i
        (exec 3>"$WS/sub/.git/config" && touch "$T_TMP/opened1") &
        w1=$!
        (exec 3>"$WS/fifo2" && touch "$T_TMP/opened2") &
        w2=$!
        t_exec --workspace "$WS" -- true
        t_exit_is 0
        for i in 1 2 3 4 5 6 7 8 9 10; do
                [ -e "$T_TMP/opened1" ] || [ -e "$T_TMP/opened2" ] && break
                sleep 0.2
        done
        kill "$w1" "$w2" 2>/dev/null
        wait "$w1" "$w2" 2>/dev/null
        t_no_file "$T_TMP/opened1"
        t_no_file "$T_TMP/opened2"
}

# What the protection leaves behind must not break the owner's git: paths the configuration
# names that do not exist yet (an include, an attributes file, a program, a hooks directory)
# are made before the start so there is something to mount read-only, each as the kind git
# expects there. A directory where git reads a file made every later git command of the
# owner fail ("bad config line").
placeholders_keep_git_working() {
        setup
        git -C "$WS" config include.path ../incl.cfg
        git -C "$WS" config core.attributesFile .attrs
        git -C "$WS" config core.fsmonitor ./fsmon.sh
        git -C "$WS" config core.hooksPath .hk
        live "$(plant fsmon.sh .hk/pre-commit); printf '[alias]\n\tst = !./fsmon.sh\n' >incl.cfg" \
                "git status; git commit -q --allow-empty -m x"
        local f
        for f in incl.cfg .attrs fsmon.sh; do
                [ -f "$WS/$f" ] && [ ! -s "$WS/$f" ] || t_fail "$f is not an empty file: $(ls -ld "$WS/$f")"
        done
        [ -d "$WS/.hk" ] || t_fail ".hk is not a directory"
        git -C "$WS" config --unset core.fsmonitor
        t_cmd git -C "$WS" status --porcelain
        t_exit_is 0
        if grep -qiE "warning|fatal|error" "$T_ERR_FILE"; then
                t_fail "the owner's git complains: $(cat "$T_ERR_FILE")"
        fi
}

# --workspace-git rw: the agent commits in a live workspace, and .git's configuration, hooks,
# commondir, alternates, info/, worktrees/ and modules/ stay out of its reach.
rw() {
        LIVE_OPTS=(--workspace-git rw)
        RW=1
        "$@"
}

# The agent commits twice; the owner's git sees both commits and a sound repository.
rw_commits() {
        setup
        t_exec --workspace "$WS" --workspace-git rw -- sh -c 'cd /workspace &&
                echo b >b.txt && git add b.txt && git -c user.name=a -c user.email=a@a commit -q -m one &&
                echo c >c.txt && git add c.txt && git -c user.name=a -c user.email=a@a commit -q -m two && echo COMMITTED'
        t_exit_is 0
        t_stdout_has COMMITTED
        [ "$(git -C "$WS" log --format=%s | tr '\n' ' ')" = "two one init " ] ||
                t_fail "the owner's log: $(git -C "$WS" log --oneline)"
        t_cmd git -C "$WS" fsck --no-progress
        t_exit_is 0
        t_cmd git -C "$WS" status --porcelain
        t_exit_is 0
        [ -z "$(cat "$T_OUT_FILE")" ] || t_fail "the owner's status: $(cat "$T_OUT_FILE")"
        # rtn serve takes it too, and env_status says what it means
        if command -v python3 >/dev/null; then
                printf '%s\n' \
                        'shell_run {"command":"echo d >d.txt && git add d.txt && git -c user.name=a -c user.email=a@a commit -q -m three && echo COMMITTED"}' \
                        'shell_run {"command":"echo x >>.git/config || echo REFUSED"}' \
                        'env_status {}' >calls
                t_cmd python3 "$T_ROOT/tests/integration/mcp_calls.py" calls --check '
r = a
assert "COMMITTED" in r[0]["result"]["stdout"], r[0]
assert "REFUSED" in r[1]["result"]["stdout"], r[1]
ws = [d for d in r[2]["result"]["host_dirs"] if d["mount_point"] == "/workspace"][0]
assert ws["git"].startswith("writable"), ws
' -- "$RTN" serve --workspace "$WS" --workspace-git rw
                [ "$T_RC" = 3 ] && t_fail "$(tail -n 1 "$T_ERR_FILE"): $(cat "$T_OUT_FILE")"
                t_exit_is 0
                [ "$(git -C "$WS" log -1 --format=%s)" = three ] || t_fail "serve's commit is not on the host"
        fi
        # the default is unchanged: .git read-only, and said
        t_exec --workspace "$WS" -- sh -c 'cd /workspace && git commit -q --allow-empty -m three'
        t_stderr_has "read-only"
}

# Every place in .git that git reads configuration or a program from, written, created,
# replaced or moved away by the agent with .git writable; then the owner's git status, commit
# and worktree listing must run nothing of the agent's and still work.
rw_gitdir() {
        setup
        git -C "$WS" config core.hooksPath .git/hooks-ci # hooks named inside .git itself
        mkdir "$WS/.git/hooks-ci"
        local evil=$T_TMP/evil-not-there
        t_exec --workspace "$WS" --workspace-git rw -- sh -c "cd /workspace/.git; $(plant mon.sh)
                printf '[core]\n\tfsmonitor = /workspace/.git/mon.sh\n' >>config
                printf '[core]\n\tfsmonitor = $WS/.git/mon.sh\n' >config.worktree
                cp mon.sh hooks/pre-commit; cp mon.sh hooks/post-commit; chmod +x hooks/*
                mkdir -p hooks-ci; cp mon.sh hooks-ci/pre-commit
                mv hooks hooks.old; mkdir hooks; cp mon.sh hooks/pre-commit
                rm -f commondir; ln -s $evil commondir; echo $evil >commondir
                mkdir -p $evil 2>/dev/null
                mv config config.old; echo '[core]' >config
                echo '* filter=x' >info/attributes; mkdir -p info; echo '* filter=x' >>info/attributes
                echo /tmp/objs >objects/info/alternates
                mkdir -p worktrees/x modules/m remotes; echo '$WS' >worktrees/x/gitdir
                echo 'URL: ext::sh -c touch% $MARK' >remotes/origin
                cd /workspace && mv .git .git-old; mkdir .git
                echo SCRIPT-ENDED"
        t_stdout_has SCRIPT-ENDED
        owner_git "git status; git commit -q --allow-empty -m x; git worktree list; git fetch origin"
        t_file_exists "$WS/.git/HEAD"
        local f
        for f in hooks/pre-commit hooks/post-commit hooks-ci/pre-commit info/attributes worktrees/x modules/m remotes/origin; do
                t_no_file "$WS/.git/$f"
        done
        [ ! -s "$WS/.git/objects/info/alternates" ] || t_fail "alternates written"
        [ ! -s "$WS/.git/config.worktree" ] || t_fail "config.worktree written"
        grep -q fsmonitor "$WS/.git/config" && t_fail "config written"
        t_cmd git -C "$WS" status --porcelain
        t_exit_is 0
        if grep -qiE "warning|fatal|error" "$T_ERR_FILE"; then
                t_fail "the owner's git complains: $(cat "$T_ERR_FILE")"
        fi
        t_exec --workspace "$WS" --workspace-git rw --workspace-mode overlay -- true
        t_exit_is 125
        t_stderr_has "--workspace-git rw"
}

t_run rw_commits rw_commits
t_run rw_gitdir rw_gitdir
for c in hooks_path hooks_path_absolute include_fsmonitor hooks_path_included \
        hooks_path_registry_absent include_if_gitdir worktree_config fsmonitor_path filter_clean \
        alias_bang pager_textconv user_protect placeholders_keep_git_working; do
        t_run "${c}_rw" rw "$c"
done
t_run config_not_opened config_not_opened
t_run hooks_path hooks_path
t_run hooks_path_absolute hooks_path_absolute
t_run include_fsmonitor include_fsmonitor
t_run hooks_path_included hooks_path_included
t_run hooks_path_registry_absent hooks_path_registry_absent
t_run include_if_gitdir include_if_gitdir
t_run worktree_config worktree_config
t_run fsmonitor_path fsmonitor_path
t_run filter_clean filter_clean
t_run alias_bang alias_bang
t_run pager_textconv pager_textconv
t_run landlock_mode landlock_mode
t_run user_protect user_protect
t_run placeholders_keep_git_working placeholders_keep_git_working
t_done
