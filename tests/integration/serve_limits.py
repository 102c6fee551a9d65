"""Scenarios for serve_limits.sh: `rtn serve`'s resource options (--upper-size, --pids-max,
--memory-max, --setenv, --isolation) mean what they mean for `rtn exec`, and env_status reports
them. Usage: serve_limits.py RTN SCENARIO (cwd: the case's temp dir). Exit 0 = pass."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_serve import Serve  # noqa: E402

RTN = sys.argv[1]
TMP = os.getcwd()


def env():
    e = os.environ.copy()
    e["RTN_DATA_DIR"] = os.path.join(TMP, "data")
    return e


def eq(got, want, what):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def out(s, cmd):
    r = s.sh(cmd)
    eq(r["exit_code"], 0, f"{cmd}: {r.get('stderr')}")
    return r["stdout"].strip()


def options():
    s = Serve(RTN, "--upper-size", "24M", "--pids-max", "777", "--memory-max", "300M",
              "--setenv", "FOO=bar baz", "--setenv", "LANG=C.UTF-8", env=env())
    eq(out(s, "cat /proc/sys/kernel/pid_max"), "777", "pid_max")
    eq(out(s, 'printf %s "$FOO"'), "bar baz", "--setenv")
    eq(out(s, "df -k /tmp | tail -1 | awk '{print $2}'"), str(24 * 1024), "/tmp size")
    # a command's own env argument still wins over --setenv
    r = s.call("shell_run", command='printf %s "$FOO"', env={"FOO": "mine"})
    eq(r["stdout"], "mine", "env argument over --setenv")
    st = s.call("env_status")
    lim = st["limits"]
    eq((lim["upper_size"], lim["tmp_size"], lim["memory_max"], lim["pids_max"]),
       (24 << 20, 24 << 20, 300 << 20, 777), "env_status limits")
    eq(lim["setenv"], ["FOO", "LANG"], "setenv names")
    if lim["memory_enforced_by"] == "rlimit_as_per_process":
        eq(out(s, "ulimit -v"), str(300 * 1024), "RLIMIT_AS fallback")
    else:
        eq(lim["memory_enforced_by"], "cgroup_memory_max", "memory enforcement")
    eq((st["isolation"]["mode"], st["isolation"]["degraded"]), ("full", False), "isolation")


def defaults():
    s = Serve(RTN, env=env())
    lim = s.call("env_status")["limits"]
    eq((lim["upper_size"], lim["memory_max"], lim["pids_max"], lim["setenv"]),
       (2 << 30, None, 4096, []), "defaults")
    eq(out(s, "cat /proc/sys/kernel/pid_max"), "4096", "pid_max")


def isolation():
    s = Serve(RTN, "--isolation", "namespaces", env=env())
    iso = s.call("env_status")["isolation"]
    eq((iso["mode"], iso["degraded"]), ("namespaces", True), "namespaces mode")
    # no Landlock: a write outside the writable dirs is left to file permissions
    eq(out(s, "echo ok"), "ok", "runs")
    err = s.p.stderr
    s.p.stdin.close()
    s.p.wait(timeout=30)
    msg = err.read().decode()
    assert "WARNING" in msg and "Landlock" in msg, f"no warning on stderr: {msg!r}"


def landlock():
    """--isolation landlock: commands run on the host, in a private directory, with no
    layers and no upper (root's rtn refuses it: without a user namespace the command would
    own the host's system files)."""
    s = Serve(RTN, "--isolation", "landlock", env=env())
    if os.geteuid() == 0:
        r = s.call_raw("shell_run", command="true")
        assert r.get("isError") and "will not run as root" in r["content"][0]["text"], r
        return
    eq(out(s, "id -u"), str(os.getuid()), "runs as the caller")
    st = s.call("env_status")
    iso = st["isolation"]
    eq((iso["mode"], iso["degraded"], iso["namespaces"], iso["network"], iso["id_mapping"]),
       ("landlock", True, "none", "host", "none"), "landlock mode")
    eq((st["layers"], st["upper_bytes"], st["dirty_files"]), ([], 0, []), "no overlay")
    eq(s.call("env_commit", message="x")["unchanged"], True, "nothing to commit")


def refused():
    for args, part in [(["--upper-size", "12x"], "--upper-size wants a size"),
                       (["--upper-size", "512K"], "at least 1 MiB"),
                       (["--pids-max", "5"], "pids max must be"),
                       (["--memory-max", "-1"], "--memory-max wants a size"),
                       (["--isolation", "none"], "--isolation must be"),
                       (["--setenv", "1BAD=x"], "invalid environment name"),
                       (["--setenv", "NOEQUALS"], "KEY=VALUE")]:
        p = subprocess.run([RTN, "serve", *args], stdin=subprocess.DEVNULL, capture_output=True,
                           env=env(), timeout=60)
        assert p.returncode != 0, f"{args} accepted"
        assert part in p.stderr.decode(), f"{args}: {p.stderr.decode()!r}"
    h = subprocess.run([RTN, "serve", "--help"], capture_output=True, timeout=30).stdout.decode()
    for o in ("--upper-size", "--pids-max", "--memory-max", "--setenv", "--isolation"):
        assert o in h, f"--help lacks {o}"


globals()[sys.argv[2]]()
