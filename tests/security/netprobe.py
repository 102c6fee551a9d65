"""Attacks on the agent's network proxy, run inside the sandbox (tests/security/network.sh).
Each prints "blocked NAME: why" when the way out is closed and "ESCAPED NAME: what" when it is
not. ALLOWED and REFUSED are host names the test allows and does not; ADDR is an address the
allowed name resolves to on the host."""
import os
import re
import socket
import ssl
import sys
import time

ALLOWED, REFUSED, ADDR = sys.argv[1], sys.argv[2], sys.argv[3]
proxy = os.environ["http_proxy"].rsplit(":", 1)
PROXY = (proxy[0].split("//")[1], int(proxy[1]))


def out(ok, name, what):
    print(("blocked " if ok else "ESCAPED ") + name + ": " + what, flush=True)


def ask(head, then=b""):
    s = socket.create_connection(PROXY, timeout=20)
    s.sendall(head)
    reply = s.recv(4096)
    rest = b""
    if then:
        try:
            s.sendall(then)
            s.settimeout(5)
            rest = s.recv(4096)
        except OSError as e:
            rest = b"error " + str(e).encode()
    s.close()
    return reply, rest


def status(reply):
    try:
        return int(reply.split(b" ")[1])
    except (IndexError, ValueError):
        return 0


def connect_through_allowed():
    # a tunnel to the allowed host, then a second proxy request inside it
    reply, rest = ask(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (ALLOWED.encode(), ALLOWED.encode()),
                      b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (REFUSED.encode(), REFUSED.encode()))
    out(status(reply) == 200 and not rest.startswith(b"HTTP/1.1 200"), "connect_in_tunnel",
        repr(rest[:60]))
    # a CONNECT for the refused host that names the allowed one in its Host header
    reply, _ = ask(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (REFUSED.encode(), ALLOWED.encode()))
    out(status(reply) == 400, "connect_refused_host_header_allowed", repr(reply[:60]))


def host_header():
    reply, _ = ask(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n" % (ALLOWED.encode(), REFUSED.encode()))
    out(status(reply) == 400, "host_header", repr(reply[:60]))
    # a second request on the same connection, after an allowed one, for another Host
    s = socket.create_connection(PROXY, timeout=20)
    s.sendall(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\nGET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n"
              % (ALLOWED.encode(), ALLOWED.encode(), REFUSED.encode(), REFUSED.encode()))
    data = b""
    s.settimeout(20)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError:
        pass
    s.close()
    # the second is read once the first is answered, and refused as a first would be
    codes = re.findall(rb"HTTP/1\.[01] (\d{3}) ", data)
    out(len(codes) == 2 and codes[1] == b"403" and data.count(b"rtn gate refused") == 1,
        "pipelined_second_host", "answers %s" % b",".join(codes).decode())


def absolute_form():
    reply, _ = ask(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n" % (REFUSED.encode(), REFUSED.encode()))
    out(status(reply) == 403, "absolute_form_refused", repr(reply[:60]))
    reply, _ = ask(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n" % (ADDR.encode(), ADDR.encode()))
    out(status(reply) == 403, "ip_literal", repr(reply[:60]))


def sni():
    s = socket.create_connection(PROXY, timeout=20)
    s.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (ALLOWED.encode(), ALLOWED.encode()))
    reply = s.recv(4096)
    ctx = ssl.create_default_context()
    try:
        t = ctx.wrap_socket(s, server_hostname=REFUSED)
        t.close()
        out(False, "sni_differs", "a TLS session with SNI %s through %s" % (REFUSED, ALLOWED))
    except (OSError, ssl.SSLError) as e:
        out(status(reply) == 200, "sni_differs", str(e)[:80])
    # a tunnel that carries no TLS at all
    reply, rest = ask(b"CONNECT %s:443 HTTP/1.1\r\n\r\n" % ALLOWED.encode(),
                      b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % REFUSED.encode())
    out(not rest.startswith(b"HTTP/"), "plain_in_tunnel", repr(rest[:60]))


def direct():
    for port in (80, 443):
        try:
            socket.create_connection((ADDR, port), timeout=5).close()
            out(False, "direct_%d" % port, "connected to %s" % ADDR)
        except OSError as e:
            out(True, "direct_%d" % port, e.strerror or str(e))
    try:
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
        out(False, "raw_socket", "a raw socket was created")
    except OSError as e:
        out(True, "raw_socket", e.strerror or str(e))
    devs = [ln.split(":")[0].strip() for ln in open("/proc/net/dev").readlines()[2:]]
    out(devs == ["lo"], "only_lo", repr(devs))


def dns():
    servers = ["8.8.8.8", "1.1.1.1", ADDR, "127.0.0.1", "127.0.0.53"]
    for line in open("/etc/resolv.conf"):
        if line.startswith("nameserver"):
            servers.append(line.split()[1])
    query = bytes.fromhex("abcd01000001000000000000076578616d706c65036f72670000010001")
    for srv in servers:
        fam = socket.AF_INET6 if ":" in srv else socket.AF_INET
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.settimeout(2)
        try:
            u.connect((srv, 53))  # connected, as a resolver's: a refusal arrives at once
            u.send(query)
            u.recv(512)
            out(False, "dns_udp_" + srv, "an answer came back")
        except OSError as e:
            out(True, "dns_udp_" + srv, e.strerror or str(e))
        try:
            socket.create_connection((srv, 53), timeout=2).close()
            out(False, "dns_tcp_" + srv, "connected")
        except OSError as e:
            out(True, "dns_tcp_" + srv, e.strerror or str(e))
    t = time.monotonic()
    try:
        socket.getaddrinfo(ALLOWED, 443)
        out(False, "dns_lookup", "%s resolved inside" % ALLOWED)
    except socket.gaierror as e:
        took = time.monotonic() - t
        out(took < 2, "dns_lookup", "%s after %.2f s" % (e, took))


for f in sys.argv[4:]:
    globals()[f]()
