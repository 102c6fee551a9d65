"""Host and sandbox sides of tests/security/upstream.sh (--upstream-proxy):
  upstream.py serve DIR     (host) a CONNECT proxy on 127.0.0.1 (port in DIR/proxy) that wants
                            Proxy-Authorization for alice:pa:ss@word and logs each CONNECT to
                            DIR/proxy.log ("TARGET auth=ok|bad"); it tunnels backend.test:PORT
                            to a server of its own (DIR/backend) that answers
                            "backend:PATH", and refuses every other target with 403
  upstream.py probe BP [NAME]
                            (inside) through $http_proxy: backend.test over plain HTTP and a
                            TLS ClientHello in a CONNECT, other.test, NAME (resolving to
                            127.0.0.1 here), nope.test (no_proxy in the env case)
  upstream.py status RTN URL  (host) env_status shows the proxy with its password masked
"""
import http.server
import os
import socket
import ssl
import sys
import threading
import urllib.parse

AUTH = "Basic YWxpY2U6cGE6c3NAd29yZA=="  # alice:pa:ss@word


def serve(d):
    class Backend(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = ("backend:" + self.path).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    backend = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Backend)
    bport = backend.server_address[1]
    threading.Thread(target=backend.serve_forever, daemon=True).start()

    def pump(a, b):
        try:
            while True:
                x = a.recv(65536)
                if not x:
                    break
                b.sendall(x)
        except OSError:
            pass
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def handle(c):
        f = c.makefile("rb")
        line = f.readline().decode(errors="replace").strip()
        auth = "bad"
        while True:
            h = f.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode(errors="replace").partition(":")
            if k.lower() == "proxy-authorization" and v.strip() == AUTH:
                auth = "ok"
        parts = line.split()
        target = parts[1] if len(parts) > 1 and parts[0] == "CONNECT" else "?" + line
        with open(os.path.join(d, "proxy.log"), "a") as log:
            log.write("%s auth=%s\n" % (target, auth))
        if auth != "ok":
            c.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            c.close()
            return
        if target != "backend.test:%d" % bport:
            c.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            c.close()
            return
        up = socket.create_connection(("127.0.0.1", bport))
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=pump, args=(c, up), daemon=True).start()
        pump(up, c)

    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    for name, port in (("backend", bport), ("proxy", ls.getsockname()[1])):
        with open(os.path.join(d, name + ".tmp"), "w") as f:
            f.write(str(port))
        os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
    while True:
        c, _ = ls.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


def ask(data):
    u = urllib.parse.urlsplit(os.environ["http_proxy"])
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    s.sendall(data)
    got = b""
    try:
        while True:
            x = s.recv(65536)
            if not x:
                break
            got += x
            if got.startswith(b"HTTP/1.1 200 Connection") and got.endswith(b"\r\n\r\n"):
                return s, got
    except socket.timeout:
        pass
    s.close()
    return None, got


def get(host, port, path):
    _, got = ask(("GET http://%s:%s%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n"
                  % (host, port, path, host, port)).encode())
    return got.decode(errors="replace")


def hello(name):
    ctx = ssl.create_default_context()
    i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
    t = ctx.wrap_bio(i, o, server_hostname=name)
    try:
        t.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return o.read()


def probe(bp, name=""):
    r = get("backend.test", bp, "/hello")
    print("plain: " + ("reached" if "backend:/hello" in r else "FAILED " + r[:300]))
    s, r = ask(("CONNECT backend.test:%s HTTP/1.1\r\nHost: backend.test:%s\r\n\r\n"
                % (bp, bp)).encode())
    if s:
        s.sendall(hello("backend.test"))
        try:
            s.recv(4096)  # the backend speaks no TLS: whatever it says ends the test
        except OSError:
            pass
        s.close()
        print("tunnel: opened")
    else:
        print("tunnel: FAILED " + r.decode(errors="replace")[:300])
    for host in ["other.test", name, "nope.test", "127.0.0.1"]:
        if host:
            r = get(host, bp, "/attack")
            print("%s: %s" % (host, "ESCAPED" if "backend:" in r else "refused " + r[:12]))


def status(rtn, url):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from publish_lib import Serve
    s = Serve(rtn, ["--allow-net", "backend.test", "--upstream-proxy", url])
    try:
        net = s.tool("env_status", {})["network"]
        print(net.get("upstream_proxy"))
    finally:
        s.close()


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2])
    elif cmd == "probe":
        probe(*sys.argv[2:])
    elif cmd == "status":
        status(*sys.argv[2:])
