#!/usr/bin/env python3
"""Wire-level scenarios against a real `rtn serve` (tests/integration/serve_wire.sh): raw
JSON-RPC lines, including malformed, oversized, interleaved and cancelled requests. Usage:
mcp_wire.py RTN SCENARIO. Exits 0 when the scenario holds, 1 with a reason otherwise."""
import json
import os
import select
import signal
import subprocess
import sys
import time

RTN, SCENARIO = sys.argv[1], sys.argv[2]

from wire_client import Server  # noqa: E402  (beside this file)


def expect_error(m, code):
    assert "error" in m and m["error"]["code"] == code, m


def malformed(s):
    s.raw(b"{not json\n")
    m = s.read()
    expect_error(m, -32700)
    assert m["id"] is None, m
    s.raw(b'{"jsonrpc":"2.0","id":5}\n')
    expect_error(s.read(), -32600)
    expect_error(s.req(6, "no/such/method"), -32601)
    expect_error(s.req(7, "tools/call", {"name": "shell_run", "arguments": {}}), -32602)
    expect_error(s.req(8, "tools/call", {"name": "nope", "arguments": {}}), -32602)
    s.raw(b'[{"jsonrpc":"2.0","id":9,"method":"ping"}]\n')  # batches went away in 2025-06-18
    expect_error(s.read(), -32600)
    s.raw(b"\xff\xfe garbage \x00\n")
    expect_error(s.read(), -32700)
    s.alive()


def oversized(s):
    s.raw(b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"' + b"a" * (5 << 20) + b'"}}\n')
    m = s.read()
    assert "error" in m and m["id"] is None, m
    r = s.call(4, "shell_run", command="head -c 3000000 /dev/zero | tr '\\0' x")
    sc = r["structuredContent"]
    assert sc["stdout_truncated"] is True and len(sc["stdout"]) == 1 << 20, {k: v for k, v in sc.items() if k != "stdout"}
    s.alive()


def interleaved(s):
    s.send({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
            "params": {"name": "shell_run", "arguments": {"command": "sleep 1; echo slow"}}})
    s.send({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
            "params": {"name": "shell_run", "arguments": {"command": "echo fast"}}})
    s.send({"jsonrpc": "2.0", "id": 12, "method": "ping"})
    order = []
    while len(order) < 3:
        m = s.read()
        if "id" in m and "method" not in m:
            order.append(m["id"])
    assert order.index(10) == 2, order


def running(tag, seconds=30):
    """Waits until a sandbox's `sleep 60.<pid><tag>` runs (seen from the host): a command is
    known to have started by seeing it, never by a fixed wait, which load can outlast. The
    duration is this run's own, so another suite's sleep is never taken for it."""
    arg = "60.%d%s" % (os.getpid(), tag)
    pat = "^sleep %s$" % arg.replace(".", "[.]")
    for _ in range(seconds * 10):
        if subprocess.run(["pgrep", "-f", pat], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    raise AssertionError("sleep %s never ran" % arg)


def sleep_cmd(tag):
    return "sleep 60.%d%s" % (os.getpid(), tag)


def cancelled(s):
    s.send({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
            "params": {"name": "shell_run", "arguments": {"command": "echo started > /tmp/c; exec " + sleep_cmd("1")}}})
    running("1")
    t0 = time.time()
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20}})
    r = s.req(21, "tools/call", {"name": "shell_run", "arguments": {"command": "cat /tmp/c; for i in $(seq 50); do n=$(ps -eo comm= | grep -cx sleep); [ $n = 0 ] && break; sleep 0.1; done; echo $n"}})
    sc = r["result"]["structuredContent"]
    assert sc["stdout"] == "started\n0\n", sc
    assert time.time() - t0 < 10
    # a cancelled request gets no response
    s.alive()
    while select.select([s.p.stdout], [], [], 0.3)[0] or b"\n" in s.buf:
        m = s.read(1)
        assert m.get("id") != 20, m


def progress(s):
    s.send({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
            "params": {"name": "shell_run", "arguments": {"command": "sleep 3"},
                       "_meta": {"progressToken": "tok"}}})
    seen = []
    s.wait_id(30, seen=seen)
    prog = [m for m in seen if m.get("method") == "notifications/progress"]
    assert prog and prog[0]["params"]["progressToken"] == "tok", seen


def init_death(s):
    r = s.call(40, "shell_run", command="echo kept > /workspace/f")
    assert r["structuredContent"]["exit_code"] == 0, r
    s.send({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
            "params": {"name": "shell_run", "arguments": {"command": sleep_cmd("2")}}})
    running("2")
    kids = subprocess.run(["pgrep", "-P", str(s.p.pid)], capture_output=True, text=True).stdout.split()
    assert kids, "no rtn-init child"
    for k in kids:
        os.kill(int(k), signal.SIGKILL)
    m = s.wait_id(41)
    assert m["result"]["isError"] is True, m
    r = s.call(42, "shell_run", command="cat /workspace/f")
    assert r["structuredContent"]["stdout"] == "kept\n", r
    assert r["structuredContent"].get("sandbox_restarted") is True, r


def init_death_race(s):
    """A call sent right after rtn-init's death, before the server has seen the hang-up: if
    the spawn request meets the dead socket the call runs in a fresh sandbox; if the request
    went into the socket before the end, the call reports the sandbox's end (the command may
    have started, so it is not run twice). Never a bare "broken pipe"; the next call works."""
    for rid in range(60, 70):
        r = s.call(rid * 10, "shell_run", command="echo up")
        assert r["structuredContent"]["stdout"] == "up\n", r
        kids = subprocess.run(["pgrep", "-P", str(s.p.pid)], capture_output=True,
                              text=True).stdout.split()
        assert kids, "no rtn-init child"
        for k in kids:
            os.kill(int(k), signal.SIGKILL)
        r = s.call(rid * 10 + 1, "shell_run", command="echo again")
        if r.get("isError"):
            assert "the sandbox ended while the command ran" in r["content"][0]["text"], r
            r = s.call(rid * 10 + 2, "shell_run", command="echo again")
        assert r.get("isError") is not True, r
        assert r["structuredContent"]["stdout"] == "again\n", r
        assert r["structuredContent"].get("sandbox_restarted") is True, r


def cut_off(s):
    """A command cut off by env_reset, env_discard or bind_host_dir is told what stopped it,
    not that the sandbox's init died; a job's waiter hears the job was killed, not that it
    still runs."""
    home = os.path.join(os.getcwd(), "home")
    os.makedirs(os.path.join(home, "proj"))
    os.chmod(os.getcwd(), 0o755)
    os.chmod(home, 0o755)
    os.environ["HOME"] = home
    s = Server(RTN)
    for n, (tool, args, want) in enumerate((
            ("env_reset", {}, "env_reset"),
            ("env_discard", {}, "env_discard"),
            ("bind_host_dir", {"host_path": os.path.join(home, "proj"), "mount_point": "/mnt/p",
                               "mode": "ro"}, "bind_host_dir"))):
        rid = 100 + 10 * n
        job = s.call(rid + 2, "shell_job_start", command="sleep 60")["structuredContent"]["job_id"]
        s.send({"jsonrpc": "2.0", "id": rid + 3, "method": "tools/call",
                "params": {"name": "shell_job_wait", "arguments": {"job_id": job, "timeout": 30}}})
        s.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": "shell_run", "arguments": {"command": sleep_cmd("3%d" % n)}}})
        running("3%d" % n)
        s.send({"jsonrpc": "2.0", "id": rid + 1, "method": "tools/call",
                "params": {"name": tool, "arguments": args}})
        got = {}
        while len(got) < 3:
            m = s.read()
            if m.get("id") in (rid, rid + 1, rid + 3):
                got[m["id"]] = m["result"]
        assert got[rid + 1].get("isError") is not True, got[rid + 1]
        text = got[rid]["content"][0]["text"]
        assert got[rid]["isError"] is True, got[rid]
        assert "init died" not in text and want in text, text
        assert got[rid + 3]["structuredContent"]["state"] == "killed", (tool, got[rid + 3])
    s.p.kill()


def eof(s):
    # A duration no other test uses, so a stray sleep elsewhere on the host cannot be
    # mistaken for this sandbox's (and this one is seen running before the EOF).
    arg = "300.%d" % os.getpid()
    s.call(50, "shell_job_start", command="sleep " + arg)
    pat = "^sleep %s$" % arg.replace(".", "[.]")
    for _ in range(50):
        if subprocess.run(["pgrep", "-f", pat], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the job's sleep never ran")
    t0 = time.time()
    s.p.stdin.close()
    s.p.wait(timeout=5)
    assert time.time() - t0 < 3, "slow exit"
    left = subprocess.run(["pgrep", "-f", pat], capture_output=True, text=True).stdout
    assert not left.strip(), "sandbox processes left: " + left


def blocked(s):
    """Calls the seccomp filter denies come back as a report: structuredContent.blocked, a
    second text line, and still EPERM for the caller (docs/policy.md, "Visibility")."""
    r = s.call(70, "shell_run", command="mount -t tmpfs x /mnt; unshare -U true; echo done")
    sc = r["structuredContent"]
    assert "not permitted" in sc["stderr"] and sc["stdout"] == "done\n", sc
    calls = {(b["syscall"], b["comm"]) for b in sc["blocked"]}
    assert ("mount", "mount") in calls and ("unshare", "unshare") in calls, sc["blocked"]
    assert all(b["count"] >= 1 and b["pid"] > 1 for b in sc["blocked"]), sc["blocked"]
    assert sc["blocked_more"] == 0, sc
    assert json.loads(r["content"][0]["text"]) == sc, r["content"]
    note = r["content"][1]["text"]
    assert "rtn: blocked mount(2) by pid" in note and "(mount): EPERM" in note, note
    # nothing blocked: no report at all
    r = s.call(71, "shell_run", command="true")
    assert "blocked" not in r["structuredContent"] and len(r["content"]) == 1, r
    # a flood is capped: 20 distinct (syscall, comm) pairs keep 16 records
    cmd = ("for i in $(seq 20); do ln -s \"$(command -v unshare)\" /tmp/m$i; "
           "/tmp/m$i -U true 2>/dev/null; done; true")
    sc = s.call(72, "shell_run", command=cmd)["structuredContent"]
    assert len(sc["blocked"]) == 16 and sc["blocked_more"] == 4, sc
    # a job's result carries the report once it has ended
    job = s.call(73, "shell_job_start", command="unshare -U true")["structuredContent"]["job_id"]
    sc = s.call(74, "shell_job_wait", job_id=job, timeout=30)["structuredContent"]
    assert sc["state"] == "exited" and sc["blocked"][0]["syscall"] == "unshare", sc
    # a background process outliving its command still gets EPERM, not ENOSYS, and its call
    # is not put down to the command running at the time
    s.call(75, "shell_run", command="(sleep 1; unshare -U true 2>/tmp/bg) >/dev/null 2>&1 &")
    sc = s.call(76, "shell_run", command="sleep 2; cat /tmp/bg")["structuredContent"]
    assert "Operation not permitted" in sc["stdout"], sc
    assert "blocked" not in sc, sc
    # commands running at once share one filter (the confined loop's): each call is reported
    # with the command it came from, a child in a session of its own included
    job = s.call(77, "shell_job_start",
                 command="sleep 1; unshare -U true; setsid sh -c 'unshare -n true'; sleep 1"
                 )["structuredContent"]["job_id"]
    sc = s.call(78, "shell_run", command="sleep 0.5; mount -t tmpfs x /mnt; sleep 1")[
        "structuredContent"]
    assert {b["syscall"] for b in sc["blocked"]} == {"mount"}, sc["blocked"]
    sc = s.call(79, "shell_job_wait", job_id=job, timeout=30)["structuredContent"]
    assert sc["state"] == "exited", sc
    assert [b["syscall"] for b in sc["blocked"]] == ["unshare"], sc["blocked"]
    assert sc["blocked"][0]["count"] == 2, sc["blocked"]


scenarios = {f.__name__: f for f in [malformed, oversized, interleaved, cancelled, progress,
                                     init_death, init_death_race, eof, blocked]}
if SCENARIO == "cut_off":
    try:
        cut_off(None)
    except AssertionError as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
if SCENARIO == "batch_2025_03_26":
    s = Server(RTN, "2025-03-26")
    s.raw(b'[{"jsonrpc":"2.0","id":60,"method":"ping"},{"jsonrpc":"2.0","id":61,"method":"ping"}]\n')
    m = s.read()
    assert isinstance(m, list) and sorted(x["id"] for x in m) == [60, 61], m
    sys.exit(0)
try:
    srv = Server(RTN)
    scenarios[SCENARIO](srv)
except AssertionError as e:
    print("FAIL:", e, file=sys.stderr)
    sys.exit(1)
finally:
    try:
        srv.p.kill()
    except Exception:
        pass
