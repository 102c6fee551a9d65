#!/usr/bin/env bash
# Provisioning as a user drives it: rootfs import/list and the stamp that notices a changed
# base, package-name checks of `rtn pkg install`, and the issue's end-to-end case on a real
# Debian minbase: bootstrap (mmdebstrap, /usr merged by links); `rtn pkg install jq` streams apt's output, fetches
# no translations, and commits the package without apt's lists, cache and logs, and again
# commits nothing; serve
# it, pkg_install jq, use it, commit, restart the server, still there, pkg_install again
# says so and leaves nothing to commit; install again on another environment and reset
# without commit, gone. The end-to-end case needs Debian's mirror (one retry per network step, each
# time-bounded) and mmdebstrap, and skips as a user without a subordinate id range, for whom
# bootstrapping is refused by design (docs/bootstrap.md).
. "$(dirname "$0")/../lib.sh"
t_need_rtn
MCP=$T_ROOT/tests/integration/mcp_calls.py

mode() { # root | subid | single, as rtn chooses (runtime/sandbox/idmap.c)
        if [ "$(id -u)" = 0 ]; then echo root
        elif grep -q "^$(id -un):" /etc/subuid 2>/dev/null && command -v newuidmap >/dev/null &&
                [ -z "${RTN_NO_SUBID:-}" ]; then echo subid
        else echo single; fi
}

# Runs CMD... as root inside the caller's subordinate range when files there are not ours.
as_owner() {
        "$@" 2>/dev/null || unshare --map-root-user --map-auto "$@"
}

pkg_names_refused() {
        export RTN_DATA_DIR=$T_TMP/data
        local bad
        for bad in -oAPT::Get::Foo=1 --reinstall Jq 'a;b' 'x' 'jq=' 'jq:' '../jq' 'jq/'; do
                t_cmd "$RTN" pkg install --rootfs nosuch -- "$bad"
                [ "$T_RC" = 125 ] || t_fail "'$bad' accepted: $(t_last)"
        done
        t_stderr_has "is not a Debian package name"
        t_cmd "$RTN" pkg install --rootfs nosuch -- -oFoo
        t_stderr_has "looks like an option"
        # good names pass the check and fail later, at the missing rootfs
        t_cmd "$RTN" pkg install --rootfs nosuch -- jq libc6:amd64 g++ python3.11=3.11.2-6 jq/bookworm
        t_stderr_has "no rootfs named 'nosuch'"
}

make_tree() {
        mkdir -p tree/etc/apt tree/usr/bin tree/var/lib/dpkg tree/bin
        echo "deb http://deb.example.org/debian bookworm main" >tree/etc/apt/sources.list
        printf 'Types: deb\nURIs: https://mirror.example.net/debian\nSuites: bookworm\n' \
                >tree/etc/apt/sources.list.d.tmp
        mkdir tree/etc/apt/sources.list.d
        mv tree/etc/apt/sources.list.d.tmp tree/etc/apt/sources.list.d/extra.sources
        echo "root:x:0:0:root:/root:/bin/sh" >tree/etc/passwd
        : >tree/var/lib/dpkg/status
        echo hello >tree/usr/bin/marker
}

rootfs_import_list_stamp() {
        export RTN_DATA_DIR=$T_TMP/data
        make_tree
        tar -C tree -cf t.tar . && tar -C tree --zstd -cf t.tar.zst .
        t_exit_is 0 "$RTN" rootfs import t.tar tiny
        t_exit_is 0 "$RTN" rootfs import t.tar.zst tinyz
        t_exit_is 1 "$RTN" rootfs import t.tar tiny
        t_stderr_has "already exists"
        t_exit_is 0 "$RTN" rootfs list
        t_stdout_has "deb.example.org,mirror.example.net"
        grep -q "^tiny	[0-9a-f]\{16\}	ok	" "$T_OUT_FILE" || t_fail "list: $(cat "$T_OUT_FILE")"
        local root=$RTN_DATA_DIR/rootfs/tiny/root
        [ "$(cat "$root/usr/bin/marker" 2>/dev/null || as_owner cat "$root/usr/bin/marker")" = hello ] ||
                t_fail "imported content missing"
        if [ "$(mode)" = root ]; then
                [ "$(stat -c %u "$root/etc/passwd")" != 0 ] || t_fail "root's rootfs left owned by host root"
        fi
        # A changed key path is noticed at start, before any sandbox exists.
        t_exec --rootfs tiny -- /bin/true
        [ "$T_RC" != 0 ] && grep -q "changed since" "$T_ERR_FILE" && t_fail "fresh rootfs seen as changed"
        sleep 0.01
        as_owner touch "$root/var/lib/dpkg/status" || t_fail "cannot touch the test rootfs"
        t_exit_is 125 "$RTN" exec --rootfs tiny -- /bin/true
        t_stderr_has "rootfs tiny changed since it was made"
        t_stderr_has "var/lib/dpkg/status"
        t_exit_is 0 "$RTN" rootfs list
        t_stdout_has "CHANGED"
        t_exit_is 1 "$RTN" rootfs import t.tar ../evil
        t_exec --rootfs ../nonexistent-dir -- /bin/true
        [ "$T_RC" = 125 ] || t_fail "missing --rootfs dir: $(t_last)"
}

pkg_install_needs_a_rootfs() {
        export RTN_DATA_DIR=$T_TMP/data
        printf '%s\n' 'pkg_install {"packages":["jq"]}' >calls
        t_cmd python3 "$MCP" calls -- "$RTN" serve
        python3 - "$T_OUT_FILE" <<'PY' || t_fail "$(cat "$T_OUT_FILE" "$T_ERR_FILE")"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["isError"] and "needs a rootfs" in r["text"], r
PY
}

# One MCP session: calls on stdin, answers (one JSON line each) in $T_OUT_FILE.
serve_calls() { # ENV CALLS...
        local env=$1
        shift
        printf '%s\n' "$@" >calls
        T_CMD_TIMEOUT=600 t_cmd python3 "$MCP" calls -- "$RTN" serve --rootfs e2e --env "$env" \
                ${SERVE_WORKSPACE:+--workspace "$SERVE_WORKSPACE"}
        [ "$T_RC" = 0 ] || t_fail "serve: $(tail -c 600 "$T_ERR_FILE")"
}

# EXPR...: each a python expression over the session's answers, a[1] the first; their values
# in ANS[0], ANS[1]... (trailing newlines dropped, as $(...) drops them, and a newline within
# printed as \n). One python for all of a session's checks, not one for each.
answers() {
        local out
        out=$(python3 - "$T_OUT_FILE" "$@" <<'PY'
import json, sys
a = [None] + [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
for e in sys.argv[2:]:
    print(str(eval(e, {"a": a})).rstrip("\n").replace("\n", "\\n"))
PY
        )
        mapfile -t ANS <<<"$out"
}

bootstrap_e2e() {
        command -v mmdebstrap >/dev/null || t_fail "mmdebstrap is not installed (tools/deps.txt)"
        local try
        for try in 1 2; do
                T_CMD_TIMEOUT=480 t_cmd "$RTN" rootfs bootstrap --suite bookworm --variant minbase e2e
                [ "$T_RC" = 0 ] && return 0
                t_note "bootstrap attempt $try failed: $(tail -c 300 "$T_ERR_FILE")"
        done
        t_fail "bootstrap failed twice: $(t_last)"
}

install_jq() { # ENV [EXTRA CALLS...]
        local env=$1 try
        shift
        for try in 1 2; do
                serve_calls "$env" 'pkg_install {"packages":["jq"],"timeout":600}' \
                        'shell_run {"command":"echo \"{\\\"v\\\": 42}\" | jq .v"}' "$@"
                answers 'a[1]["isError"]'
                [ "${ANS[0]}" = False ] && return 0
                answers 'a[1]["result"]["stderr"][-400:] if a[1]["result"] else a[1]["text"]'
                t_note "pkg_install attempt $try: ${ANS[0]}"
        done
        t_fail "pkg_install jq failed twice"
}

# Bytes under the store's layers (0 before the first). A partial du (files of subordinate
# ids) is retried inside the range by as_owner: the last line is the whole count.
layers_bytes() {
        local n
        n=$(as_owner du -sb "$RTN_DATA_DIR/layers" 2>/dev/null | tail -n 1 | cut -f1)
        echo "${n:-0}"
}

# `rtn pkg install` from the command line: apt's output streams (its first line comes well
# before the end), the commit holds the package and not apt's lists, cache or logs, and a
# second install of it runs no apt, commits nothing and says so.
cli_install_jq() { # ENV
        local env=$1 try before after
        before=$(layers_bytes)
        # The command's stdout passed through, and how long before its end the first line came.
        cat >timed.py <<'PY'
import subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
first = None
for line in p.stdout:
    if first is None:
        first = time.monotonic()
    sys.stdout.buffer.write(line)
rc = p.wait()
end = time.monotonic()
print("first line %.1f s before the end" % (end - (first or end)), file=sys.stderr)
sys.exit(rc)
PY
        for try in 1 2; do
                T_CMD_TIMEOUT=600 t_cmd python3 timed.py "$RTN" pkg install --rootfs e2e \
                        --env "$env" jq
                [ "$T_RC" = 0 ] && break
                t_note "pkg install attempt $try: $(tail -c 400 "$T_ERR_FILE")"
        done
        [ "$T_RC" = 0 ] || t_fail "rtn pkg install jq failed twice"
        t_stdout_has "Setting up jq"
        # the lists live only as long as the install: no translated descriptions fetched
        ! grep -q "Translation-" "$T_OUT_FILE" "$T_ERR_FILE" ||
                t_fail "apt fetched translations: $(grep -h "Translation-" "$T_OUT_FILE" "$T_ERR_FILE")"
        grep -q "^committed [0-9a-f]\{64\}$" "$T_OUT_FILE" || t_fail "no commit: $(tail -3 "$T_OUT_FILE")"
        local ahead
        ahead=$(sed -n 's/^first line \([0-9.]*\) s before the end$/\1/p' "$T_ERR_FILE")
        [[ $ahead == [0-9]*.[0-9]* && ${ahead%%.*} -ge 1 ]] ||
                t_fail "apt's output came only at the end (first line $ahead s before it)"
        local tip
        tip=$(sed -n 's/^committed //p' "$T_OUT_FILE")
        after=$(layers_bytes)
        [ $((after - before)) -lt $((20 << 20)) ] ||
                t_fail "the jq commit added $(((after - before) >> 20)) MiB of layers"
        local junk
        junk=$(as_owner find "$RTN_DATA_DIR/layers" \( -path '*/var/lib/apt/lists/*' \
                -o -path '*/var/cache/apt/*' -o -path '*/var/cache/rtn-apt*' \
                -o -path '*/var/log/apt/*' -o -path '*/var/log/dpkg.log' \) -print | head -5)
        [ -z "$junk" ] || t_fail "apt's state in the layer: $junk"
        # again: nothing to do, nothing committed, the same tip
        T_CMD_TIMEOUT=300 t_exit_is 0 "$RTN" pkg install --rootfs e2e --env "$env" jq
        t_stdout_is "unchanged $tip"
        t_stderr_has "nothing changed, nothing committed"
        t_exit_is 0 "$RTN" log --env "$env"
        [ "$(wc -l <"$T_OUT_FILE")" = 1 ] || t_fail "a second commit: $(cat "$T_OUT_FILE")"
}

# Behind a proxy: `rtn pkg install --upstream-proxy` sends the mirrors through it, with its
# credentials (here a proxy that logs each CONNECT and refuses it: the install fails, prints
# no password, and commits nothing).
pkg_behind_a_proxy() {
        mkdir "$T_TMP/up"
        python3 "$T_ROOT/tests/security/upstream.py" serve "$T_TMP/up" &
        local proxy=$!
        t_wait_for test -s "$T_TMP/up/proxy" || t_fail "the test's proxy did not start"
        T_CMD_TIMEOUT=300 t_cmd "$RTN" pkg install --rootfs e2e --env up \
                --upstream-proxy "http://alice:s3cret-pw@127.0.0.1:$(cat "$T_TMP/up/proxy")" jq
        kill "$proxy"
        wait "$proxy" 2>/dev/null
        [ "$T_RC" != 0 ] || t_fail "installed past a proxy that refused everything"
        grep -q ':[0-9]* auth=bad$' "$T_TMP/up/proxy.log" ||
                t_fail "the mirrors did not go through the proxy: $(cat "$T_TMP/up/proxy.log" 2>&1)"
        t_stderr_has "502  Bad Gateway"
        ! grep -q s3cret "$T_OUT_FILE" "$T_ERR_FILE" || t_fail "the proxy's password was printed"
        t_exit_is 1 "$RTN" log --env up
}

end_to_end_jq() {
        [ "$(mode)" = single ] && t_skip "bootstrapping needs root or a subordinate id range"
        export RTN_DATA_DIR=$T_TMP/data
        bootstrap_e2e
        t_exit_is 0 "$RTN" rootfs list
        t_stdout_has "deb.debian.org"
        # /usr merged before the first package, as debootstrap does it: usr-is-merged, and
        # not usrmerge (with the perl it brings) converting the tree afterwards
        t_exec --rootfs e2e -- sh -c 'test -L /bin && test -L /lib &&
                s() { dpkg-query -W -f="\${db:Status-Abbrev}" "$1" 2>/dev/null; } &&
                [ "$(s usr-is-merged)" = "ii " ] && [ "$(s usrmerge)" != "ii " ] || exit 1
                # the bootstrap ran dpkg without its syncs; the tree keeps no such setting
                ! grep -rs unsafe-io /etc/dpkg/dpkg.cfg /etc/dpkg/dpkg.cfg.d || exit 2'
        case $T_RC in
        0) ;;
        2) t_fail "the rootfs keeps dpkg's unsafe-io: $(cat "$T_OUT_FILE")" ;;
        *) t_fail "not merged-/usr by links: $(t_last)" ;;
        esac
        cli_install_jq cli
        pkg_behind_a_proxy
        # install, use, commit
        install_jq e2e 'env_commit {"message":"jq"}'
        answers 'a[2]["result"]["stdout"]' \
                'len(a[1]["progress"]) > 0 or a[1]["result"]["duration_ms"] < 3000' 'a[3]["isError"]'
        [ "${ANS[0]}" = 42 ] || t_fail "jq did not run: $(sed -n 2p "$T_OUT_FILE")"
        [ "${ANS[1]}" = True ] || t_fail "no progress notification during a long install"
        [ "${ANS[2]}" = False ] || t_fail "commit: $(sed -n 3p "$T_OUT_FILE")"
        # a new server on the same environment still has it
        serve_calls e2e 'shell_run {"command":"jq --version"}' 'pkg_install {"packages":["jq"]}' \
                'env_commit {"message":"again"}'
        answers 'a[1]["result"]["exit_code"]' \
                'a[2]["result"]["already_installed"], a[2]["result"]["exit_code"], a[2]["isError"]' \
                'a[3]["result"]["unchanged"]'
        [ "${ANS[0]}" = 0 ] || t_fail "jq gone after restart: $(cat "$T_OUT_FILE")"
        [ "${ANS[1]}" = "(True, 0, False)" ] || t_fail "jq installed again: $(sed -n 2p "$T_OUT_FILE")"
        [ "${ANS[2]}" = True ] || t_fail "a commit after installing nothing: $(sed -n 3p "$T_OUT_FILE")"
        # another environment, with a host workspace (provisioning may only read it:
        # docs/security-invariants.md, 14): install, reset without commit, gone
        mkdir -p "$T_TMP/ws/src" && git init -q "$T_TMP/ws" && echo x >"$T_TMP/ws/src/f"
        local before
        before=$(cd "$T_TMP/ws" && find . -printf '%p %s %m\n' | sort)
        SERVE_WORKSPACE=$T_TMP/ws install_jq e2e-reset 'env_reset {}' 'shell_run {"command":"command -v jq"}'
        [ "$(cd "$T_TMP/ws" && find . -printf '%p %s %m\n' | sort)" = "$before" ] ||
                t_fail "provisioning changed the workspace"
        answers 'a[2]["result"]["stdout"]' 'a[3]["isError"]' \
                'a[4]["result"]["exit_code"] != 0 and a[4]["result"]["stdout"] == ""'
        [ "${ANS[0]}" = 42 ] || t_fail "jq did not run before reset"
        [ "${ANS[1]}" = False ] || t_fail "reset: $(sed -n 3p "$T_OUT_FILE")"
        [ "${ANS[2]}" = True ] || t_fail "jq still there after reset: $(sed -n 4p "$T_OUT_FILE")"
}

t_run pkg_names_refused pkg_names_refused
t_run rootfs_import_list_stamp rootfs_import_list_stamp
t_run pkg_install_needs_a_rootfs pkg_install_needs_a_rootfs
t_run end_to_end_jq end_to_end_jq
t_done
