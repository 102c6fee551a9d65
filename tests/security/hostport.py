"""Host and sandbox sides of tests/security/hostport.sh (--allow-host-port):
  hostport.py serve DIR        (host) two HTTP servers on 127.0.0.1, ports in DIR/open and
                               DIR/closed; every request line the open one reads is appended
                               to DIR/open.log, every connection the closed one accepts to
                               DIR/accepted; /redirect answers 302 to the closed port, by
                               address and by the host's name. Runs until killed.
  hostport.py probe OPEN CLOSED [NAME]
                               (inside) through the proxy of $http_proxy: what must reach the
                               open port ("reached: CASE") and every other way to the host's
                               loopback ("blocked: CASE" or "ESCAPED: CASE"); NAME resolves to
                               127.0.0.1 on the trusted side and is allowed on OPEN
  hostport.py repeat OPEN SECONDS
                               (inside) plain GETs of host.rtn.internal:OPEN through the proxy
                               for SECONDS: "requests: N refused: M" and the first refusal's
                               status and reason
  hostport.py churn RTN SECONDS
                               (host) `rtn exec -- true` again and again for SECONDS, each
                               left a moment unreaped when it ends, as a lazy parent does
  hostport.py status RTN OPEN  (host) `rtn serve --allow-host-port OPEN`: env_status reports it
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

HOST = "host.rtn.internal"
ZOMBIE = 0.2


def serve(d):
    class Open(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            with open(os.path.join(d, "open.log"), "a") as f:
                f.write(self.requestline + " host=" + str(self.headers.get("Host")) + "\n")
            if self.path.startswith("/redirect"):
                target = "127.0.0.1" if self.path == "/redirect" else HOST
                self.send_response(302)
                self.send_header("Location", "http://%s:%s/attack-redirect" % (target, closed_port))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = ("host-service:" + self.path).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed.listen(16)
    closed_port = closed.getsockname()[1]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Open)

    def closed_loop():
        while True:
            c, _ = closed.accept()
            with open(os.path.join(d, "accepted"), "a") as f:
                f.write("connection\n")
            c.close()

    threading.Thread(target=closed_loop, daemon=True).start()
    for name, port in (("closed", closed_port), ("open", srv.server_address[1])):
        with open(os.path.join(d, name + ".tmp"), "w") as f:
            f.write(str(port))
        os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
    srv.serve_forever()


def proxy():
    u = urllib.parse.urlsplit(os.environ["http_proxy"])
    return u.hostname, u.port


def exchange(data, wait=5):
    """Sends data to the proxy; returns what comes back until it closes or stalls."""
    s = socket.create_connection(proxy(), timeout=wait)
    s.sendall(data)
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            if b"\r\n\r\n" in got and got.startswith(b"HTTP/1.1 200 Connection"):
                break
    except socket.timeout:
        pass
    return s, got


def get(url, host_header=None):
    u = urllib.parse.urlsplit(url)
    h = host_header or u.netloc
    s, got = exchange(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                       % (url, h)).encode())
    s.close()
    return got.decode(errors="replace")


def connect(target, payload):
    s, got = exchange(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    if not got.startswith(b"HTTP/1.1 200"):
        s.close()
        return got.decode(errors="replace")
    s.sendall(payload)
    rest = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            rest += chunk
    except socket.timeout:
        pass
    s.close()
    return rest.decode(errors="replace")


def probe(open_port, closed_port, name=None):
    o, c = open_port, closed_port

    def reached(case, text, want):
        # a failure on one line, with the answer's body (the gate's reason for a refusal)
        print(("reached: " if want in text else "FAILED: ") + case + ("" if want in text
                                                                     else " " + repr(text[:600])))

    def blocked(case, text):
        bad = "host-service:" in text
        print(("ESCAPED: " if bad else "blocked: ") + case + (" " + text[:200] if bad else ""))

    reached("plain", get("http://%s:%s/hello" % (HOST, o)), "host-service:/hello")
    reached("plain-upper-dot", get("http://HOST.rtn.internal.:%s/dot" % o), "host-service:/dot")
    raw = "GET /raw HTTP/1.0\r\nHost: x\r\n\r\n".encode()
    reached("tunnel", connect("%s:%s" % (HOST, o), raw), "host-service:/raw")
    for n, host in enumerate(["127.0.0.1", "127.1", "0x7f.1", "2130706433", "0177.0.0.1",
                              "[::1]", "[::ffff:127.0.0.1]", "localhost", "LOCALHOST.",
                              "0.0.0.0", "[::]"]):
        blocked("plain-" + host, get("http://%s:%s/attack-%d" % (host, o, n)))
        blocked("connect-" + host, connect("%s:%s" % (host, o), raw.replace(b"/raw", b"/attack")))
    if name:
        blocked("rebinding-name " + name, get("http://%s:%s/attack-name" % (name, o)))
        blocked("rebinding-connect " + name, connect("%s:%s" % (name, o), b"GET /attack\r\n\r\n"))
    blocked("other-port-plain", get("http://%s:%s/attack-closed" % (HOST, c)))
    blocked("other-port-connect", connect("%s:%s" % (HOST, c), raw))
    blocked("default-port", get("http://%s/attack-80" % HOST))
    blocked("host-header", get("http://%s:%s/attack-hdr" % (HOST, o), "127.0.0.1:%s" % c))
    # the redirect reaches the sandbox; following it goes through the gate again
    r = get("http://%s:%s/redirect" % (HOST, o))
    reached("redirect-answer", r, "302")
    loc = [ln.split(":", 1)[1].strip() for ln in r.split("\r\n")
           if ln.lower().startswith("location:")]
    blocked("redirect-followed", get(loc[0]) if loc else "no location")
    r = get("http://%s:%s/redirect-name" % (HOST, o))
    loc = [ln.split(":", 1)[1].strip() for ln in r.split("\r\n")
           if ln.lower().startswith("location:")]
    blocked("redirect-name-followed", get(loc[0]) if loc else "no location")
    # no proxy: the sandbox's own loopback, where nothing listens
    try:
        socket.create_connection(("127.0.0.1", int(o)), timeout=3).close()
        print("ESCAPED: direct")
    except OSError:
        print("blocked: direct")
    try:
        socket.create_connection(("::1", int(o)), timeout=3).close()
        print("ESCAPED: direct-v6")
    except OSError:
        print("blocked: direct-v6")


def repeat(open_port, seconds):
    """Asks for the open port again and again; every answer must be the service's."""
    n, refused, first = 0, 0, None
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        text = get("http://%s:%s/again-%d" % (HOST, open_port, n))
        n += 1
        if "host-service:" not in text:
            refused += 1
            first = first or text[:600]
    print("requests: %d refused: %d" % (n, refused))
    if first:
        # the status line and the body: the gate's reason
        print("first refusal: " + repr(first.split("\r\n")[0] + " " + first.split("\r\n\r\n")[-1]))


def churn(rtn, seconds):
    """Sandboxes that start and end; each rtn stays a zombie for ZOMBIE seconds."""
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        p = subprocess.Popen([rtn, "exec", "--", "true"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        give_up = time.monotonic() + 30
        # ended, not reaped
        while not os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG):
            if time.monotonic() > give_up:
                p.kill()
            time.sleep(0.01)
        time.sleep(ZOMBIE)
        p.wait()


def status(rtn, port):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from publish_lib import Serve
    s = Serve(rtn, ["--allow-host-port", port])
    try:
        net = s.tool("env_status", {})["network"]
        assert net["host_ports"] == [int(port)], net
        assert net["host_name"] == HOST, net
        assert net["mode"] == "proxy", net
    finally:
        s.close()
    print("ok")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2])
    elif cmd == "probe":
        probe(*sys.argv[2:])
    elif cmd == "repeat":
        repeat(*sys.argv[2:])
    elif cmd == "churn":
        churn(*sys.argv[2:])
    elif cmd == "status":
        status(*sys.argv[2:])
