#!/usr/bin/env python3
"""`rtn serve` sessions and cgroup v2 (tests/integration/exec_cgroup.sh): the session's
sandbox runs in the child cgroup rtn-<serve pid>-<n> of CGROUP_DIR (seen from the host in
/proc/<pid>/cgroup); when its rtn-init dies the replacement gets a new cgroup and the old one
is gone; when the server ends no rtn-<serve pid>-* is left. Usage: serve_cgroup.py RTN
CGROUP (the 0:: path) CGROUP_DIR. Exits 0 when that holds, 1 with a reason otherwise."""
import glob
import os
import signal
import subprocess
import sys
import time

RTN, CGROUP, CGROUP_DIR = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]

from wire_client import Server  # noqa: E402  (beside this file)


def host_pid(argv):
    want = ("\0".join(argv) + "\0").encode()
    for _ in range(100):
        for d in os.listdir("/proc"):
            try:
                if d.isdigit() and open("/proc/%s/cmdline" % d, "rb").read() == want:
                    return int(d)
            except OSError:
                pass
        time.sleep(0.1)
    raise AssertionError("no host process %s" % argv)


def cgroup_of(pid):
    for line in open("/proc/%d/cgroup" % pid):
        if line.startswith("0::"):
            return line[3:].strip()
    return None


def job_in(s, rid, secs, n):
    s.call(rid, "shell_job_start", command="sleep %s" % secs)
    pid = host_pid(["sleep", secs])
    want = "%s/rtn-%d-%d" % (CGROUP, s.p.pid, n)
    assert cgroup_of(pid) == want, "sleep %s is in %s, not %s" % (secs, cgroup_of(pid), want)


def main():
    s = Server(RTN, name="cgroup")
    try:
        job_in(s, 10, "81.5", 0)
        kids = subprocess.run(["pgrep", "-P", str(s.p.pid)], capture_output=True,
                              text=True).stdout.split()
        assert kids, "no rtn-init child"
        for k in kids:
            os.kill(int(k), signal.SIGKILL)
        # A call racing the server's notice of the death may report the sandbox's end (its
        # request reached the dying rtn-init); the next one runs in a fresh sandbox.
        r = s.call(11, "shell_run", command="true")
        if r.get("isError"):
            assert "the sandbox ended while the command ran" in r["content"][0]["text"], r
            r = s.call(13, "shell_run", command="true")
        assert r.get("structuredContent", {}).get("sandbox_restarted") is True, r
        old = "%s/rtn-%d-0" % (CGROUP_DIR, s.p.pid)
        assert not os.path.exists(old), "the dead sandbox's cgroup %s is left" % old
        job_in(s, 12, "82.5", 1)
        s.p.stdin.close()
        s.p.wait(timeout=10)
        left = glob.glob("%s/rtn-%d-*" % (CGROUP_DIR, s.p.pid))
        assert not left, "cgroups left after the server ended: %s" % left
    finally:
        s.p.kill()


try:
    main()
except AssertionError as e:
    print("FAIL:", e, file=sys.stderr)
    sys.exit(1)
