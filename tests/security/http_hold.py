"""Holds connections to `rtn serve --http` as an attacker without the token would:
   http_hold.py PORT N SECONDS [KINDS]
N connections, in three kinds (idle: no byte sent; half: a request head sent half, ending in
a header line; bad: a whole head with a wrong token, kept alive; KINDS, comma-separated,
names the ones to use, all three by default), each re-opened as soon as the server drops
it, for SECONDS. Prints "held N" once all are open, then at the end how many the
server dropped ("dropped D"). Exits 2 when the file-descriptor limit cannot hold N."""
import errno
import resource
import selectors
import socket
import sys
import time

port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
kinds = (sys.argv[4] if len(sys.argv) > 4 else "idle,half,bad").split(",")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = n + 64
if soft < want:
    if hard != resource.RLIM_INFINITY and hard < want:
        print(f"RLIMIT_NOFILE hard limit {hard} < {want}", file=sys.stderr)
        sys.exit(2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

HALF = b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
BAD = (b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer not-the-token\r\n"
       b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
sel = selectors.DefaultSelector()


def open_one(i):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, i)


for i in range(n):
    open_one(i)
print(f"held {n}", flush=True)
dropped = 0
end = time.monotonic() + secs
sent = set()
while time.monotonic() < end:
    for key, ev in sel.select(timeout=0.2):
        s, i = key.fileobj, key.data
        if ev & selectors.EVENT_WRITE and s not in sent:
            sent.add(s)
            try:
                kind = kinds[i % len(kinds)]
                if kind == "half":
                    s.send(HALF)
                elif kind == "bad":
                    s.send(BAD)
            except OSError:
                pass
            sel.modify(s, selectors.EVENT_READ, i)
            continue
        if ev & selectors.EVENT_READ:
            try:
                data = s.recv(65536)
            except OSError as e:
                data = b"" if e.errno != errno.EAGAIN else None
            if data == b"":  # the server closed it: open another in its place
                dropped += 1
                sel.unregister(s)
                sent.discard(s)
                s.close()
                open_one(i)
print(f"dropped {dropped}", flush=True)
