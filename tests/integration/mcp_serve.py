"""A minimal MCP stdio client for the integration suites: starts `rtn serve`, initializes,
and calls tools. Used by serve_files.sh (scenarios in serve_files.py)."""
import atexit
import json
import os
import shutil
import subprocess
import tempfile


def case_dir(prefix):
    """A directory of the scenario's own under $TMPDIR, removed at exit: where its data dir,
    workspace and host files go, never the directory it was started from (run by hand from a
    checkout, a scenario must not leave data/ or ws/ there). Files a sandbox's subordinate ids
    own are removed from a user namespace that maps them, as tests/lib.sh's t_rmtree does."""
    d = tempfile.mkdtemp(prefix=prefix + ".")

    def remove():
        shutil.rmtree(d, ignore_errors=True)
        if os.path.exists(d):
            subprocess.run(["chmod", "-R", "u+rwX", d], stderr=subprocess.DEVNULL)
            shutil.rmtree(d, ignore_errors=True)
        if os.path.exists(d):
            subprocess.run(["unshare", "--map-root-user", "--map-auto", "rm", "-rf", d],
                           stderr=subprocess.DEVNULL)

    atexit.register(remove)
    return d


class ToolError(Exception):
    pass


class Serve:
    def __init__(self, rtn, *args, env=None):
        self.p = subprocess.Popen([rtn, "serve", *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env or os.environ.copy())
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "rtn-tests", "version": "1"}})
        self.notify("notifications/initialized")

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def notify(self, method, params=None):
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("rtn serve exited: " + self.p.stderr.read().decode()[-2000:])
            m = json.loads(line)
            if m.get("id") == rid:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]

    def call_raw(self, name, **args):
        return self.request("tools/call", {"name": name, "arguments": args})

    def call(self, name, **args):
        r = self.call_raw(name, **args)
        if r.get("isError"):
            raise ToolError(r["content"][0]["text"])
        return r["structuredContent"]

    def error(self, name, **args):
        """Calls a tool that must fail; returns its message."""
        r = self.call_raw(name, **args)
        if not r.get("isError"):
            raise AssertionError(f"{name} {args} succeeded: {r.get('structuredContent')}")
        return r["content"][0]["text"]

    def sh(self, command, **kw):
        return self.call("shell_run", command=command, **kw)

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=30)
        except Exception:
            self.p.kill()
            self.p.wait()
