#!/usr/bin/env bash
# Real tools through the agent's proxy (docs/network.md) against servers of the test's own:
# `git clone` over smart HTTP (git http-backend) and `pip install` from a simple index. The
# gate refuses loopback and private results, so the servers listen on an address of the
# documentation range in a test network namespace, and rtn runs in that
# namespace too; the address is allowed as such (--allow-net ADDR:PORT). Making the
# namespace needs root: as another user the cases skip, saying so.
. "$(dirname "$0")/../lib.sh"
t_need_rtn

SERVERS=$(cd "$(dirname "$0")" && pwd)/net_servers.py
ADDR=203.0.113.1

need_netns() {
        [ "$(id -u)" = 0 ] || t_skip "a test network namespace needs root"
        command -v ip >/dev/null || t_skip "no ip(8) to set up the test network"
}

# Runs the script file $1 with bash in a fresh network namespace with $ADDR on its lo (the
# filter looks at the address, not at the device; this kernel may lack the dummy driver), where start_server (net_servers.py ARGS in the background, waited for) is defined.
in_test_netns() {
        t_cmd unshare -n bash -c '
                ip link set lo up && ip addr add "$ADDR"/32 dev lo || exit 1
                start_server() {
                        python3 "$SERVERS" "$@" &
                        for _ in $(seq 100); do
                                (exec 3<>"/dev/tcp/$2/$3") 2>/dev/null && return 0
                                sleep 0.1
                        done
                        echo "server $* did not start" >&2
                        return 1
                }
                . "$0"' "$1"
}
export SERVERS ADDR

git_clone_inside() {
        need_netns
        command -v git >/dev/null || t_skip "no git"
        git init -q --bare repo.git/proj.git
        git init -q src && (cd src && echo hello >README && git add README &&
                git -c user.name=t -c user.email=t@t commit -qm first &&
                git push -q ../repo.git/proj.git HEAD:refs/heads/main) ||
                t_fail "could not make the test repository"
        git -C repo.git/proj.git symbolic-ref HEAD refs/heads/main
        cat >run.sh <<EOS
start_server git $ADDR 8080 $T_TMP/repo.git || exit 1
"$RTN" exec --allow-net $ADDR:8080 -- sh -c \
        'cd /tmp && git clone -q http://$ADDR:8080/proj.git && cat proj/README'
echo rc=\$?
"$RTN" exec --allow-net $ADDR:8081 -- sh -c \
        'cd /tmp && git clone -q http://$ADDR:8080/proj.git 2>/dev/null; echo refused=\$?'
kill %1
EOS
        in_test_netns run.sh
        t_stdout_has "hello"
        t_stdout_has "rc=0"
        t_stdout_has "refused=128"
        t_stderr_has "rtn: network denied $ADDR:8080: port 8080 is not on the allowlist"
}

pip_install_inside() {
        need_netns
        /usr/bin/python3 -m pip --version >/dev/null 2>&1 || t_skip "no pip for /usr/bin/python3"
        python3 "$SERVERS" wheel idx rtnprobe 1.0
        local pip="python3 -m pip install -q --no-cache-dir --disable-pip-version-check"
        pip="$pip --target /tmp/site --index-url http://$ADDR:8081/simple/ --trusted-host $ADDR"
        cat >run.sh <<EOS
start_server files $ADDR 8081 $T_TMP/idx || exit 1
"$RTN" exec --allow-net $ADDR:8081 -- sh -c \
        '$pip rtnprobe && PYTHONPATH=/tmp/site python3 -c "import rtnprobe; print(rtnprobe.MESSAGE)"'
echo rc=\$?
"$RTN" exec --allow-net $ADDR:8080 -- sh -c \
        '$pip --retries 0 --timeout 5 rtnprobe >/dev/null 2>&1; echo refused=\$?'
kill %1
EOS
        in_test_netns run.sh
        t_stdout_has "installed through the rtn proxy"
        t_stdout_has "rc=0"
        t_stdout_has "refused=1"
        t_stderr_has "rtn: network denied $ADDR:8081: port 8081 is not on the allowlist"
}

t_run git_clone_inside git_clone_inside
t_run pip_install_inside pip_install_inside
t_done
