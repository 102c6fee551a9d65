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
    if lim["memory_enforced_by"] == "rlimit_data_per_process":
        eq(out(s, "ulimit -d"), str(300 * 1024), "RLIMIT_DATA fallback")
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
    layers and no upper; as the caller, or for root's rtn as a uid that owns nothing (without
    a user namespace root's commands would own the host's system files)."""
    s = Serve(RTN, "--isolation", "landlock", env=env())
    agent = str(0x70010000) if os.geteuid() == 0 else str(os.getuid())
    eq(out(s, "id -u"), agent, "runs as the caller, or root's as the unowned uid")
    st = s.call("env_status")
    iso = st["isolation"]
    eq((iso["mode"], iso["degraded"], iso["namespaces"], iso["network"], iso["id_mapping"]),
       ("landlock", True, "none", "host", "none"), "landlock mode")
    eq((st["layers"], st["upper_bytes"], st["dirty_files"]), ([], 0, []), "no overlay")
    # No overlay, so nothing can be committed: env_commit says so rather than "unchanged"
    # (docs/tools.md, env_commit), and the sandbox runs on.
    err = s.error("env_commit", message="x")
    assert "nothing was committed" in err, f"env_commit in the Landlock mode: {err!r}"
    # No mounts: env_status names the host paths the commands have instead of /workspace and
    # /tmp, and the tools' /workspace (and relative paths, and a cwd below it) mean the
    # workspace's host path.
    where = out(s, 'echo "$PWD $TMPDIR"')
    iso = s.call("env_status")["isolation"]
    eq(where, f'{iso["workspace_dir"]} {iso["tmp_dir"]}',
       "env_status names the workspace and temp dir")
    assert "unix sockets" in iso["warning"] or iso["landlock_abi"] >= 9, iso["warning"]
    out(s, "mkdir sub")
    s.call("file_write", path="/workspace/sub/a.txt", content="hi")
    eq(s.sh("cat a.txt", cwd="/workspace/sub")["stdout"], "hi", "a cwd below /workspace")
    eq(s.call("file_read", path="sub/a.txt")["content"].split("\t")[-1], "hi", "relative path")


def env_by_name():
    """--setenv NAME takes rtn's own value; --env-file FILE, docker's format, sets each line
    (a later setting wins)."""
    with open("vars.env", "w") as f:
        f.write("# a comment\n\n  SPACED=a b \nQUOTED=\"q\"\nFROM_HOST\nEQ=x=y\n")
    e = env()
    e["FROM_HOST"] = "host value"
    s = Serve(RTN, "--setenv", "FROM_HOST", "--env-file", "vars.env", "--setenv", "EQ=last",
              env=e)
    eq(out(s, 'printf "%s|" "$FROM_HOST" "$SPACED" "$QUOTED" "$EQ"'),
       'host value|a b |"q"|last|', "values")
    eq(s.call("env_status")["limits"]["setenv"], ["FROM_HOST", "SPACED", "QUOTED", "EQ"],
       "setenv names")


def refused():
    with open("bad.env", "w") as f:
        f.write("OK=1\nA B=2\n")
    with open("unset.env", "w") as f:
        f.write("RTN_TEST_UNSET\n")
    for args, part in [(["--upper-size", "12x"], "--upper-size wants a size"),
                       (["--upper-size", "512K"], "at least 1 MiB"),
                       (["--pids-max", "5"], "pids max must be"),
                       (["--memory-max", "-1"], "--memory-max wants a size"),
                       (["--isolation", "none"], "--isolation must be"),
                       (["--setenv", "1BAD=x"], "invalid environment name"),
                       (["--setenv", "=x"], "KEY=VALUE"),
                       (["--setenv", "RTN_TEST_UNSET"], "RTN_TEST_UNSET is not set in rtn's"),
                       (["--env-file", "nosuch.env"], "--env-file nosuch.env: No such file"),
                       (["--env-file", "bad.env"], "bad.env, line 2: name 'A B' has a blank"),
                       (["--env-file", "unset.env"], "line 1: RTN_TEST_UNSET is not set")]:
        p = subprocess.run([RTN, "serve", *args], stdin=subprocess.DEVNULL, capture_output=True,
                           env=env(), timeout=60)
        assert p.returncode != 0, f"{args} accepted"
        assert part in p.stderr.decode(), f"{args}: {p.stderr.decode()!r}"
    h = subprocess.run([RTN, "serve", "--help"], capture_output=True, timeout=30).stdout.decode()
    for o in ("--upper-size", "--pids-max", "--memory-max", "--setenv", "--env-file",
              "--isolation"):
        assert o in h, f"--help lacks {o}"


globals()[sys.argv[2]]()
