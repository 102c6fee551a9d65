#!/usr/bin/env python3
"""Local HTTP servers for tests/integration/http_tools.sh: `http_fixture.py ADDR PORT LOG...`,
one server per triple, in one process (ADDR "::" listens on every IPv4 and IPv6 address, as a
host service on [::] does); "ready" on stdout once every one listens.
GET /hello -> "hello"; GET /to?u=URL -> 302 to URL; GET /big -> 100000 bytes; GET /bin ->
bytes that are not UTF-8; POST /echo -> the body, POST /to like GET. Every request path is appended to LOG, so
a test can prove a refused target was never contacted."""
import http.server
import socket
import sys
import threading
import urllib.parse


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, body, extra=()):
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def note(self):
        with open(self.server.log, "a") as f:
            f.write(self.path + "\n")

    def do_GET(self):
        self.note()
        u = urllib.parse.urlparse(self.path)
        if u.path == "/hello":
            self.reply(200, b"hello", [("X-Test", "a"), ("X-Test", "b")])
        elif u.path == "/to":
            self.reply(302, b"", [("Location", urllib.parse.parse_qs(u.query)["u"][0])])
        elif u.path == "/big":
            self.reply(200, b"a" * 100000)
        elif u.path == "/bin":
            self.reply(200, bytes([0xff, 0x00, 0x80, 0x41]))
        else:
            self.reply(404, b"no")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        if self.path.startswith("/to"):
            self.rfile.read(n)
            return self.do_GET()
        self.note()
        self.reply(200, b"got:" + self.rfile.read(n))


class V6(http.server.HTTPServer):
    address_family = socket.AF_INET6

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


servers = []
for addr, port, log in zip(*[iter(sys.argv[1:])] * 3):
    srv = (V6 if ":" in addr else http.server.HTTPServer)((addr, int(port)), H)
    srv.log = log
    servers.append(srv)
print("ready", flush=True)
for srv in servers[1:]:
    threading.Thread(target=srv.serve_forever, daemon=True).start()
servers[0].serve_forever()
