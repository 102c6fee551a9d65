#!/usr/bin/env python3
"""A raw client of `rtn enter`'s socket (runtime/session/enter.h), for the attacks of
tests/security/enter.sh: it speaks the control protocol's SPAWN (common/initproto.h) by
hand, well or badly, and prints what the owner answered, one line:

    refused: MESSAGE      a SPAWN_FAILED of step "enter" (the owner said no, and why)
    failed: ERRNO STEP    a SPAWN_FAILED of rtn-init's
    spawned / exited N    the command ran (wait status N)
    closed                the owner closed the connection without a word
    connect: ERROR        the socket could not be reached

usage: enter_client.py SOCKET MODE [ARG...]   (SOCKET @NAME: the abstract name NAME)
  run CMD...        a good request with our stdio (not a terminal) and the registry's
                    directory (the socket's: the best this caller can open of it, read,
                    else O_PATH, else nothing), then waits for the exit
  noproof CMD...    run, without the registry's directory
  opath CMD...      run, with the directory as an O_PATH fd (which Landlock does not check)
  tty CMD...        a good request, but stdin is a pty's slave
  policy N          a request for policy N (1: provisioning, 2: root)
  env               a request with an environment of its own
  final             a request with INIT_SPAWN_FINAL
  fds N             a request with N fds
  garbage           random bytes
  short             half a header
  big               a datagram larger than any request
  idle N            opens N connections that never speak, then checks the owner still
                    answers a good request on another
  flood N           N connects and closes, then a good request
  each MODE[:ARG]...  several of the above, one line each, prefixed with the mode
"""
import os
import pty
import socket
import struct
import sys

SPAWN, SPAWNED, SPAWN_FAILED, EXITED, BLOCKED = 4, 5, 6, 7, 15
STEP_ENTER = 15
PTY, FINAL = 1, 2
HDR = struct.Struct("<IIQ")
SPAWN_FIXED = struct.Struct("<IIQIIIIHHI")  # hdr, flags, policy, argc, envc, rows, cols, len


def spawn_msg(argv, flags=0, policy=0, env=(), cwd=""):
    strings = b"".join(s.encode() + b"\0" for s in [cwd, *argv, *env])
    n = SPAWN_FIXED.size + len(strings)
    return SPAWN_FIXED.pack(SPAWN, n, 1, flags, policy, len(argv), len(env), 0, 0,
                            len(strings)) + strings


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect("\0" + path[1:] if path.startswith("@") else path)  # blocking: a full backlog waits, as rtn enter does
    s.settimeout(20)
    return s


def send(s, msg, fds=()):
    """Sends; a refused caller may find the connection closed, the refusal queued."""
    try:
        send_raw(s, msg, fds)
    except (BrokenPipeError, ConnectionResetError):
        pass


def send_raw(s, msg, fds):
    if fds:
        s.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds),
                                                                               *fds))])
    else:
        s.send(msg)


def answer(s):
    """Reads until the owner's last word about the request; returns the line to print."""
    reset = False
    while True:
        try:
            msg, anc, _, _ = s.recvmsg(1024, socket.CMSG_SPACE(16))
        except ConnectionResetError:
            if reset:  # a reset is reported ahead of what was queued: read once more
                return "closed (reset)"
            reset = True
            continue
        except socket.timeout:
            return "closed (timeout)"
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                for fd in struct.unpack("%di" % (len(data) // 4), data[:len(data) // 4 * 4]):
                    os.close(fd)
        if not msg:
            return "closed"
        typ, _, _ = HDR.unpack_from(msg)
        if typ == SPAWN_FAILED:
            err, step = struct.unpack_from("<iI", msg, HDR.size)
            text = msg[HDR.size + 8:].split(b"\0")[0].decode(errors="replace")
            return "refused: " + text if step == STEP_ENTER else "failed: %d %d" % (err, step)
        if typ == EXITED:
            return "exited %d" % struct.unpack_from("<i", msg, HDR.size)[0]


def proof(path, how="best"):
    """The registry's directory (the socket's) as this caller can open it: read (a command of
    a sandbox may not), else O_PATH; [] when neither, or for how "none"."""
    d = os.path.dirname(os.path.abspath(path)) if not path.startswith("@") else "/"
    for flags in ((os.O_RDONLY | os.O_DIRECTORY,) if how == "best" else ()) + \
            ((os.O_PATH | os.O_DIRECTORY,) if how in ("best", "opath") else ()):
        try:
            return [os.open(d, flags)]
        except OSError:
            pass
    return []


def good(path, argv):
    s = connect(path)
    null = os.open("/dev/null", os.O_RDWR)  # a file is no stdio the owner passes in
    send(s, spawn_msg(argv), [null] * 3 + proof(path))
    os.close(null)
    return answer(s)


def one(path, mode, args):
    """Runs one mode; returns the line to print."""
    try:
        s = connect(path)
    except OSError as e:
        return "connect: %s" % e
    if mode in ("run", "noproof", "opath"):
        send(s, spawn_msg(args), [0, 1, 2] + proof(path, {"run": "best", "noproof": "none",
                                                         "opath": "opath"}[mode]))
    elif mode == "tty":
        _, slave = pty.openpty()
        send(s, spawn_msg(args), [slave, 1, 2] + proof(path))
    elif mode == "policy":
        send(s, spawn_msg(["true"], policy=int(args[0])), [0, 1, 2] + proof(path))
    elif mode == "env":
        send(s, spawn_msg(["true"], env=["LD_PRELOAD=/tmp/x.so"]), [0, 1, 2] + proof(path))
    elif mode == "final":
        send(s, spawn_msg(["true"], flags=FINAL), [0, 1, 2] + proof(path))
    elif mode == "fds":
        send(s, spawn_msg(["true"]), [0] * int(args[0]))
    elif mode == "garbage":
        send(s, os.urandom(300))
    elif mode == "short":
        send(s, HDR.pack(SPAWN, 16, 1)[:8])
    elif mode == "big":
        try:
            send_raw(s, spawn_msg(["x" * 300000]), ())
        except OSError:  # the kernel's own limit comes first: then one just above ours
            s.close()
            s = connect(path)
            send(s, b"\0" * 200000)
    elif mode == "idle":
        held = [connect(path) for _ in range(int(args[0]))]
        s.close()
        line = "after idle: " + good(path, ["true"])
        del held
        return line
    elif mode == "flood":
        s.close()
        for _ in range(int(args[0])):
            try:
                connect(path).close()
            except OSError:
                pass
        return "after flood: " + good(path, ["true"])
    return answer(s)


def main():
    path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "each":  # each argument one mode, its own argument after a colon
        for step in args:
            name, _, arg = step.partition(":")
            print("%s: %s" % (step, one(path, name, [arg] if arg else [])), flush=True)
    else:
        print(one(path, mode, args))


if __name__ == "__main__":
    main()
