#!/usr/bin/env bash
# Hidden directories of $HOME and where a bind may land (docs/security-invariants.md, 4 and
# 12): a toolchain's hidden directory (~/.nvm, ~/.cargo, ~/.local/bin) is bound read-only,
# never a credential store (common/sandbox_dirs.h, RTN_HOME_CREDENTIAL_STORES, plus the
# user's own list), nor a directory holding one, nor another name of one (a case, a '..', a
# symlink, a hard link); a bind lands anywhere a docker -v would but on rtn's own paths and
# the system's pseudo-filesystems.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

H=
home() {
        H=$T_TMP/home
        export HOME=$H XDG_CONFIG_HOME=
        mkdir -p "$H/.nvm/bin" "$H/.local/bin" "$H/.cargo/bin" "$H/.ssh" "$H/.config/gh" \
                "$H/.config/tool" "$H/.aws" "$H/proj"
        echo v20 >"$H/.nvm/bin/node"
        echo tool >"$H/.local/bin/tool"
        echo secret >"$H/.ssh/id_ed25519"
        echo secret >"$H/.netrc"
        echo token >"$H/.config/gh/hosts.yml"
}

# refused WHY SRC [DST]: --bind SRC is refused with WHY, and nothing starts.
refused() {
        t_exec --bind "$2:${3:-/mnt/x}:ro" -- true
        t_exit_is 125
        t_stderr_has "$1"
}

toolchains_read_only() {
        home
        t_exit_is 0 "$RTN" exec --bind "$H/.nvm:/home/rtn/.nvm" \
                --bind "$H/.local/bin:/usr/local/lib/tools:ro" -- \
                sh -c 'cat /home/rtn/.nvm/bin/node /usr/local/lib/tools/tool;
                       echo x >/home/rtn/.nvm/bin/node || echo refused'
        t_stdout_is "$(printf 'v20\ntool\nrefused')"
        [ "$(cat "$H/.nvm/bin/node")" = v20 ] || t_fail "the host's ~/.nvm changed"
        t_exec --bind "$H/.cargo:/mnt/cargo:rw" -- true
        t_exit_is 125
        t_stderr_has "hidden directories of your home are bound read-only"
        # the workspace is written: never a hidden directory
        t_exec --workspace "$H/.nvm" -- true
        t_exit_is 125
        t_stderr_has "hidden directories of your home"
}

credential_stores() {
        home
        refused "refusing to bind $H/.ssh: a credential store" "$H/.ssh"
        refused "refusing to bind $H/.ssh/id_ed25519: a credential store" "$H/.ssh/id_ed25519"
        refused "a credential store (.config/gh)" "$H/.config/gh"
        refused "a credential store (.netrc)" "$H/.netrc"
        refused "a credential store (.aws)" "$H/.aws"
        # another case names the same directory on a case-insensitive filesystem
        mkdir "$H/.SSH" "$H/.Config" "$H/.Config/GH"
        refused "a credential store (.ssh)" "$H/.SSH"
        refused "a credential store (.config/gh)" "$H/.Config/GH"
        # '..' and a symlink are other spellings
        refused "'..' is not taken" "$H/.nvm/../.ssh"
        ln -s .ssh "$H/.tools"
        refused "crosses a symlink" "$H/.tools"
        ln -s ../.ssh "$H/.nvm/keys"
        refused "crosses a symlink" "$H/.nvm/keys/id_ed25519"
        # a hard link of a credential file is the credential
        ln "$H/.netrc" "$H/proj/netrc"
        refused "it is $H/.netrc, a credential store" "$H/proj/netrc"
}

# ~/.nvm flips between a real directory and a symlink to ~/.ssh while sandboxes start: the
# check opens it without following a symlink and the child binds only that directory (its
# identity checked again), so the key is never read.
swap_race() {
        home
        (while [ ! -e "$T_TMP/stop" ]; do
                mv "$H/.nvm" "$H/.nvm-real" && ln -s .ssh "$H/.nvm" && rm "$H/.nvm" &&
                        mv "$H/.nvm-real" "$H/.nvm"
        done) &
        local i pid=$!
        for i in $(seq 20); do
                t_exec --bind "$H/.nvm:/mnt/n" -- cat /mnt/n/id_ed25519 /mnt/n/bin/node
                case $T_RC in 0 | 1 | 125) ;; *) t_fail "exit $T_RC: $(cat "$T_ERR_FILE")" ;; esac
                grep -q secret "$T_OUT_FILE" && t_fail "the key was read through the swap"
        done
        touch "$T_TMP/stop"
        wait "$pid"
}

# A directory holding a credential store is refused while the store is there; the home itself
# is refused as before.
holding_a_store() {
        home
        refused "it holds $H/.config/gh, a credential store" "$H/.config"
        refused "it is your home directory" "$H"
        mkdir -p "$H/.cargo/registry"
        echo tok >"$H/.cargo/credentials.toml"
        refused "it holds $H/.cargo/credentials.toml, a credential store" "$H/.cargo"
        t_exit_is 0 "$RTN" exec --bind "$H/.cargo/bin:/mnt/cb" --bind "$H/.config/tool:/mnt/t" \
                -- true
        rm "$H/.cargo/credentials.toml"
        t_exit_is 0 "$RTN" exec --bind "$H/.cargo:/mnt/c" -- true
}

# A toolchain's directory that the user binds for its cache keeps the tool's own credentials
# beside it (Maven's settings.xml, Gradle's gradle.properties, an agent's login, podman's
# auth.json): the directory is refused while one is there, its cache is not.
toolchain_credentials() {
        home
        mkdir -p "$H/.m2/repository" "$H/.gradle/caches" "$H/.claude" "$H/.codex" \
                "$H/.config/containers" "$H/.config/rclone" "$H/.cache/huggingface/hub"
        local f
        for f in .m2/settings.xml .gradle/gradle.properties .claude/.credentials.json \
                .codex/auth.json .config/containers/auth.json .config/rclone/rclone.conf \
                .cache/huggingface/token .pgpass .s3cfg; do
                echo secret >"$H/$f"
                refused "a credential store ($f)" "$H/$f"
        done
        refused "it holds $H/.m2/settings.xml, a credential store" "$H/.m2"
        refused "it holds $H/.gradle/gradle.properties, a credential store" "$H/.gradle"
        refused "it holds $H/.claude/.credentials.json, a credential store" "$H/.claude"
        refused "it holds $H/.cache/huggingface/token, a credential store" "$H/.cache"
        t_exit_is 0 "$RTN" exec --bind "$H/.m2/repository:/mnt/m2" \
                --bind "$H/.cache/huggingface/hub:/mnt/hf" -- true
}

# XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_CACHE_HOME move a tool's stores out of ~/.config,
# ~/.local/share and ~/.cache: the stores are refused where the variables put them.
xdg_moved_stores() {
        home
        mkdir -p "$H/.xdg/gh" "$H/.xdg/tool" "$H/.data/keyrings" "$H/.c/huggingface"
        echo token >"$H/.xdg/gh/hosts.yml"
        echo token >"$H/.c/huggingface/token"
        local env=(env XDG_CONFIG_HOME="$H/.xdg" XDG_DATA_HOME="$H/.data" XDG_CACHE_HOME="$H/.c")
        t_cmd "${env[@]}" "$RTN" exec --bind "$H/.xdg/gh:/mnt/x:ro" -- true
        t_exit_is 125
        t_stderr_has "a credential store (.xdg/gh)"
        t_cmd "${env[@]}" "$RTN" exec --bind "$H/.xdg:/mnt/x:ro" -- true
        t_exit_is 125
        t_stderr_has "it holds $H/.xdg/gh, a credential store"
        t_cmd "${env[@]}" "$RTN" exec --bind "$H/.data/keyrings:/mnt/x:ro" -- true
        t_exit_is 125
        t_stderr_has "a credential store (.data/keyrings)"
        t_cmd "${env[@]}" "$RTN" exec --bind "$H/.c:/mnt/x:ro" -- true
        t_exit_is 125
        t_stderr_has "it holds $H/.c/huggingface/token, a credential store"
        t_exit_is 0 "${env[@]}" "$RTN" exec --bind "$H/.xdg/tool:/mnt/x" -- true
        # outside the home, or not absolute, the variables move nothing the list names
        t_exit_is 0 env XDG_CONFIG_HOME=.xdg "$RTN" exec --bind "$H/.xdg/tool:/mnt/x" -- true
}

# Another name of the home, of a directory above it or of one holding a store (a bind mount
# of the host's, made here in a mount namespace of the test's own: root only) is what it
# names: refused, and the key is never read.
alias_of_home() {
        [ "$(id -u)" = 0 ] || t_skip "a bind mount on the host needs root"
        home
        mkdir -p "$T_TMP/al/home" "$T_TMP/al/up" "$T_TMP/al/conf" "$T_TMP/al/tool"
        t_cmd unshare -m sh -c "mount --bind '$H' '$T_TMP/al/home' &&
                mount --bind '$T_TMP' '$T_TMP/al/up' &&
                mount --bind '$H/.config' '$T_TMP/al/conf' &&
                mount --bind '$H/.config/tool' '$T_TMP/al/tool' &&
                for d in home up conf; do
                        timeout 60 '$RTN' exec --bind '$T_TMP/al/'\$d:/mnt/x -- \
                                sh -c 'cat /mnt/x/.ssh/id_ed25519 /mnt/x/home/.ssh/id_ed25519 \
                                       /mnt/x/gh/hosts.yml' 2>&1
                        echo rc=\$?
                done
                timeout 60 '$RTN' exec --bind '$T_TMP/al/tool:/mnt/x' -- true; echo rc=\$?"
        t_exit_is 0
        grep -q -e secret -e token "$T_OUT_FILE" && t_fail "read through an alias: $(cat "$T_OUT_FILE")"
        [ "$(grep -c '^rc=125$' "$T_OUT_FILE")" = 3 ] || t_fail "not refused: $(cat "$T_OUT_FILE")"
        t_stdout_has "it is $H under another name, your home directory"
        t_stdout_has "it is $T_TMP under another name, which holds your home directory"
        t_stdout_has "it is $H/.config under another name, which holds $H/.config/gh, a credential store"
        [ "$(tail -n1 "$T_OUT_FILE")" = rc=0 ] || t_fail "a toolchain's alias was refused"
}

# The user's list adds names; a bad line is an error naming it, never skipped.
user_list() {
        home
        mkdir -p "$H/.mytool/sub" "$H/.config/rtn"
        printf '# mine\n\n.mytool\n' >"$H/.config/rtn/credential-stores"
        refused "a credential store (.mytool)" "$H/.mytool/sub"
        refused "a credential store (.ssh)" "$H/.ssh" # the built-in list stays
        printf '.ok\n/etc/x\n' >"$H/.config/rtn/credential-stores"
        refused "credential-stores:2: not a path relative to your home" "$H/.nvm"
        printf '.a/../.b\n' >"$H/.config/rtn/credential-stores"
        refused "credential-stores:1: not a path relative to your home" "$H/.nvm"
        mkdir -p "$T_TMP/xdg/rtn"
        echo .nvm >"$T_TMP/xdg/rtn/credential-stores"
        XDG_CONFIG_HOME=$T_TMP/xdg refused "a credential store (.nvm)" "$H/.nvm"
}

# A bind's mount point: anywhere docker's -v takes one, but rtn's own paths and the system's
# pseudo-filesystems (and what holds them) for exec and serve; the agent keeps /workspace
# and /mnt.
mount_points() {
        home
        echo data >"$H/proj/f"
        local d
        for d in /opt/proj /srv/data /home/rtn/proj /tmp/in /var/cache/proj; do
                t_exit_is 0 "$RTN" exec --bind "$H/proj:$d:ro" -- cat "$d/f"
                t_stdout_is data
        done
        for d in /proc /proc/sys /sys /sys/fs /dev /dev/pts /run/rtn /etc/hosts /etc/hostname \
                /etc/passwd /etc/group /etc /run /workspace /; do
                t_exec --bind "$H/proj:$d" -- true
                t_exit_is 125
                t_stderr_has "mount point $d: "
                t_cmd "$RTN" serve --bind "$H/proj:$d" </dev/null
                t_exit_is 1
                t_stderr_has "mount point $d: "
        done
}

t_run toolchains_read_only toolchains_read_only
t_run credential_stores credential_stores
t_run swap_race swap_race
t_run holding_a_store holding_a_store
t_run toolchain_credentials toolchain_credentials
t_run xdg_moved_stores xdg_moved_stores
t_run alias_of_home alias_of_home
t_run user_list user_list
t_run mount_points mount_points
t_done
