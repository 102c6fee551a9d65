#!/usr/bin/env bash
# rtn inside a default Podman container (masked /proc paths, read-only /proc/sys, files
# mounted over /etc, the default seccomp profile, no CAP_SYS_ADMIN), as root and as a user
# of the container: `rtn exec` runs the full sandbox in the mode it reports, and in a
# container whose seccomp profile denies user namespaces it picks the Landlock mode by
# itself and says so; rtn serve does the same and env_status reports the mode; rtn probe names
# the container flags that would give more and the mode rtn picks by itself; make image's
# archive serves, and deploy/kubernetes/rtn.yaml starts under podman kube play and serves the
# official MCP client over HTTP. docs/containers.md.
# test.sh: timeout 2400 (images, podman and some 60 containers: about 4 minutes of CPU, which beside the other streams took longer than the default 900 s)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../containers/lib.bash"
t_need_rtn
c_setup

# The cases' containers of the same configuration: one start each (c_part), their parts
# defined beside the cases.
C_GROUP_OPTS[root_default]=''
C_GROUP_PARTS[root_default]='default_root ws_live ws_serve commit_root writes_vanish'
C_GROUP_OPTS[agent_default]='--user agent'
C_GROUP_PARTS[agent_default]='default_user default_user_serve ws_agent_serve commit_agent'
C_GROUP_OPTS[root_no_userns]="--security-opt seccomp=${C_STATE:-}/no-userns.json"
C_GROUP_PARTS[root_no_userns]='no_userns_root no_userns_serve_root no_userns_full ws_landlock'
C_GROUP_OPTS[low_nproc]='--ulimit nproc=1024:1024'
C_GROUP_PARTS[low_nproc]='low_nproc_root low_nproc_serve'
C_GROUP_OPTS[uidmap_single]="--uidmap 0:${C_UIDMAP:-}:65536 --gidmap 0:${C_UIDMAP:-}:65536"
C_GROUP_PARTS[uidmap_single]='uidmap_single_root uidmap_single_user_ws uidmap_single_serve'

# The full sandbox, with the fallbacks the container forces named on stderr.
C_PART[default_root]='rtn exec -- sh -c "id -u; cat /proc/self/uid_map; grep processes /proc/self/limits; touch /usr/x; ls /root"'
default_root() {
        c_need
        c_part root_default default_root
        t_exit_is 2
        # the agent is uid 1000 of a user namespace whose ids are none of the container's
        t_true grep -qx 1000 "$T_OUT_FILE"
        t_true grep -Eq '^ +0 +1879048192 +65536$' "$T_OUT_FILE"
        t_stdout_has "Max processes             4096"
        t_stderr_has "the container's /proc is bound instead"
        t_stderr_has "/etc is read-only"
        t_stderr_has "touch: cannot touch '/usr/x'"
        # the agent is not root of the container: it cannot reach root's files
        t_stderr_has "ls: cannot open directory '/root'"
}

C_PART[default_user]='rtn exec -- sh -c "id -u; cat /proc/self/uid_map; grep processes /proc/self/limits"; echo "rc=$?"; rtn probe'
default_user() {
        c_need
        c_part agent_default default_user
        t_stdout_has "rc=0"
        t_true grep -Eq '^ +0 +1000 +1$' "$T_OUT_FILE"
        t_stdout_has "Max processes             4096"
        t_stderr_has "the container's /proc is bound instead"
        # rtn probe: the full sandbox with the fallbacks, and the flag that lifts them
        t_true grep -Eq '^ok +isolation +full: ' "$T_OUT_FILE"
        t_true grep -Eq "^missing +container fallbacks +the kernel refused the sandbox a /proc of its own" "$T_OUT_FILE"
        t_stdout_has "podman: these would give rtn more here: --security-opt systempaths=unconfined: the sandbox's own /proc"
        t_stdout_has "rtn can run sandboxes here."
}

# rtn serve as a user of the container: a command runs, env_status names the full mode and
# the fallbacks the container forced.
C_PART[default_user_serve]=$(c_serve_script 'id -u')
default_user_serve() {
        c_need
        c_part agent_default default_user_serve
        t_exit_is 0
        t_stdout_has '\"stdout\":\"0\\n\"'
        t_stdout_has '\"isolation\":{\"mode\":\"full\",\"degraded\":false,\"automatic\":false,\"reason\":\"\",\"container_fallback\":\"the kernel refused the sandbox a /proc of its own'
        t_stdout_has '\"id_mapping\":\"single\"'
}

# Under a process limit lower than the sandbox's (--ulimit nproc=1024:1024), which no one in
# the container may raise: rtn uses it as it is and says so, as root and as a user, in
# rtn exec, rtn serve's env_status and rtn probe, which names the flag that raises it.
C_PART[low_nproc_root]='rtn exec -- sh -c "grep processes /proc/self/limits"; echo "rc=$?"
        mkdir /w; chown agent /w; rtn exec --workspace /w -- touch /workspace/f; echo "ws rc=$?"'
C_PART[low_nproc_serve]=$(c_serve_script 'id -u')
low_nproc() {
        c_need
        c_part low_nproc low_nproc_root
        t_stdout_has "rc=0"
        t_stdout_has "ws rc=0"
        t_stdout_has "Max processes             1024                 1024"
        t_stderr_has "the process limit is 1024, the hard RLIMIT_NPROC rtn was started with, not the 4096 asked for (only a higher hard limit raises it: --ulimit nproc=4096:4096"
        c_sh --ulimit nproc=1024:1024 --user agent 'rtn exec -- true; echo "rc=$?"; rtn probe'
        t_stdout_has "rc=0"
        t_true grep -Eq "^missing +container fallbacks +.*the process limit is 1024, the hard RLIMIT_NPROC rtn was started with" "$T_OUT_FILE"
        t_stdout_has "rtn can run sandboxes here."
        c_part low_nproc low_nproc_serve
        t_stdout_has '\"stdout\":\"1000\\n\"'
        t_stdout_has 'the process limit is 1024, the hard RLIMIT_NPROC'
}

# A user-namespaced container (--uidmap, as a pod with hostUsers: false): root of the
# container can map only its namespace's ids. With 65536 of them rtn maps its own root alone
# (the single mapping, as for an unprivileged caller) and says so in rtn probe; with 65537 it
# maps the 65536 besides its 0. rtn exec, a --workspace of root's or (mapped as its owner
# alone) of a user's, and rtn serve all work, and so does the Landlock mode where user
# namespaces are denied.
C_PART[uidmap_single_root]='mkdir /w; rtn exec --workspace /w -- sh -c "id -u; cat /proc/self/uid_map; echo hi >/workspace/f"; echo "rc=$?"; cat /w/f; rtn probe'
C_PART[uidmap_single_user_ws]='mkdir /u; chown agent: /u; rtn exec --workspace /u -- sh -c "echo hi >/workspace/f"; echo "rc=$?"; stat -c "%U %n" /u/f'
C_PART[uidmap_single_serve]=$(c_serve_script 'id -u')
userns_uidmap() {
        c_need
        local m
        c_part uidmap_single uidmap_single_root
        t_stdout_has "rc=0"
        t_true grep -qx 0 "$T_OUT_FILE"
        t_true grep -Eq '^ +0 +0 +1$' "$T_OUT_FILE"
        t_true grep -qx hi "$T_OUT_FILE"
        t_true grep -Eq '^ok +id mapping +single id: rtn is root of a user namespace' "$T_OUT_FILE"
        t_stdout_has "rtn can run sandboxes here."
        # a user's --workspace there: root maps its owner alone as the agent (it has no
        # subordinate ids to map besides), so the agent writes it as that user
        c_part uidmap_single uidmap_single_user_ws
        t_stdout_is "rc=0
agent /u/f"
        c_part uidmap_single uidmap_single_serve
        t_stdout_has '\"stdout\":\"0\\n\"'
        t_stdout_has '\"id_mapping\":\"single\"'
        m="--uidmap 0:$C_UIDMAP:65537 --gidmap 0:$C_UIDMAP:65537"
        # shellcheck disable=SC2086
        c_sh $m 'rtn exec -- sh -c "id -u; cat /proc/self/uid_map"; echo "rc=$?"; rtn probe
                mkdir /w; rtn exec --workspace /w -- sh -c "echo ws \$(id -u) >/workspace/f"; echo "ws rc=$?"; cat /w/f; stat -c "%u %n" /w/f'
        t_stdout_has "rc=0"
        t_true grep -qx 1000 "$T_OUT_FILE"
        t_true grep -Eq '^ +0 +1 +65536$' "$T_OUT_FILE"
        t_true grep -Eq '^ok +id mapping +root: 65536 subordinate ids from 1;' "$T_OUT_FILE"
        # root's --workspace: no idmapped mount in a user namespace, so the agent is the
        # directory's owner, the container's root (not host root)
        t_stdout_has "ws rc=0"
        t_true grep -qx "ws 0" "$T_OUT_FILE"
        t_true grep -qx "0 /w/f" "$T_OUT_FILE"
        # a user of the container is an unprivileged caller there, as anywhere
        # shellcheck disable=SC2086
        c_sh $m --user agent 'rtn exec -- id -u; echo "rc=$?"'
        t_stdout_has "rc=0"
        # where user namespaces are denied too, root's commands in the Landlock mode run as
        # the namespace's highest id, which owns nothing there
        m="--uidmap 0:$C_UIDMAP:65536 --gidmap 0:$C_UIDMAP:65536"
        # shellcheck disable=SC2086
        c_sh $m --security-opt "seccomp=$C_STATE/no-userns.json" \
                'rtn exec -- sh -c "id -u; chmod 777 /etc/passwd"; rtn probe'
        t_true grep -qx 65535 "$T_OUT_FILE"
        t_stderr_has "rtn chose --isolation landlock by itself"
        t_stderr_has "chmod: changing permissions of '/etc/passwd': Operation not permitted"
        t_true grep -Eq '^ok +id mapping +none in the Landlock mode: commands run as uid 65535, which owns nothing' "$T_OUT_FILE"
}

# --userns=auto (podman's own ranges, as for a pod with hostUsers: false): the same, from
# the ids podman gave the container.
userns_auto() {
        c_need
        grep -q '^containers:' /etc/subuid ||
                t_skip "no subordinate range for podman's user containers (tools/test-users.sh adds one)"
        c_sh --userns=auto 'rtn exec -- sh -c "id -u; cat /proc/self/uid_map"; echo "rc=$?"'
        t_stdout_has "rc=0"
        t_true grep -Eq '^ +0 +0 +1$' "$T_OUT_FILE"
        c_sh --userns=auto:size=65537 'rtn exec -- sh -c "id -u; cat /proc/self/uid_map"; echo "rc=$?"'
        t_stdout_has "rc=0"
        t_true grep -qx 1000 "$T_OUT_FILE"
        t_true grep -Eq '^ +0 +1 +65536$' "$T_OUT_FILE"
}

# --workspace where rtn is the container's root, which cannot make the idmapped mount that
# lets a subordinate uid write a directory (it needs CAP_SYS_ADMIN over the host's
# filesystem): the sandbox maps its agent to the directory's owner instead, and binds the
# directory in the sandbox's own user and mount namespaces (recursively). Live, overlay with
# rtn apply afterwards, the git dir protected as anywhere, rtn serve --workspace, and the
# Landlock mode; a directory that host root owns is refused before anything starts, with the
# reason and what to do.
C_PART[ws_live]='mkdir -p /w/.git/hooks /r; chown -R agent:agent /w; echo kept >/w/k
        rtn exec --workspace /w -- sh -c "id -u; cat /workspace/k; echo hi >/workspace/f; touch /workspace/.git/hooks/x"; echo "rc=$?"
        stat -c "%U:%G %n" /w/f; ls /w/.git/hooks
        rtn exec --keep --workspace /w --workspace-mode overlay -- sh -c "echo ov >/workspace/o"; echo "rc=$?"
        test -e /w/o || echo "not yet"; rtn apply >/dev/null; echo "rc=$?"; stat -c "%U:%G %n" /w/o
        rtn exec --workspace /r -- true; echo "rc=$?"; ls -A /r; echo end'
C_PART[ws_serve]="mkdir /w; chown agent /w; echo kept >/w/k; $(c_serve_script 'id -u; cat /workspace/k; echo new >/workspace/n' --workspace /w); stat -c '%U %n' /w/n"
C_PART[ws_landlock]='mkdir /w; chown agent /w
        rtn exec --workspace /w -- sh -c "id -u; echo hi >f"; echo "rc=$?"; stat -c "%U %n" /w/f'
C_PART[ws_agent_serve]="mkdir /tmp/w; echo kept >/tmp/w/k; $(c_serve_script 'cat /workspace/k; echo new >/workspace/n' --workspace /tmp/w); cat /tmp/w/n"
workspace_root() {
        c_need
        c_part root_default ws_live
        t_stdout_is "0
kept
rc=1
agent:agent /w/f
rc=0
not yet
rc=0
agent:agent /w/o
rc=125
end"
        t_stderr_has "touch: cannot touch '/workspace/.git/hooks/x'"
        t_stderr_has "rtn exec: /r belongs to host root, which no sandbox maps: rtn as root of a container cannot make the idmapped mount that lets its agent write it (that needs CAP_SYS_ADMIN), so the agent is the directory's owner; give it to a user of the container (chown), or run rtn as one (podman run --user, securityContext.runAsUser)"
        c_part root_default ws_serve
        t_stdout_has '\"stdout\":\"0\\nkept\\n\"'
        t_stdout_has "agent /w/n"
        c_part root_no_userns ws_landlock
        t_stdout_is "1000
rc=0
agent /w/f"
        t_stderr_has "rtn chose --isolation landlock by itself"
        c_part agent_default ws_agent_serve
        t_stdout_has '\"stdout\":\"kept\\n\"'
        t_true grep -qx new "$T_OUT_FILE"
}

# The matrix (docs/containers.md, "Tests"): in each configuration one container runs
# tests/containers/matrix.bash as root and as a user of the container (a user alone where the
# configuration is non-root): rtn exec, rtn serve over stdio and over HTTP with a commit, a
# second start that finds it and a reset that keeps it, and the isolation each picked and
# said. CONFIG|USERS|MODE|podman options:
matrix_configs() {
        cat <<EOF
default|root agent|full|
uidmap|root agent|full|--uidmap 0:$C_UIDMAP:65537 --gidmap 0:$C_UIDMAP:65537
uidmap_single|root agent|full|--uidmap 0:$C_UIDMAP:65536 --gidmap 0:$C_UIDMAP:65536
low_nproc|root agent|full|--ulimit nproc=1024:1024
read_only|root agent|full|--read-only --tmpfs /tmp:rw,exec,mode=1777
restricted|agent|full|--user agent --security-opt no-new-privileges --cap-drop ALL
restricted_runtime_default|agent|landlock|--user agent --security-opt no-new-privileges --cap-drop ALL --security-opt seccomp=$C_STATE/no-userns.json
no_userns|root agent|landlock|--security-opt seccomp=$C_STATE/no-userns.json
EOF
}

# What matrix.bash prints for USER in MODE. rtn exec --user root is root inside, but in the
# Landlock mode, which refuses it (a usage error); rtn enter reaches a running sandbox in
# every mode. A hidden directory of the home is bound read-only and a credential store is
# refused; --workspace-git rw commits twice with .git's hooks and configuration read-only.
# Where user namespaces are denied, an option only they give (--bind, --workspace-git rw)
# keeps rtn from picking the Landlock mode by itself: the start fails naming the option
# (the store is refused first, as anywhere). It has no overlay: what
# a command writes outside the workspace is in its private temp dir ($HOME), gone with the
# sandbox, so env_commit says it kept nothing (a tool error) and the next start finds nothing
# (docs/security-invariants.md, "Weaker named modes").
matrix_want() {
        local u=$1 m=$2 kept='kept\n' commit=ok root='rc=0 0' enter='rc=0 entered' \
                bind='rc=0 hello refused' git='rc=0 hooks refused config refused' \
                owner='two one init ' \
                store='rc=125 --bind ~/.ssh: refusing to bind ~/.ssh: a credential store (.ssh) never enters a sandbox'
        if [ "$m" = landlock ]; then
                kept='' commit="nothing kept" root='rc=125 '
                bind="rc=125 --bind needs them: the sandbox will not start"
                git="rc=125 --workspace-git rw needs them: the sandbox will not start"
                owner='init '
        fi
        printf '%s\n' "$u exec rc=0 in said=$m" "$u exec_user_root $root" "$u enter $enter" \
                "$u home_bind $bind" "$u home_bind_store $store" "$u git_rw $git" \
                "$u git_rw_owner $owner" "$u stdio_commit $commit" \
                "$u stdio_isolation1 $m said=$m" "$u stdio_second_start $kept" \
                "$u stdio_after_reset ${kept}gone\\n" "$u stdio_isolation2 $m said=$m" \
                "$u http_commit $commit" "$u http_second_start $kept" "$u http_after_reset $kept" \
                "$u http_isolation $m said=$m"
}

matrix() {
        c_need
        local name users mode opts u run want start=$SECONDS
        while IFS='|' read -r name users mode opts; do
                run='' want=''
                for u in $users; do
                        if [ "$u" = root ] || [ "$users" = "$u" ]; then
                                run+="bash /matrix.bash; "
                        else
                                run+="runuser -u $u -- bash /matrix.bash; "
                        fi
                        want+="$(matrix_want "$u" "$mode")"$'\n'
                done
                # shellcheck disable=SC2086
                c_sh -v "$T_ROOT/tests/containers/matrix.bash:/matrix.bash:ro" $opts "$run"
                [ "$(cat "$T_OUT_FILE")"$'\n' = "$want" ] ||
                        t_fail "$name: expected
$want
got
$(cat "$T_OUT_FILE")
stderr: $(head -c 600 "$T_ERR_FILE")"
        done < <(matrix_configs)
        echo "# matrix: $((SECONDS - start)) s" >&2
}

# A commit in a default container, whose /etc has the container's mounts over files in it
# and is bound read-only: the commit has nothing in /etc, so the next start stacks it (rtn
# exec, rtn serve), and rtn reset leaves it working; as root and as a user.
C_PART[commit_root]='rtn exec --commit -- sh -c "echo kept >\$HOME/f"; echo "rc=$?"
        rtn exec -- sh -c "cat \$HOME/f"; echo "rc=$?"; rtn reset; rtn exec -- true; echo "rc=$?"'"
        $(c_serve_script 'cat $HOME/f')"
C_PART[commit_agent]=${C_PART[commit_root]}
commit_default() {
        c_need
        local u
        for u in root agent; do
                c_part "${u}_default" "commit_$u"
                # The server's log messages (notifications/message: a sandbox started for a
                # call) may come between the answers.
                [ "$(grep -v '"method":"notifications/message"' "$T_OUT_FILE")" = "rc=0
kept
rc=0
rc=0
$(grep '"id":' "$T_OUT_FILE")" ] || t_fail "stdout: $(head -c 600 "$T_OUT_FILE")"
                t_stdout_has '\"stdout\":\"kept\\n\"'
        done
}

# A read-only root with a tmpfs /tmp (readOnlyRootFilesystem), rtn's store on the tmpfs:
# the full sandbox as root and as a user, a commit and the start after it included.
read_only() {
        c_need
        local u
        for u in root agent; do
                c_sh --user "$u" --read-only --tmpfs /tmp:rw,exec,mode=1777 'export RTN_DATA_DIR=/tmp/rtn
                        rtn exec --commit -- sh -c "echo kept >\$HOME/f"; echo "rc=$?"
                        rtn exec -- sh -c "cat \$HOME/f; touch /usr/x"; echo "rc=$?"
                        mkdir /tmp/w; chown agent /tmp/w; rtn exec --workspace /tmp/w -- touch /workspace/f; echo "rc=$?"'
                t_stdout_is "rc=0
kept
rc=1
rc=0"
                t_stderr_has "touch: cannot touch '/usr/x'"
        done
}

# Kubernetes' "restricted" security context: a non-root user, no privilege escalation
# (no_new_privs), every capability dropped. Under Podman's default seccomp profile, which
# allows user namespaces, that is the full sandbox; under one that denies them (as the
# RuntimeDefault of containerd and CRI-O does), the Landlock mode, chosen by rtn and said.
restricted() {
        c_need
        local r='--user agent --security-opt no-new-privileges --cap-drop ALL'
        # shellcheck disable=SC2086
        c_sh $r 'rtn exec -- sh -c "cat /proc/self/uid_map; touch /usr/x"; echo "rc=$?"; rtn probe'
        t_stdout_has "rc=1"
        t_true grep -Eq '^ +0 +1000 +1$' "$T_OUT_FILE"
        t_stderr_has "touch: cannot touch '/usr/x'"
        t_true grep -Eq '^ok +isolation +full: ' "$T_OUT_FILE"
        # shellcheck disable=SC2086
        c_sh $r --security-opt "seccomp=$C_STATE/no-userns.json" "$(c_serve_script 'id -u')"
        t_stdout_has '\"stdout\":\"1000\\n\"'
        t_stdout_has '\"isolation\":{\"mode\":\"landlock\",\"degraded\":true,\"automatic\":true'
}

# Rootless Podman, every ordinary user's, run by the test user with a subordinate range
# (rtnsub, tools/test-users.sh) with storage in a dir of its own: the container's root is
# that user, its ids 1..65536 the range. rtn maps those, never the container's 0, as root
# and as a user of the container (given a home for the matrix, whose toolchain is there).
rootless() {
        c_need
        local u=rtnsub d
        id -u "$u" >/dev/null 2>&1 && grep -q "^$u:" /etc/subuid ||
                t_skip "no user $u with a subordinate range (tools/test-users.sh makes it)"
        # in /tmp, which the user can reach (TMPDIR may be a dir only root may enter)
        d=$(mktemp -d /tmp/rtn-rootless.XXXXXX)
        chmod 755 "$d"
        chown "$u" "$d"
        cp "$RTN" "$d/rtn"
        chmod 755 "$d/rtn"
        # TMPDIR too: the suite's may be one only root can write, where podman import makes
        # its temp dirs
        local pm=(runuser -u "$u" -- env HOME="$d" TMPDIR="$d" XDG_RUNTIME_DIR="$d/run" podman --root "$d/s"
                --runroot "$d/r" --runtime runc --cgroup-manager cgroupfs --events-backend none
                --storage-driver overlay)
        # shellcheck disable=SC2064
        trap "${pm[*]} system reset -f >/dev/null 2>&1; rm -rf '$d'" EXIT
        mkdir -m 700 "$d/run" && chown "$u" "$d/run"
        cd "$d" || t_fail "cd $d"
        "${pm[@]}" import -q "$C_BASE_TAR" localhost/b >/dev/null 2>"$d/import.err" ||
                t_fail "rootless podman import: $(tail -n 2 "$d/import.err")"
        # shellcheck disable=SC2046
        t_cmd "${pm[@]}" run --rm -i --network none $(c_ulimits) -v "$d/rtn:/rtn:ro" localhost/b sh -c \
                'useradd -u 1000 agent; /rtn exec -- sh -c "id -u; cat /proc/self/uid_map"; echo "root rc=$?"
                 mkdir /w; /rtn exec --workspace /w -- touch /workspace/f; echo "ws rc=$?"
                 su agent -s /bin/sh -c "/rtn exec -- true; echo user rc=\$?"; /rtn probe'
        t_stdout_has "root rc=0"
        t_stdout_has "ws rc=0"
        t_stdout_has "user rc=0"
        t_true grep -qx 1000 "$T_OUT_FILE"
        t_true grep -Eq '^ +0 +1 +65536$' "$T_OUT_FILE"
        t_true grep -Eq '^ok +id mapping +root: 65536 subordinate ids from 1;' "$T_OUT_FILE"
        t_stdout_has "rtn can run sandboxes here."
        # the matrix's steps (matrix above) in this configuration too
        cp "$T_ROOT/tests/containers/matrix.bash" "$d/matrix.bash"
        chmod 644 "$d/matrix.bash"
        # shellcheck disable=SC2046
        t_cmd "${pm[@]}" run --rm -i --network none $(c_ulimits) -v "$d/rtn:/usr/local/bin/rtn:ro" \
                -v "$d/matrix.bash:/matrix.bash:ro" localhost/b sh -c \
                'useradd -m -u 1000 agent; bash /matrix.bash; runuser -u agent -- bash /matrix.bash'
        t_stdout_is "$(matrix_want root full)
$(matrix_want agent full)"
}

# With systempaths=unconfined the sandbox gets its own /proc, and rtn probe has nothing left
# to ask for.
unmasked_probe() {
        c_need
        c_sh --security-opt systempaths=unconfined 'rtn exec -- sh -c "cat /proc/1/comm"; rtn probe'
        t_exit_is 0
        t_stdout_has rtn-init
        t_stdout_has "podman: it lets rtn run the full sandbox"
        t_false grep -q "the kernel refused the sandbox a /proc of its own" "$T_OUT_FILE"
}

# Writes stay in the sandbox: the container's own files are untouched afterwards.
C_PART[writes_vanish]='rtn exec -- sh -c "echo x > /tmp/f; echo y > /var/tmp/g; echo done"; ls /tmp /var/tmp'
default_writes_vanish() {
        c_need
        c_part root_default writes_vanish
        t_exit_is 0
        t_stdout_has done
        t_false grep -qx -e f -e g "$T_OUT_FILE"
}

# A seccomp profile that denies clone3 and unshare/clone of CLONE_NEWUSER: rtn names it and
# runs the Landlock mode, as root (as a uid that owns nothing) and as a user.
C_PART[no_userns_root]='rtn exec -- sh -c "id -u; chmod 777 /etc/passwd; touch /etc/x; ls /root"; ls -l /etc/passwd'
no_userns_auto_landlock() {
        c_need
        c_part root_no_userns no_userns_root
        t_stdout_has 1879113728
        t_stdout_has "-rw-r--r--"
        t_stderr_has "user namespaces are denied here (clone3(CLONE_NEWUSER) fails with Operation not permitted): rtn chose --isolation landlock by itself"
        t_stderr_has "DEGRADED isolation"
        t_stderr_has "chmod: changing permissions of '/etc/passwd': Operation not permitted"
        t_stderr_has "touch: cannot touch '/etc/x': Permission denied"
        t_stderr_has "ls: cannot open directory '/root': Permission denied"
        c_sh --user agent --security-opt "seccomp=$C_STATE/no-userns.json" 'rtn exec -- id -u; rtn probe; echo "rc=$?"; rtn probe --json'
        t_exit_is 0
        t_true grep -qx 1000 "$T_OUT_FILE"
        t_stderr_has "rtn chose --isolation landlock by itself"
        # rtn probe says the same, and names the flags that would give the full sandbox
        t_true grep -Eq '^missing +user namespaces +user namespaces are denied here \(clone3\(CLONE_NEWUSER\) fails with Operation not permitted\): rtn chose --isolation landlock by itself' "$T_OUT_FILE"
        t_true grep -Eq '^missing +isolation +landlock, picked by rtn by itself' "$T_OUT_FILE"
        t_true grep -Eq '^ok +id mapping +none in the Landlock mode: commands run as you \(uid 1000\)' "$T_OUT_FILE"
        t_stdout_has "podman: these would give rtn more here: a seccomp profile that allows clone3 and unshare/clone with CLONE_NEWUSER (Podman's default does; Docker's only with --cap-add SYS_ADMIN), or --security-opt seccomp=unconfined: the full sandbox instead of the Landlock mode; --security-opt systempaths=unconfined"
        t_stdout_has "rtn can run sandboxes here."
        t_stdout_has "rc=0"
        t_stdout_has '"isolation":{"mode":"landlock","automatic":true,"reason":"user namespaces are denied here'
        t_stdout_has '"container":{"engine":"podman","proc_masked":true,"unlock":["a seccomp profile'
}

# rtn serve as root where user namespaces are denied: the Landlock mode, said on stderr and
# in env_status, commands run as the uid that owns nothing.
C_PART[no_userns_serve_root]=$(c_serve_script 'id -u')
no_userns_serve_root() {
        c_need
        c_part root_no_userns no_userns_serve_root
        t_exit_is 0
        t_stdout_has '\"stdout\":\"1879113728\\n\"'
        t_stdout_has '\"isolation\":{\"mode\":\"landlock\",\"degraded\":true,\"automatic\":true,\"reason\":\"user namespaces are denied here (clone3(CLONE_NEWUSER) fails with Operation not permitted): rtn chose --isolation landlock by itself'
        t_stderr_has "rtn serve: WARNING: user namespaces are denied here"
}

# Named --isolation full fails closed rather than choose for the user.
C_PART[no_userns_full]='rtn exec --isolation full -- true'
no_userns_full_refuses() {
        c_need
        c_part root_no_userns no_userns_full
        t_exit_is 125
        t_stderr_has "clone3 into new namespaces: Operation not permitted"
}

# make image's archive loads, and its default command (rtn serve) answers tools/list over
# podman run -i.
image_serves() {
        c_need
        local img
        img=$(c_image) || exit
        printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
                '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' >"$T_TMP/in"
        c_podman_argv
        # shellcheck disable=SC2046
        timeout 120 "${C_PODMAN[@]}" run --rm -i --network none $(c_ulimits) \
                "$img" <"$T_TMP/in" >"$T_TMP/out" 2>"$T_TMP/err"
        grep -q '"name":"shell_run"' "$T_TMP/out" || t_fail "no tools/list answer: $(head -c 300 "$T_TMP/out") $(head -c 300 "$T_TMP/err")"
        # the documented way to give its agent a project: a volume a user owns, as
        # serve --workspace of the image's root (the agent is that owner)
        mkdir "$T_TMP/ws"
        echo kept >"$T_TMP/ws/k"
        chown -R 1000:1000 "$T_TMP/ws"
        # shellcheck disable=SC2046
        t_cmd timeout 120 "${C_PODMAN[@]}" run --rm -i --network none $(c_ulimits) --entrypoint sh \
                -v "$T_TMP/ws:/workspace" "$img" -c "$(c_serve_script 'cat /workspace/k; echo new >/workspace/n' --workspace /workspace)"
        t_stdout_has '\"stdout\":\"kept\\n\"'
        t_true test "$(stat -c %u "$T_TMP/ws/n")" = 1000
}

# make image's image has what an agent works with: its rtn serve's python_exec runs, and
# git, curl and a C compiler run in its sandboxes.
image_tools() {
        c_need
        local img
        img=$(c_image) || exit
        printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
                '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"python_exec","arguments":{"code":"print(6*7)"}}}' >"$T_TMP/in"
        c_podman_argv
        # shellcheck disable=SC2046
        {
                cat "$T_TMP/in"
                t_wait_for grep -qs '"id":2,' "$T_TMP/out" || sleep 20
        } | timeout 60 "${C_PODMAN[@]}" run --rm -i --network none $(c_ulimits) \
                "$img" >"$T_TMP/out" 2>"$T_TMP/err"
        grep -q '"stdout":"42\\n"' "$T_TMP/out" || t_fail "python_exec: $(grep '"id":2' "$T_TMP/out" | head -c 400) $(head -c 300 "$T_TMP/err")"
        # shellcheck disable=SC2046
        t_cmd "${C_PODMAN[@]}" run --rm --network none $(c_ulimits) "$img" exec -- sh -c \
                'git --version; curl --version | head -n 1; printf "int main(void) { return 0; }\n" >/tmp/a.c && cc -o /tmp/a /tmp/a.c && /tmp/a && echo compiled'
        t_exit_is 0
        t_stdout_has "git version"
        t_stdout_has "curl "
        t_stdout_has compiled
}

# The least-privilege pod specs of docs/containers.md ("Least-privilege pod specs") under
# `podman kube play`: the container securityContext of that page's yaml block, read from
# the page, in a Pod of the suite's image running rtn exec and rtn probe (a hostPath
# directory for /tmp, where readOnlyRootFilesystem leaves rtn nothing else to write): the
# full sandbox as it stands, and the Landlock mode with a Localhost seccomp profile that
# denies user namespaces, as containerd's and CRI-O's RuntimeDefault do (Podman's own
# default allows them).
kube_specs() {
        c_need
        local v name mode uid
        [ -x /usr/libexec/podman/catatonit ] || [ -x /usr/bin/catatonit ] ||
                t_skip "no catatonit for the pod's infra container (tools/deps.txt installs it)"
        mkdir -p "$C_STATE/seccomp" "$T_TMP/ktmp"
        chmod 1777 "$T_TMP/ktmp"
        cp "$C_STATE/no-userns.json" "$C_STATE/seccomp/no-userns.json"
        c_containers_conf
        c_podman_argv
        for v in full landlock; do
                name=rtn-spec-$v-$T_UNIQ
                python3 - "$T_ROOT/docs/containers.md" "$v" "$name" "$T_TMP/ktmp" >"$T_TMP/$v.yaml" <<'PY' || t_fail "no pod spec in docs/containers.md"
import re, sys, yaml
doc = open(sys.argv[1]).read()
sec = doc[doc.index("### Least-privilege pod specs"):]
ctx = yaml.safe_load(re.search(r"```yaml\n(.*?)```", sec, re.S).group(1))["securityContext"]
meta = {"name": sys.argv[3]}
if sys.argv[2] == "landlock":
    ctx["seccompProfile"] = {"type": "Localhost", "localhostProfile": "no-userns.json"}
    # Podman 4.3 takes a container's profile from this annotation, not from seccompProfile
    meta["annotations"] = {"container.seccomp.security.alpha.kubernetes.io/rtn": "localhost/no-userns.json"}
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
       "spec": {"restartPolicy": "Never", "containers": [{
           "name": "rtn", "image": "localhost/rtn-test", "securityContext": ctx,
           "env": [{"name": "RTN_DATA_DIR", "value": "/tmp/rtn"}],
           "command": ["sh", "-c", "rtn exec -- id -u; echo rc=$?; rtn probe | grep -E '^[a-z]+ +isolation '"],
           "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]}],
           "volumes": [{"name": "tmp", "hostPath": {"path": sys.argv[4], "type": "Directory"}}]}}
yaml.safe_dump(pod, sys.stdout)
PY
                t_cmd env CONTAINERS_CONF="$C_STATE/containers.conf" "${C_PODMAN[@]}" kube play \
                        --seccomp-profile-root "$C_STATE/seccomp" "$T_TMP/$v.yaml"
                t_exit_is 0
                # shellcheck disable=SC2064
                trap "env CONTAINERS_CONF='$C_STATE/containers.conf' ${C_PODMAN[*]} kube down '$T_TMP/$v.yaml' >/dev/null 2>&1" EXIT
                timeout 120 "${C_PODMAN[@]}" wait "$name-rtn" >/dev/null 2>&1
                t_cmd "${C_PODMAN[@]}" logs "$name-rtn"
                t_stdout_has "rc=0"
                # the agent: inside 0 of the single mapping, or in the Landlock mode the caller
                uid=0 mode=full
                [ "$v" = landlock ] && uid=1000 mode="landlock, picked by rtn by itself"
                grep -qx "$uid" "$T_OUT_FILE" || t_fail "$v: $(cat "$T_OUT_FILE" "$T_ERR_FILE" | head -c 800)"
                t_true grep -Eq "^[a-z]+ +isolation +$mode" "$T_OUT_FILE"
                [ "$v" = full ] || t_stderr_has "rtn chose --isolation landlock by itself"
                t_cmd env CONTAINERS_CONF="$C_STATE/containers.conf" "${C_PODMAN[@]}" kube down "$T_TMP/$v.yaml"
                t_exit_is 0
                trap - EXIT
        done
}

# deploy/kubernetes/rtn.yaml under `podman kube play`, as a user would start it: the image of
# make image under the manifest's name, whose entrypoint is rtn (a pod's args are rtn's
# arguments), a real token; the official MCP client reaches rtn serve --http in the pod with
# the token and runs shell_run, and `podman kube down` removes the pod. Podman 4.3 panics on
# Secret volumes, so the manifest's Secret is dropped here and its volume becomes a hostPath
# directory holding the token file (the one change made to the manifest); podman's default
# ulimits come from a containers.conf within this shell's hard limits; the pod's infra
# container needs catatonit (tools/deps.txt).
kube_play() {
        c_need
        local img want dir ip i log
        command -v node >/dev/null || t_skip "node is not installed"
        [ -d "$T_ROOT/tests/mcp-client/node_modules/@modelcontextprotocol/sdk" ] ||
                t_fail "@modelcontextprotocol/sdk not installed: run npm ci in tests/mcp-client (tools/test.sh does)"
        [ -x /usr/libexec/podman/catatonit ] || [ -x /usr/bin/catatonit ] ||
                t_skip "no catatonit for the pod's infra container (tools/deps.txt installs it)"
        img=$(c_image) || exit
        want=$(sed -n 's/^ *image: *//p' "$T_ROOT/deploy/kubernetes/rtn.yaml")
        [ "localhost/$want" = "$img" ] || t_fail "rtn.yaml names the image $want, make image makes $img"
        c_podman tag "$img" "localhost/$want" || t_fail "podman tag failed"
        mkdir -m 0700 "$T_TMP/token"
        head -c 32 /dev/urandom | base64 >"$T_TMP/token/token"
        chmod 0400 "$T_TMP/token/token"
        python3 - "$T_ROOT/deploy/kubernetes/rtn.yaml" "$T_TMP/token" >"$T_TMP/rtn.yaml" <<'PY' || t_fail "could not rewrite the manifest"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] != "Secret"]
for d in docs:
    if d["kind"] == "Deployment":
        for v in d["spec"]["template"]["spec"]["volumes"]:
            if "secret" in v:
                del v["secret"]
                v["hostPath"] = {"path": sys.argv[2], "type": "Directory"}
yaml.safe_dump_all(docs, sys.stdout)
PY
        c_containers_conf
        c_podman_argv
        t_cmd env CONTAINERS_CONF="$C_STATE/containers.conf" "${C_PODMAN[@]}" kube play "$T_TMP/rtn.yaml"
        t_exit_is 0
        trap 'env CONTAINERS_CONF="$C_STATE/containers.conf" "${C_PODMAN[@]}" kube down "$T_TMP/rtn.yaml" >/dev/null 2>&1' EXIT
        # one podman logs a poll, its output kept for the message
        i=$((SECONDS + 60))
        until log=$("${C_PODMAN[@]}" logs rtn-pod-0-rtn 2>&1) && [[ $log == *"listening on"* ]]; do
                [ "$SECONDS" -lt "$i" ] || t_fail "rtn serve did not start in the pod: ${log:0:600}"
                sleep 0.5
        done
        ip=$("${C_PODMAN[@]}" inspect rtn-pod-0-rtn --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}')
        [ -n "$ip" ] || t_fail "the pod has no address"
        T_CMD_TIMEOUT=120 t_cmd node "$T_ROOT/tests/mcp-client/http.mjs" "http://$ip:8080/mcp" "$T_TMP/token/token" sdk1
        t_exit_is 0
        t_stdout_has "ok [sdk1] shell_run result"
        t_cmd env CONTAINERS_CONF="$C_STATE/containers.conf" "${C_PODMAN[@]}" kube down "$T_TMP/rtn.yaml"
        t_exit_is 0
        trap - EXIT
        t_cmd "${C_PODMAN[@]}" pod ps -q
        t_stdout_is ""
}

t_run containers_default_root default_root
t_run containers_default_user default_user
t_run containers_default_user_serve default_user_serve
t_run containers_low_nproc low_nproc
t_run containers_userns_uidmap userns_uidmap
t_run containers_userns_auto userns_auto
t_run containers_workspace_root workspace_root
t_run containers_matrix matrix
t_run containers_commit_default commit_default
t_run containers_read_only read_only
t_run containers_restricted restricted
t_run containers_rootless rootless
t_run containers_unmasked_probe unmasked_probe
t_run containers_default_writes_vanish default_writes_vanish
t_run containers_no_userns_auto_landlock no_userns_auto_landlock
t_run containers_no_userns_serve_root no_userns_serve_root
t_run containers_no_userns_full_refuses no_userns_full_refuses
t_run containers_image_serves image_serves
t_run containers_image_tools image_tools
t_run containers_kube_play kube_play
t_run containers_kube_specs kube_specs
c_teardown
t_done
