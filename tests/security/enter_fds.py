#!/usr/bin/env python3
"""Sends `rtn enter`'s owner a good request whose stdin is an fd of KIND, opened here on the
host, for tests/security/enter_attacks.sh, one request (on a connection of its own) per KIND
given, in order; prints the owner's last word on each, one line: "KIND: refused: MESSAGE",
"KIND: exited N" (wait status) or "KIND: closed". The kinds share one start of the
interpreter, which costs more than the requests.

usage: enter_fds.py SOCKET KIND[=ARG]... -- CMD...
  dir PATH      a directory, read-only          opath PATH   an O_PATH fd
  inet          a TCP socket of the host's network namespace, not yet connected
  unix          an AF_UNIX stream socket, connected
  zero          /dev/zero (a character device other than /dev/null)
  file PATH     a regular file, read-only       fifo PATH    a named FIFO (made here)
  pipe          a pipe (allowed)                null         /dev/null (allowed)
stdout and stderr are /dev/null; the registry's directory follows, as rtn enter sends it.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enter_client import answer, connect, proof, send, spawn_msg  # noqa: E402 (the protocol's one home)


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


def main():
    dash = sys.argv.index("--")
    path, kinds, argv = sys.argv[1], sys.argv[2:dash], sys.argv[dash + 1:]
    null = os.open("/dev/null", os.O_WRONLY)
    for k in kinds:
        kind, _, arg = k.partition("=")
        fd = stdin_of(kind, arg)
        s = connect(path)
        send(s, spawn_msg(argv), [fd, null, null] + proof(path))
        print(kind + ": " + answer(s), flush=True)
        s.close()
        os.close(fd)


main()
