"""Scenarios of tests/security/undo.sh: env_undo and env_redo put back the state a checkpoint
kept exactly, and nothing the agent planted in the state, or in the way of the restore,
turns rtn's copy (its trusted side) against the host. python3 undo.py RTN SCENARIO; its files
go to a directory of its own. The tree builders and the manifest are fork.py's: a checkpoint
keeps what sandbox_fork copies."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fork  # noqa: E402
from fork import MODES_SH, PLANT_SH, TMP, eq, has, host_setid, manifest, note, sh  # noqa: E402

def serve(*args):
    """fork.py's server (an overlay workspace), keeping checkpoints as it does by default."""
    return fork.serve(*args)


ROOTS = ("$HOME/t", "/workspace/t", "/tmp/t", "$HOME/m", "/workspace/m", "/tmp/m")

# What a call that breaks things does: trees deleted, a chmod, a file changed, and in the
# restore's way a symlink to a host directory where a directory was, a FIFO where a tree
# was, a dangling link and a hard link out of a tree that goes.
BREAK_SH = r'''
set -e
rm -rf $HOME/t && ln -s "$HOSTDIR" $HOME/t
rm -rf /tmp/t && mkfifo /tmp/t
rm -rf /workspace/t && ln -s /etc /workspace/t
chmod 700 $HOME/m/sticky /workspace/m/sticky
echo broken >$HOME/m/ro.new && ln $HOME/m/ro.new $HOME/broken-link
echo broken >/workspace/base
'''


def steps(s):
    return s.call("env_history")


def snapshot(s):
    return {root: manifest(s, "sb-1", root) for root in ROOTS}


def roundtrip():
    """A tree of symlinks (absolute, out, to a host file), a FIFO, hard links, odd names, a
    tree 400 deep, 000 files and directories, a sticky dir and a whiteout, in the upper, an
    overlay /workspace and /tmp: env_undo after a call that deleted them and planted a link
    to a host directory, a FIFO and a link to /etc in their place puts every entry back
    exactly, follows nothing (the host directory keeps its files), blocks on nothing; env_redo
    brings the broken state back, and a later changing call ends the redo."""
    s = serve()
    try:
        sh(s, PLANT_SH, env={"HOSTSECRET": os.environ["HOSTSECRET"]})
        sh(s, MODES_SH)
        r = sh(s, "mknod $HOME/null c 1 3; chmod u+s $HOME/t/file; exit 0", ok=False)
        # The manifest's walk opens 000 directories (u+rwx): the state to come back to is the
        # one before the walks, so env_undo takes back the walks' calls too.
        before = snapshot(s)
        sh(s, BREAK_SH, env={"HOSTDIR": os.environ["HOSTDIR"]})
        back = 1 + len(ROOTS)
        h = steps(s)
        eq([x["tool"] for x in h["steps"]][:2], ["shell_run", "shell_run"], "env_history's tools")
        has(h["steps"][0]["args"], "rm -rf $HOME/t", "env_history's newest step")
        eq((h["undoable"], h["redoable"]), (4 + len(ROOTS), 0), "steps undoable and redoable")
        eq(s.call("env_undo", steps=back)["undone"], back, "env_undo")
        # file_read changes nothing: no checkpoint, the redo stays
        eq(s.call("file_read", path="/workspace/t/file")["content"].split(), ["1", "data"], "restored file")
        eq(s.call("env_redo", steps=back)["redone"], back, "env_redo")
        r = sh(s, "readlink $HOME/t; test -p /tmp/t && echo fifo; cat /workspace/base")
        eq(r["stdout"].split(), [os.environ["HOSTDIR"], "fifo", "broken"], "the broken state after env_redo")
        eq(steps(s)["redoable"], 0, "no redo after env_redo")
        eq(s.call("env_undo", steps=back + 1)["undone"], back + 1, "env_undo past the check")
        after = snapshot(s)
        for root in ROOTS:
            eq(after[root], before[root], f"{root} after env_undo")
        eq(steps(s)["redoable"], 0, "a changing call ends the redo")
        r = sh(s, "test -e /workspace/base && echo base; cat $HOME/t/host_link; ls $HOME/t/fifo $HOME/null; "
               "stat -c %a $HOME/t/file", ok=False)
        assert "base" not in r["stdout"], "the whiteout was lost: /workspace/base is back"
        assert "host-secret" not in r["stdout"], "the restore read the host file a link named"
        eq(r["stdout"].split()[-1], "644", "$HOME/t/file's mode (no set-id bit)")
        eq(sorted(os.listdir(os.environ["HOSTDIR"])), ["keep"], "the host directory a link named")
        bad = host_setid(TMP)
        assert not bad, f"set-id files or devices on the host: {bad}"
    finally:
        s.close()


def sparse():
    """A 1 TiB sparse file and a file linked 200 times are kept and restored as what they are:
    holes stay holes (the tmpfs, and so the host's memory, is not charged a terabyte), links
    stay one inode."""
    s = serve()
    try:
        # As large as the sandbox's RLIMIT_FSIZE lets it be, 1 TiB at most.
        lim = int(sh(s, "python3 -c 'import resource; print(resource.getrlimit(resource.RLIMIT_FSIZE)[0])'")["stdout"])
        big = 1 << 40 if lim < 0 else min(1 << 40, lim - 4096)
        sh(s, f"truncate -s {big} $HOME/sparse && echo end >>$HOME/sparse && mkdir $HOME/l && "
           "echo one >$HOME/l/0 && cd $HOME/l && "  # 199 links by one process, not 199 ln
           "python3 -c 'import os\nfor i in range(1, 200): os.link(\"0\", str(i))'")
        sh(s, "rm -rf $HOME/l $HOME/sparse")
        eq(s.call("env_undo")["undone"], 1, "env_undo")
        r = sh(s, "stat -c '%s %b %h' $HOME/sparse $HOME/l/0; stat -c %i $HOME/l/* | sort -u | wc -l")
        size, blocks, _, _, _, links, inodes = r["stdout"].split()
        eq(size, str(big + 4), "the sparse file's size")
        note(f"a sparse file of {big} bytes")
        assert int(blocks) < 1024, f"the sparse file holds {blocks} blocks after the restore"
        eq((links, inodes), ("200", "1"), "200 names of one inode")
        used = s.call("env_status")["upper_bytes"]
        assert used < 64 << 20, f"the tmpfs holds {used} bytes with its checkpoints"
    finally:
        s.close()


def bounded():
    """--undo-depth keeps the newest steps and says how many were dropped; a checkpoint that
    does not fit the tmpfs (--upper-size) drops older ones, then lets the call run without one
    and env_history says so: checkpoints count against the upper's size, never the host."""
    s = serve("--undo-depth", "2")
    try:
        for i in range(4):
            sh(s, f"echo {i} >$HOME/n")
        h = steps(s)
        eq((len(h["steps"]), h["dropped"], h["undo_depth"]), (2, 2, 2), "steps, dropped, depth")
        e = s.error("env_undo", steps=3)
        has(e, "2 can be undone", "env_undo past the oldest step")
    finally:
        s.close()
    s = serve("--upper-size", "16M")
    try:
        sh(s, "head -c 10M /dev/zero >$HOME/big")
        r = sh(s, "echo after >$HOME/after")
        h = steps(s)
        eq(h["steps"][0]["undoable"], False, "a step that did not fit")
        has(h["steps"][0]["note"], "no checkpoint", "its note")
        note(h["steps"][0]["note"][:200])
        has(s.error("env_undo"), "has no checkpoint", "env_undo of it")
        sh(s, "cat $HOME/after")
    finally:
        s.close()
    s = serve("--upper-size", "16M")
    try:  # a checkpoint that fits once older steps go: they go, and it is taken
        sh(s, "head -c 4M /dev/urandom >$HOME/a")
        sh(s, "head -c 4M /dev/urandom >$HOME/a")
        sh(s, "true")
        sh(s, "head -c 3M /dev/urandom >$HOME/b")
        sh(s, "true")
        h = steps(s)
        assert h["dropped"] >= 1 and h["steps"][0]["undoable"] and h["steps"][1]["undoable"], \
            f"older steps dropped for room: {h}"
        eq(s.call("env_undo", steps=2)["undone"], 2, "env_undo past the step that needed room")
        eq(sh(s, "ls $HOME/b 2>&1; exit 0")["stdout"].count("No such file"), 1, "$HOME/b after it")
    finally:
        s.close()
    s = serve("--undo-bytes", "1M")
    try:
        for i in range(4):
            sh(s, f"head -c 600K /dev/zero >$HOME/n; echo {i} >>$HOME/n")
        sh(s, "true")
        h = steps(s)
        assert h["dropped"] >= 2, f"--undo-bytes 1M kept steps of 600 KiB each: {h}"
        eq(s.call("env_undo")["undone"], 1, "env_undo of the newest")
    finally:
        s.close()


def jobs():
    """env_undo of the first call gives the empty state back; env_undo stops the sandbox: a
    running job is killed, counted and named; a fork starts with no history; env_commit
    forgets it."""
    s = serve()
    try:
        sh(s, "echo one >$HOME/f")
        # Back to before the first call: the empty state, the upper and /tmp with nothing
        eq(s.call("env_undo")["undoable"], 0, "env_undo of the first call")
        eq(sh(s, "ls -A $HOME/f /tmp 2>&1; exit 0")["stdout"].count("No such file"), 1, "$HOME/f after it")
        sh(s, "echo one >$HOME/f")
        j = s.call("shell_job_start", command="sleep 600")["job_id"]
        r = s.call("env_undo")
        eq((r["killed_jobs"], r["killed_job_ids"]), (1, [j]), "jobs killed by env_undo")
        r = sh(s, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")
        assert "sleep 600" not in r["stdout"], f"the job runs after env_undo: {r['stdout']}"
        sh(s, "echo two >$HOME/f")
        sb = fork.fork_ok(s)
        eq(steps_of(s, sb), 0, "a fork's history")
        s.call("env_commit", message="c")
        eq(steps(s)["undoable"], 0, "history after env_commit")
    finally:
        s.close()


def default_on():
    """Checkpoints are on by default: the three tools are listed and a call is a step;
    --undo-depth 0 keeps none (the tools say there is nothing to undo) and the state stays."""
    s = fork.serve()
    try:
        listed = {t["name"] for t in s.request("tools/list", {})["tools"]}
        eq(listed & {"env_history", "env_undo", "env_redo"}, {"env_history", "env_undo", "env_redo"},
           "undo tools listed")
        sh(s, "echo one >$HOME/f")
        sh(s, "echo two >$HOME/f; exit 3", ok=False)
        h = steps(s)
        eq((h["undoable"], h["undo_depth"]), (2, 50), "steps and depth by default")
        eq(h["steps"][0]["exit_code"], 3, "the exit status of the newest step")
        eq((h["steps"][0]["paths_total"], h["steps"][0]["paths"]), (1, []), "the newest step's changes so far")
        eq(s.call("env_undo")["undone"], 1, "env_undo")
        eq(steps(s)["steps"][0]["paths"], [os.path.join(sh(s, "echo $HOME")["stdout"].strip(), "f")],
           "the undone step's paths")
    finally:
        s.close()
    s = fork.serve("--undo-depth", "0")
    try:
        sh(s, "echo one >$HOME/f")
        eq(steps(s)["steps"], [], "steps with --undo-depth 0")
        has(s.error("env_undo"), "0 can be undone", "env_undo with --undo-depth 0")
        eq(sh(s, "cat $HOME/f")["stdout"], "one\n", "the state after a refused env_undo")
    finally:
        s.close()


IROOTS = ("$HOME/i", "/workspace/i", "/tmp/i")

# A state of 12 MiB beside small trees the calls below change.
ISETUP_SH = r'''
set -e
head -c 12M /dev/urandom >$HOME/big
for top in $HOME/i /workspace/i /tmp/i; do
mkdir -p $top && cd $top
mkdir -p tree/sub/deeper a b d; echo 1 >tree/f; echo 2 >tree/sub/g; ln -s ../f tree/sub/l
echo 3 >tree/sub/deeper/h; mkfifo tree/sub/p
echo in-a >a/x; echo in-b >b/x; mkdir a/ad; echo ad >a/ad/y
echo f >f; chmod 644 f; chmod 755 d; ln -s target sl; echo h >h1
truncate -s 2M sparse; echo end >>sparse
done
echo gone >/workspace/i/gone
'''

# Each a call, each checked by an undo: a deleted tree, chmods, a symlink, xattrs, two
# directories swapped by name (their files unchanged), a new hard link written through, a
# deletion of a file of the host's workspace (a whiteout).
ICHANGES = (
    "rm -rf $HOME/i/tree /workspace/i/tree /tmp/i/tree",
    "chmod 700 $HOME/i/d /tmp/i/d; chmod 600 $HOME/i/f /workspace/i/f; chmod 1777 /workspace/i/d",
    "rm $HOME/i/sl && ln -s /etc $HOME/i/sl; ln -sfn other /workspace/i/sl; rm /tmp/i/sl; mkdir /tmp/i/sl",
    "python3 -c 'import os\nfor p in (os.path.expanduser(\"~/i/f\"), \"/workspace/i/d\", \"/tmp/i/h1\"): "
    "os.setxattr(p, \"user.k\", b\"v\" * 3000)'",
    "for t in $HOME/i /workspace/i /tmp/i; do mv $t/a $t/t && mv $t/b $t/a && mv $t/t $t/b; done",
    "ln $HOME/i/h1 $HOME/i/h2 && echo more >>$HOME/i/h2; rm /workspace/i/gone /workspace/base; "
    "echo new >/tmp/i/new; echo x >>$HOME/i/sparse",
)


# fork.py's manifest of each root given, in one call
MULTI_PY = """import contextlib, io, json, sys
res = []
for root in sys.argv[1:]:
    sys.argv[1] = root
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(%r, {"__name__": "__main__"})
    res.append(json.loads(buf.getvalue()))
print(json.dumps(res))
""" % fork.MANIFEST_PY


def isnap(s, sandbox="sb-1"):
    """The manifests of IROOTS: one call, a step that changes nothing."""
    r = sh(s, "python3 - " + " ".join(IROOTS), sandbox=sandbox, stdin=MULTI_PY)
    assert not r["stdout_truncated"], "manifest cut"
    return dict(zip(IROOTS, json.loads(r["stdout"])))


def same(got, want, what):
    for root in IROOTS:
        g, w = {e["path"]: e for e in got[root]}, {e["path"]: e for e in want[root]}
        eq(sorted(set(g) ^ set(w))[:5], [], f"{what}: {root}'s paths")
        for p in w:
            eq(g[p], w[p], f"{what}: {root}/{p}")


def incremental():
    """A checkpoint keeps only what a call changed: beside a 12 MiB file, in an upper of
    32 MiB (which holds the state, its shadow and the steps, but not a copy of the state per
    call), six calls keep every step and drop none. env_undo and env_redo of all of them give
    the last state back; then each env_undo gives back the state before its call exactly: a
    deleted tree, a chmod, a symlink, an xattr, swapped directories, a hard link, a whiteout.
    A fork starts with no history, and undoes its own step."""
    s = serve("--upper-size", "32M")
    try:
        sh(s, ISETUP_SH)
        snaps = [isnap(s)]
        for cmd in ICHANGES:
            sh(s, cmd)
            snaps.append(isnap(s))
        h = steps(s)
        n = 2 * len(ICHANGES)  # each change, then its manifest
        eq((h["undoable"], h["dropped"]), (n + 2, 0), "steps kept, steps dropped")
        assert all(x["undoable"] for x in h["steps"]), f"a step without a checkpoint: {h['steps']}"
        by = {x["step"]: x for x in h["steps"]}
        rm = by[3]  # after the set-up and its manifest: the deleted trees
        trees = sorted(p for p in rm["paths"] if p.endswith("/i/tree"))
        eq((len(trees), trees[1:]), (3, ["/tmp/i/tree", "/workspace/i/tree"]), "the deleted trees' paths")
        assert rm["paths_total"] >= 3 and rm["bytes"] > 0 and rm["exit_code"] == 0, f"the step: {rm}"
        for k in range(2, n + 3, 2):  # a manifest changes nothing: its step holds nothing
            eq((by[k]["paths_total"], by[k]["bytes"], by[k]["paths"]), (0, 0, []), f"step {k}'s changes")
        eq(s.call("env_undo", steps=n)["undone"], n, "env_undo of every change")
        eq(s.call("env_redo", steps=n)["redone"], n, "env_redo of every change")
        same(isnap(s), snaps[-1], "after env_redo")
        for k in range(len(ICHANGES), 0, -1):  # the check, the manifest, the change
            eq(s.call("env_undo", steps=3)["undone"], 3, "env_undo")
            same(isnap(s), snaps[k - 1], f"before {ICHANGES[k - 1][:40]!r}")
        sb = fork.fork_ok(s)
        eq(steps_of(s, sb), 0, "a fork's history")
        sh(s, "rm -rf $HOME/i /tmp/i/a; echo f >/workspace/i/ff", sandbox=sb)
        eq(s.call("env_undo", sandbox=sb)["undone"], 1, "env_undo in the fork")
        same(isnap(s, sb), snaps[0], "the fork after its env_undo")
    finally:
        s.close()


def steps_of(s, sb):
    return len(s.call("env_history", sandbox=sb)["steps"])


SCENARIOS = {f.__name__: f for f in (roundtrip, sparse, bounded, jobs, default_on, incremental)}

if __name__ == "__main__":
    SCENARIOS[sys.argv[2]]()
