"""rtn serve --secret over stdio for tests/security/secrets.sh: shell_run in sb-1 reaches
secret.test with the secret added, and a second sandbox (sandbox_new) has a CA of its own.

    secret_serve.py RTN [rtn serve options...]
Prints the commands' stdout, then "ca-differs: True|False".
"""
import json
import subprocess
import sys

p = subprocess.Popen([sys.argv[1], "serve", *sys.argv[2:]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
n = 0


def call(method, params, notify=False):
    global n
    n += 1
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        msg["id"] = n
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()
    while not notify:
        r = json.loads(p.stdout.readline())
        if r.get("id") == n:
            return r


def tool(name, **args):
    r = call("tools/call", {"name": name, "arguments": args})
    return r["result"]["structuredContent"]


call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}})
call("notifications/initialized", {}, notify=True)
out = tool("shell_run", command='echo "inside=$TOK"; curl -sS https://secret.test/serve')
print(out["stdout"])
sb = tool("sandbox_new")["sandbox"]
ca = "tail -n 4 /run/rtn/ca-certificates.crt"
print("ca-differs:", tool("shell_run", command=ca)["stdout"] !=
      tool("shell_run", command=ca, sandbox=sb)["stdout"])
p.stdin.close()
p.wait()
