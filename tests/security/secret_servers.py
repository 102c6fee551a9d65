"""Servers of the tests' own for tests/security/secrets.sh: they answer every request with the
virtual host they read it for (vhost=, the first Host, as http.server reads it: a bare LF ends
a line) and its request line and headers as the body, so the test sees what reached them. With CERT and KEY
the server speaks TLS. Every request is also appended to the file $SECRET_LOG when it is set,
so a test sees what reached a server whose answer never came back; --log FILE names that file
for the servers after it instead. Servers separated by "--" run in one process (a start of the
interpreter is most of what a case's servers cost).

    secret_servers.py [--log FILE] ADDR PORT [CERT KEY] [-- [--log FILE] ADDR PORT [CERT KEY]]...
    secret_servers.py certs DIR     a test CA (testca), another (otherca), and leaves
                                    secret.test (by testca) and unknown.test (by otherca)
"""
import http.server
import os
import ssl
import subprocess
import sys
import threading


class Echo(http.server.BaseHTTPRequestHandler):
    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        text = f"vhost={self.headers.get('Host')}\n{self.requestline}\n{self.headers}".encode() + b"body=" + body + b"\n"
        if self.server.log:
            with open(self.server.log, "ab") as f:
                f.write(text)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(text)

    do_GET = do_POST = answer

    def log_message(self, *a):
        pass


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def certs(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for ca in ("testca", "otherca"):
        openssl("req", "-x509", *ec, "-days", "2", "-subj", f"/CN={ca}",
                "-keyout", f"{d}/{ca}.key", "-out", f"{d}/{ca}.crt")
    for name, ca in (("secret.test", "testca"), ("unknown.test", "otherca")):
        openssl("req", *ec, "-subj", f"/CN={name}", "-keyout", f"{d}/{name}.key",
                "-out", f"{d}/{name}.csr")
        with open(f"{d}/{name}.ext", "w") as f:
            f.write(f"subjectAltName=DNS:{name}\nbasicConstraints=CA:FALSE\n"
                    "extendedKeyUsage=serverAuth\n")
        openssl("x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/{ca}.crt",
                "-CAkey", f"{d}/{ca}.key", "-CAcreateserial", "-days", "2",
                "-extfile", f"{d}/{name}.ext", "-out", f"{d}/{name}.crt")


def server(log, addr, port, cert=None, key=None):
    srv = http.server.ThreadingHTTPServer((addr, int(port)), Echo)
    srv.log = log
    if key:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    return srv


def main():
    if sys.argv[1] == "certs":
        return certs(sys.argv[2])
    log, args, servers = os.environ.get("SECRET_LOG"), sys.argv[1:] + ["--"], []
    while args:
        if args[0] == "--log":
            log, args = args[1], args[2:]
        end = args.index("--")
        servers.append(server(log, *args[:end]))
        args = args[end + 1:]
    for srv in servers[1:]:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    servers[0].serve_forever()


main()
