#!/usr/bin/env python3
"""Drives `rtn serve` for the shell suites: `mcp_calls.py CALLS -- RTN serve ...` starts the
server given after `--`, sends initialize, then one tools/call per line of the file CALLS ("TOOL {json arguments}"), waiting for each
answer, and prints one JSON line per call: {"isError": bool, "result": structuredContent or
null, "text": the first text content, "progress": [messages of progress notifications]}.
Exit status 0 unless the server broke the protocol or died.

`mcp_calls.py CALLS --check CODE -- ...` then runs the Python CODE, once the server has exited
0, with `a` the list of those answers and `os` at hand (its assertions read anything else from
the environment); an exception there is exit status 3, its message on stderr. A case checks
its answers in the interpreter that got them, not in a second one started for it."""
import json
import os
import subprocess
import sys


def main():
    dash = sys.argv.index("--")
    cmd, check = sys.argv[dash + 1:], None
    if sys.argv[2:dash][:1] == ["--check"]:
        check = sys.argv[3]
    answers = []
    srv = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    next_id = [0]

    def request(method, params, token=None):
        next_id[0] += 1
        if token is not None:
            params = dict(params, _meta={"progressToken": token})
        srv.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method,
                                    "params": params}) + "\n")
        srv.stdin.flush()
        progress = []
        while True:
            line = srv.stdout.readline()
            if not line:
                sys.exit("server closed stdout")
            msg = json.loads(line)
            if msg.get("method") == "notifications/progress":
                progress.append(msg["params"].get("message", ""))
            elif msg.get("id") == next_id[0]:
                return msg, progress

    request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "rtn-tests", "version": "1"}})
    srv.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    for line in open(sys.argv[1]):
        line = line.strip()
        if not line:
            continue
        tool, _, args = line.partition(" ")
        msg, progress = request("tools/call", {"name": tool,
                                               "arguments": json.loads(args or "{}")}, token=1)
        res = msg.get("result") or {}
        text = ""
        for c in res.get("content", []):
            if c.get("type") == "text":
                text = c["text"]
                break
        out = {"isError": bool(res.get("isError")) or "error" in msg,
               "result": res.get("structuredContent"), "text": text or json.dumps(msg.get("error")),
               "progress": progress}
        print(json.dumps(out), flush=True)
        answers.append(out)
    srv.stdin.close()
    if srv.wait(timeout=60) != 0:
        sys.exit(1)
    if check is not None:
        try:
            exec(check, {"a": answers, "os": os})
        except Exception as e:
            said = isinstance(e, AssertionError) and e.args
            print("the check failed: %s" % (e if said else repr(e)), file=sys.stderr)
            sys.exit(3)


main()
