#!/usr/bin/env python3
"""A tiny MCP stdio client for `make demo`: starts `rtn serve`, plays a short agent session
(one JSON-RPC request per line, waiting for each answer) and prints what the agent would see.
Usage: tools/mcp-demo.py RTN [serve options...]"""
import json
import subprocess
import sys

rtn = sys.argv[1]
proc = subprocess.Popen([rtn, "serve", *sys.argv[2:]], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True)
next_id = 0


def request(method, params=None):
    global next_id
    next_id += 1
    msg = {"jsonrpc": "2.0", "id": next_id, "method": method}
    if params is not None:
        msg["params"] = params
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit("rtn serve ended unexpectedly")
        reply = json.loads(line)
        if reply.get("id") == next_id:
            return reply


def tool(name, **args):
    print(f"\n> {name} {json.dumps(args) if args else ''}")
    result = request("tools/call", {"name": name, "arguments": args})["result"]
    out = result.get("structuredContent") or result["content"][0]["text"]
    text = json.dumps(out, indent=2) if isinstance(out, dict) else out
    print("\n".join("  " + l for l in text.splitlines()[:24]))
    return out


init = request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "rtn-demo", "version": "1"}})["result"]
print(f"connected to {init['serverInfo']['name']} {init['serverInfo']['version']}, "
      f"protocol {init['protocolVersion']}")
proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
tools = request("tools/list")["result"]["tools"]
print(f"{len(tools)} tools: {', '.join(t['name'] for t in tools)}")

tool("shell_run", command="id; hostname; cat /proc/net/dev | tail -n +3 | cut -d: -f1")
tool("shell_run", command="echo 'print(6 * 7)' > /workspace/answer.py && python3 /workspace/answer.py")
job = tool("shell_job_start", command="cd /workspace && exec python3 -m http.server 8000 --bind 127.0.0.1")
tool("shell_run", command="sleep 0.5; python3 -c \"import urllib.request as u; "
     "print(u.urlopen('http://127.0.0.1:8000/').status)\"")
tool("shell_job_kill", job_id=job["job_id"])
tool("env_diff")
tool("env_commit", message="answer.py")
tool("shell_run", command="rm /workspace/answer.py; touch /workspace/scratch")
tool("env_reset")
tool("shell_run", command="ls /workspace")
tool("env_snapshot_list")
proc.stdin.close()
proc.wait()
