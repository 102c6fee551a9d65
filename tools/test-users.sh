#!/bin/sh
# Creates the two unprivileged users tools/test.sh runs the suites as, when they are missing:
#   rtntest  no subordinate id range: rtn must fall back to a single uid/gid mapping
#   rtnsub   a 65536-id range in /etc/subuid and /etc/subgid: rtn maps it with
#            newuidmap/newgidmap (uidmap package)
# Also a range for the user `containers` (not an account: podman takes the ids of
# --userns=auto and of a pod with hostUsers: false from it), which tests/integration/
# containers.sh uses.
# System users without a home or a login shell: the runner gives each its own HOME, TMPDIR
# and RTN_DATA_DIR. Idempotent; also removes any range rtntest has been given since, so
# its case stays the one it names. Run as root.
set -eu

[ "$(id -u)" = 0 ] || {
        echo "test-users.sh: must run as root" >&2
        exit 1
}

ensure_user() {
        getent passwd "$1" >/dev/null && return 0
        useradd --system --user-group --no-create-home --home-dir /nonexistent \
                --shell /usr/sbin/nologin "$1"
}

# First id after every range already in /etc/subuid and /etc/subgid (at least 100000, the
# login.defs default SUB_UID_MIN), so the new range overlaps nobody's.
next_free_id() {
        cat /etc/subuid /etc/subgid 2>/dev/null |
                awk -F: 'BEGIN { n = 100000 } NF == 3 && $2 + $3 > n { n = $2 + $3 } END { print n }'
}

drop_ranges() { # user uid
        for f in /etc/subuid /etc/subgid; do
                [ -f "$f" ] || continue
                grep -qE "^($1|$2):" "$f" || continue
                sed -i -E "/^($1|$2):/d" "$f"
        done
}

touch /etc/subuid /etc/subgid
ensure_user rtntest
ensure_user rtnsub
drop_ranges rtntest "$(id -u rtntest)"

if ! grep -q '^rtnsub:' /etc/subuid || ! grep -q '^rtnsub:' /etc/subgid; then
        drop_ranges rtnsub "$(id -u rtnsub)"
        start=$(next_free_id)
        echo "rtnsub:$start:65536" >>/etc/subuid
        echo "rtnsub:$start:65536" >>/etc/subgid
fi

if ! grep -q '^containers:' /etc/subuid || ! grep -q '^containers:' /etc/subgid; then
        drop_ranges containers containers
        start=$(next_free_id)
        echo "containers:$start:1048576" >>/etc/subuid
        echo "containers:$start:1048576" >>/etc/subgid
fi
