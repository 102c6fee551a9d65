"""Request heads that some server reads otherwise than a strict parser, sent through rtn's
proxy from inside a sandbox for tests/security/secrets.sh (the servers: secret_servers.py,
which answer with "vhost=" and the Host they read). Each case prints one line:

    NAME: STATUS,STATUS... vhosts=HOST,HOST...

the status of every answer on the connection, and the virtual hosts that served them.

    head_attacks.py plain|tunnel     plain HTTP to secret.test:80 through $http_proxy, or the
                                     same heads inside a CONNECT tunnel to secret.test:443
"""
import os
import re
import socket
import ssl
import sys

A, E = b"secret.test", b"evil.test"
CASES = [
    ("bare_lf", b"GET %(t)s/lf HTTP/1.1\nHost: %(e)s\r\nHost: %(a)s\r\n\r\n"),
    ("bare_lf_field", b"GET %(t)s/lf2 HTTP/1.1\r\nX-A: 1\nHost: %(e)s\r\nHost: %(a)s\r\n\r\n"),
    ("bare_lf_only", b"GET %(t)s/lf3 HTTP/1.1\nHost: %(e)s\n\n"),
    ("bare_cr", b"GET %(t)s/cr HTTP/1.1\r\nX-A: 1\rHost: %(e)s\r\nHost: %(a)s\r\n\r\n"),
    ("obs_fold", b"GET %(t)s/fold HTTP/1.1\r\nX-A: 1\r\n Host: %(e)s\r\nHost: %(a)s\r\n\r\n"),
    ("space_colon", b"GET %(t)s/sp HTTP/1.1\r\nHost : %(e)s\r\nHost: %(a)s\r\n\r\n"),
    ("dup_host", b"GET %(t)s/dup HTTP/1.1\r\nHost: %(a)s\r\nHost: %(e)s\r\n\r\n"),
    ("host_differs", b"GET %(t)s/differs HTTP/1.1\r\nHost: %(e)s\r\n\r\n"),
    ("cl_te", b"POST %(t)s/clte HTTP/1.1\r\nHost: %(a)s\r\nContent-Length: 4\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: %(e)s\r\n\r\n"),
    ("second_request", b"GET %(t)s/one HTTP/1.1\r\nHost: %(a)s\r\n\r\n"
                       b"GET %(t)s/two HTTP/1.1\r\nHost: %(e)s\r\n\r\n"),
    ("body_then_request", b"POST %(t)s/body HTTP/1.1\r\nHost: %(a)s\r\nContent-Length: 2\r\n\r\nok"
                          b"GET %(t)s/three HTTP/1.1\r\nX-A: 1\nHost: %(e)s\r\nHost: %(a)s\r\n\r\n"),
    ("two_good", b"GET %(t)s/good1 HTTP/1.1\r\nHost: %(a)s\r\n\r\n"
                 b"GET %(t)s/good2 HTTP/1.1\r\nHost: %(a)s\r\n\r\n"),
]


def read_all(s):
    data = b""
    s.settimeout(20)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except (OSError, ssl.SSLError):
        pass
    return data


def connect(mode):
    proxy = os.environ["http_proxy" if mode == "plain" else "https_proxy"]
    port = int(proxy.rstrip("/").rsplit(":", 1)[1])
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    if mode == "plain":
        return s
    s.sendall(b"CONNECT secret.test:443 HTTP/1.1\r\nHost: secret.test:443\r\n\r\n")
    assert b" 200 " in s.recv(1000)
    return ssl.create_default_context().wrap_socket(s, server_hostname="secret.test")


def main():
    mode = sys.argv[1]
    t = b"http://secret.test" if mode == "plain" else b""
    for name, tmpl in CASES:
        s = connect(mode)
        s.sendall(tmpl % {b"t": t, b"a": A, b"e": E})
        data = read_all(s)
        s.close()
        codes = b",".join(re.findall(rb"HTTP/1\.[01] (\d{3})", data)).decode()
        hosts = b",".join(re.findall(rb"vhost=(\S*)", data)).decode()
        print(f"{name}: {codes or 'none'} vhosts={hosts}", flush=True)


main()
