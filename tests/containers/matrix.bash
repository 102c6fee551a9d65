#!/bin/bash
# One user's pass of the container matrix (tests/integration/containers.sh, `matrix`), run
# inside the container as root and again as a user: rtn exec, with --user root, and rtn
# enter into a running one; a toolchain of the home bound read-only and a credential store
# refused; two commits with --workspace-git rw; rtn serve over stdio with a commit, a second
# start that finds it, and a reset; rtn serve --http reached over loopback (bash's /dev/tcp:
# as where an image has no HTTP client) with the same steps. Each step prints one line
# "USER STEP VALUE" for the suite to compare, and the isolation each front door picked and
# said (ISOLATION: full or landlock, and whether stderr named it).
# The commands are the sandbox's shell's to expand ($HOME inside), not this one's. What this
# script itself reads and waits for it does with bash's builtins: the processes it starts are
# rtn's and git's, not a grep, sed or sleep per step or per poll.
# shellcheck disable=SC2016
set -u
who=$(id -un)
say() { printf '%s %s\n' "$who" "$*"; }
dir=$(mktemp -d) || exit 1
cd "$dir" || exit 1
export RTN_DATA_DIR=$dir/data # a read-only root has only its tmpfs /tmp

# nap SECONDS: a sleep with no process, a read that times out on a fifo no one writes
mkfifo nap && exec 6<>nap
nap() { read -r -t "$1" -u 6 _; }
# has ERE FILE: whether a line of FILE matches ERE; its first such line in LINE
has() {
        local l
        while IFS= read -r l || [ -n "$l" ]; do
                [[ $l =~ $1 ]] && LINE=$l && return 0
        done <"$2"
        return 1
}

# the isolation an rtn front end said on stderr: landlock when it said it chose it
said() { if has 'chose --isolation landlock by itself' "$1"; then echo landlock; else echo full; fi; }

# --- rtn exec
out=$(rtn exec -- sh -c 'echo in' 2>exec.err)
say exec "rc=$? $out said=$(said exec.err)"

# --- rtn exec --user root (root inside, whatever ids the container left rtn)
out=$(rtn exec --user root -- id -u 2>user.err)
say exec_user_root "rc=$? $out"

# --- rtn enter: a second command in a running rtn exec's sandbox, by the pid rtn ps lists
rtn exec -- sleep 60 >/dev/null 2>&1 &
epid=$!
listed() { # whether rtn ps lists pid $epid running sleep 60
        local l
        while IFS= read -r l; do
                [[ $l =~ ^\ *$epid\ .*sleep\ 60 ]] && return 0
        done < <(rtn ps 2>/dev/null)
        return 1
}
i=0
until listed || [ $i -ge 300 ]; do
        nap 0.1
        i=$((i + 1))
done
out=$(rtn enter "$epid" -- sh -c 'echo entered' 2>enter.err)
rc=$?
# a failure says why, on the line compared (its stderr is this script's own file)
[ "$rc" = 0 ] || { read -r err <enter.err; out+=" ${err:-}"; }
say enter "rc=$rc $out"
kill "$epid" 2>/dev/null
wait "$epid" 2>/dev/null

# the error rtn exec gave on FILE when RC is its own failure (125), the home written as ~:
# where user namespaces are denied, the option it named as needing them; else its first
# line past a warning
refusal() {
        [ "$1" = 125 ] && sed -n "/^rtn exec: WARNING: user namespaces are denied here (.*), and \(.*\) needs them: \(the sandbox will not start\).*/{s//\1 needs them: \2/p;q}
                /^rtn exec: WARNING: /d; /^rtn exec: /{s|||;s|$home|~|g;p;q}" "$2"
}

# --- a toolchain in a hidden directory of the home, bound read-only (a write to it fails),
# and a credential store refused with the reason. A read-only root's home cannot be written:
# there, as a readOnlyRootFilesystem pod's HOME is, it is a directory of the writable /tmp.
home=$HOME
[ -w "$home" ] || home=$dir/home
mkdir -p "$home/.tool/bin" "$home/.ssh"
printf '#!/bin/sh\necho hello\n' >"$home/.tool/bin/hello"
chmod 755 "$home/.tool/bin/hello"
out=$(HOME=$home rtn exec --bind "$home/.tool:/opt/tool:ro" -- sh -c \
        'a=$(/opt/tool/bin/hello); { echo x >/opt/tool/bin/hello; } 2>/dev/null && b=written || b=refused; echo "$a $b"' 2>bind.err)
rc=$?
say home_bind "rc=$rc $out$(refusal $rc bind.err)"
HOME=$home rtn exec --bind "$home/.ssh:/mnt/s:ro" -- true 2>store.err
rc=$?
say home_bind_store "rc=$rc $(refusal $rc store.err)"
[ "$home" = "$HOME" ] && rm -rf "$home/.tool" "$home/.ssh"

# --- --workspace-git rw: the agent commits twice in a live workspace, its .git's hooks and
# configuration still read-only; the owner's git sees the commits. A directory of the
# container's root is one no sandbox of rtn's maps (containers.sh, workspace_root): it is the
# user's.
ws=$dir/repo
g='git -c user.name=a -c user.email=a@a'
if ! { mkdir "$ws" && git -C "$ws" init -q && echo a >"$ws/a" && git -C "$ws" add a &&
        $g -C "$ws" commit -q -m init; }; then
        say git_setup "git init failed"
fi
[ "$(id -u)" = 0 ] && chown -R agent: "$ws"
out=$(rtn exec --workspace "$ws" --workspace-git rw -- sh -c "cd /workspace
        echo b >b && git add b && $g commit -q -m one && echo c >c && git add c && $g commit -q -m two ||
                { echo \"commit failed: \$(pwd)\"; exit 1; }
        { echo x >.git/hooks/x; } 2>/dev/null && h=written || h=refused
        { echo x >>.git/config; } 2>/dev/null && c=written || c=refused
        echo \"hooks \$h config \$c\"" 2>git.err)
rc=$?
say git_rw "rc=$rc $out$(refusal $rc git.err)"
mapfile -t subjects < <(git -c safe.directory="$ws" -C "$ws" log --format=%s)
out=
[ "${#subjects[@]}" = 0 ] || printf -v out '%s ' "${subjects[@]}"
[ -e "$ws/.git/hooks/x" ] && out+=hook
say git_rw_owner "$out"

# --- rtn serve over stdio: requests one at a time, each waiting for its answer
wait_id() { # ID FILE: reads the server's answers (fd 4) into FILE until the one to ID (at most 60 s)
        local l
        while IFS= read -r -t 60 l <&4; do
                printf '%s\n' "$l" >>"$2"
                [[ $l =~ \"id\":$1[,}] ]] && return 0
        done
        return 1
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call() { echo "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"; }
value_of() { # ID FILE ERE: ERE's group in the first answer to ID in FILE that matches it
        local l
        while IFS= read -r l || [ -n "$l" ]; do
                [[ $l =~ \"id\":$1[,}] ]] && [[ $l =~ .*$3 ]] && printf '%s\n' "${BASH_REMATCH[1]}" && return
        done <"$2"
}
# the stdout of a shell_run answer, or the mode of an env_status one
stdout_of() { value_of "$1" "$2" '"structuredContent":\{[^}]*"stdout":"([^"]*)"'; }
mode_of() { value_of "$1" "$2" '"isolation":\{"mode":"([a-z]*)"'; }
ok_of() {
        if has "\"id\":$1,\"result\":\{.*\"isError\":false" "$2"; then
                echo ok
        else
                has "\"id\":$1[,}]" "$2"
                echo "failed: ${LINE:0:300}"
        fi
}
# an env_commit's answer: ok, or "nothing kept" where the mode has no overlay to commit
commit_of() {
        if has "\"id\":$1,\"result\":\{.*has no overlay, so nothing was committed.*\"isError\":true" "$2"; then
                echo "nothing kept"
        else
                ok_of "$1" "$2"
        fi
}

serve_stdio() { # N: the Nth start; its steps on stdin of one rtn serve
        mkfifo "in$1" "fo$1"
        rtn serve <"in$1" >"fo$1" 2>"err$1" &
        local pid=$! l
        exec 3>"in$1" 4<"fo$1"
        echo "$init" >&3
        wait_id 1 "out$1"
        echo "$inited" >&3
        if [ "$1" = 1 ]; then
                call 2 shell_run '{"command":"echo kept >$HOME/f"}' >&3
                wait_id 2 "out$1"
                call 3 env_commit '{"message":"m"}' >&3
                wait_id 3 "out$1"
                say stdio_commit "$(commit_of 3 "out$1")"
        else
                call 2 shell_run '{"command":"cat $HOME/f; echo new >$HOME/g"}' >&3
                wait_id 2 "out$1"
                say stdio_second_start "$(stdout_of 2 "out$1")"
                call 3 env_reset '{}' >&3
                wait_id 3 "out$1"
                call 4 shell_run '{"command":"cat $HOME/f; test -e $HOME/g && echo still || echo gone"}' >&3
                wait_id 4 "out$1"
                say stdio_after_reset "$(stdout_of 4 "out$1")"
        fi
        call 9 env_status '{}' >&3
        wait_id 9 "out$1"
        say "stdio_isolation$1" "$(mode_of 9 "out$1") said=$(said "err$1")"
        exec 3>&-
        while IFS= read -r -t 60 l <&4; do printf '%s\n' "$l" >>"out$1"; done
        exec 4<&-
        wait $pid
}
serve_stdio 1
serve_stdio 2
rtn reset >/dev/null 2>&1 || say reset "rtn reset failed"

# --- rtn serve --http on loopback, a session per start
token=$(od -An -tx1 -N24 /dev/urandom)
token=${token//[$' \n']/}
(umask 077 && printf '%s' "$token" >token)
port=8123
rtn serve --http "127.0.0.1:$port" --token-file token 2>http.err &
hpid=$!
i=0
until has "listening on" http.err 2>/dev/null || [ $i -ge 300 ]; do
        nap 0.1
        i=$((i + 1))
done
sid=
post() { # BODY: the whole HTTP response to a POST of BODY on this session
        local h=
        [ -n "$sid" ] && h="Mcp-Session-Id: $sid"$'\r\n'"MCP-Protocol-Version: 2025-06-18"$'\r\n'
        exec 5<>"/dev/tcp/127.0.0.1/$port" || return
        printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %s\r\nConnection: close\r\n\r\n%s' \
                "$port" "$token" "$h" "${#1}" "$1" >&5
        local r
        IFS= read -r -d '' r <&5
        printf '%s' "$r"
        exec 5<&-
}
http_start() {
        sid=
        post "$init" >h.init
        has '^[Mm]cp-[Ss]ession-[Ii]d: *([^'$'\r'']*)' h.init && sid=${BASH_REMATCH[1]}
        post "$inited" >/dev/null
}
http_start
post "$(call 2 shell_run '{"command":"echo kept >$HOME/h"}')" >h.2
post "$(call 3 env_commit '{"message":"h"}')" >h.3
say http_commit "$(commit_of 3 h.3)"
http_start
post "$(call 2 shell_run '{"command":"cat $HOME/h"}')" >h.4
say http_second_start "$(stdout_of 2 h.4)"
post "$(call 3 env_reset '{}')" >h.5
post "$(call 4 shell_run '{"command":"cat $HOME/h"}')" >h.6
say http_after_reset "$(stdout_of 4 h.6)"
post "$(call 9 env_status '{}')" >h.7
say http_isolation "$(mode_of 9 h.7) said=$(said http.err)"
kill $hpid 2>/dev/null
wait $hpid 2>/dev/null
cd / && rm -rf "$dir" 2>/dev/null
exit 0
