"""A private Python package index for tests/security/recipes.sh (docs/recipes.md, "A Python
project with a private index"): over TLS, it answers only requests that carry
`Authorization: Bearer $INDEX_TOKEN` (401 otherwise), with a simple index (PEP 503) of one
package, hello-rtn 1.0, as a wheel it builds at start. Each request's path and whether it was
let in are appended to $INDEX_LOG.

    recipe_index.py ADDR PORT CERT KEY
"""
import base64
import hashlib
import http.server
import io
import os
import ssl
import sys
import zipfile

NAME, VERSION = "hello_rtn", "1.0"
WHEEL = f"{NAME}-{VERSION}-py3-none-any.whl"


def wheel():
    files = {
        f"{NAME}.py": b"GREETING = 'hello from the private index'\n",
        f"{NAME}-{VERSION}.dist-info/METADATA":
            f"Metadata-Version: 2.1\nName: hello-rtn\nVersion: {VERSION}\n".encode(),
        f"{NAME}-{VERSION}.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: rtn-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    record += f"{NAME}-{VERSION}.dist-info/RECORD,,\n"
    files[f"{NAME}-{VERSION}.dist-info/RECORD"] = record.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


DATA = wheel()
PAGES = {
    "/simple/": b'<a href="/simple/hello-rtn/">hello-rtn</a>\n',
    "/simple/hello-rtn/": f'<a href="/files/{WHEEL}">{WHEEL}</a>\n'.encode(),
    f"/files/{WHEEL}": DATA,
}


class Index(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.headers.get("Authorization") == f"Bearer {os.environ['INDEX_TOKEN']}"
        with open(os.environ["INDEX_LOG"], "a") as f:
            f.write(f"{self.path} {'let-in' if ok else 'refused'}\n")
        body = PAGES.get(self.path) if ok else b"token wanted\n"
        self.send_response(200 if body and ok else 401 if not ok else 404)
        body = body or b"not here\n"
        self.send_header("Content-Type", "text/html" if self.path.endswith("/") else
                         "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def main():
    addr, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    srv = http.server.ThreadingHTTPServer((addr, port), Index)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


main()
