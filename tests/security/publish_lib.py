"""Host and sandbox sides of the published-port suites (tests/security/publish.sh):
  publish_lib.py freeport [N]             print N (1) TCP ports free on the host's 127.0.0.1 and
                                          ::1, distinct, on one line (one start for a case's ports)
  publish_lib.py serve-once HOST PORT     (inside) answer one connection: "sandbox:" + its line
  publish_lib.py ask PORT [ADDR]          (host) send "ping\\n" to ADDR:PORT (127.0.0.1),
                                          print the answer; retried for 15 s while the answer
                                          is empty (the sandbox's server may not listen yet)
  publish_lib.py serve-fill HOST PORT     (inside) answer one connection with as many bytes as
                                          it takes in, print their count, exit
  publish_lib.py ask-late PORT ADDR OUT PID
                                          (host) reach serve-fill, read its answer only once
                                          rtn (PID) has closed the listener (ask_late)
  publish_lib.py serve RTN HP SP          drive `rtn serve --publish` (see serve_case)
  publish_lib.py serve-drain RTN HP SP    rtn serve's answer outlives it (serve_drain_case)
"""
import errno
import json
import os
import random
import select
import socket
import subprocess
import sys
import time


def free_on_loopback(port):
    """port is free on 127.0.0.1 and on ::1 (where the host has it): the suite publishes
    either, with IPv6-only listeners, so one free on 127.0.0.1 alone may be taken on ::1."""
    for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            s = socket.socket(fam)
        except OSError:
            continue
        try:
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((addr, port))
        except OSError as e:
            if fam == socket.AF_INET6 and e.errno == errno.EADDRNOTAVAIL:
                continue  # no IPv6 loopback: the v6 cases skip
            return False
        finally:
            s.close()
    return True


def freeport(n="1"):
    """N ports, each free on the host's loopback below the kernel's ephemeral range: a port bind(0)
    picks is in that range, where any outgoing connection of a suite running beside this one
    may take it as its local port before rtn binds it (rtn exec then fails "in use")."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 0
    rng, ports, held = random.SystemRandom(), [], []
    for _ in range(200 if low > 11000 else 0):
        port = rng.randrange(10000, low)
        if port not in ports and free_on_loopback(port):
            ports.append(port)
            if len(ports) == int(n):
                break
    while len(ports) < int(n):
        held.append(socket.socket())  # held open until all are picked: no port twice
        held[-1].bind(("127.0.0.1", 0))
        ports.append(held[-1].getsockname()[1])
    print(*ports)


def serve_once(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port)))
    s.listen(4)
    c, _ = s.accept()
    line = c.makefile("rb").readline()
    c.sendall(b"sandbox:" + line)
    c.close()


def serve_fill(host, port):
    """Sends until the connection takes no more (nothing moved for 0.3 s: the buffers on the
    way to a client that does not read are full) or 64 MiB went, prints the count and exits
    with the bytes still on their way."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port)))
    s.listen(4)
    c, _ = s.accept()
    c.makefile("rb").readline()
    c.setblocking(False)
    chunk = b"x" * 65536
    sent = 0
    while sent < 64 << 20:
        try:
            sent += c.send(chunk)
        except BlockingIOError:
            if not select.select([], [c], [], 0.3)[1]:
                break
    c.close()
    print(sent, flush=True)


def reach(port, addr, end):
    """A connection to the published port that serve-fill answers (seen by a peek: nothing
    is read), or None by end."""
    while time.time() < end:
        c = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
        try:
            c.connect((addr, int(port)))
            c.sendall(b"ping\n")
            if select.select([c], [], [], 5)[0] and c.recv(1, socket.MSG_PEEK):
                return c
        except OSError:
            pass
        c.close()
        time.sleep(0.1)
    return None


def read_all(c):
    """Reads c to its end: "got N"."""
    c.settimeout(20)
    got = 0
    try:
        while True:
            data = c.recv(1 << 16)
            if not data:
                break
            got += len(data)
    except OSError as e:
        return "read: %s after %d bytes" % (e, got)
    return "got %d" % got


def ask_late(port, addr, out, pid):
    """The client that reads late: it reaches serve-fill, waits for its count in rtn exec's
    stdout OUT (the command ends), for the listener to refuse (rtn saw the end) and up to a
    second for rtn exec (PID) to exit, then reads everything. Prints "got N of M": what the
    sandbox sent must all arrive."""
    end = time.time() + 30
    c = reach(port, addr, end)
    if c is None:
        print("no answer from the sandbox")
        return
    want = ""
    while time.time() < end and not want:
        with open(out) as f:
            want = f.read().strip()
        time.sleep(0.05)
    while time.time() < end:
        try:
            socket.create_connection((addr, int(port)), timeout=5).close()
        except ConnectionRefusedError:
            break
        except OSError:
            pass
        time.sleep(0.05)
    gone = time.time() + 1
    while time.time() < gone:
        try:
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.05)
    print("%s of %s" % (read_all(c), want))


def ask_once(port, addr="127.0.0.1"):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    try:
        c = socket.create_connection((addr, int(port)), timeout=5)
    except OSError as e:
        return "connect: " + e.strerror
    try:
        c.sendall(b"ping\n")
        data = b""
        while True:
            chunk = c.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace").strip()
    except OSError:
        return ""
    finally:
        c.close()


def ask(port, addr="127.0.0.1", wait=15):
    end = time.time() + wait
    got = ""
    while time.time() < end:
        got = ask_once(port, addr)
        if got.startswith("sandbox:"):
            break
        time.sleep(0.2)
    print(got)


class Serve:
    def __init__(self, rtn, args):
        self.p = subprocess.Popen([rtn, "serve"] + args, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""
        self.n = 0
        r = self.req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "publish", "version": "1"}})
        assert "result" in r, r
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def req(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        end = time.time() + 60
        while True:
            while b"\n" not in self.buf:
                left = end - time.time()
                assert left > 0 and select.select([self.p.stdout], [], [], left)[0], "no answer"
                chunk = os.read(self.p.stdout.fileno(), 65536)
                assert chunk, "server closed stdout: " + self.p.stderr.read().decode()
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            m = json.loads(line)
            if m.get("id") == self.n:
                return m

    def tool(self, name, args):
        r = self.req("tools/call", {"name": name, "arguments": args})
        assert not r["result"].get("isError"), r
        return r["result"]["structuredContent"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def serve_case(rtn, hp, sp):
    """env_status lists the port; a job's server is reached from the host; after env_reset
    (a new sandbox) the next one is reached too."""
    s = Serve(rtn, ["--publish", "127.0.0.1:%s:%s" % (hp, sp)])
    try:
        st = s.tool("env_status", {})
        assert st["published"] == [{"address": "127.0.0.1", "host_port": int(hp),
                                    "sandbox_port": int(sp)}], st.get("published")
        me = os.path.abspath(__file__)
        for round_ in range(2):
            code = open(me).read()
            s.tool("file_write", {"path": "/tmp/publish_lib.py", "content": code})
            s.tool("shell_job_start", {"command": "python3 /tmp/publish_lib.py serve-once "
                                                  "127.0.0.1 %s" % sp})
            end = time.time() + 15
            got = ""
            while time.time() < end and not got.startswith("sandbox:"):
                got = ask_once(hp)
                time.sleep(0.2)
            assert got == "sandbox:ping", "round %d: %r" % (round_, got)
            s.tool("env_reset", {})
    finally:
        s.close()
    print("ok")


def serve_drain_case(rtn, hp, sp):
    """rtn serve ends (its client closed stdin) while an answer of its sandbox is on its way to
    a client that has not read it yet: the answer arrives whole."""
    s = Serve(rtn, ["--publish", "127.0.0.1:%s:%s" % (hp, sp)])
    s.tool("file_write", {"path": "/tmp/publish_lib.py", "content": open(__file__).read()})
    job = s.tool("shell_job_start", {"command": "python3 /tmp/publish_lib.py serve-fill "
                                                "127.0.0.1 %s" % sp})["job_id"]
    c = reach(hp, "127.0.0.1", time.time() + 30)
    assert c, "no answer from the sandbox"
    s.tool("shell_job_wait", {"job_id": job, "timeout": 30})
    want = s.tool("shell_job_output", {"job_id": job, "offset": 0})["output"].strip()
    s.p.stdin.close()
    try:
        s.p.wait(timeout=1)
    except subprocess.TimeoutExpired:
        pass
    got = read_all(c)
    s.p.wait(timeout=60)
    assert got == "got " + want, "the sandbox sent %s bytes, the client: %s" % (want, got)
    print("ok")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "freeport":
        freeport(*sys.argv[2:])
    elif cmd == "serve-once":
        serve_once(sys.argv[2], sys.argv[3])
    elif cmd == "serve-fill":
        serve_fill(sys.argv[2], sys.argv[3])
    elif cmd == "ask":
        ask(*sys.argv[2:])
    elif cmd == "ask-late":
        ask_late(*sys.argv[2:])
    elif cmd == "serve":
        serve_case(*sys.argv[2:])
    elif cmd == "serve-drain":
        serve_drain_case(*sys.argv[2:])
