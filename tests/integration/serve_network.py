"""Scenarios for serve_network.sh: `rtn serve --allow-net` (docs/network.md, "Reports"). Each
refused request is reported with the command that made it: network_denied in shell_run,
job and python_exec results (host, port, reason, count; in each tool's outputSchema) and a
line of the result's second text; env_status has the rules, the proxy and the totals; the proxy survives env_reset.
Usage: serve_network.py RTN SCENARIO ALLOWED REFUSED (cwd: the case's temp dir). Exit 0 =
pass."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_serve import Serve  # noqa: E402

RTN, SCENARIO, ALLOWED, REFUSED = sys.argv[1:5]


def env():
    e = os.environ.copy()
    e["RTN_DATA_DIR"] = os.path.join(os.getcwd(), "data")
    return e


def eq(got, want, what):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def denied(r, port=443, count=1):
    want = [{"host": REFUSED, "port": port, "reason": f"{REFUSED} is not on the allowlist",
             "count": count}]
    eq(r.get("network_denied"), want, "network_denied")


def in_schema(s, tool, r):
    """Every key of r is a property of tool's outputSchema, which a client validates the
    result against (the official SDKs do)."""
    tools = {t["name"]: t for t in s.request("tools/list", {})["tools"]}
    props = tools[tool]["outputSchema"]["properties"]
    extra = sorted(set(r) - set(props))
    assert not extra, f"{tool}: {extra} in the result, not in its outputSchema"


def reports():
    s = Serve(RTN, "--allow-net", ALLOWED, env=env())
    r = s.sh(f"curl -sS -o /dev/null -w '%{{http_code}}' https://{ALLOWED}/; "
             f"curl -sS https://{REFUSED}/ https://{REFUSED}/x 2>/dev/null; true")
    eq(r["stdout"], "200", "allowed host")
    denied(r, count=2)
    raw = s.call_raw("shell_run", command=f"curl -sS https://{REFUSED}/ 2>/dev/null; true")
    texts = [c["text"] for c in raw["content"] if c["type"] == "text"]
    assert any(f"rtn: network denied {REFUSED}:443: {REFUSED} is not on the allowlist (1 time)"
               in t for t in texts), texts
    # a command that is refused nothing carries no network_denied
    r = s.sh(f"curl -sS -o /dev/null https://{ALLOWED}/")
    assert "network_denied" not in r, r
    r = s.call("python_exec", code=(
        "import urllib.request\ntry:\n    urllib.request.urlopen('http://%s/')\n"
        "except Exception as e:\n    print(e)\n") % REFUSED)
    eq(r["stdout"].strip(), "HTTP Error 403: Forbidden", "python_exec")
    denied(r, port=80)
    j = s.call("shell_job_start", command=f"curl -sS https://{REFUSED}/")["job_id"]
    r = s.call("shell_job_wait", job_id=j, timeout=60)
    eq(r["state"], "exited", "job state")
    denied(r)
    in_schema(s, "shell_job_wait", r)
    in_schema(s, "shell_job_status", s.call("shell_job_status", job_id=j))
    st = s.call("env_status")["network"]
    eq(st["mode"], "proxy", "env_status network mode")
    eq(st["allow"], [ALLOWED], "env_status allow")
    assert st["proxy"].startswith("http://127.0.0.1:"), st
    eq(st["denied_total"], 5, "denied_total")
    eq(sorted((d["port"], d["count"]) for d in st["denied"]), [(80, 1), (443, 4)], "totals")
    # a fresh sandbox gets a listener of its own, served the same way
    s.call("env_reset")
    r = s.sh(f"curl -sS -o /dev/null -w '%{{http_code}}' https://{ALLOWED}/")
    eq(r["stdout"], "200", "after env_reset")
    s.close()


def loopback():
    s = Serve(RTN, env=env())
    st = s.call("env_status")["network"]
    eq(st["mode"], "loopback", "mode without --allow-net")
    eq(st["allow"], [], "no rules")
    eq(st["denied_total"], 0, "no refusals")
    r = s.sh("env | grep -ci _proxy; true")
    eq(r["stdout"].strip(), "0", "no proxy variables")
    s.close()


{"reports": reports, "loopback": loopback}[SCENARIO]()
