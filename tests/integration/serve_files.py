"""Scenarios for serve_files.sh: the file tools and bind_host_dir of `rtn serve`, driven over
stdio. Usage: serve_files.py RTN SCENARIO (cwd: the case's temp dir). Exit 0 = pass; an
AssertionError's message says what broke."""
import base64
import json
import os
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_serve import Serve, ToolError  # noqa: E402

RTN = sys.argv[1]
TMP = os.getcwd()
CANARY = "HOSTSECRET-" + str(os.getpid())


def serve(*args, home=None):
    env = os.environ.copy()
    env["RTN_DATA_DIR"] = os.path.join(TMP, "data")
    if home:
        env["HOME"] = home
    return Serve(RTN, *args, env=env)


def eq(got, want, what):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def has(text, part, what):
    assert part in text, f"{what}: {part!r} not in {text!r}"


# One sandbox process that runs the steps (mv, ln -s, rm, mkdir, rmdir) in a directory over
# and over, a step that fails (the name is not there yet) skipped, each step's state held for
# 1 ms: a shell loop of mv/ln/rm pays a process start per step (~5 ms of CPU on a slow VM, a
# core spinning for the whole race, a few rounds a second under load); this one goes through
# every state as evenly, ten to a hundred times as often, for a fraction of the CPU.
SWAPPER = """
import json, os, sys, time
os.chdir(sys.argv[1])
do = {"mv": os.rename, "ln": os.symlink, "rm": os.unlink, "mkdir": os.mkdir, "rmdir": os.rmdir}
steps = json.loads(sys.argv[2])
while True:
    for op, *a in steps:
        try:
            do[op](*a)
        except OSError:
            pass
        time.sleep(0.001)
"""


def swapper(d, steps):
    return " ".join(shlex.quote(a) for a in ("exec", "python3", "-c", SWAPPER, d, json.dumps(steps)))


def read_write(s):
    w = s.call("file_write", path="a.txt", content="one\ntwo\nthree\n")
    eq((w["bytes_written"], w["created"], w["path"]), (14, True, "/workspace/a.txt"), "write")
    r = s.call("file_read", path="/workspace/a.txt", offset=2, limit=1)
    eq(r["content"], "     2\ttwo\n", "offset/limit")
    eq((r["total_lines"], r["truncated"], r["start_line"]), (3, True, 2), "counts")
    eq(s.sh("cat a.txt")["stdout"], "one\ntwo\nthree\n", "shell sees the write")
    # CRLF stays byte-exact, empty files are empty, unicode paths work.
    s.call("file_write", path="crlf.txt", content="a\r\nb\r\n")
    eq(s.call("file_read", path="crlf.txt")["content"], "     1\ta\r\n     2\tb\r\n", "crlf")
    eq(s.sh("od -An -c crlf.txt | tr -s ' '")["stdout"].split(), ["a", "\\r", "\\n", "b", "\\r", "\\n"], "crlf on disk")
    s.call("file_write", path="empty", content="")
    r = s.call("file_read", path="empty")
    eq((r["content"], r["total_lines"], r["size"], r["truncated"]), ("", 0, 0, False), "empty")
    s.sh("mkdir -p dossier")
    s.call("file_write", path="dossier/ünïcödé ✓.txt", content="ok\n")
    eq(s.sh("cat 'dossier/ünïcödé ✓.txt'")["stdout"], "ok\n", "unicode path")
    names = [e["path"] for e in s.call("file_list", path="dossier")["entries"]]
    eq(names, ["/workspace/dossier/ünïcödé ✓.txt"], "unicode list")
    # create_only, mode of new files, mode kept on overwrite, owner as a command's.
    has(s.error("file_write", path="a.txt", content="x", create_only=True), "exists", "create_only")
    s.call("file_write", path="run.sh", content="#!/bin/sh\n", mode="0750")
    eq(s.sh("stat -c %a run.sh")["stdout"].strip(), "750", "mode of a new file")
    s.sh("chmod 0604 a.txt")
    s.call("file_write", path="a.txt", content="new\n")
    eq(s.sh("stat -c %a a.txt")["stdout"].strip(), "604", "mode kept")
    s.sh("touch bycmd")
    eq(s.sh("stat -c %u:%g a.txt")["stdout"], s.sh("stat -c %u:%g bycmd")["stdout"], "owner")
    has(s.error("file_write", path="m", content="x", mode="4755"), "mode", "setuid refused")
    # Large files: 3 MiB of lines; the default limit is 2000 lines.
    s.sh("seq 1 400000 > big")
    r = s.call("file_read", path="big")
    eq((r["lines_returned"], r["total_lines"], r["truncated"]), (2000, 400000, True), "big")
    r = s.call("file_read", path="big", offset=399999)
    eq(r["content"], "399999\t399999\n400000\t400000\n", "big tail")
    s.sh("head -c 9000000 /dev/zero | tr '\\0' 'x' > huge")
    r = s.call("file_read", path="huge", limit=1)
    assert r["truncated"] and "total_lines" not in r and r["size"] == 9000000, r
    # Binary: refused as text, returned as base64.
    s.sh("printf 'a\\0b\\377' > bin")
    has(s.error("file_read", path="bin"), "base64", "binary refused")
    r = s.call("file_read", path="bin", encoding="base64")
    eq(base64.b64decode(r["content"]), b"a\0b\xff", "base64")
    has(s.error("file_read", path="/workspace"), "directory", "dir")
    has(s.error("file_read", path="nope"), "No such file", "missing")


def edit(s):
    s.call("file_write", path="e.txt", content="alpha beta\nbeta gamma\n")
    s.sh("chmod 0751 e.txt")
    has(s.error("file_edit", path="e.txt", old_string="delta", new_string="x"), "0 matches", "zero")
    has(s.error("file_edit", path="e.txt", old_string="beta", new_string="x"), "2 times", "many")
    eq(s.sh("cat e.txt")["stdout"], "alpha beta\nbeta gamma\n", "untouched after refusals")
    eq(s.call("file_edit", path="e.txt", old_string="alpha", new_string="ALPHA")["replacements"], 1, "one")
    eq(s.call("file_edit", path="e.txt", old_string="beta", new_string="B",
              replace_all=True)["replacements"], 2, "all")
    eq(s.sh("cat e.txt; stat -c %a e.txt")["stdout"], "ALPHA B\nB gamma\n751\n", "result and mode")
    s.call("file_write", path="c.txt", content="x\r\ny\r\n")
    s.call("file_edit", path="c.txt", old_string="x\r\n", new_string="z\r\n")
    eq(s.sh("cat c.txt")["stdout"], "z\r\ny\r\n", "crlf edit")
    has(s.error("file_edit", path="nope", old_string="a", new_string="b"), "No such file", "missing")


def list_search(s):
    s.sh("mkdir -p t/a/b && echo 'int main' > t/a/m.c && echo 'x TODO y' > t/a/b/n.c && "
         "echo TODO > t/r.txt && ln -s /etc t/etc && mkdir -p t/.git && echo TODO > t/.git/x")
    l = s.call("file_list", path="t")
    eq([(e["path"], e["type"]) for e in l["entries"]],
       [("/workspace/t/.git", "dir"), ("/workspace/t/a", "dir"), ("/workspace/t/etc", "symlink"),
        ("/workspace/t/r.txt", "file")], "depth 1")
    l = s.call("file_list", path="t", depth=3, glob="*.c")
    eq([e["path"] for e in l["entries"]], ["/workspace/t/a/b/n.c", "/workspace/t/a/m.c"], "glob")
    eq(s.call("file_list", path="t/r.txt", depth=0)["entries"],
       [{"path": "/workspace/t/r.txt", "type": "file", "size": 5}], "depth 0")
    m = s.call("file_search", pattern="TO+DO", path="t")
    eq([(x["path"], x["line"], x["text"]) for x in m["matches"]],
       [("/workspace/t/a/b/n.c", 1, "x TODO y"), ("/workspace/t/r.txt", 1, "TODO")], "search")
    m = s.call("file_search", pattern="TODO", path="t", glob="*.c")
    eq(len(m["matches"]), 1, "search glob")
    s.sh("seq 1 1000 > t/many")
    m = s.call("file_search", pattern="^[0-9]+$", path="t/many", max_matches=10)
    eq((len(m["matches"]), m["truncated"]), (10, True), "max_matches")
    has(s.error("file_search", pattern="(", path="t"), "regular expression", "bad regex")
    l = s.call("file_list", path="/", depth=32)
    assert l["truncated"] and len(l["entries"]) == 10000, "a listing of / is bounded"


def shadow(s):
    if not os.path.exists("/etc/shadow"):
        return
    has(s.error("file_read", path="/etc/shadow"), "Permission denied", "shadow")
    has(s.error("file_read", path="/etc/shadow", encoding="base64"), "Permission denied", "shadow")
    has(s.error("file_search", pattern="root", path="/etc/shadow"), "Permission denied", "search")
    has(s.error("file_write", path="/etc/passwd", content="x"), "ermission", "write /etc")


def escapes(s):
    """Symlinks and magic links that would leave the sandbox if resolved on the host."""
    host = os.path.join(TMP, "hostdir")
    os.mkdir(host)
    with open(os.path.join(host, "secret"), "w") as f:
        f.write(CANARY)
    s.sh(f"ln -s {host}/secret abs; ln -s ../../../../../../{host}/secret rel; "
         f"ln -s {host} dirlink; ln -s /proc/1/root proot")
    for p in ["abs", "rel", f"{host}/secret", "dirlink/secret", "../../../../" + host + "/secret"]:
        try:
            r = s.call("file_read", path=p)
            assert CANARY not in r["content"], f"{p} read the host"
        except ToolError:
            pass
    for p in ["/proc/self/root/etc/hostname", "/proc/1/root/etc/hostname", "proot/etc/hostname",
              "/proc/self/fd/0", "/proc/self/cwd/x"]:
        has(s.error("file_read", path=p), "", p)
    for p in ["dirlink/new", f"{host}/new", "proot/tmp/x", "/proc/self/root/tmp/x"]:
        try:
            s.call("file_write", path=p, content=CANARY)
        except ToolError:
            pass
    eq(sorted(os.listdir(host)), ["secret"], "nothing written on the host")


def race(s):
    """A job swaps a directory and symlinks in a tight loop while the tools run a thousand
    times or for 5 s (4000 times or 20 s under make stress: T_STRESS, tests/lib.sh), and on
    until one read got through; no host byte is read, no host file written."""
    host = os.path.join(TMP, "hostdir")
    os.mkdir(host)
    with open(os.path.join(host, "f"), "w") as f:
        f.write(CANARY)
    os.chmod(TMP, 0o755)
    s.sh("mkdir -p race/d && echo inside > race/d/f")
    job = s.call("shell_job_start", command=swapper("race", (
        ("mv", "d", "d.real"), ("ln", host, "d"), ("rm", "d"), ("ln", "/proc/1/root", "d"),
        ("rm", "d"), ("ln", "../../../../../../../" + host, "d"), ("rm", "d"),
        ("mv", "d.real", "d"))))["job_id"]
    calls, secs = (4000, 20) if os.environ.get("T_STRESS") == "1" else (1000, 5)
    n, ok, t0 = 0, 0, time.time()
    # (the loaded machine of a whole make test gets through a few hundred calls in 5 s; a
    # read that succeeds, asserted below, is waited for up to 20 s)
    while (n < calls and time.time() - t0 < secs) or (ok == 0 and time.time() - t0 < 20):
        for tool, args in (("file_read", {"path": "race/d/f"}),
                           ("file_write", {"path": "race/d/w", "content": CANARY}),
                           ("file_list", {"path": "race/d", "depth": 2}),
                           ("file_search", {"pattern": "HOST|inside", "path": "race"})):
            r = s.call_raw(tool, **args)
            n += 1
            text = str(r.get("structuredContent", "")) + r["content"][0]["text"]
            if tool == "file_read":
                assert "HOSTSECRET" not in text, f"read the host: {text}"
                ok += not r.get("isError")
            if tool == "file_search":
                assert str(host) not in text, f"searched the host: {text}"
    eq(s.call("shell_job_wait", job_id=job, timeout=0)["state"], "running", "the swapper ran")
    eq(sorted(os.listdir(host)), ["f"], "nothing written on the host")
    with open(os.path.join(host, "f")) as f:
        eq(f.read(), CANARY, "host file intact")
    assert ok > 0, "no read succeeded while racing"
    print(f"# {n} calls in {time.time() - t0:.1f}s, {ok} reads succeeded", file=sys.stderr)


def binds(_):
    home = os.path.join(TMP, "home")
    proj = os.path.join(home, "proj")
    os.makedirs(os.path.join(proj, ".git", "hooks"))
    os.makedirs(os.path.join(home, ".ssh"))
    for p, c in (("proj/.git/config", "[core]\n"), ("proj/.bashrc", "# rc\n"), ("proj/f", "host\n"),
                 (".ssh/id", CANARY)):
        with open(os.path.join(home, p), "w") as f:
            f.write(c)
    os.symlink(os.path.join(home, ".ssh"), os.path.join(home, "sshlink"))
    for d in (TMP, home):
        os.chmod(d, 0o755)
    s = serve(home=home)
    try:
        for p, why in ((home, "home directory"), (home + "/.ssh", "hidden"), ("/", "/"),
                       ("/etc", "system"), (home + "/sshlink", "symlink"), (TMP + "/data", "data dir"),
                       (TMP, "data dir"), (proj + "/../proj", "canonical"), ("/root/x", "home")):
            has(s.error("bind_host_dir", host_path=p, mount_point="/mnt/x", mode="ro"), why, p)
        for mp in ("/etc", "/", "/usr/lib", "/proc/x", "/dev/x", "/workspace", "/mnt/../etc"):
            s.error("bind_host_dir", host_path=proj, mount_point=mp, mode="ro")
        job = s.call("shell_job_start", command="sleep 1000")["job_id"]
        eq(s.call("bind_host_dir", host_path=proj, mount_point="/mnt/proj", mode="rw"),
           {"host_path": proj, "mount_point": "/mnt/proj", "mode": "rw"}, "bind")
        eq(s.call("shell_job_wait", job_id=job, timeout=10)["state"], "killed", "jobs end on a bind")
        eq(s.call("file_read", path="/mnt/proj/f")["content"], "     1\thost\n", "read through bind")
        s.call("file_write", path="/mnt/proj/new", content="from sandbox\n")
        with open(os.path.join(proj, "new")) as f:
            eq(f.read(), "from sandbox\n", "write lands on the host")
        r = s.sh("echo x >> /mnt/proj/.git/config; echo x >> /mnt/proj/.bashrc; "
                 "touch /mnt/proj/.git/hooks/post-checkout; rm -f /mnt/proj/.bashrc; echo done")
        has(r["stdout"], "done", "shell ran")
        s.error("file_write", path="/mnt/proj/.git/config", content="[core]\nfsmonitor=evil\n")
        s.error("file_edit", path="/mnt/proj/.bashrc", old_string="# rc", new_string="evil")
        with open(os.path.join(proj, ".git", "config")) as f:
            eq(f.read(), "[core]\n", ".git/config untouched")
        with open(os.path.join(proj, ".bashrc")) as f:
            eq(f.read(), "# rc\n", ".bashrc untouched")
        eq(os.listdir(os.path.join(proj, ".git", "hooks")), [], "no hook planted")
        s.call("bind_host_dir", host_path=proj, mount_point="/workspace/ro", mode="ro")
        has(s.sh("cat /mnt/proj/f /workspace/ro/f")["stdout"], "host\nhost\n", "both binds kept")
        s.error("file_write", path="/workspace/ro/x", content="x")
        # Swap symlinks inside the rw bind while writing through it: the host's .ssh stays.
        job = s.call("shell_job_start", command=swapper("/mnt/proj", (
            ("ln", home + "/.ssh", "s"), ("rm", "s"), ("mkdir", "s"), ("rmdir", "s"))))["job_id"]
        for i in range(300):
            for tool, args in (("file_write", {"path": "/mnt/proj/s/id", "content": "pwned"}),
                               ("file_read", {"path": "/mnt/proj/s/id"})):
                r = s.call_raw(tool, **args)
                assert CANARY not in r["content"][0]["text"], "read the host's .ssh"
        eq(s.call("shell_job_wait", job_id=job, timeout=0)["state"], "running", "the swapper ran")
        with open(os.path.join(home, ".ssh", "id")) as f:
            eq(f.read(), CANARY, ".ssh untouched")
        eq(os.listdir(os.path.join(home, ".ssh")), ["id"], ".ssh untouched")
    finally:
        s.close()


def main():
    name = sys.argv[2]
    fn = globals()[name]
    if name == "binds":
        return fn(None)
    s = serve()
    try:
        fn(s)
    finally:
        s.close()


main()
