#!/usr/bin/env python3
"""Sends `rtn enter`'s owner a good request whose stdin is an fd of KIND, opened here on the
host, for tests/security/enter_attacks.sh; prints the owner's last word, one line:
"refused: MESSAGE", "exited N" (wait status) or "closed".

usage: enter_fds.py SOCKET KIND [ARG] -- CMD...
  dir PATH      a directory, read-only          opath PATH   an O_PATH fd
  inet          a TCP socket of the host's network namespace, not yet connected
  unix          an AF_UNIX stream socket, connected
  zero          /dev/zero (a character device other than /dev/null)
  file PATH     a regular file, read-only       fifo PATH    a named FIFO (made here)
  pipe          a pipe (allowed)                null         /dev/null (allowed)
stdout and stderr are /dev/null.
"""
import os
import socket
import struct
import sys

SPAWN, SPAWN_FAILED, EXITED = 4, 6, 7
STEP_ENTER = 15
HDR = struct.Struct("<IIQ")
SPAWN_FIXED = struct.Struct("<IIQIIIIHHI")


def spawn_msg(argv):
    strings = b"".join(s.encode() + b"\0" for s in ["", *argv])
    return SPAWN_FIXED.pack(SPAWN, SPAWN_FIXED.size + len(strings), 1, 0, 0, len(argv), 0, 0, 0,
                            len(strings)) + strings


def stdin_of(kind, arg):
    if kind == "dir":
        return os.open(arg, os.O_RDONLY | os.O_DIRECTORY)
    if kind == "opath":
        return os.open(arg, os.O_PATH)
    if kind == "inet":
        return socket.socket(socket.AF_INET, socket.SOCK_STREAM).detach()
    if kind == "unix":
        a, b = socket.socketpair()
        a.detach()
        return b.detach()
    if kind == "file":
        return os.open(arg, os.O_RDONLY)
    if kind == "fifo":
        os.mkfifo(arg)
        return os.open(arg, os.O_RDWR)
    if kind == "zero":
        return os.open("/dev/zero", os.O_RDONLY)
    if kind == "null":
        return os.open("/dev/null", os.O_RDONLY)
    if kind == "pipe":
        r, w = os.pipe()
        os.close(w)
        return r
    raise SystemExit("unknown kind " + kind)


def answer(s):
    while True:
        msg, anc, _, _ = s.recvmsg(1024, socket.CMSG_SPACE(16))
        if not msg:
            return "closed"
        typ, _, _ = HDR.unpack_from(msg)
        if typ == SPAWN_FAILED:
            err, step = struct.unpack_from("<iI", msg, HDR.size)
            text = msg[HDR.size + 8:].split(b"\0")[0].decode(errors="replace")
            return "refused: " + text if step == STEP_ENTER else "failed: %d %d" % (err, step)
        if typ == EXITED:
            return "exited %d" % struct.unpack_from("<i", msg, HDR.size)[0]


def main():
    dash = sys.argv.index("--")
    path, kind, args, argv = sys.argv[1], sys.argv[2], sys.argv[3:dash], sys.argv[dash + 1:]
    fd = stdin_of(kind, args[0] if args else None)
    null = os.open("/dev/null", os.O_WRONLY)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.settimeout(20)
    try:
        s.sendmsg([spawn_msg(argv)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                       struct.pack("3i", fd, null, null))])
    except (BrokenPipeError, ConnectionResetError):
        pass
    print(answer(s), flush=True)


main()
