#!/usr/bin/env python3
"""docs/tools.md against the server it documents. `docs_tools.py RTN DOC` starts `RTN serve`
over stdio (an overlay workspace, a read-only --bind at /mnt/data, --http-tools), and checks:

- every tool tools/list offers has a section `## \\`NAME\\``, and every section names one;
- a section's "Result:" line lists exactly the properties of the tool's outputSchema, with
  `?` on exactly those it does not require;
- a section's example result (the `← structuredContent:` line) has every required key and
  only keys of the schema;
- the example, run for real (its own request, or the stand-in below where the example's
  values cannot exist here), gives a result whose keys are the example's: no key of the
  example is missing unless the Result line marks it `?`, no key appears that the example
  lacks unless it is marked `?`, and objects inside (and the items of arrays of objects,
  by position) have exactly the example's keys.

Prints each mismatch; exits 1 when there is one. Tools whose example needs what a test
cannot have (a rootfs with a package manager, a public web server) are listed in SKIP."""
import json
import os
import re
import subprocess
import sys
import tempfile

from testfs import rmtree

SKIP = {
    "pkg_install": "needs a rootfs and Debian's mirror (tests/integration/provision.sh)",
    "pkg_query": "answers on a rootfs base only (tests/integration/provision.sh)",
    "http_get": "needs a public web server",
    "http_post": "needs a public web server",
}


def parse(doc):
    """{tool: {"result": [(key, optional)], "examples": [(request args, result)]}}"""
    tools = {}
    for m in re.finditer(r"^## `(\w+)`(.*?)(?=^## |\Z)", doc, re.S | re.M):
        name, body = m.group(1), m.group(2)
        t = {"result": None, "examples": []}
        r = re.search(r"^Result: (.*?) \(`\?`: may be absent\)\.", body, re.M)
        if r:
            t["result"] = [(k, opt == "?") for k, opt in re.findall(r"`(\w+)`(\??)", r.group(1))]
        for req, res in re.findall(r"^→ (\{.*\})\n← structuredContent: (\{.*\})$", body, re.M):
            t["examples"].append((json.loads(req)["params"]["arguments"], json.loads(res)))
        tools[name] = t
    return tools


class Server:
    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "docs-tools", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("the server closed stdout")
            msg = json.loads(line)
            if msg.get("id") == self.n:
                if "error" in msg:
                    sys.exit("%s: %s" % (method, msg["error"]))
                return msg["result"]

    def call(self, tool, args):
        r = self.request("tools/call", {"name": tool, "arguments": args})
        if r.get("isError"):
            raise RuntimeError("%s %s: %s" % (tool, json.dumps(args), r["content"][0]["text"]))
        return r["structuredContent"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def compare(where, doc, real, optional, bad):
    for k in doc:
        if k not in real and k not in optional:
            bad.append("%s: the example has `%s`, the real result does not" % (where, k))
    for k in real:
        if k not in doc and k not in optional:
            bad.append("%s: the real result has `%s`, the example does not" % (where, k))
    for k in doc:
        if k not in real:
            continue
        d, r = doc[k], real[k]
        if isinstance(d, dict) and isinstance(r, dict):
            compare("%s.%s" % (where, k), d, r, set(), bad)
        elif isinstance(d, list) and isinstance(r, list):
            for i, (di, ri) in enumerate(zip(d, r)):
                if isinstance(di, dict) and isinstance(ri, dict):
                    compare("%s.%s[%d]" % (where, k, i), di, ri, set(), bad)


def setup(tmp):
    ws, data = os.path.join(tmp, "project"), os.path.join(tmp, "data")
    os.makedirs(os.path.join(data, "project"))
    os.makedirs(ws)
    with open(os.path.join(ws, "README.md"), "w") as f:
        f.write("# Project\n\n" + "".join("line %d\n" % i for i in range(38)))
    with open(os.path.join(ws, "main.c"), "w") as f:
        f.write("int main(void) {\n        /* TODO: free */\n        return 0;\n}\n")
    return ws, data


def main():
    rtn, doc_path = sys.argv[1], sys.argv[2]
    tools = parse(open(doc_path, encoding="utf-8").read())
    bad = []
    tmp = tempfile.mkdtemp()
    try:
        ws, data = setup(tmp)
        env = dict(os.environ, RTN_DATA_DIR=os.path.join(tmp, "store"))
        srv = Server([rtn, "serve", "--workspace", ws, "--workspace-mode", "overlay",
                      "--bind", data + ":/mnt/data:ro", "--http-tools", "--undo-depth", "50"], env)
        listed = {t["name"]: t for t in srv.request("tools/list", {})["tools"]}
        for name in listed:
            if name not in tools:
                bad.append("%s: offered by the server, no section in docs/tools.md" % name)
        for name in tools:
            if name not in listed:
                bad.append("%s: a section in docs/tools.md, not offered by the server" % name)
        for name, t in tools.items():
            if name not in listed:
                continue
            schema = listed[name].get("outputSchema", {})
            props, required = set(schema.get("properties", {})), set(schema.get("required", []))
            if t["result"] is None:
                bad.append("%s: no \"Result:\" line" % name)
            else:
                keys = [k for k, _ in t["result"]]
                if set(keys) != props:
                    bad.append("%s: Result lists %s, the outputSchema has %s" %
                               (name, sorted(keys), sorted(props)))
                for k, opt in t["result"]:
                    if k in props and opt == (k in required):
                        bad.append("%s: Result marks `%s` %s, the outputSchema %s it" %
                                   (name, k, "optional" if opt else "required",
                                    "requires" if opt else "does not require"))
            for _, ex in t["examples"]:
                for k in ex:
                    if k not in props:
                        bad.append("%s: the example has `%s`, not in the outputSchema" % (name, k))
                for k in required - set(ex):
                    bad.append("%s: the example lacks the required `%s`" % (name, k))
        state = {}
        # Stand-ins for values an example names that cannot exist here, and calls that
        # make the state an example needs (a change to commit, a second commit).
        stand_in = {
            "env_rollback": lambda a: dict(a, commit_id=state["first"]),
            "bind_host_dir": lambda a: dict(a, host_path=os.path.join(data, "project"),
                                            mount_point="/mnt/project", mode="ro"),
        }
        before = {
            "env_commit": [("shell_run", {"command": "echo 1 > \"$HOME/one\""})],
            "env_rollback": [("shell_run", {"command": "echo 2 > \"$HOME/two\""}),
                             ("env_commit", {"message": "two"})],
            "env_reset": [("shell_run", {"command": "echo 3 > \"$HOME/three\""})],
            "env_undo": [("shell_run", {"command": "echo 4 > \"$HOME/four\""})],
        }
        order = ["shell_run", "shell_list", "file_write", "file_read", "file_edit", "file_list",
                 "file_search", "python_exec", "shell_job_start", "shell_job_status",
                 "shell_job_output", "shell_job_wait", "shell_job_kill", "shell_job_list",
                 "env_diff", "env_status", "env_history", "env_undo", "env_redo", "workspace_apply", "env_commit", "env_snapshot_list",
                 "env_rollback", "env_gc", "env_reset", "env_discard", "bind_host_dir",
                 "sandbox_new", "sandbox_fork", "sandbox_list", "sandbox_close"]
        order += sorted(n for n in tools if n not in order)
        for name in order:
            if name not in tools or name not in listed:
                continue
            if name in SKIP:
                print("# %s: not run: %s" % (name, SKIP[name]), file=sys.stderr)
                continue
            t = tools[name]
            optional = {k for k, opt in (t["result"] or []) if opt}
            for i, (args, ex) in enumerate(t["examples"]):
                try:
                    for tool, a in before.get(name, []):
                        srv.call(tool, a)
                    real = srv.call(name, stand_in.get(name, lambda a: a)(args))
                except RuntimeError as e:
                    bad.append("%s: the example fails here: %s" % (name, e))
                    continue
                if name == "env_commit" and "first" not in state:
                    state["first"] = real["commit_id"]
                compare("%s example %d" % (name, i + 1), ex, real, optional, bad)
            if not t["examples"]:
                bad.append("%s: no example" % name)
        srv.close()
    finally:
        rmtree(tmp)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


main()
