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


def main():
    rtn, scenario = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(dir=os.environ.get("T_TMP")) as tmp:
        os.chmod(tmp, 0o755)
        globals()[scenario](rtn, tmp)


if __name__ == "__main__":
    main()
