"""Scenarios of store_live.sh that need `rtn serve`, driven over stdio by mcp_serve.py.
Usage: store_live.py RTN SCENARIO (cwd: the case's temp dir). Exit 0 = pass; an
AssertionError's message says what broke."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_serve import Serve  # noqa: E402

RTN = sys.argv[1]
TMP = os.getcwd()


def serve(*args):
    env = os.environ.copy()
    env["RTN_DATA_DIR"] = os.path.join(TMP, "data")
    return Serve(RTN, *args, env=env)


def eq(got, want, what):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def has(text, part, what):
    assert part in text, f"{what}: {part!r} not in {text!r}"


def two_servers():
    """Two servers on one environment: the second commit is refused (the tip it was built
    on moved), its changes stay, rebase=true commits them on the new tip, and env_reset
    picks up the new tip."""
    one, two = serve(), serve()
    try:
        one.sh("echo one > /workspace/one")
        two.sh("echo two > /workspace/two")
        c1 = one.call("env_commit", message="one")["commit_id"]
        msg = two.error("env_commit", message="two")
        has(msg, "moved", "second commit refused")
        has(msg, "rebase=true", "the way out is named")
        eq(two.sh("cat /workspace/two")["stdout"], "two\n", "the refused changes stay")
        c2 = two.call("env_commit", message="two", rebase=True)
        eq(c2["parent"], c1, "rebased on the first server's commit")
        ids = [c["commit_id"] for c in two.call("env_snapshot_list")["commits"]]
        eq(ids, [c2["commit_id"], c1], "history")
        # The first server is now behind: refused too, and env_reset catches up.
        one.sh("echo again > /workspace/again")
        has(one.error("env_commit", message="again"), "moved", "first server behind")
        one.call("env_reset")
        eq(one.sh("cat /workspace/one /workspace/two")["stdout"], "one\ntwo\n", "after reset")
    finally:
        one.close()
        two.close()


def reflog_rollback():
    """env_rollback to a commit, then back to the tip just left (from the reflog)."""
    s = serve()
    try:
        s.sh("echo a > /workspace/v")
        a = s.call("env_commit", message="a")["commit_id"]
        s.sh("echo b > /workspace/v")
        b = s.call("env_commit", message="b")["commit_id"]
        s.call("env_rollback", commit_id=a[:8])
        snap = s.call("env_snapshot_list")
        eq([c["commit_id"] for c in snap["commits"]], [a], "history after rollback")
        eq([(e["commit_id"], e["op"]) for e in snap["reflog"]],
           [(a, "rollback"), (b, "commit"), (a, "commit")], "reflog")
        s.call("env_gc")
        eq(s.call("env_rollback", commit_id=b)["commit_id"], b, "rollback to the tip left")
        eq(s.sh("cat /workspace/v")["stdout"], "b\n", "content of the tip left")
    finally:
        s.close()


def base_of_the_env():
    """rtn serve without --rootfs on an environment made on ./tree: runs there, says so."""
    s = serve()
    try:
        eq(s.call("env_status")["base"], os.path.join(TMP, "tree"), "env_status base")
        eq(s.sh("cat /workspace/f; test -e /bin/dash || echo not-the-host")["stdout"],
           "on-tree\nagain\nnot-the-host\n", "on the tree")
    finally:
        s.close()


{"two_servers": two_servers, "reflog_rollback": reflog_rollback,
 "base_of_the_env": base_of_the_env}[sys.argv[2]]()
