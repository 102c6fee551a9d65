#!/usr/bin/env python3
"""A local HTTP server for tests/integration/http_tools.sh: `http_fixture.py ADDR PORT LOG`
(ADDR "::" listens on every IPv4 and IPv6 address, as a host service on [::] does).
GET /hello -> "hello"; GET /to?u=URL -> 302 to URL; GET /big -> 100000 bytes; GET /bin ->
bytes that are not UTF-8; POST /echo -> the body, POST /to like GET. Every request path is appended to LOG, so
a test can prove a refused target was never contacted."""
import http.server
import socket
import sys
import urllib.parse

ADDR, PORT, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3]


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
        with open(LOG, "a") as f:
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


(V6 if ":" in ADDR else http.server.HTTPServer)((ADDR, PORT), H).serve_forever()
