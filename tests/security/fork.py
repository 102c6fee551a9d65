"""Scenarios of tests/security/fork.sh: the sandboxes of one `rtn serve` stay apart, and what
the agent planted in a sandbox cannot turn sandbox_fork's copy (rtn's trusted side) against
the host or another sandbox. python3 fork.py RTN SCENARIO; its files go to a directory of
its own (case_dir), never the current one. The minimal MCP client of the integration suites is imported from MCP_PY_DIR (default
tests/integration). Exit 0 = pass; an AssertionError's message says what broke. Lines
starting with '#' on stderr are notes for the suite's output."""
import json
import os
import stat
import sys
import time

sys.path.insert(0, os.environ.get("MCP_PY_DIR") or
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from mcp_serve import Serve, case_dir  # noqa: E402

RTN = sys.argv[1]
TMP = case_dir("fork")
# Unique to this run, so the host-side pid lookups find only this run's sleeps.
SLEEP = [str(470000000 + os.getpid() * 10 + i) for i in range(3)]
FORK_MAX_S = 90  # a fork is one sandbox start and a copy: a blocked copy would hang for good


def note(msg):
    print("# " + msg, file=sys.stderr, flush=True)


def eq(got, want, what):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def has(text, part, what):
    assert part in text, f"{what}: {part!r} not in {text!r}"


def serve(*args):
    ws = os.path.join(TMP, "ws")
    os.makedirs(ws, exist_ok=True)
    with open(os.path.join(ws, "base"), "w") as f:
        f.write("host\n")
    env = {**os.environ, "RTN_DATA_DIR": os.path.join(TMP, "data")}
    return Serve(RTN, "--workspace", ws, "--workspace-mode", "overlay", *args, env=env)


def sh(s, command, sandbox="sb-1", ok=True, **kw):
    r = s.sh(command, sandbox=sandbox, **kw)
    if ok:
        assert r["exit_code"] == 0, f"{sandbox}: {command[:200]!r} failed: {r['stdout'][-800:]} {r['stderr'][-800:]}"
    return r


def fork(s, src="sb-1"):
    """sandbox_fork of src: (structuredContent, None) or (None, the tool error's text)."""
    t = time.monotonic()
    r = s.call_raw("sandbox_fork", sandbox=src)
    took = time.monotonic() - t
    assert took < FORK_MAX_S, f"sandbox_fork took {took:.0f} s"
    if r.get("isError"):
        return None, r["content"][0]["text"]
    return r["structuredContent"], None


def fork_ok(s, src="sb-1"):
    r, e = fork(s, src)
    assert r, f"sandbox_fork {src} failed: {e}"
    return r["sandbox"]


# A listing of a tree as the agent sees it: type, mode, owner, links (as groups of names
# sharing an inode), size, link target, a hash of the data and of every xattr. Directories
# the agent made unreadable are opened (u+rwx) first, their mode recorded before.
MANIFEST_PY = r'''
import hashlib, json, os, stat, sys
root = sys.argv[1]
out, inodes = [], {}
def xattrs(p):
    try:
        return {k: [len(v), hashlib.sha256(v).hexdigest()[:16]] for k in sorted(os.listxattr(p, follow_symlinks=False))
                for v in [os.getxattr(p, k, follow_symlinks=False)]}
    except OSError as e:
        return "error %d" % e.errno
def walk(d, rel):
    st = os.lstat(d)
    if stat.S_IMODE(st.st_mode) & 0o700 != 0o700:
        os.chmod(d, stat.S_IMODE(st.st_mode) | 0o700)
    for name in sorted(os.listdir(d)):
        p, r = os.path.join(d, name), os.path.join(rel, name)
        st = os.lstat(p)
        e = {"path": r, "mode": "%o" % st.st_mode, "uid": st.st_uid, "gid": st.st_gid,
             "nlink": st.st_nlink}
        if not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1:
            e["first"] = inodes.setdefault(st.st_ino, r)
        if stat.S_ISREG(st.st_mode):
            m = stat.S_IMODE(st.st_mode)
            if m & 0o400 == 0:
                os.chmod(p, m | 0o400)
            with open(p, "rb") as f:
                e["data"] = [st.st_size, hashlib.sha256(f.read()).hexdigest()[:16]]
            if m & 0o400 == 0:
                os.chmod(p, m)
        elif stat.S_ISLNK(st.st_mode):
            e["target"] = os.readlink(p)
        elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            e["rdev"] = [os.major(st.st_rdev), os.minor(st.st_rdev)]
        if not stat.S_ISLNK(st.st_mode) and not stat.S_ISFIFO(st.st_mode):
            e["xattrs"] = xattrs(p)
        out.append(e)
        if stat.S_ISDIR(st.st_mode):
            walk(p, r)
sys.setrecursionlimit(10000)
walk(root, ".")
print(json.dumps(out))
'''


def manifest(s, sandbox, root):
    r = sh(s, f"python3 - {root}", sandbox=sandbox, stdin=MANIFEST_PY)
    assert not r["stdout_truncated"], "manifest cut"
    return json.loads(r["stdout"])


def same_tree(s, a, b, root):
    ma, mb = manifest(s, a, root), manifest(s, b, root)
    assert ma, f"{a}: {root} is empty"
    da, db = {e["path"]: e for e in ma}, {e["path"]: e for e in mb}
    missing = sorted(set(da) - set(db))[:5]
    extra = sorted(set(db) - set(da))[:5]
    assert not missing and not extra, f"{b}'s {root} differs from {a}'s: missing {missing}, extra {extra}"
    for p, e in da.items():
        assert db[p] == e, f"{root}/{p} in {b}: {db[p]} != {e} in {a}"
    return ma


# ---- what the agent plants in the copy's way -------------------------------------------

PLANT_SH = r'''
set -e
for top in $HOME/t /workspace/t /tmp/t; do
mkdir -p $top && cd $top
echo data >file
ln -s /etc/passwd abs_link; ln -s ../../.. up_link; ln -s "$HOSTSECRET" host_link
ln -s dangling/nowhere dangling
mkdir dir; ln -s dir dir_link
mkfifo fifo
printf a >"$(printf 'new\nline')"; printf b >"$(printf 'esc\033]0;x\007')"; printf c >' sp ace '
echo linked >h1; ln h1 h2; ln h1 dir/h3
# A deep tree, within the copy's bound of 512 levels
( d=deep; for i in $(seq 400); do d=$d/d; done; mkdir -p $d; echo bottom >$d/f )
done
# A deleted file of the layers below (the host's workspace): a whiteout in the upper
rm /workspace/base
'''

MODES_SH = r'''
set -e
for top in $HOME/m /workspace/m /tmp/m; do
mkdir -p $top && cd $top
echo secret >f000; chmod 000 f000
echo w >f200; chmod 200 f200
mkdir d000; echo inside >d000/f; chmod 000 d000
mkdir d300; echo inside >d300/f; chmod 300 d300
mkdir d100; echo inside >d100/f; chmod 100 d100
mkdir sticky; chmod 1777 sticky
echo x >ro; chmod 444 ro
done
'''

XATTR_PY = r'''
import os, sys
for top in (os.path.expanduser("~/x"), "/workspace/x"):
    os.makedirs(top, exist_ok=True)
    big = os.path.join(top, "big_value")
    open(big, "w").write("v")
    for n in (8193, 20000, 65536):  # past the old 8 KiB buffer, up to XATTR_SIZE_MAX
        try:
            os.setxattr(big, "user.v%d" % n, bytes([n % 251]) * n)
        except OSError as e:
            print("setxattr user.v%d: %s" % (n, e))
    many = os.path.join(top, "long_list")
    open(many, "w").write("l")
    for i in range(120):  # a list of ~24 KiB names, past the old 8 KiB buffer
        os.setxattr(many, "user." + "n%03d" % i + "x" * 190, b"%d" % i)
    d = os.path.join(top, "dir")
    os.makedirs(d, exist_ok=True)
    os.setxattr(d, "user.dirvalue", b"d" * 30000)
print("xattrs set")
'''


def planted():
    """Symlinks (absolute, up and out, to a host file, dangling, to a dir), a FIFO, names
    with newlines and escapes, hard links, a deep tree and a whiteout are copied as what they
    are: nothing is followed, nothing blocks, and the host file a link names stays out."""
    s = serve()
    try:
        sh(s, PLANT_SH, env={"HOSTSECRET": os.environ["HOSTSECRET"]})
        sb = fork_ok(s)
        for root in ("$HOME/t", "/workspace/t", "/tmp/t"):
            m = same_tree(s, "sb-1", sb, root)
            kinds = {e["path"]: e["mode"][:-4] for e in m}
            eq(kinds["./fifo"], "1", f"{root}/fifo's type (S_IFIFO) in the fork")
            eq(kinds["./host_link"], "12", f"{root}/host_link's type (a symlink) in the fork")
            h = {e["path"]: e for e in m if e["path"] in ("./h1", "./h2", "./dir/h3")}
            eq({e["first"] for e in h.values()}, {"./dir/h3"}, "hard links stay one inode")
        r = sh(s, 'cat $HOME/t/host_link; test -e /workspace/base && echo base', sandbox=sb, ok=False)
        assert "host-secret" not in r["stdout"], "the fork reads the host file a link named"
        assert "base" not in r["stdout"], "the whiteout was lost: /workspace/base is back"
        eq(sh(s, "cat $HOME/t/dir_link/h3 $HOME/t/deep/" + "d/" * 400 + "f", sandbox=sb)["stdout"],
           "linked\nbottom\n", "the fork's files")
    finally:
        s.close()


def modes():
    """Modes the agent may set and rtn's own process could not read through (000 files, 000,
    100 and write-only directories), a sticky directory: copied exactly, as the sandbox's
    own rights allow, neither refused nor widened."""
    s = serve()
    try:
        sh(s, MODES_SH)
        sb = fork_ok(s)
        for root in ("$HOME/m", "/workspace/m", "/tmp/m"):
            m = same_tree(s, "sb-1", sb, root)
            got = {e["path"]: e["mode"] for e in m if e["path"] in ("./f000", "./d000", "./sticky")}
            eq(got, {"./f000": "100000", "./d000": "40000", "./sticky": "41777"},
               f"{root}: modes in the fork")
    finally:
        s.close()


def xattrs():
    """xattr values past 8 KiB (up to XATTR_SIZE_MAX) and lists past 8 KiB are copied whole;
    the fork neither fails nor cuts them."""
    s = serve()
    try:
        r = sh(s, "python3 -", stdin=XATTR_PY)
        for line in r["stdout"].splitlines():
            if line.startswith("setxattr"):
                note(f"the sandbox's tmpfs refused: {line}")
        sb, e = fork(s)
        assert sb, f"sandbox_fork failed on large xattrs: {e}"
        for root in ("$HOME/x", "/workspace/x"):
            m = same_tree(s, "sb-1", sb["sandbox"], root)
            big = next(e for e in m if e["path"] == "./long_list")
            eq(len(big["xattrs"]), 120, f"{root}/long_list's xattrs in the fork")
    finally:
        s.close()


def deep_refused():
    """A tree deeper than the copy's bound fails the fork with a message that names it; the
    server and the source go on."""
    s = serve()
    try:
        home = sh(s, "echo $HOME")["stdout"].strip()
        sh(s, "d=$HOME/deep; for i in $(seq 600); do d=$d/d; done; mkdir -p $d")
        r, e = fork(s)
        assert not r, f"a fork of a tree 600 deep succeeded: {r}"
        has(e, "directories deep", "the refusal")
        has(e, f"upper{home}/deep/d/d", "the refusal names the path")
        sh(s, "test -d $HOME/deep")
        eq([x["sandbox"] for x in s.call("sandbox_list")["sandboxes"]], ["sb-1"], "the failed fork's sandbox")
    finally:
        s.close()


SWAP_PY = r'''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs(os.path.expanduser("~/s"), exist_ok=True)
os.chdir(os.path.expanduser("~/s"))
open("a", "w").write("plain file\n")
os.mkfifo("b")
os.mkdir("c"); open("c/inside", "w").write("x")
os.symlink("/etc", "d")
os.symlink(os.environ["HOSTSECRET"], "e"); open("f", "w").write("f\n")
open("ready", "w").close()
while True:
    for x, y in ((b"a", b"b"), (b"c", b"d"), (b"e", b"f")):
        libc.renameat2(-100, x, -100, y, 2)  # RENAME_EXCHANGE
'''


def swap():
    """A job swaps a file with a FIFO, a directory with a symlink to /etc and a symlink to a
    host file with a file, without pause, while the sandbox is forked: every fork ends in
    time, either with a copy or with an error that names the entry that changed; no copy
    holds what a link named."""
    s = serve()
    try:
        s.call("shell_job_start", command="python3 - <<'EOF'\n" + SWAP_PY + "EOF\n",
               env={"HOSTSECRET": os.environ["HOSTSECRET"]})
        home = sh(s, "echo $HOME")["stdout"].strip()
        sh(s, "for i in $(seq 100); do test -e $HOME/s/ready && exit 0; sleep 0.1; done; exit 1")
        copied = refused = 0
        for _ in range(6):
            r, e = fork(s)
            if not r:
                has(e, f"upper{home}/s/", "the error names the entry that changed")
                refused += 1
                note(e[:200])
                continue
            copied += 1
            sb = r["sandbox"]
            out = sh(s, "cd $HOME/s && find . | sort && find . -type f -exec cat {} +", sandbox=sb)["stdout"]
            assert "host-secret" not in out and "passwd" not in out, f"the fork holds what a link named: {out}"
            s.call("sandbox_close", sandbox=sb)
        note(f"{copied} forks copied, {refused} refused an entry that changed")
    finally:
        s.close()


# ---- one sandbox against another -------------------------------------------------------

LISTEN_PY = r'''
import os, socket, time
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", 47011)); t.listen()
u = socket.socket(socket.AF_UNIX); u.bind("\0rtn-fork-test"); u.listen()
open("/tmp/listening", "w").close()
while True:
    for srv in (t, u):
        srv.settimeout(0.05)
        try:
            c, _ = srv.accept(); c.sendall(b"sb-1 secret\n"); c.close()
        except OSError:
            pass
'''

PROBE_PY = r'''
import os, signal, socket, sys
res = {}
for name, fam, addr in (("tcp", socket.AF_INET, ("127.0.0.1", 47011)), ("unix", socket.AF_UNIX, "\0rtn-fork-test")):
    c = socket.socket(fam)
    try:
        c.connect(addr); res[name] = "CONNECTED " + c.recv(64).decode()
    except OSError as e:
        res[name] = e.strerror
pid = int(sys.argv[1])
try:
    os.kill(pid, 0); res["kill"] = "SIGNALLED"
except OSError as e:
    res["kill"] = e.strerror
try:
    os.kill(pid, signal.SIGKILL); res["kill9"] = "SIGNALLED"
except OSError as e:
    res["kill9"] = e.strerror
res["procs"] = sorted(open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode()
                      for p in os.listdir("/proc") if p.isdigit() and os.path.exists("/proc/%s/cmdline" % p))
res["mounts"] = open("/proc/self/mountinfo").read()
print(__import__("json").dumps(res))
'''


def host_pids(argv):
    want = "\0".join(argv).encode() + b"\0"
    out = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and open(f"/proc/{p}/cmdline", "rb").read() == want:
                out.append(int(p))
        except OSError:
            pass
    return out


def running_pids(argv):
    """host_pids(argv) once there is one: a job's `exec sleep` runs after shell_job_start
    answers, as late as a loaded machine schedules it (for up to 10 s)."""
    end = time.monotonic() + 10
    while not (pids := host_pids(argv)) and time.monotonic() < end:
        time.sleep(0.1)
    return pids


def apart():
    """sb-2 (a fork of sb-1) and sb-3 (a new one) against sb-1: none reads or writes another's
    files (root, /tmp, /dev/shm, /workspace), sees or signals its processes (by host pid
    too), reaches its loopback listeners (TCP and abstract unix) or finds its upper."""
    s = serve()
    try:
        home = sh(s, "echo before >$HOME/shared-before; echo $HOME")["stdout"].strip()
        sb2 = fork_ok(s)
        sb3 = s.call("sandbox_new")["sandbox"]
        s.call("shell_job_start", command="exec python3 -c \"$LISTEN\" rtn-fork-listener", env={"LISTEN": LISTEN_PY})
        sh(s, "for i in $(seq 100); do test -e /tmp/listening && exit 0; sleep 0.1; done; exit 1")
        s.call("shell_job_start", command="exec sleep " + SLEEP[0])
        sh(s, "echo after-sb1 >$HOME/secret-sb1; echo t >/tmp/secret-sb1; echo m >/dev/shm/secret-sb1; "
           "echo w >/workspace/secret-sb1")
        pids = running_pids(["sleep", SLEEP[0]])
        eq(len(pids), 1, "sb-1's sleep seen from the host")
        for sb in (sb2, sb3):
            sh(s, f"echo {sb} >$HOME/secret-{sb}; echo {sb} >/workspace/secret-{sb}", sandbox=sb)
            r = sh(s, f"python3 - {pids[0]}", sandbox=sb, stdin=PROBE_PY)
            p = json.loads(r["stdout"])
            eq(p["tcp"], "Connection refused", f"{sb}: connect to sb-1's 127.0.0.1:47011")
            eq(p["unix"], "Connection refused", f"{sb}: connect to sb-1's abstract socket")
            eq(p["kill"], "No such process", f"{sb}: kill -0 of sb-1's process by its host pid")
            eq(p["kill9"], "No such process", f"{sb}: kill -9 of sb-1's process by its host pid")
            seen = [c for c in p["procs"] if SLEEP[0] in c or "rtn-fork-listener" in c]
            eq(seen, [], f"{sb}: sb-1's processes in its /proc")
            out = sh(s, "ls $HOME /tmp /dev/shm /workspace; find / -xdev -name 'secret-*' 2>/dev/null; exit 0",
                     sandbox=sb)["stdout"]
            assert "secret-sb1" not in out, f"{sb} sees sb-1's files: {out}"
            r = sh(s, "cat $HOME/secret-sb1 /tmp/secret-sb1 /dev/shm/secret-sb1 /workspace/secret-sb1", sandbox=sb, ok=False)
            eq(r["stderr"].count("No such file or directory"), 4, f"{sb} reads sb-1's files: {r}")
        out = sh(s, "ls $HOME /workspace; find / -xdev -name 'secret-sb*' 2>/dev/null; exit 0")["stdout"]
        for sb in (sb2, sb3):
            assert f"secret-{sb}" not in out, f"sb-1 sees {sb}'s file: {out}"
        eq(sh(s, f"ls $HOME/secret-{sb3} $HOME/shared-before 2>&1; exit 0", sandbox=sb2)["stdout"],
           f"ls: cannot access '{home}/secret-{sb3}': No such file or directory\n{home}/shared-before\n",
           "sb-2 has what sb-1 had at the fork and nothing of sb-3")
        eq(len(host_pids(["sleep", SLEEP[0]])), 1, "sb-1's sleep after the attacks")
        r = sh(s, "cat /tmp/listening && echo up")
        has(r["stdout"], "up", "sb-1's listener")
    finally:
        s.close()


def running():
    """A fork of a sandbox whose processes run copies none of them: the fork's result says
    so, its /proc has none of them, and the source's go on."""
    s = serve()
    try:
        s.call("shell_job_start", command="exec sleep " + SLEEP[1])
        job = s.call("shell_job_start", command="while :; do date +%s%N >$HOME/ticker; sleep 0.05; done")["job_id"]
        sh(s, "for i in $(seq 100); do test -e $HOME/ticker && exit 0; sleep 0.1; done; exit 1")
        r = s.call("sandbox_fork")
        has(r.get("note", ""), "processes and jobs are not copied", "sandbox_fork's note")
        sb = r["sandbox"]
        eq(s.call("shell_job_list", sandbox=sb)["jobs"], [], f"{sb}'s jobs")
        out = sh(s, "ps -eo args", sandbox=sb)["stdout"]
        assert SLEEP[1] not in out and "ticker" not in out, f"the fork runs the source's processes: {out}"
        t1 = sh(s, "cat $HOME/ticker", sandbox=sb)["stdout"]
        time.sleep(0.5)
        eq(sh(s, "cat $HOME/ticker", sandbox=sb)["stdout"], t1, "the fork's copy of a file the source writes")
        eq(len(host_pids(["sleep", SLEEP[1]])), 1, "the source's sleep after the fork")
        st = s.call("shell_job_status", job_id=job)
        eq(st["state"], "running", "the source's job after the fork")
    finally:
        s.close()


def closed():
    """A closed handle is refused by name and never given again, and the closed sandbox's
    processes are gone."""
    s = serve()
    try:
        sb = fork_ok(s)
        s.call("shell_job_start", sandbox=sb, command="exec sleep " + SLEEP[2])
        sh(s, "true", sandbox=sb)
        eq(len(running_pids(["sleep", SLEEP[2]])), 1, f"{sb}'s sleep")
        s.call("sandbox_close", sandbox=sb)
        for tool, args in (("shell_run", {"command": "true"}), ("file_read", {"path": "/etc/hostname"}),
                           ("sandbox_fork", {}), ("env_status", {}), ("sandbox_close", {})):
            has(s.error(tool, sandbox=sb, **args), f"sandbox {sb} was closed", f"{tool} on the closed {sb}")
        for _ in range(50):
            if not host_pids(["sleep", SLEEP[2]]):
                break
            time.sleep(0.1)
        eq(host_pids(["sleep", SLEEP[2]]), [], f"the closed {sb}'s processes")
        nxt = fork_ok(s)
        assert nxt != sb, f"the closed handle {sb} was given again"
        eq(sorted(x["sandbox"] for x in s.call("sandbox_list")["sandboxes"]), sorted(["sb-1", nxt]), "sandbox_list")
    finally:
        s.close()


def host_setid(root):
    """Set-id files or device nodes anywhere under root on the host (the data dir's session
    dirs, the workspace): the host sees the fork's files only there."""
    bad = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            try:
                st = os.lstat(os.path.join(d, n))
            except OSError:
                continue
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                continue  # an overlay whiteout in a pending upper
            if st.st_mode & (stat.S_ISUID | stat.S_ISGID) and not stat.S_ISDIR(st.st_mode) or \
                    stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                bad.append(f"{os.path.join(d, n)} {st.st_mode:o}")
    return bad


def setid():
    """Neither device nodes nor set-id files can be made (EPERM from seccomp, reported as
    blocked; EACCES where Landlock refuses a device first); the fork's commands run with
    no_new_privs like the source's, and no set-id file or device of a sandbox is on the
    host."""
    s = serve()
    try:
        r = sh(s, "mknod $HOME/null c 1 3; mknod $HOME/sda b 8 0; mknod /workspace/null c 1 3; "
               "ls -l $HOME/null $HOME/sda /workspace/null 2>&1; exit 0")
        out = r["stdout"] + r["stderr"]
        eq(len([x for x in out.splitlines() if x.startswith("mknod: ") and
                ("Operation not permitted" in x or "Permission denied" in x)]), 3, f"mknod inside: {out}")
        eq(out.count("No such file or directory"), 3, f"device nodes after mknod: {out}")
        sb = fork_ok(s)
        for name in ("sb-1", sb):
            r = sh(s, "cp /usr/bin/id $HOME/suid-id; chmod 6755 $HOME/suid-id; cp /usr/bin/id /workspace/suid-id; "
                   "chmod u+s /workspace/suid-id; stat -c %a $HOME/suid-id /workspace/suid-id; "
                   "grep NoNewPrivs /proc/self/status", sandbox=name, ok=False)
            eq(r["stderr"].count("Operation not permitted"), 2, f"{name}: chmod of set-id modes: {r}")
            eq(r["stdout"].split(), ["755", "755", "NoNewPrivs:", "1"], f"{name}: modes and no_new_privs")
            calls = [b["syscall"] for b in r.get("blocked", [])]
            assert calls and all(c.startswith(("chmod", "fchmod")) for c in calls), f"{name}: blocked {calls}"
            eq(sh(s, "ls $HOME/null $HOME/sda 2>&1; exit 0", sandbox=name)["stdout"].count("No such file"), 2,
               f"device nodes in {name}")
        bad = host_setid(TMP)
        assert not bad, f"set-id files or devices on the host: {bad}"
    finally:
        s.close()


SCENARIOS = {f.__name__: f for f in (planted, modes, xattrs, deep_refused, swap, apart, running,
                                     closed, setid)}

if __name__ == "__main__":
    SCENARIOS[sys.argv[2]]()
