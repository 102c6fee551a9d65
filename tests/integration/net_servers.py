"""Servers of the tests' own for tests/integration/net_tools.sh, on an address of a test
network namespace: git's smart HTTP (git http-backend as CGI behind a small HTTP/1.0 server)
and a PEP 503 simple index (a directory served as is), plus a wheel to put in it.

    net_servers.py git ADDR PORT PROJECT_ROOT
    net_servers.py files ADDR PORT DIR
    net_servers.py wheel DIR NAME VERSION     (writes DIR/simple/NAME/... and its index)
"""
import base64
import hashlib
import http.server
import os
import subprocess
import sys
import zipfile


class GitCGI(http.server.BaseHTTPRequestHandler):
    def run(self):
        path, _, query = self.path.partition("?")
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        env = dict(os.environ, GIT_PROJECT_ROOT=self.server.root, GIT_HTTP_EXPORT_ALL="1",
                   REQUEST_METHOD=self.command, PATH_INFO=path, QUERY_STRING=query,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(n),
                   REMOTE_ADDR=self.client_address[0], GATEWAY_INTERFACE="CGI/1.1")
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["HTTP_GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode().splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = run

    def log_message(self, *a):
        pass


class Files(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def wheel(d, name, version):
    dist = "%s-%s.dist-info" % (name, version)
    files = {
        "%s.py" % name: b"MESSAGE = 'installed through the rtn proxy'\n",
        dist + "/METADATA": ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)).encode(),
        dist + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: rtn-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for k, v in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").decode()
        record += "%s,sha256=%s,%d\n" % (k, h, len(v))
    files[dist + "/RECORD"] = (record + dist + "/RECORD,,\n").encode()
    pdir = os.path.join(d, "simple", name)
    os.makedirs(pdir, exist_ok=True)
    whl = "%s-%s-py3-none-any.whl" % (name, version)
    with zipfile.ZipFile(os.path.join(pdir, whl), "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    with open(os.path.join(pdir, "index.html"), "w") as f:
        f.write('<!DOCTYPE html><html><body><a href="%s">%s</a></body></html>\n' % (whl, whl))
    with open(os.path.join(d, "simple", "index.html"), "w") as f:
        f.write('<!DOCTYPE html><html><body><a href="%s/">%s</a></body></html>\n' % (name, name))


def main():
    kind = sys.argv[1]
    if kind == "wheel":
        wheel(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    addr, port, root = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if kind == "git":
        srv = http.server.ThreadingHTTPServer((addr, port), GitCGI)
        srv.root = root
    else:
        os.chdir(root)
        srv = http.server.ThreadingHTTPServer((addr, port), Files)
    srv.serve_forever()


main()
