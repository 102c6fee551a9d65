"""Scenarios for trusted.sh: a sandbox job attacks the trusted side of `rtn serve` (the store
walk behind env_status and env_diff, the file tools, the size of results) while a second
thread pings the server every 20 ms; every ping must be answered, a long walk must not hold
the pings back until it ends, and stdin EOF must still end the server. Usage: trusted.py RTN
SCENARIO (cwd: the case's temp dir). Exit 0 = pass; an AssertionError's message says what
broke. Lines starting with '#' on stderr are notes for the suite's output.

No check here is a time limit that load alone could break: a blocked server answers nothing
ever (the bounds in seconds, WAIT_S, only keep a failing run finite), and "the loop was not
held" is told by the order of what was sent and read (Server.round_trips_during), which load
slows on both sides alike. The latencies are printed as notes, not judged."""
import base64
import json
import os
import subprocess
import sys
import threading
import time

RTN = sys.argv[1]
TMP = os.getcwd()
PING_EVERY_S = 0.02
# How long to wait for an answer before calling the server hung: a loaded machine answers a
# ping or a small call in well under a second, a blocked server never does.
WAIT_S = 60


def note(msg):
    print("# " + msg, file=sys.stderr, flush=True)


def eq(got, want, what):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def has(text, part, what):
    assert part in text, f"{what}: {part!r} not in {text!r}"


class Server:
    """`rtn serve` over stdio with a reader thread, so pings can be timed while a call runs."""

    def __init__(self, *args, version="2025-06-18"):
        env = os.environ.copy()
        env.setdefault("RTN_DATA_DIR", os.path.join(TMP, "data"))
        self.p = subprocess.Popen([RTN, "serve", *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.lock = threading.Lock()
        self.cv = threading.Condition()
        self.replies = {}
        self.sent_at = {}
        self.ping_ms = []
        # Every message sent and every line read takes the next position: one order for both.
        self.pos = 0
        self.pings = []  # (sent, answered) positions of each answered ping
        self.calls = {}  # rid -> (sent, answered) positions of the requests
        self.next_id = 0
        self.closed = False
        self.max_line = 0
        threading.Thread(target=self._reader, daemon=True).start()
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "trusted", "version": "1"}})
        assert r["result"]["protocolVersion"] == version, r
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.pinging = False

    def _reader(self):
        for line in self.p.stdout:
            now = time.monotonic()
            self.max_line = max(self.max_line, len(line))
            m = json.loads(line)
            rid = m.get("id")
            if rid is None or "method" in m:
                continue
            with self.cv:
                self.pos += 1
                if isinstance(rid, str) and rid.startswith("ping"):
                    at, pos = self.sent_at.pop(rid)
                    self.ping_ms.append((now - at) * 1000)
                    self.pings.append((pos, self.pos))
                else:
                    self.replies[rid] = m
                    self.calls[rid] = (self.calls.get(rid, (0, 0))[0], self.pos)
                self.cv.notify_all()
        with self.cv:
            self.closed = True
            self.cv.notify_all()

    def send(self, msg, on_sent=None):
        """Writes msg; on_sent(position) runs before the write, so nothing the server says
        in answer can take an earlier position."""
        data = (json.dumps(msg) + "\n").encode()
        with self.lock:
            with self.cv:
                self.pos += 1
                if on_sent:
                    on_sent(self.pos)
            self.p.stdin.write(data)
            self.p.stdin.flush()

    def request(self, method, params=None, timeout=WAIT_S):
        with self.cv:
            self.next_id += 1
            rid = self.next_id

        def sent(pos):
            self.calls[rid] = (pos, 0)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method,
                   **({"params": params} if params is not None else {})}, sent)
        end = time.monotonic() + timeout
        with self.cv:
            while rid not in self.replies:
                left = end - time.monotonic()
                assert not self.closed, f"{method}: the server closed its output"
                assert left > 0, f"{method}: no answer within {timeout} s"
                self.cv.wait(left)
            self.last_rid = rid
            return self.replies.pop(rid)

    def call_raw(self, name, timeout=WAIT_S, **args):
        return self.request("tools/call", {"name": name, "arguments": args}, timeout)["result"]

    def call(self, name, timeout=WAIT_S, **args):
        r = self.call_raw(name, timeout, **args)
        assert not r.get("isError"), f"{name} failed: {r['content'][0]['text'][:500]}"
        return r["structuredContent"]

    def sh(self, command, **kw):
        return self.call("shell_run", command=command, **kw)

    # ---- the pinger ----
    def _pinger(self, every):
        n = 0
        while self.pinging:
            n += 1
            rid = f"ping{n}"

            def sent(pos, rid=rid):
                self.sent_at[rid] = (time.monotonic(), pos)
            try:
                self.send({"jsonrpc": "2.0", "id": rid, "method": "ping"}, sent)
            except (BrokenPipeError, ValueError):
                return
            time.sleep(every)

    def start_pinging(self, every=PING_EVERY_S):
        self.pinging = True
        self.pinger = threading.Thread(target=self._pinger, args=(every,), daemon=True)
        self.pinger.start()

    def stop_pinging(self):
        """Stops the pinger; asserts every ping was answered (a server blocked for good
        answers none: the wait only bounds a failing run)."""
        self.pinging = False
        self.pinger.join()
        end = time.monotonic() + WAIT_S
        with self.cv:
            while self.sent_at and time.monotonic() < end:
                self.cv.wait(0.1)
            late = len(self.sent_at)
            worst = max(self.ping_ms, default=0)
            n = len(self.ping_ms)
        note(f"{n} pings, worst {worst:.1f} ms")
        assert not late, f"{late} pings never answered within {WAIT_S} s: the server is blocked"
        assert n > 0, "no ping was answered"

    def round_trips_during(self, rid):
        """The pings sent, while request rid ran, after an earlier one of them had been
        answered, and answered before rid: whole round trips inside the request. A server
        whose loop the request's work holds reads no ping until that work is done; then it
        answers the waiting ones and rid at once, with no time for the pinger to send
        another in between: none. One that does the work off the loop answers pings as
        they come while it runs: as many as the pinger sends, however slow a load makes
        both."""
        with self.cv:
            sent, answered = self.calls[rid]
            inside = [(s, a) for s, a in self.pings if s > sent and a < answered]
            first = min((a for _, a in inside), default=answered)
            return sum(1 for s, _ in inside if s > first)

    def close(self, timeout=WAIT_S):
        """Closes stdin: the server must exit on its own."""
        self.p.stdin.close()
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError(f"the server did not exit within {timeout} s of stdin EOF")

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


# ---- item 1: the store walk ------------------------------------------------------------------

SWAPPER = ("import ctypes, os\n"
           "libc = ctypes.CDLL(None, use_errno=True)\n"
           "os.chdir('/workspace/sw')\n"
           "pairs = [(b'f%d' % i, b'p%d' % i) for i in range(64)]\n"
           "n = 0\n"
           "while True:\n"
           "    for f, p in pairs:\n"
           "        libc.renameat2(-100, f, -100, p, 2)  # RENAME_EXCHANGE\n"
           "    n += 1\n"
           "    if n % 1000 == 0:\n"
           "        open('/tmp/swaps.new', 'w').write(str(64 * n))\n"
           "        os.rename('/tmp/swaps.new', '/tmp/swaps')\n")


def swaps(s):
    return int(s.sh("cat /tmp/swaps 2>/dev/null || echo 0")["stdout"])


def swap_fifo(s):
    """A job swaps a regular file and a FIFO (renameat2 RENAME_EXCHANGE) in a tight loop while
    env_status and env_diff run 500 times (2000 under make stress: T_STRESS, tests/lib.sh): no
    call hangs, every ping is answered."""
    names = range(64)
    s.sh("mkdir -p /workspace/sw && cd /workspace/sw && "
         f"for i in {' '.join(map(str, names))}; do echo data > f$i; done && "
         f"mkfifo {' '.join('p%d' % i for i in names)}")
    s.call("file_write", path="/workspace/swapper.py", content=SWAPPER)
    s.call("shell_job_start", command="exec python3 /workspace/swapper.py")
    t0 = time.monotonic()
    while swaps(s) == 0:
        assert time.monotonic() - t0 < WAIT_S, "the swapper does not run"
        time.sleep(0.1)
    before = swaps(s)
    s.start_pinging()
    t0, errors = time.monotonic(), 0
    calls = 2000 if os.environ.get("T_STRESS") == "1" else 500
    for n in range(calls):
        r = s.call_raw("env_status" if n % 2 else "env_diff")
        errors += bool(r.get("isError"))
    s.stop_pinging()
    note(f"{calls} calls in {time.monotonic() - t0:.1f} s, {errors} failed, "
         f"{swaps(s) - before} swaps meanwhile")


def big_tree(s):
    """env_status and env_diff over an upper of 150000 names (hard links: quick to make): the
    walk runs off the loop, so pings sent while it runs are answered before it ends. Pinged
    every 2 ms: a fast machine walks the names in some 60 ms, in which pings 20 ms apart made
    one round trip, where a held loop makes none."""
    # x holds a page: upper_bytes is what the upper's tmpfs holds, and names take none of it.
    s.sh("mkdir -p /workspace/big && cd /workspace/big && echo data > x && "
         "python3 -c 'import os\nfor i in range(150000): os.link(\"x\", str(i))'", timeout=300)
    s.start_pinging(every=0.002)
    t0 = time.monotonic()
    st = s.call("env_status")
    rt_status = s.round_trips_during(s.last_rid)
    d = s.call("env_diff")
    rt_diff = s.round_trips_during(s.last_rid)
    s.stop_pinging()
    note(f"env_status + env_diff took {time.monotonic() - t0:.2f} s; ping round trips while "
         f"they ran: {rt_status}, {rt_diff}")
    assert rt_status >= 2 and rt_diff >= 2, \
        (f"ping round trips while env_status ran: {rt_status}, while env_diff ran: {rt_diff} "
         "(2 or more each): the walk held the loop")
    assert st["upper_bytes"] > 0 and st["dirty_truncated"], st
    assert d["truncated"] and len(d["added"]) > 0, {k: d[k] for k in ("truncated",)}


# ---- item 8: results never too large for a client ---------------------------------------------

MSG_MAX = 8 << 20  # what rtn promises (docs/tools.md); the official SDKs give up at 10 MiB


def big_results(s):
    """The largest results a job can make: every message stays under MSG_MAX, and results are
    cut and say so. (No ping timing here: a ping's answer queued behind a message of megabytes
    arrives after it, however fast the server.)"""
    mib = 1 << 20
    s.sh(f"head -c {4 * mib} /dev/urandom > /tmp/big.bin; "
         f"head -c {mib} /dev/zero | tr '\\0' '\\33' | fold -w 100 > /tmp/esc.txt")
    t0 = time.monotonic()
    r = s.sh(f"yes '' | head -c {mib}; yes '' | head -c {mib} >&2")
    eq((len(r["stdout"]), len(r["stderr"])), (mib, mib), "1 MiB of newlines on each stream, whole")
    r = s.sh(f"head -c {mib} /dev/zero | tr '\\0' '\\1'; head -c {mib} /dev/zero | tr '\\0' '\\2' >&2")
    assert r["stdout_truncated"] and len(r["stdout"]) > mib // 4, (len(r["stdout"]), len(r["stderr"]))
    r = s.call("file_read", path="/tmp/big.bin", encoding="base64")
    eq((len(base64.b64decode(r["content"])), r["truncated"]), (4 * mib, False), "4 MiB as base64")
    r = s.call("file_read", path="/tmp/esc.txt", limit=100000)
    assert r["truncated"], "1 MiB of ESC lines is cut"
    note(f"largest message {s.max_line} bytes, {time.monotonic() - t0:.1f} s")
    assert s.max_line <= MSG_MAX, f"a message of {s.max_line} bytes"


# ---- item 3: file tools read with the sandbox's credentials -----------------------------------

def read_raw(s, path):
    r = s.call("file_read", path=path, encoding="base64")
    return base64.b64decode(r["content"])


def cat(s, path):
    r = s.sh(f"base64 -w0 {path}")
    assert r["exit_code"] == 0, r
    return base64.b64decode(r["stdout"])


def stat_addresses(data):
    """startcode endcode startstack kstkesp kstkeip (fields 26-30) and wchan (35) of a
    /proc/PID/stat line: what procfs masks unless the reader may ptrace the process."""
    rest = data.decode().rsplit(")", 1)[1].split()
    return [rest[k - 3] for k in (26, 27, 28, 29, 30, 35)]


def unix_addresses(data):
    return sorted({line.split(":")[0] for line in data.decode().splitlines()[1:]})


def proc_reads(s):
    """file_read of procfs files that check permission at read time returns what cat inside
    returns: rtn-init's addresses and wchan masked, kernel pointers hidden."""
    kptr = open("/proc/sys/kernel/kptr_restrict").read().strip()
    note(f"kernel.kptr_restrict={kptr}")
    s.sh("python3 -c 'import socket,time; a=socket.socket(socket.AF_UNIX); a.bind(\"\\0rtn-t\"); "
         "a.listen(); time.sleep(1000)' >/dev/null 2>&1 &")
    time.sleep(0.3)

    def status_creds(data):
        return data.split(b"\nCapInh")[1].split(b"\nSpeculation")[0]

    wrong = []
    s.start_pinging()
    for path, part in (("/proc/1/stat", stat_addresses), ("/proc/1/wchan", None),
                       ("/proc/self/mountinfo", None), ("/proc/self/status", status_creds),
                       ("/proc/net/unix", unix_addresses)):
        got, want = read_raw(s, path), cat(s, path)
        if part:
            got, want = part(got), part(want)
        if got != want:
            wrong.append(f"{path}: file_read {str(got)[:200]}, cat {str(want)[:200]}")
    s.stop_pinging()
    assert not wrong, "file_read differs from cat inside:\n" + "\n".join(wrong)


def main():
    name = sys.argv[2]
    s = Server()
    try:
        globals()[name](s)
        s.close()
    finally:
        s.kill()


main()
