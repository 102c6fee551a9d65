#!/usr/bin/env python3
"""Runs the shell examples of the README and docs/ and compares their output with what the
page shows. `doctest.py RTN FILE.md...`.

An example is a fenced block whose info string is `console doctest`:

    ```console doctest
    $ build/rtn exec -- echo hi
    hi
    ```

Each `$ ` line is a command, run with `bash -c` in a fresh home directory of the block's
(HOME, shown as /home/me; shared by the block's commands, so files made by one are there for
the next), with stdout and stderr on one terminal (a pty), as a user sees them; the lines up to the
next `$ ` are its expected output. `rtn` and `build/rtn` are the rtn under test;
RTN_DATA_DIR is another fresh directory. In the expected text `…` stands for any characters (ids,
times). Trailing blanks do not count. Prints each difference; exits 1 when there is one."""
import os
import pty
import re
import select
import subprocess
import sys
import tempfile

from testfs import rmtree

FENCE = re.compile(r"^```console doctest\n(.*?)^```$", re.S | re.M)


def examples(path):
    text = open(path, encoding="utf-8").read()
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 2
        cmds = []
        for i, l in enumerate(m.group(1).splitlines()):
            if l.startswith("$ "):
                cmds.append([line + i, l[2:], []])
            elif cmds:
                cmds[-1][2].append(l)
        yield cmds


def matches(expected, got):
    pat = "".join(".*" if c == "…" else re.escape(c) for c in expected)
    return re.fullmatch(pat, got) is not None


def run(cmd, home, env):
    """cmd's output on a pty (stdout line-buffered as on a terminal) and its exit status."""
    master, slave = pty.openpty()
    p = subprocess.Popen(["bash", "-c", cmd], cwd=home, env=env, stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    out = b""
    while select.select([master], [], [], 120)[0]:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not data:
            break
        out += data
    os.close(master)
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    return out.decode("utf-8", "replace").replace("\r\n", "\n"), rc


def run_block(rtn, path, cmds, bad):
    tmp = tempfile.mkdtemp()
    try:
        home, data, bin_ = (os.path.join(tmp, d) for d in ("me", "data", "bin"))
        for d in (home, data, bin_, os.path.join(home, "build")):
            os.makedirs(d)
        for link in (os.path.join(bin_, "rtn"), os.path.join(home, "build", "rtn")):
            os.symlink(os.path.abspath(rtn), link)
        env = dict(os.environ, HOME=home, RTN_DATA_DIR=data,
                   PATH=bin_ + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        env.pop("RTN_LOG", None)
        for line, cmd, want in cmds:
            got, rc = run(cmd, home, env)
            got = got.replace(home, "/home/me")
            got = [g.rstrip() for g in got.splitlines()]
            want = [w.rstrip() for w in want]
            if len(got) != len(want) or not all(matches(w, g) for w, g in zip(want, got)):
                bad.append("%s:%d: $ %s\n  shown:\n%s\n  got (exit %d):\n%s" % (
                    path, line, cmd, "\n".join("    " + w for w in want), rc,
                    "\n".join("    " + g for g in got)))
    finally:
        rmtree(tmp)


def main():
    rtn, files = sys.argv[1], sys.argv[2:]
    bad, n = [], 0
    for path in files:
        for cmds in examples(path):
            n += len(cmds)
            run_block(rtn, path, cmds, bad)
    print("# %d commands run from %s" % (n, ", ".join(os.path.basename(f) for f in files)),
          file=sys.stderr)
    for b in bad:
        print(b)
    sys.exit(1 if bad or n == 0 else 0)


main()
