"""rtn serve scenarios of tests/security/hostpaths.sh, over the minimal MCP client of the
integration suites (tests/integration/mcp_serve.py): python3 hostpaths.py RTN SCENARIO."""
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from mcp_serve import Serve  # noqa: E402


def setid_file_write(rtn, tmp):
    ws = os.path.join(tmp, "ws")
    os.makedirs(ws)
    victim = os.path.join(ws, "victim")
    with open(victim, "w") as f:
        f.write("old\n")
    os.chmod(victim, 0o6755)
    s = Serve(rtn, "--workspace", ws, env={**os.environ, "RTN_DATA_DIR": os.path.join(tmp, "data")})
    try:
        s.call("file_write", path="/workspace/victim", content="#!/bin/sh\nid\n")
    finally:
        s.close()
    st = os.lstat(victim)
    with open(victim) as f:
        assert f.read() == "#!/bin/sh\nid\n", "file_write did not write"
    assert stat.S_IMODE(st.st_mode) == 0o755, f"victim is mode {st.st_mode:o}, owner {st.st_uid}"


def env_status_host_dirs(rtn, tmp):
    import subprocess
    # bind_host_dir may name a directory below HOME (or below what the user bound)
    ws, proj, ro = (os.path.join(tmp, d) for d in ("ws", "home/proj", "ro"))
    for d in (ws, proj, ro):
        os.makedirs(d)
    for d in (ws, os.path.join(ws, "lib", "dep"), proj):
        subprocess.run(["git", "init", "-q", d], check=True)
    with open(os.path.join(ws, ".envrc"), "w") as f:
        f.write("export A=1\n")
    s = Serve(rtn, "--workspace", ws, "--bind", f"{ro}:/mnt/ro:ro",
              env={**os.environ, "RTN_DATA_DIR": os.path.join(tmp, "data"),
                   "HOME": os.path.join(tmp, "home")})
    try:
        s.sh("true")
        s.call("bind_host_dir", host_path=proj, mount_point="/mnt/proj", mode="rw")
        dirs = {d["mount_point"]: d for d in s.call("env_status")["host_dirs"]}
    finally:
        s.close()
    w = dirs["/workspace"]
    assert (w["host_path"], w["mode"], w["access"], w["git"]) == (ws, "live", "rw", "read-only"), w
    assert sorted(w["protected"]) == [".envrc", ".git", "lib/dep/.git"], w
    assert w["protected_count"] == 3 and w["pinned_dirs"] == 2, w
    assert "not protected in live mode" in w["note"], w
    p = dirs["/mnt/proj"]
    assert (p["host_path"], p["access"], p["protected"]) == (proj, "rw", [".git"]), p
    r = dirs["/mnt/ro"]
    assert r["access"] == "ro" and "protected" not in r, r


def main():
    rtn, scenario = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(dir=os.environ.get("T_TMP")) as tmp:
        os.chmod(tmp, 0o755)
        globals()[scenario](rtn, tmp)


if __name__ == "__main__":
    main()
