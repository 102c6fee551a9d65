"""The tasks extension (io.modelcontextprotocol/tasks) of `rtn serve` over stdio, driven by
serve_tasks.sh: a long call of a client that declared it becomes a task polled with tasks/get
to its result; tasks/cancel kills the command; a short call, a client that did not declare it
and a legacy session get plain answers; bad ids and bad requests get clear errors."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from wire_client import Server  # noqa: E402

EXT = "io.modelcontextprotocol/tasks"


def meta(tasks=True, **more):
    caps = {"extensions": {EXT: {}}} if tasks else {}
    m = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
         "io.modelcontextprotocol/clientCapabilities": caps}
    m.update(more)
    return m


def call(s, rid, command, tasks=True, **more):
    return s.req(rid, "tools/call", {"name": "shell_run", "arguments": {"command": command},
                                     "_meta": meta(tasks, **more)})


def tget(s, rid, tid, method="tasks/get", tasks=True, **extra):
    p = {"taskId": tid, "_meta": meta(tasks)}
    p.update(extra)
    return s.req(rid, method, p)


def poll(s, tid, until, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        r = tget(s, 50, tid)["result"]
        assert r["taskId"] == tid and r["resultType"] == "complete", r
        if r["status"] != "working":
            assert r["status"] == until, r
            return r
        time.sleep(0.2)
    raise AssertionError("task %s still working after %ss" % (tid, timeout))


def poll_task(rtn, marker):
    s = Server(rtn)
    seen = []
    s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "shell_run", "arguments": {"command": "sleep 3; echo done-task"},
                       "_meta": meta(progressToken="tok-2")}})
    r = s.wait_id(2, seen=seen)["result"]
    assert r["resultType"] == "task", r
    tid = r["taskId"]
    assert len(tid) == 32 and all(c in "0123456789abcdef" for c in tid), tid
    assert r["status"] == "working" and r["pollIntervalMs"] == 1000, r
    assert isinstance(r["ttlMs"], int) and r["ttlMs"] >= 600000, r
    assert r["createdAt"].endswith("Z") and "T" in r["createdAt"], r
    assert "content" not in r and "result" not in r, r
    # At once: the task is there, working.
    w = tget(s, 3, tid)["result"]
    assert w["status"] == "working" and "result" not in w, w
    # The request's id is free again while the task runs.
    assert s.req(2, "tools/list", {"_meta": meta()})["result"]["tools"]
    done = poll(s, tid, "completed")
    res = done["result"]
    assert res["structuredContent"]["stdout"] == "done-task\n", res
    assert res["structuredContent"]["exit_code"] == 0 and res["isError"] is False, res
    assert res["resultType"] == "complete", res
    # Read as often as wanted while kept; cancelling a finished task changes nothing.
    assert tget(s, 4, tid)["result"]["result"] == res
    ack = tget(s, 5, tid, "tasks/cancel")["result"]
    assert set(ack) == {"resultType", "_meta"} and ack["resultType"] == "complete", ack
    assert tget(s, 6, tid)["result"]["status"] == "completed"
    s.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    s.wait_id(7, seen=seen)
    late = [m for m in seen if m.get("method") == "notifications/progress"]
    assert not late, "progress sent for a task: %s" % late
    s.alive()


def short_and_plain(rtn, marker):
    s = Server(rtn)
    r = call(s, 2, "echo quick")["result"]  # done before it would become a task
    assert r["resultType"] == "complete" and r["structuredContent"]["stdout"] == "quick\n", r
    t0 = time.time()
    r = call(s, 3, "sleep 2; echo sync", tasks=False)["result"]  # no extension: no task
    assert r["resultType"] == "complete" and r["structuredContent"]["stdout"] == "sync\n", r
    assert time.time() - t0 >= 2
    # A legacy session's call is answered when it ends, whatever its _meta says.
    r = s.req(4, "tools/call", {"name": "shell_run", "arguments": {"command": "sleep 2; echo l"},
                                "_meta": {"io.modelcontextprotocol/clientCapabilities":
                                          {"extensions": {EXT: {}}}}})["result"]
    assert "resultType" not in r and r["structuredContent"]["stdout"] == "l\n", r
    d = s.req(5, "server/discover")["result"]
    assert d["capabilities"]["extensions"] == {EXT: {}}, d
    s.alive()


def cancel_kills(rtn, marker):
    s = Server(rtn)
    cmd = "sleep 300.%s" % marker
    r = call(s, 2, cmd)["result"]
    assert r["resultType"] == "task", r
    tid = r["taskId"]
    print("running %s" % tid, flush=True)  # serve_tasks.sh sees the command on the host
    sys.stdin.readline()
    ack = tget(s, 3, tid, "tasks/cancel")["result"]
    assert set(ack) == {"resultType", "_meta"} and ack["resultType"] == "complete", ack
    r = poll(s, tid, "cancelled")
    assert "result" not in r and "error" not in r, r
    assert tget(s, 4, tid, "tasks/cancel")["result"]["resultType"] == "complete"
    print("cancelled", flush=True)
    sys.stdin.readline()
    s.alive()


def bad_requests(rtn, marker):
    s = Server(rtn)
    tid = call(s, 2, "sleep 2")["result"]["taskId"]
    for rid, method in ((10, "tasks/get"), (11, "tasks/cancel"), (12, "tasks/update")):
        e = tget(s, rid, tid, method, tasks=False, inputResponses={})["error"]
        assert e["code"] == -32021, e
        assert "Missing required client capability" in e["message"], e
    for rid, method in ((13, "tasks/get"), (14, "tasks/cancel")):  # not in a legacy session
        e = s.req(rid, method, {"taskId": tid})["error"]
        assert e["code"] == -32601, e
    for rid, bad in enumerate(["nope", "", tid + "0", tid[:-1], tid.upper(), "0" * 32,
                               " " + tid, 7, None], 20):
        p = {"_meta": meta()}
        if bad is not None:
            p["taskId"] = bad
        for method in ("tasks/get", "tasks/cancel"):
            e = s.req(rid, method, p)["error"]
            assert e["code"] == -32602, (bad, e)
    e = tget(s, 40, tid, "tasks/update")["error"]
    assert e["code"] == -32602 and "inputResponses" in e["message"], e
    r = tget(s, 41, tid, "tasks/update", inputResponses={"k": {"action": "accept"}})["result"]
    assert set(r) == {"resultType", "_meta"}, r
    for rid, method in ((42, "tasks/result"), (43, "tasks/list")):
        assert s.req(rid, method, {"taskId": tid, "_meta": meta()})["error"]["code"] == -32601
    bad = meta()
    bad["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {EXT: True}}
    e = s.req(44, "tools/call", {"name": "shell_run", "arguments": {"command": "true"},
                                 "_meta": bad})["error"]
    assert e["code"] == -32602 and "extensions" in e["message"], e
    assert poll(s, tid, "completed")["result"]["structuredContent"]["exit_code"] == 0
    s.alive()


if __name__ == "__main__":
    globals()[sys.argv[2]](sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else "0")
    print("ok")
