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
    """fork.py's server, keeping checkpoints (they are off unless --undo-depth asks)."""
    return fork.serve(*(args if "--undo-depth" in args else ("--undo-depth", "50") + args))


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
           "echo one >$HOME/l/0 && for i in $(seq 199); do ln $HOME/l/0 $HOME/l/$i; done")
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


def off_by_default():
    """Without --undo-depth no checkpoint is taken: env_history, env_undo and env_redo are
    not offered, a call of one is refused naming the option, and the state stays."""
    s = fork.serve()
    try:
        sh(s, "echo one >$HOME/f")
        listed = {t["name"] for t in s.request("tools/list", {})["tools"]}
        eq(listed & {"env_history", "env_undo", "env_redo"}, set(), "undo tools listed")
        for tool in ("env_history", "env_undo", "env_redo"):
            try:
                r = s.call_raw(tool)
            except RuntimeError as e:
                has(str(e), "--undo-depth", f"{tool}'s refusal")
            else:
                raise AssertionError(f"{tool} without --undo-depth answered {r}")
        eq(sh(s, "cat $HOME/f")["stdout"], "one\n", "the state after a refused env_undo")
    finally:
        s.close()


def steps_of(s, sb):
    return len(s.call("env_history", sandbox=sb)["steps"])


SCENARIOS = {f.__name__: f for f in (roundtrip, sparse, bounded, jobs, off_by_default)}

if __name__ == "__main__":
    SCENARIOS[sys.argv[2]]()
