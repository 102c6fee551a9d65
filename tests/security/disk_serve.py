"""An `rtn serve` session for disk.sh: RTN SIZE WHERE FREEPATH [commit|loop]. Writes 64 MiB
into WHERE inside with --upper-size SIZE, prints the command's stderr and the free KiB of
FREEPATH's filesystem while the session still holds its changes (and with "commit",
env_commit's answer), one "key value" line each. With "loop", the agent that commits in a
loop instead: 4 MiB of new data and env_commit, up to 30 times, until a commit is refused. DISK_SERVE_ARGS: more options for rtn serve (an overlay
workspace)."""
import os
import sys

sys.path.insert(0, os.environ["MCP_PY_DIR"])
from mcp_serve import Serve  # noqa: E402

rtn, size, where, freepath = sys.argv[1:5]
s = Serve(rtn, "--upper-size", size, *os.environ.get("DISK_SERVE_ARGS", "").split())
if sys.argv[5:] == ["loop"]:
    for i in range(30):
        s.sh(f"head -c 4194304 /dev/urandom > {where}{i}")
        c = s.call_raw("env_commit", message=f"loop {i}")
        print("commit", "error" if c.get("isError") else "ok", c["content"][0]["text"].replace("\n", " "))
        if c.get("isError"):
            break
    st = s.call("env_status")
    print("dirty_after", len(st["dirty_files"]), st["upper_bytes"])
    v = os.statvfs(freepath)
    print("free_kib_after", v.f_bavail * v.f_frsize // 1024)
    s.p.stdin.close()
    s.p.wait(timeout=60)
    sys.exit(0)
r = s.sh(f"dd if=/dev/zero of={where} bs=1M count=64 2>&1; ls -l {where}")
print("dd", r["stdout"].replace("\n", " | "))
v = os.statvfs(freepath)
print("free_kib", v.f_bavail * v.f_frsize // 1024)
st = s.call("env_status")
print("upper_bytes", st["upper_bytes"])
if len(sys.argv) > 5:
    c = s.call_raw("env_commit", message="fill")
    print("commit", "error" if c.get("isError") else "ok", c["content"][0]["text"].replace("\n", " "))
    st = s.call("env_status")
    print("dirty_after", len(st["dirty_files"]), st["upper_bytes"])
    v = os.statvfs(freepath)
    print("free_kib_after", v.f_bavail * v.f_frsize // 1024)
s.p.stdin.close()
s.p.wait(timeout=60)
