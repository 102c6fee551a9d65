"""A raw JSON-RPC line client of `rtn serve` for the wire-level suites (mcp_wire.py,
serve_cgroup.py): it writes exactly the bytes it is given and reads one message per line, so
malformed, interleaved and cancelled traffic can be tested; failures raise AssertionError."""
import json
import os
import select
import subprocess
import time


class Server:
    def __init__(self, rtn, version="2025-06-18", name="wire"):
        self.p = subprocess.Popen([rtn, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.buf = b""
        r = self.req(1, "initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": name, "version": "1"}})
        assert r["result"]["protocolVersion"] == version, r
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        self.raw((json.dumps(msg) + "\n").encode())

    def read(self, timeout=30):
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                raise AssertionError("no message within %ss" % timeout)
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError("server closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def wait_id(self, rid, timeout=30, seen=None):
        while True:
            m = self.read(timeout)
            if seen is not None:
                seen.append(m)
            if m.get("id") == rid and "method" not in m:
                return m

    def req(self, rid, method, params=None):
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait_id(rid)

    def call(self, rid, name, **args):
        return self.req(rid, "tools/call", {"name": name, "arguments": args})["result"]

    def alive(self):
        assert self.req(999, "ping")["result"] == {}, "ping failed"
